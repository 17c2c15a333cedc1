"""The terminal commands do not load the site stack.

Importing Jinja, Altair and vl-convert takes longer than `estimate` or `check`
takes to run, so only `build` and `serve` may import them. Each command runs in
a fresh interpreter and reports which modules it loaded: a behaviour test, not a
timing (the timings are in the benchmark).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_RESULTS = ROOT / "example" / "results"

#: Top-level modules that only building a site needs.
SITE_STACK = (
    "jinja2",
    "altair",
    "vl_convert",
    "markdown_it",
    "reportgen.website",
    "reportgen.build",
)

_PROBE = """
import json, sys
from reportgen.cli import main
status = main(sys.argv[1:])
print(json.dumps({"status": status, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def probe(code: str, *argv: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run `code` in a fresh interpreter with `argv` (and `env`, if given): the JSON
    of the last line it wrote to stderr (what it saw of itself)."""
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    result: dict[str, Any] = json.loads(done.stderr.strip().splitlines()[-1])
    return result


def _loaded_modules(*argv: str) -> tuple[int, set[str]]:
    result = probe(_PROBE, *argv)
    return result["status"], set(result["modules"])


def _write_runs(path: Path) -> Path:
    """Three tasks of four runs, as JSONL."""
    path.write_text(
        "".join(
            json.dumps({"task": f"t{i}", "run": r, "passed": (i + r) % 3 != 0}) + "\n"
            for i in range(3)
            for r in range(4)
        )
    )
    return path


def _write_history(path: Path, results: Path) -> Path:
    """A history of one earlier build, made by building once with it."""
    site = path.parent / "history-site"
    argv = ("build", str(results), "--output", str(site), "--history", str(path), "--label", "v1")
    status, _ = _loaded_modules(*argv)
    assert status == 0
    path.write_bytes((site / "history.jsonl").read_bytes())
    return path


def _site_stack(modules: set[str]) -> list[str]:
    return sorted(
        name for name in modules if any(name == m or name.startswith(m + ".") for m in SITE_STACK)
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("estimate", "--successes", "16", "--runs", "20", "-k", "3"),
        ("estimate", "--suite", "16/20", "3/5", "10/10", "-k", "2", "--format", "json"),
        ("plan", "--target-halfwidth", "0.05"),
        ("sql", "--dialect", "bigquery", "--table", "p.d.runs", "--columns", "model=model"),
        ("summary", str(EXAMPLE_RESULTS / "agent-alpha.jsonl")),
        (
            "compare",
            str(EXAMPLE_RESULTS / "agent-alpha.jsonl"),
            str(EXAMPLE_RESULTS / "agent-beta.jsonl"),
        ),
    ],
    ids=lambda argv: argv[0] if isinstance(argv, tuple) else str(argv),
)
def test_terminal_commands_skip_the_site_stack(argv: tuple[str, ...]) -> None:
    status, modules = _loaded_modules(*argv)
    assert status == 0
    assert _site_stack(modules) == []
    if argv[0] in ("estimate", "plan"):
        # The calculator needs numpy and scipy.special; scipy.stats alone costs more
        # than the rest of a run (the per-task tests import it only when they run).
        assert "scipy.stats" not in modules
    if argv[0] == "estimate":
        # The calculator needs the statistics and the terminal tables, not the readers
        # (nor YAML), the config, the report model or the history.
        heavy = ("reportgen.readers", "reportgen.config", "reportgen.report", "reportgen.history")
        assert not [m for m in modules if m == "yaml" or m.startswith(heavy)]


def test_check_skips_the_site_stack(example_site: Path) -> None:
    status, modules = _loaded_modules("check", str(example_site), "--min-reliability", "0.01")
    assert status == 0
    assert _site_stack(modules) == []


def test_the_probe_sees_the_site_stack_when_building(tmp_path: Path) -> None:
    # The same probe run on `build` must see Jinja and Altair, or the tests above
    # would pass for the wrong reason.
    results = _write_runs(tmp_path / "runs.jsonl")
    status, modules = _loaded_modules("build", str(results), "--output", str(tmp_path / "site"))
    assert status == 0
    # vl-convert runs in its own process (website/chart_engine.py), so it is not here.
    assert {"jinja2", "altair", "markdown_it", "reportgen.website"} <= modules
    # The worked examples' Fisher p-values are summed exactly for small tables, so a
    # build without a history never pays the second scipy.stats takes to import.
    assert "scipy.stats" not in modules


def test_a_rebuild_with_its_charts_cached_skips_altair(tmp_path: Path) -> None:
    # Charts are reused by what they show; a template edit leaves them as they were,
    # so the rebuild must not pay for importing Altair.
    results = _write_runs(tmp_path / "runs.jsonl")
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "404.html").write_text((ROOT / "templates" / "404.html").read_text())
    argv = ("build", str(results), "--output", str(tmp_path / "site"), "--templates", str(theme))
    status, modules = _loaded_modules(*argv)
    assert status == 0 and "altair" in modules
    (theme / "404.html").write_text((theme / "404.html").read_text() + "<!-- edited -->\n")
    status, modules = _loaded_modules(*argv)
    assert status == 0
    assert "altair" not in modules
    assert "edited" in (tmp_path / "site" / "404.html").read_text()


def test_a_rebuild_where_nothing_changed_skips_scipy(tmp_path: Path) -> None:
    # scipy.special loads on its first call (stats/special.py): a build that finds
    # every number it needs already on disk never pays the 0.17 s it takes.
    results = _write_runs(tmp_path / "runs.jsonl")
    argv = ("build", str(results), "--output", str(tmp_path / "site"))
    status, modules = _loaded_modules(*argv)
    assert status == 0 and "scipy.special" in modules
    status, modules = _loaded_modules(*argv)
    assert status == 0
    assert not [m for m in modules if m == "scipy" or m.startswith("scipy.")]
    # Nor numpy, the statistics or the renderer: build.py imports them where a
    # build needs them, and the keys and the walk need none of them.
    assert not _statistics(modules)


def _statistics(modules: set[str]) -> list[str]:
    """The numerical stack and what needs it: the statistics, the report, the renderer."""
    heavy = (
        "numpy",
        "scipy",
        "reportgen.stats.estimate",
        "reportgen.report",
        "reportgen.website.render",
    )
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy))


@pytest.mark.parametrize("history", [False, True], ids=["", "with a history"])
def test_a_build_with_nothing_changed_loads_no_statistics(tmp_path: Path, history: bool) -> None:
    # A build that finds the site it would write already in place keeps it whole:
    # nothing is estimated, drawn or converted. A history is read and names the build
    # (its label is part of the keys) without the statistics its trends need.
    results = _write_runs(tmp_path / "runs.jsonl")
    theme = tmp_path / "theme"
    theme.mkdir()
    index = (ROOT / "templates" / "index.html").read_text()
    (theme / "index.html").write_text(index)
    argv: tuple[str, ...] = ("build", str(results), "--output", str(tmp_path / "site"))
    argv += ("--templates", str(theme))
    if history:
        argv += ("--history", str(_write_history(tmp_path / "history.jsonl", results)))
    assert _loaded_modules(*argv)[0] == 0
    status, modules = _loaded_modules(*argv)
    assert status == 0
    assert not [m for m in modules if m.startswith(("scipy", "altair", "markdown_it"))]
    assert not _statistics(modules)  # numpy neither


def _imported_modules(module: str, path: Path) -> set[str]:
    """The reportgen modules `module` (at `path`) imports anywhere: at the top, inside
    functions, and under TYPE_CHECKING (a circle of types is a circle too)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            # `from ..x import y`: one dot is this package, each further dot its parent.
            base = package.split(".")[: len(package.split(".")) - max(node.level - 1, 0)]
            name = node.module or "" if node.level == 0 else ".".join([*base, node.module or ""])
            name = name.rstrip(".")
            found.add(name)  # the module itself, or, for `from . import y`, the package
            found.update(f"{name}.{alias.name}" for alias in node.names)  # y a module
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_import_circle() -> None:
    # Imports go one way (the views read the report, the report never the views), so
    # any module can be read, and loaded, before those that use it.
    modules = {}
    for path in (ROOT / "reportgen").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    edges = {
        name: {m for m in _imported_modules(name, path) if m in modules and m != name}
        for name, path in modules.items()
    }
    circles = []
    for start in sorted(edges):  # a path back to `start` is a circle through it
        seen, todo = set(), [(start, (start,))]
        while todo:
            here, way = todo.pop()
            for there in sorted(edges[here]):
                if there == start:
                    circles.append(" -> ".join((*way, start)))
                elif there not in seen:
                    seen.add(there)
                    todo.append((there, (*way, there)))
    assert circles == []
