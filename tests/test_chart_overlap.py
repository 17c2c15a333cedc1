"""Charts are drawn while the pages without charts are written.

The chart engine (vl-convert in its own process) is started before the command
line is imported, is handed the specs once the task pages are under way, and is
asked for the drawings only when the overview and the set pages need them. The
order of writing must not change a byte of the site.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reportgen.readers import Source, load_sources
from reportgen.report import Report, build_report
from reportgen.settings import BuildSettings
from reportgen.website import render
from reportgen.website.chart import make_charts
from reportgen.website.chart_engine import Converter
from reportgen.website.charts import PendingCharts, SiteCharts
from reportgen.website.render import Renderer
from reportgen.website.theme import Theme
from reportgen.website.write import Written, write_site

from .test_imports import probe

ROOT = Path(__file__).resolve().parents[1]
POINT = {
    "mark": "point",
    "data": {"values": [{"x": 1}]},
    "encoding": {"x": {"field": "x", "type": "quantitative"}},
}


def _report(tmp_path: Path) -> Report:
    runs = tmp_path / "runs.jsonl"
    lines = []
    for model, shift in (("a", 0), ("b", 1)):
        for t in range(12):
            for r in range(4):
                passed = (t + r + shift) % 3 != 0
                lines.append(
                    json.dumps(
                        {"suite": "s", "model": model, "task": f"t{t}", "run": r, "passed": passed}
                    )
                )
    runs.write_text("\n".join(lines) + "\n")
    loaded = load_sources([Source(runs)])
    return build_report(loaded.result_sets, "Overlap", "", 3, 0.95)


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _write(folder: Path, renderer: Renderer, events: list[str]) -> None:
    """Write the renderer's site, noting in `events` each file as it is asked for."""

    def files() -> Iterator[tuple[str, bytes | Path | Written]]:
        for name, data in renderer.pages():
            events.append(name)
            yield name, data

    write_site(folder, files(), on_staging=renderer.set_staging)


@pytest.mark.parametrize("pooled", [False, True], ids=["serial", "workers"])
def test_charts_start_before_the_task_pages_and_are_collected_after_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pooled: bool
) -> None:
    if pooled:
        monkeypatch.setattr(render, "PARALLEL_MIN_PAGES", 2)
    report = _report(tmp_path)
    drawn = make_charts(report)
    events: list[str] = []

    def begin() -> Callable[[], SiteCharts]:
        events.append("<start charts>")

        def finish() -> SiteCharts:
            events.append("<get charts>")
            return drawn

        return finish

    theme = Theme.from_folders(None, None)
    options = BuildSettings()
    _write(tmp_path / "overlapped", Renderer(report, PendingCharts(begin), theme, options), events)
    task_pages = [i for i, name in enumerate(events) if "/tasks/" in name]
    assert len(task_pages) == 24
    assert events.index("<start charts>") < task_pages[0]
    assert events.index("<get charts>") > task_pages[-1]
    assert events.index("<get charts>") < events.index("index.html")
    assert events.count("<start charts>") == events.count("<get charts>") == 1

    # Drawn up front and rendered in one go, the site is the same, byte for byte.
    monkeypatch.setattr(render, "PARALLEL_MIN_PAGES", 10**9)
    _write(tmp_path / "direct", Renderer(report, drawn, theme, options), [])
    assert _tree(tmp_path / "overlapped") == _tree(tmp_path / "direct")


def test_the_engine_answers_while_a_forked_process_holds_its_input() -> None:
    """Task-page workers are forked after the engine starts and keep a copy of its
    input pipe: the engine must not wait for that pipe to close."""
    converter = Converter()
    holder = os.fork()
    if holder == 0:  # pragma: no cover - the child only holds the pipes
        signal.pause()
        os._exit(0)
    try:
        converter.send([POINT, POINT])
        svgs = converter.receive()
        assert len(svgs) == 2 and all(svg.lstrip().startswith("<svg") for svg in svgs)
        assert os.waitpid(holder, os.WNOHANG) == (0, 0)  # the holder still runs
    finally:
        converter.close()
        os.kill(holder, signal.SIGKILL)
        os.waitpid(holder, 0)


_PROBE = """
import json, sys
import reportgen.website.chart_engine as engine
seen = {"started": 0, "closed": 0}
class Recorder:
    def __init__(self):
        seen["started"] += 1
        seen["cli imported"] = "reportgen.cli" in sys.modules
        seen["numpy imported"] = "numpy" in sys.modules
    def close(self):
        seen["closed"] += 1
engine.Converter = Recorder
sys.argv = ["reportgen", *sys.argv[1:]]
import reportgen.__main__ as entry
entry._exit = sys.exit  # the console script ends with os._exit, past this probe's print
from reportgen.__main__ import run
try:
    run()
except SystemExit as exit:
    seen["status"] = exit.code
print(json.dumps(seen), file=sys.stderr)
"""


def _probe(*argv: str) -> dict[str, object]:
    return probe(_PROBE, *argv)


def test_a_build_starts_the_chart_engine_before_importing_anything_heavy(
    tmp_path: Path,
) -> None:
    seen = _probe("build", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "site"))
    assert seen["status"] == 2  # the missing input is the user's mistake
    assert seen["started"] == 1 and seen["closed"] >= 1  # close() may be called twice
    assert seen["cli imported"] is False and seen["numpy imported"] is False


@pytest.mark.parametrize(
    "argv", [["build", "--help"], ["estimate", "--successes", "3", "--runs", "4"]]
)
def test_other_commands_start_no_chart_engine(argv: list[str]) -> None:
    seen = _probe(*argv)
    assert seen["status"] == 0
    assert seen["started"] == 0


class _Engine:
    """A stand-in chart engine that records what the build did with it."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def send(self, specs: list[dict[str, object]]) -> None:
        self.events.append("specs sent")

    def close(self) -> None:
        self.events.append("engine closed")


def test_a_rebuild_with_every_chart_cached_stops_the_engine_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reportgen import report as report_module
    from reportgen.build import build
    from reportgen.config import load_config

    project = tmp_path / "project"
    shutil.copytree(ROOT / "example", project)
    (project / "reportgen.yaml").write_text(
        (project / "reportgen.yaml").read_text().replace("output: ../site", "output: site")
    )
    config = load_config(project / "reportgen.yaml")
    first = build(config)
    assert "charts" not in first.reused
    before = _tree(config.output)

    events: list[str] = []
    real_estimate = report_module.build_report  # build.py imports it where it estimates

    def estimate(*args: object, **kwargs: object) -> Report:
        events.append("estimating")
        return real_estimate(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(report_module, "build_report", estimate)
    engine = _Engine(events)
    (project / "reportgen.yaml").write_text(
        (project / "reportgen.yaml").read_text().replace("title: Support-desk", "title: Edited")
    )
    edited = load_config(project / "reportgen.yaml")
    again = build(edited, converter=engine)  # type: ignore[arg-type]
    assert "charts" in again.reused
    # Stopped before the inputs were even estimated, and never given a spec.
    assert events[0] == "engine closed" and "estimating" in events
    assert "specs sent" not in events
    after = _tree(edited.output)
    assert after != before  # the title changed the pages...
    # ...and the charts, taken from the cache, are those of a clean build.
    engine_free = tmp_path / "clean"
    clean = build(dataclasses.replace(edited, output=engine_free), use_cache=False)
    assert clean.reused == ""
    assert _tree(engine_free) == after


def test_a_chart_engine_that_cannot_start_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from reportgen.cli import main
    from reportgen.website import chart_engine

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", "/usr/bin/python3")

    monkeypatch.setattr(chart_engine.subprocess, "Popen", refuse)
    # Started before the command line (python -m reportgen build): no traceback there ...
    chart_engine.start_early()
    assert chart_engine._early is None
    # ... and the build that needs charts says why it cannot draw them, in one line.
    results = Path(__file__).parent.parent / "example" / "results" / "agent-alpha.jsonl"
    site = tmp_path / "site"
    assert main(["build", str(results), "-o", str(site)], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "reportgen: error: cannot start the chart engine: Permission denied (/usr/bin/python3)"
    )
    assert not site.exists()


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ('<svg width="560" height="151">', 'style="max-width: 728px"'),
        ('<svg style="background: white" width="100" height="9">', 'style="max-width: 130px; '),
        ('<svg height="151">', None),  # no drawn width: no limit
    ],
)
def test_a_chart_may_grow_only_so_far_past_its_drawn_width(head: str, expected: str | None) -> None:
    from reportgen.website.chart_kit import accessible as _accessible

    svg = _accessible("c", "title", "description", head + "<g/></svg>", max_scale=1.3)
    opening = svg[: svg.index(">") + 1]
    assert opening.count(" style=") == (1 if "style" in head or expected else 0)
    if expected is not None:
        assert expected in opening
    assert svg.endswith("<g/></svg>") and '<title id="c-title">title</title>' in svg
