"""compare and check read result files as build and summary do: --input-format,
--columns, --scorer, --errors and --threshold apply to A, B and --baseline where
they are result files, and are refused where there is nothing for them to read."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from reportgen.cli import main

from .conftest import ROOT

ALPHA = ROOT / "example/results/agent-alpha.jsonl"
BETA = ROOT / "example/results/agent-beta.jsonl"
COLUMNS = "task=ticket,run=attempt_no,passed=verdict,suite=desk,model=who"
RENAMED = {"task": "ticket", "run": "attempt_no", "passed": "verdict", "suite": "desk"}
RENAMED["model"] = "who"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    status = main(argv, out=out)
    return status, out.getvalue(), capsys.readouterr().err


def as_table(runs: Path, path: Path) -> Path:
    """The same runs as a CSV whose columns have names reportgen does not guess."""
    rows = [json.loads(line) for line in runs.read_text().splitlines() if line.strip()]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([RENAMED[field] for field in RENAMED])
        for row in rows:
            writer.writerow([str(row[field]).lower() for field in RENAMED])
    return path


def test_compare_reads_a_table_with_its_columns_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As for build, the flags apply to every result file given: here both are tables.
    argv = ["compare", str(as_table(BETA, tmp_path / "beta.csv"))]
    argv += [str(as_table(ALPHA, tmp_path / "alpha.csv")), "--format", "json"]
    status, _, err = run(argv, capsys)
    assert status == 2 and "beta.csv" in err  # the columns cannot be guessed
    status, text, _ = run([*argv, "--columns", COLUMNS], capsys)
    assert status == 0
    _, expected, _ = run(["compare", str(BETA), str(ALPHA), "--format", "json"], capsys)
    assert json.loads(text) == json.loads(expected)


def test_compare_refuses_reading_flags_for_two_reports(
    example_site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [s["id"] for s in json.loads((example_site / "report.json").read_text())["result_sets"]]
    a, b = f"{example_site}#{ids[0]}", f"{example_site}#{ids[1]}"
    status, _, err = run(["compare", a, b, "--input-format", "jsonl"], capsys)
    assert status == 2
    assert "--input-format: A and B are both reports" in err
    # One result file among them: the flag reads it.
    status, _, _ = run(["compare", a, str(ALPHA), "--input-format", "jsonl"], capsys)
    assert status == 0


def test_check_reads_a_baseline_table_with_its_columns_named(
    example_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "old"
    baseline.mkdir()
    for runs in (ALPHA, BETA):
        as_table(runs, baseline / f"{runs.stem}.csv")
    argv = ["check", str(example_site), "--baseline", str(baseline), "--per-task", "--format"]
    status, _, err = run([*argv, "json"], capsys)
    assert status == 2 and "old" in err
    status, text, _ = run([*argv, "json", "--columns", COLUMNS], capsys)
    folder = tmp_path / "same"
    folder.mkdir()
    for runs in (ALPHA, BETA):
        (folder / runs.name).write_bytes(runs.read_bytes())
    expected_status, expected, _ = run(
        ["check", str(example_site), "--baseline", str(folder), "--per-task", "--format", "json"],
        capsys,
    )
    assert status == expected_status
    got, want = json.loads(text), json.loads(expected)
    assert got["baseline"].startswith(str(baseline)) and want["baseline"].startswith(str(folder))
    got.pop("baseline")
    want.pop("baseline")
    assert got == want


@pytest.mark.parametrize("baseline", ["site", "history"])
def test_check_refuses_reading_flags_for_a_report_or_history_baseline(
    example_site: Path, baseline: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = example_site if baseline == "site" else example_site / "history.jsonl"
    if not path.exists():
        pytest.fail(f"the example site has no {path.name}")
    argv = ["check", str(example_site), "--baseline", str(path), "--per-task"]
    status, _, err = run([*argv, "--columns", "task=id"], capsys)
    assert status == 2
    assert f"--columns: --baseline {path} is a report or a history" in err


def test_check_says_a_reading_flag_needs_a_baseline(
    example_site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", str(example_site), "--min-reliability", "0.1", "--threshold", "0.5"]
    status, _, err = run(argv, capsys)
    assert status == 2
    assert "--threshold needs --baseline OLD" in err


def test_a_scorer_needs_a_use_in_a_or_b_not_in_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An Inspect log with several scorers against a JSONL of the same tasks: --scorer
    # picks the log's, as build and summary take it, and the JSONL has no use for it.
    log = ROOT / "tests/fixtures/inspect/mini.json"
    runs = tmp_path / "runs.jsonl"
    runs.write_text(
        "".join(
            json.dumps({"task": task, "passed": (task + str(r)) in ("a0", "b1", "d2", "30")}) + "\n"
            for task in ("3", "a", "b", "d")
            for r in range(3)
        )
    )
    status, _, err = run(["compare", str(log), str(runs)], capsys)
    assert status == 2 and "several scorers" in err
    status, text, err = run(["compare", str(log), str(runs), "--scorer", "match"], capsys)
    assert status == 0, err
    assert "4 shared tasks" in text
    # With no input that holds several scores, the flag changed nothing: refused.
    status, _, err = run(["compare", str(runs), str(runs), "--scorer", "match"], capsys)
    assert status == 2 and "--scorer match: no input holds several scores" in err
