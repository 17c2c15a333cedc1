"""scipy.special, imported the first time one of its functions is called.

Importing scipy.special takes about 0.17 s here (its array-API layer loads
numpy.f2py, numpy.testing and numpy.ma), more than the rest of reportgen's
imports together. Commands and builds that find every number they need in the
cache never call it: a rebuild after a template edit, or one where nothing
changed, then skips that cost. Use `special.gammaln(...)` as with the module.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _OnFirstUse:
    """Stands for a module and imports it when an attribute is first asked for."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        value = getattr(module, attribute)
        setattr(self, attribute, value)  # found directly from now on
        return value


special: Any = _OnFirstUse("scipy.special")
