"""Issue 12, part B: ordinary data that broke builds, and bad input that gave a
traceback or a silently wrong answer. One regression test per item, named after it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from reportgen.cli import main

from .conftest import EXAMPLE


def run(argv: list[str]) -> tuple[int, str]:
    """Exit status and stdout of one command, run in this process."""
    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


# ------------------------------------------------ item 1: every task alike, or one task


@pytest.mark.parametrize(
    "tasks",
    [
        ["{id: a, successes: 5, runs: 5}", "{id: b, successes: 5, runs: 5}"],
        ["{id: a, successes: 0, runs: 5}", "{id: b, successes: 0, runs: 5}"],
        ["{id: a, successes: 3, runs: 5}"],
    ],
    ids=["all-pass", "all-fail", "one-task"],
)
def test_item1_uniform_or_single_task_suites_build(tmp_path: Path, tasks: list[str]) -> None:
    suite = tmp_path / "p.yaml"
    suite.write_text("suite: s\ntasks:\n" + "".join(f"  - {t}\n" for t in tasks))
    site = tmp_path / "site"
    assert run(["build", str(suite), "-o", str(site), "--no-cache"])[0] == 0
    report = json.loads((site / "report.json").read_text())
    assert run(["summary", str(suite), "--format", "json"])[1]
    assert len(report["result_sets"][0]["tasks"]) == len(tasks)


# ------------------------------------------------ item 2: k larger than a worked example's runs


def test_item2_k_beyond_the_worked_examples_runs_builds(tmp_path: Path) -> None:
    site = tmp_path / "out"
    status, _ = run(["build", "--config", str(EXAMPLE), "-k", "6", "-o", str(site), "--no-cache"])
    assert status == 0
    page = (site / "methodology.html").read_text()
    assert "this site uses k = 6" in page


# ------------------------------------------------ item 9: tracebacks instead of a located error


def errors_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The error lines of a command that must fail with exit status 2, no traceback."""
    status, _ = run(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("reportgen: error: ")]
    assert lines, err
    return lines


@pytest.mark.parametrize(
    ("level", "message"),
    [("0.9999999999999999", "too close to 1"), ("1.0e-300", "too close to 0")],
)
def test_item9_confidence_too_close_to_0_or_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], level: str, message: str
) -> None:
    assert message in errors_of(["estimate", "--suite", "3/5", "--confidence", level], capsys)[0]
    config = tmp_path / "reportgen.yaml"
    config.write_text(f"confidence: {level}\nresult_sets: [r.jsonl]\n")
    (line,) = errors_of(["summary", "--config", str(config)], capsys)
    assert f"{config}: confidence: " in line and message in line
