"""`reportgen estimate`: the SPEC's numbers in both formats, and every error path."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reportgen.cli import main


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    status = main(argv, out=out)
    return status, out.getvalue()


def test_single_task_text_prints_spec_numbers() -> None:
    status, text = run(["estimate", "--successes", "16", "--runs", "20", "-k", "3"])
    assert status == 0
    row = next(line for line in text.splitlines() if line.startswith("1 "))
    assert row.split() == [
        *("1", "16/20", "0.800", "[0.584,", "0.919]"),
        *("0.512", "[0.199,", "0.777]", "0.491", "0.996"),
    ]
    assert "95%" in text


def test_suite_text_prints_spec_numbers() -> None:
    status, text = run(["estimate", "--suite", "16/20", "18/20", "20/20", "12/20", "-k", "3"])
    assert status == 0
    assert "plug-in:  0.614 [0.086, 1.000]" in text
    assert "sd 0.332" in text and "t = 3.182 with 3 df" in text
    plugin_column = [line.split()[5] for line in text.splitlines() if line[:1].isdigit()]
    assert plugin_column == ["0.512", "0.729", "1.000", "0.216"]


def test_suite_given_in_several_flags_is_one_suite() -> None:
    """--suite twice adds tasks (the last one alone was kept, silently)."""
    argv = ["estimate", "--suite", "16/20", "18/20", "--suite", "20/20", "12/20", "-k", "3"]
    assert run(argv) == run(["estimate", "--suite", "16/20", "18/20", "20/20", "12/20", "-k", "3"])


def test_suite_json_has_the_documented_shape_and_values() -> None:
    status, text = run(
        ["estimate", "--suite", "16/20", "18/20", "20/20", "12/20", "-k", "3", "--format", "json"]
    )
    assert status == 0
    doc = json.loads(text)
    assert list(doc) == ["k", "confidence", "tasks", "reliability_at_k", "coverage", "warnings"]
    assert (doc["k"], doc["confidence"], doc["warnings"]) == (3, 0.95, [])
    first = doc["tasks"][0]
    assert list(first) == ["successes", "runs", "pass_rate", "pass_hat_k", "pass_at_k"]
    assert round(first["pass_rate"]["low"], 10) == 0.5839825677
    assert round(first["pass_hat_k"]["plugin"]["high"], 10) == 0.7770192566
    assert round(first["pass_hat_k"]["unbiased"], 10) == 0.4912280702
    assert round(first["pass_at_k"], 10) == 0.9964912281
    rel = doc["reliability_at_k"]
    assert rel["tasks"] == 4
    assert rel["headline"] == "unbiased"  # the two intervals tie here; unbiased wins ties
    assert {i["interval"] for i in doc["coverage"]["intervals"]} == {
        "plugin_t",
        "unbiased_t",
        "bootstrap",
    }
    expected_plugin = {"estimate": 0.61425, "low": 0.0856790158, "high": 1.0}
    expected_plugin |= {"sd": 0.3321790431, "t": 3.1824463053, "df": 3}
    assert {key: round(v, 10) for key, v in rel["plugin"].items()} == expected_plugin
    assert round(rel["unbiased"]["estimate"], 10) == 0.6
    assert round(rel["unbiased"]["low"], 10) == 0.0557940701
    assert round(rel["unbiased"]["sd"], 10) == 0.3420047836


def test_one_task_json_has_null_interval_and_df_zero() -> None:
    _, text = run(["estimate", "--successes", "16", "--runs", "20", "--format", "json"])
    plugin = json.loads(text)["reliability_at_k"]["plugin"]
    assert (plugin["low"], plugin["high"], plugin["sd"], plugin["t"], plugin["df"]) == (
        None,
        None,
        None,
        None,
        0,
    )


def test_k_above_runs_gives_null_and_a_warning() -> None:
    _, text = run(["estimate", "--suite", "2/2", "3/5", "-k", "3", "--format", "json"])
    doc = json.loads(text)
    assert doc["tasks"][0]["pass_hat_k"]["unbiased"] is None
    assert doc["tasks"][0]["pass_at_k"] is None
    assert doc["reliability_at_k"]["unbiased"]["estimate"] is None
    assert any("task 1" in w and "2 runs" in w for w in doc["warnings"])


def test_confidence_changes_intervals() -> None:
    _, text = run(["estimate", "--successes", "16", "--runs", "20", "--confidence", "0.9"])
    assert "90%" in text and "[0.584," not in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--successes", "21", "--runs", "20"], "--successes (21) cannot exceed --runs (20)"),
        (["--successes", "0", "--runs", "0"], "--runs: must be at least 1, got 0"),
        (["--successes", "-1", "--runs", "5"], "--successes: must be at least 0, got -1"),
        (["--successes", "2.5", "--runs", "5"], "--successes: '2.5' is not a whole number"),
        (["--successes", "2", "--runs", "five"], "--runs: 'five' is not a whole number"),
        (["--successes", "2", "--runs", "5", "-k", "0"], "-k: must be at least 1, got 0"),
        (["--successes", "2", "--runs", "5", "-k", "1.5"], "-k: '1.5' is not a whole number"),
        (["--successes", "2", "--runs", "5", "--confidence", "1"], "strictly between 0 and 1"),
        (["--successes", "2", "--runs", "5", "--confidence", "0"], "strictly between 0 and 1"),
        (["--successes", "2", "--runs", "5", "--confidence", "x"], "'x' is not a number"),
        # int() and float() take these; a flag does not (30 and 0.95 were read).
        (["--successes", "2", "--runs", "5", "-k", "3_0"], "-k: '3_0' is not a whole number"),
        (["--successes", "2", "--runs", "5", "-k", "٣"], "-k: '٣' is not a whole number"),
        (["--successes", "2", "--runs", "5", "--confidence", "0.9_5"], "'0.9_5' is not a number"),
        (["--suite", "16/20", "18/20", "20/20", "12/x"], "--suite item 4: '12/x' is not"),
        (["--suite", "5/3"], "--suite item 1: '5/3' has more successes than runs"),
        (["--suite", "1/2", "0/0"], "--suite item 2: '0/0' has no runs"),
        (["--suite", "1/-2"], "--suite item 1: '1/-2' is not SUCCESSES/RUNS"),
        (["--suite", "²/3"], "--suite item 1: '²/3' is not SUCCESSES/RUNS"),
        (["--suite", "1/" + "9" * 5000], "has more than 1,000,000,000 runs"),
        (["--suite", "9" * 5000 + "/3"], "has more successes than runs"),
        (["--suite", "-1/2"], "argument --suite: expected at least one argument"),
        (["--suite", "1/2", "--runs", "3"], "either --suite or --successes/--runs"),
        (["--runs", "3"], "give --successes and --runs"),
        (["--successes", "1", "--runs", "2", "--format", "xml"], "invalid choice: 'xml'"),
    ],
)
def test_bad_input_exits_2_with_one_located_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run(["estimate", *argv])
    err = capsys.readouterr().err
    assert status == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err
    assert "Traceback" not in err


def test_module_entry_point_runs_as_a_user_would() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "reportgen", "estimate", "--suite", "16/20", "12/x"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "reportgen: error: --suite item 2: '12/x' is not SUCCESSES/RUNS (for example 16/20)"
    )
    assert result.stdout == ""


def test_help_lists_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", "--help"])
    assert exit_info.value.code == 0
    assert "reportgen estimate --suite 16/20" in capsys.readouterr().out


def _readme_console_blocks() -> list[tuple[list[str], list[str]]]:
    """(argv, shown output lines) of each `$ .venv/bin/reportgen ...` block in the README."""
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    blocks = []
    for body in readme.split("```console\n")[1:]:
        command, *shown = body.split("\n```", 1)[0].splitlines()
        prefix = "$ .venv/bin/reportgen "
        if command.startswith(prefix):
            blocks.append((command.removeprefix(prefix).split(), shown))
    return blocks


def test_the_readme_shows_the_calculator_at_work() -> None:
    # Guards the test below, which would pass with no examples found.
    assert [argv[0] for argv, _ in _readme_console_blocks()] == ["estimate", "estimate"]


@pytest.mark.parametrize("argv, shown", _readme_console_blocks())
def test_readme_examples_print_what_the_readme_shows(argv: list[str], shown: list[str]) -> None:
    status, out = run(argv)
    assert status == 0
    lines = out.rstrip("\n").splitlines()
    if "..." in shown:  # the README shows the end of a longer output
        tail = shown[shown.index("...") + 1 :]
        assert lines[-len(tail) :] == tail
    else:
        assert lines == shown


def test_a_suite_of_one_task_gets_its_suite_block_and_the_warning() -> None:
    # Asked as a suite, one task still gets reliability@k, as summary and the
    # calculator give it, with the warning that no interval can be made.
    _, suite = run(["estimate", "--suite", "16/20", "-k", "3"])
    assert "reliability@3 (1 task, 95% Student-t interval across tasks)" in suite
    assert "  unbiased: 0.491 [n/a]  (headline)" in suite
    assert "warning: one task only: the suite interval needs at least two tasks" in suite
    _, task = run(["estimate", "--successes", "16", "--runs", "20", "-k", "3"])
    assert "reliability@3" not in task and "warning" not in task


def test_plan_writes_a_tiny_target_and_big_counts_readably() -> None:
    _, text = run(["plan", "--target-halfwidth", "0.0001"])
    assert "to within ±0.0001 at 95%" in text  # not "±0.000"
    assert "runs per task: 96,036,467" in text and "about 0.0002 at 80% power" in text
