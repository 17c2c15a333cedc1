"""The package's own templates and content pages, compiled to Python ahead of time.

Jinja turns a template into Python source and compiles that on first use. For the
methodology and FAQ (170 kB of Markdown with hundreds of computed numbers) and the
theme's pages this takes about 0.2 s of CPU in every build, the largest single
step of a small one. `python -m reportgen.website.precompile` (which `make` runs,
and which the wheel is built after) writes that Python source once, into the
`compiled` folder beside this module, with an index of what each file was made
from. A build then takes a template's code from there, and Python's own bytecode
cache (`__pycache__`, checked against the file's hash) spares it the compiling too.

The folder is part of the installed package, written from the package's own
files by the package's own code, as trusted as the modules beside it; a build
never writes it, and nothing in a project or its cache can reach it. Code is
taken from it only when everything that shaped it is the same now: the template's
name and exact text, Jinja's version, and the environment's settings. Anything
else (a user's template, an edited one, another Jinja, a missing or damaged
folder) is compiled as usual, so using it never changes a page.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, MutableMapping
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import CodeType
from typing import Any

import jinja2

#: Where the compiled templates are; a test may point it elsewhere.
FOLDER = Path(__file__).resolve().parent / "compiled"
INDEX = "index.json"
#: A module file the index may name: nothing with a path in it.
_MODULE_NAME = re.compile(r"[a-z0-9_]{1,100}\.py")


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def settings(env: jinja2.Environment) -> str:
    """Everything about an environment that changes the code Jinja makes of a template."""
    finalize = env.finalize
    parts = (
        type(env).__module__,
        type(env).__qualname__,
        jinja2.__version__,
        env.autoescape if isinstance(env.autoescape, bool) else repr(env.autoescape),
        env.optimized,
        env.is_async,
        env.trim_blocks,
        env.lstrip_blocks,
        env.keep_trailing_newline,
        env.newline_sequence,
        env.block_start_string,
        env.block_end_string,
        env.variable_start_string,
        env.variable_end_string,
        env.comment_start_string,
        env.comment_end_string,
        env.line_statement_prefix,
        env.line_comment_prefix,
        None if finalize is None else getattr(finalize, "jinja_pass_arg", "plain"),
        sorted(env.extensions),
        sorted(env.filters),
        sorted(env.tests),
    )
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()


def lookup_key(name: str | None, source: str) -> str:
    """The index's key of a template: its name (none for a content page's body) and text."""
    return f"{name or ''}|{source_digest(source)}"


@functools.cache
def _index(folder: Path) -> dict[str, Any]:
    """The folder's index: {settings digest: {lookup key: module file}}; {} if unusable."""
    try:
        found = json.loads((folder / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict) or found.get("jinja") != jinja2.__version__:
        return {}
    environments = found.get("environments")
    if not isinstance(environments, dict):
        return {}
    return {
        setting: {
            key: module
            for key, module in entries.items()
            if isinstance(key, str) and isinstance(module, str) and _MODULE_NAME.fullmatch(module)
        }
        for setting, entries in environments.items()
        if isinstance(entries, dict)
    }


def code(env: jinja2.Environment, name: str | None, source: str) -> CodeType | None:
    """The compiled code of template `name` with text `source` in `env`, if the folder
    has it for exactly these; None otherwise (the caller compiles)."""
    folder = FOLDER
    module = _index(folder).get(settings(env), {}).get(lookup_key(name, source))
    if module is None:
        return None
    path = folder / module
    try:
        # Python's loader for a module file: the bytecode from __pycache__ when it is
        # current (the generator writes it checked against the source's hash), else
        # the source compiled (and cached, where the folder is writable).
        loader = SourceFileLoader(f"reportgen_compiled_{path.stem}", str(path))
        found = loader.get_code(loader.name)
    except (OSError, SyntaxError, ValueError, ImportError):
        return None
    return found


def template(
    env: jinja2.Environment,
    name: str | None,
    source: str,
    filename: str | None,
    globals: MutableMapping[str, Any],
    uptodate: Callable[[], bool] | None = None,
) -> jinja2.Template | None:
    """A template made from the precompiled code, as Jinja would make it from source;
    None without such code."""
    found = code(env, name, source)
    if found is None:
        return None
    made = env.template_class.from_code(env, found, globals, uptodate)
    # Errors name the template's own file and line (Jinja reads this name when it
    # rewrites a traceback), not the compiled module's; "<template>" as from_string.
    made.filename = filename or "<template>"
    return made
