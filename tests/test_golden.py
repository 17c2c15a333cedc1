"""The example site must not drift: a build equals the committed tree byte for byte.

After an intended change, `make golden` refreshes tests/golden/example-site.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from .refresh_golden import GOLDEN


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_example_build_matches_golden_tree(
    example_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected, actual = _tree(GOLDEN), _tree(example_site)
    assert sorted(actual) == sorted(expected), "files added or removed; run make golden"
    changed = [name for name in expected if expected[name] != actual[name]]
    if changed:
        first = changed[0]
        diff = difflib.unified_diff(
            expected[first].decode(errors="replace").splitlines(),
            actual[first].decode(errors="replace").splitlines(),
            lineterm="",
            n=1,
        )
        detail = "\n".join(list(diff)[:30])
        pytest.fail(f"{len(changed)} files differ (first: {first}); run make golden\n{detail}")
