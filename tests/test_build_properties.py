"""Property tests of the whole build: any ordinary suite builds, and the site's
report.json says what `reportgen summary --format json` says.

Each example is a real build (about a second), so `make test-all` runs a bounded
number, `make test` a third of it; `make fuzz` (REPORTGEN_FUZZ=1) runs many more.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reportgen.cli import main
from reportgen.stats.plain import MAX_CONFIDENCE, MIN_CONFIDENCE

from .conftest import examples

#: Examples per run: few in the two tiers (conftest.examples), many under `make fuzz`.
EXAMPLES = 300 if os.environ.get("REPORTGEN_FUZZ") else examples(15)


@dataclass(frozen=True)
class Task:
    id: str
    successes: int
    runs: int  # evaluated runs; 0 for a task whose every run was excluded
    excluded: int


@dataclass(frozen=True)
class Suite:
    tasks: list[Task]
    format: str  # "jsonl", "yaml-counts" or "yaml-outcomes"


@st.composite
def suites(draw: st.DrawFn) -> Suite:
    shape = draw(st.sampled_from(["mixed", "all-pass", "all-fail", "one-task", "equal-n"]))
    count = 1 if shape == "one-task" else draw(st.integers(1, 60))
    equal_runs = draw(st.integers(1, 40)) if shape == "equal-n" else None
    tasks = []
    for i in range(count):
        runs = equal_runs or draw(st.integers(1, 40))
        if shape == "all-pass":
            successes = runs
        elif shape == "all-fail":
            successes = 0
        else:
            successes = draw(st.integers(0, runs))
        excluded = draw(st.integers(0, 3)) if shape == "mixed" else 0
        tasks.append(Task(f"task-{i}", successes, runs, excluded))
    if shape == "mixed" and draw(st.booleans()):
        # A task none of whose runs could be evaluated: left out, with a warning.
        tasks.append(Task("all-excluded", 0, 0, draw(st.integers(1, 3))))
    return Suite(tasks, draw(st.sampled_from(["jsonl", "yaml-counts", "yaml-outcomes"])))


def _outcomes(task: Task) -> list[bool | None]:
    failures = task.runs - task.successes
    return [True] * task.successes + [False] * failures + [None] * task.excluded


def write_suite(suite: Suite, folder: Path) -> Path:
    if suite.format == "jsonl":
        path = folder / "runs.jsonl"
        lines = [
            json.dumps({"suite": "s", "task": t.id, "passed": outcome})
            for t in suite.tasks
            for outcome in _outcomes(t)
        ]
        path.write_text("\n".join(lines) + "\n")
        return path
    path = folder / "suite.yaml"
    items: list[dict[str, Any]] = []
    for t in suite.tasks:
        if suite.format == "yaml-outcomes" or t.runs == 0:
            items.append({"id": t.id, "outcomes": _outcomes(t)})
        else:
            items.append({"id": t.id, "successes": t.successes, "runs": t.runs})
            if t.excluded:
                items[-1]["excluded"] = t.excluded
    # JSON is YAML: no need for a YAML writer here.
    path.write_text(json.dumps({"suite": "s", "tasks": items}))
    return path


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(argv, out=out)
    return status, out.getvalue(), err.getvalue()


def suite_tasks_evaluated(suite: Any) -> list[Any]:
    return [t for t in suite.tasks if t.runs > 0]


#: Every level reportgen accepts (config.MIN_CONFIDENCE to MAX_CONFIDENCE), ends included.
levels = st.one_of(
    st.floats(min_value=MIN_CONFIDENCE, max_value=MAX_CONFIDENCE),
    st.sampled_from([MIN_CONFIDENCE, 0.5, 0.95, 0.99, MAX_CONFIDENCE]),
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(suite=suites(), k=st.integers(1, 50), confidence=levels)
@example(  # item 1: every task passed every run
    suite=Suite([Task("a", 5, 5, 0), Task("b", 5, 5, 0)], "yaml-counts"), k=3, confidence=0.95
)
@example(suite=Suite([Task("a", 2, 5, 0)], "jsonl"), k=6, confidence=0.95)  # item 2: k > n
def test_any_suite_builds_and_report_json_matches_summary(
    suite: Suite, k: int, confidence: float
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = write_suite(suite, folder)
        flags = ["-k", str(k), "--confidence", repr(confidence)]
        status, _, err = run(
            ["build", str(source), "-o", str(folder / "site"), "--no-cache", *flags]
        )
        assert status == 0, err
        report = json.loads((folder / "site" / "report.json").read_text(encoding="utf-8"))
        status, out, err = run(["summary", str(source), "--format", "json", *flags])
        assert status == 0, err
        summary = json.loads(out)
    assert (report["k"], report["confidence"]) == (summary["k"], summary["confidence"])
    assert len(report["result_sets"]) == len(summary["result_sets"]) == 1
    built, printed = report["result_sets"][0], summary["result_sets"][0]
    for task, counts in zip(built["tasks"], suite_tasks_evaluated(suite), strict=True):
        del task["page"]  # only the site has pages and each task's consistency
        consistency = task.pop("outcome_consistency")
        if counts.runs < 2:
            assert consistency is None
        else:
            p = counts.successes / counts.runs
            assert consistency["hal"] == pytest.approx((2 * p - 1) ** 2, abs=1e-12)
    for key, value in printed.items():
        assert built[key] == value, key
    evaluated = [t for t in suite.tasks if t.runs > 0]
    assert [(t["successes"], t["runs"]) for t in built["tasks"]] == [
        (t.successes, t.runs) for t in evaluated
    ]
