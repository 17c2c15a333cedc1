"""The layout keeps the pipeline one-way: no import circles, and the statistics
import nothing from the stages around them (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import ROOT

PACKAGE = ROOT / "reportgen"


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Module -> the reportgen modules it imports, at any depth except TYPE_CHECKING blocks."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = _module(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text())
        typing_only = {
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for node in ast.walk(block)
        }
        targets = set()
        for node in ast.walk(tree):
            if id(node) in typing_only or not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names if node.module is None else []:
                candidate = f"{target}.{alias.name}"
                if (ROOT / (candidate.replace(".", "/") + ".py")).exists():
                    targets.add(candidate)
            targets.add(target)
        graph[module] = targets - {module}
    return graph


def test_no_import_circles() -> None:
    graph = _imports()
    circles: list[list[str]] = []
    finished: set[str] = set()

    def visit(module: str, trail: list[str]) -> None:
        if module in trail:
            circles.append([*trail[trail.index(module) :], module])
            return
        if module in finished:
            return
        for target in sorted(graph.get(module, ())):
            visit(target, [*trail, module])
        finished.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert circles == []


def test_statistics_import_only_statistics() -> None:
    for module, targets in _imports().items():
        if module.startswith("reportgen.stats"):
            outside = {t for t in targets if not t.startswith("reportgen.stats")}
            assert outside == set(), module


def test_readers_import_no_later_stage() -> None:
    later = ("reportgen.stats", "reportgen.report", "reportgen.views", "reportgen.website")
    for module, targets in _imports().items():
        if module.startswith("reportgen.readers") or module == "reportgen.counts":
            assert not any(t.startswith(later) for t in targets), module
