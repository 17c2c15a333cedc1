"""`reportgen summary` (and `build` on bad input): output shapes, and exit 2 on every bad input."""

from __future__ import annotations

import io
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reportgen.cli import main
from reportgen.stats.clustered import clustered_reliability
from reportgen.stats.compare import compare
from reportgen.stats.estimate import estimate_suite
from reportgen.stats.variance import decompose_variance
from reportgen.terminal import plain_warning

FIXTURES = Path(__file__).parent / "fixtures"
TAU_BENCH_SMALL = FIXTURES / "tau-bench" / "gpt-4o-airline-small.json"
TAU_BENCH_REAL = Path("/work/shared/data/tau-bench/gpt-4o-airline.json")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()  # drop anything printed before
    out = io.StringIO()
    status = main(argv, out=out)
    return status, out.getvalue(), capsys.readouterr().err


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def runs_for(task: str, successes: int, runs: int, **extra: Any) -> list[dict[str, Any]]:
    return [{"task": task, "passed": i < successes, **extra} for i in range(runs)]


@pytest.fixture
def suite_file(tmp_path: Path) -> Path:
    """Counts 16/20, 18/20, 20/20, 12/20, interleaved, with excluded runs on t2."""
    records = (
        runs_for("t1", 16, 20)
        + runs_for("t2", 18, 20)
        + runs_for("t3", 20, 20)
        + runs_for("t4", 12, 20)
        + [{"task": "t2", "passed": None}] * 2
    )
    # Keep first appearances in t1..t4 order, shuffle the rest.
    head, tail = records[:1] + records[20:21] + records[40:41] + records[60:61], records
    rest = [r for i, r in enumerate(tail) if i not in (0, 20, 40, 60)]
    random.Random(5).shuffle(rest)
    return write(tmp_path / "suite.jsonl", jsonl(*head, *rest))


def test_summary_json_matches_estimate_json(
    suite_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text, err = run(["summary", str(suite_file), "--format", "json"], capsys)
    assert (status, err) == (0, "")
    summary = json.loads(text)
    status, text, _ = run(
        ["estimate", "--suite", "16/20", "18/20", "20/20", "12/20", "--format", "json"], capsys
    )
    assert status == 0
    estimate = json.loads(text)

    assert list(summary) == ["k", "confidence", "result_sets", "skipped_files"]
    assert (summary["k"], summary["confidence"]) == (estimate["k"], estimate["confidence"])
    (rs,) = summary["result_sets"]
    assert list(rs) == [
        "suite",
        "model",
        "condition",
        "name",
        "format",
        "excluded_runs",
        "tasks",
        "reliability_at_k",
        "coverage",
        "warnings",
    ]
    assert (rs["suite"], rs["model"], rs["name"], rs["format"]) == ("suite", "", "suite", "jsonl")
    assert rs["excluded_runs"] == 2
    assert [t["id"] for t in rs["tasks"]] == ["t1", "t2", "t3", "t4"]
    assert [t["excluded_runs"] for t in rs["tasks"]] == [0, 2, 0, 0]
    for task in rs["tasks"]:
        assert list(task) == [
            "id",
            "successes",
            "runs",
            "excluded_runs",
            "pass_rate",
            "pass_hat_k",
            "pass_at_k",
        ]
    trimmed = [
        {key: value for key, value in task.items() if key not in ("id", "excluded_runs")}
        for task in rs["tasks"]
    ]
    assert trimmed == estimate["tasks"]
    assert rs["reliability_at_k"] == estimate["reliability_at_k"]
    # The same check on the same shape and counts: the same simulated coverage.
    assert rs["coverage"] == estimate["coverage"]
    assert [i["interval"] for i in rs["coverage"]["intervals"]][:3] == [
        "plugin_t",
        "unbiased_t",
        "bootstrap",
    ]
    assert rs["warnings"] == estimate["warnings"] == []


def test_summary_text_has_a_table_and_the_reliability_line(
    suite_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text, err = run(["summary", str(suite_file)], capsys)
    assert (status, err) == (0, "")
    assert text.startswith("k = 3; intervals at 95%")
    assert "suite  (jsonl; 4 tasks, 80 runs, 2 excluded)" in text
    rows = {
        parts[0]: parts
        for line in text.splitlines()
        if (parts := line.split()) and re.fullmatch(r"t\d", parts[0])
    }
    assert sorted(rows) == ["t1", "t2", "t3", "t4"]
    assert rows["t1"][1] == "16/20" and rows["t4"][1] == "12/20"
    assert "reliability@3 (4 tasks, 95% Student-t interval across tasks)" in text
    assert "plug-in:  0.614 [0.086, 1.000]" in text
    assert "unbiased: 0.600 [0.056, 1.000]" in text


def test_summary_text_shows_a_block_per_result_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "two.jsonl",
        jsonl(
            *runs_for("alpha-task", 3, 4, model="m1"),
            *runs_for("beta-task", 1, 4, model="m2"),
            *runs_for("gamma-task", 4, 4, model="m2"),
        ),
    )
    status, text, _ = run(["summary", str(path), "-k", "2"], capsys)
    assert status == 0
    assert "m1 · two  (jsonl; 1 task, 4 runs)" in text
    assert "m2 · two  (jsonl; 2 tasks, 8 runs)" in text
    for task in ("alpha-task", "beta-task", "gamma-task"):
        assert task in text
    assert text.count("reliability@2 (") == 2


tau_bench_files = pytest.mark.parametrize(
    "path",
    [
        pytest.param(TAU_BENCH_SMALL, id="small-fixture"),
        pytest.param(
            TAU_BENCH_REAL,
            id="real-file",
            marks=pytest.mark.skipif(
                not TAU_BENCH_REAL.exists(), reason=f"{TAU_BENCH_REAL} is not on this machine"
            ),
        ),
    ],
)


@tau_bench_files
@pytest.mark.parametrize(("k", "published"), [(1, 0.420), (2, 0.273), (3, 0.220), (4, 0.200)])
def test_summary_reproduces_tau_bench_pass_hat_k(
    path: Path, k: int, published: float, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text, _ = run(["summary", str(path), "-k", str(k), "--format", "json"], capsys)
    assert status == 0
    (rs,) = json.loads(text)["result_sets"]
    assert rs["format"] == "tau-bench"
    assert len(rs["tasks"]) == 50
    assert round(rs["reliability_at_k"]["unbiased"]["estimate"], 3) == published


def test_summary_tau2_reports_excluded_runs_and_the_empty_task(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = FIXTURES / "tau2" / "results.json"
    status, text, _ = run(["summary", str(path), "-k", "2", "--format", "json"], capsys)
    assert status == 0
    (rs,) = json.loads(text)["result_sets"]
    assert (rs["suite"], rs["format"], rs["excluded_runs"]) == ("airline", "tau2-bench", 7)
    tasks = {t["id"]: (t["successes"], t["runs"], t["excluded_runs"]) for t in rs["tasks"]}
    assert tasks == {"0": (4, 4, 0), "1": (2, 4, 0), "2": (0, 4, 0), "3": (2, 3, 1), "4": (1, 2, 2)}
    assert any("task '5' has no evaluated runs (4 excluded)" in w for w in rs["warnings"])


@pytest.mark.parametrize("name", ["mini_zstd.eval", "mini_deflate.eval", "mini.json"])
def test_summary_inspect_with_scorer_flag(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "inspect" / name
    status, text, _ = run(["summary", str(path), "--scorer", "numeric", "--format", "json"], capsys)
    assert status == 0
    (rs,) = json.loads(text)["result_sets"]
    tasks = {t["id"]: (t["successes"], t["runs"]) for t in rs["tasks"]}
    assert tasks == {"a": (3, 3), "b": (0, 3), "3": (2, 3), "d": (0, 3)}


def test_an_empty_scorer_flag_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """Often an unset CI variable; it was ignored without a word."""
    path = FIXTURES / "inspect" / "mini.json"
    status, text, err = run(["summary", str(path), "--scorer", ""], capsys)
    assert status == 2 and text == ""
    assert err == (
        "reportgen: error: --scorer: empty; leave it out to read the only score, or name one\n"
    )


def test_per_set_flags_apply_to_a_config_s_sets_that_do_not_set_their_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = FIXTURES / "inspect" / "mini.json"
    config = write(tmp_path / "plain.yaml", f"result_sets:\n  - path: {log}\n")
    # Without the flag the set has several scorers to choose from.
    status, _, err = run(["summary", "--config", str(config)], capsys)
    assert status == 2 and "several scorers" in err
    argv = ["summary", "--config", str(config), "--scorer", "numeric", "--format", "json"]
    status, text, _ = run(argv, capsys)
    assert status == 0
    (flagged,) = json.loads(text)["result_sets"]
    assert {t["id"]: t["successes"] for t in flagged["tasks"]} == {"a": 3, "b": 0, "3": 2, "d": 0}
    # A set's own scorer wins over the flag.
    own = write(tmp_path / "own.yaml", f"result_sets:\n  - path: {log}\n    scorer: acc\n")
    status, _, err = run(["summary", "--config", str(own), "--scorer", "numeric"], capsys)
    assert status == 2 and "scorer 'acc' is not in this log" in err


def test_scorer_flag_applies_to_the_inputs_that_have_scorers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = FIXTURES / "inspect" / "mini.json"
    runs = write(tmp_path / "r.jsonl", GOOD_LINE)
    argv = ["summary", str(log), str(runs), "--scorer", "numeric", "--format", "json"]
    status, text, err = run(argv, capsys)
    assert status == 0, err
    assert sorted(rs["format"] for rs in json.loads(text)["result_sets"]) == ["inspect", "jsonl"]
    # The build says which scorer it counted, where it says what it read.
    argv = ["build", str(log), str(runs), "--scorer", "numeric", "-o", str(tmp_path / "site")]
    status, _, err = run(argv, capsys)
    assert status == 0, err
    assert f"read {log} (inspect, detected; scorer numeric)" in err
    assert f"read {runs} (jsonl, detected)\n" in err


def test_summary_warns_when_no_interval_reaches_its_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two runs per task and k = 5: nothing unbiased is defined, the plug-in covers badly
    # and the bootstrap (of the plug-in), which leads, not well either.
    lines = [
        f'{{"task": "t{i}", "passed": {str(j < i % 3).lower()}}}'
        for i in range(40)
        for j in range(2)
    ]
    path = write(tmp_path / "r.jsonl", "\n".join(lines) + "\n")
    status, text, _ = run(["summary", str(path), "-k", "5"], capsys)
    assert status == 0
    said = " ".join(text.split())
    # The headline's own figure, and the best of every interval's.
    found = re.search(
        r"warning: the headline interval \(two-stage bootstrap\) covered the true "
        r"value in only (\d+\.\d)% of simulated suites of this shape, against its claimed 95%: "
        r"read it as uncalibrated; no interval here reaches its level \(the best covered "
        r"(\d+\.\d)%\)",
        said,
    )
    assert found is not None and float(found.group(1)) == float(found.group(2)) < 80
    # Below 80% it is not the headline: reliability@2, which every task has runs for, is.
    instead = re.search(
        r"so it is given without an interval, and what the runs support leads instead: "
        r"reliability@2 \(unbiased\) (0\.\d{3}) \[(0\.\d{3}), (0\.\d{3})\], whose interval "
        r"covered (\d+\.\d)%",
        said,
    )
    assert instead is not None
    reference = estimate_suite([i % 3 for i in range(40)], [2] * 40, 2).unbiased
    assert instead.group(1) == f"{reference.estimate:.3f}"
    assert instead.group(2, 3) == (f"{reference.low:.3f}", f"{reference.high:.3f}")
    status, text, _ = run(["summary", str(path), "-k", "5", "--format", "json"], capsys)
    assert status == 0 and "(null)" in text  # the JSON names its nulls
    # ... and lists the same warnings, the coverage check's shortfall among them.
    (found_set,) = json.loads(text)["result_sets"]
    assert any(
        w.startswith("the headline interval (two-stage bootstrap) covered")
        and f"the best covered {found.group(2)}%" in w
        for w in found_set["warnings"]
    )
    own = found_set["reliability_at_k"]["headline_uncalibrated"]
    assert f"{own * 100:.1f}%" == f"{found.group(1)}%"
    supported = found_set["reliability_at_k"]["supported"]
    assert supported["k"] == 2 and supported["estimate"] == reference.estimate
    assert f"{supported['coverage'] * 100:.1f}" == instead.group(4)


def test_plain_warnings_drop_the_json_null_marks_but_not_from_task_names() -> None:
    """Every kind of warning the core marks with (null) loses the mark; a task whose
    name holds " (null)" keeps its name, before the mark or at the warning's end."""
    named = ["parse (null) input", "x (null)"]
    warnings = [
        *estimate_suite([1, 2], [2, 5], 3, labels=named).warnings,
        *estimate_suite([1], [1], 3).warnings,
        *estimate_suite([1, 1], [2, 2], 3, labels=named).warnings,
        *compare({"x (null)": (1, 2)}, {"x (null)": (1, 2)}, 3).warnings,
        *decompose_variance([1, 1], [1, 1]).warnings,
        *clustered_reliability([1, 2], [5, 5], 3, ["a", "a"]).warnings,
    ]
    plain = [plain_warning(w) for w in warnings]
    marked = [
        w
        for w in warnings
        if "(null)" in w.replace("parse (null) input", "").replace("x (null)", "")
    ]
    assert len(marked) == 13  # all but the zero-width one mark a null
    for before, after in zip(warnings, plain, strict=True):
        for name in named:  # the names stay, as many times as the warning quotes them
            assert after.count(name) == before.count(name)
        assert after.replace(named[0], "").replace(named[1], "").count("(null)") == 0
    assert plain[1].endswith("fewer than 3 runs: parse (null) input")
    assert plain[2].startswith("over the 1 task with 3 or more runs")  # no null to mark
    assert plain[7].startswith("x (null) has 2 runs")
    assert plain[10].endswith("on at least one side: 'x (null)'")


def test_threshold_applies_to_the_inputs_with_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = FIXTURES / "inspect" / "mini.json"
    table = write(tmp_path / "t.csv", "task,passed\na,0.7\na,0.2\n")
    runs = write(tmp_path / "r.jsonl", GOOD_LINE)
    argv = ["summary", str(log), str(table), str(runs), "--scorer", "numeric"]
    status, text, err = run([*argv, "--threshold", "0.5", "--format", "json"], capsys)
    assert status == 0, err
    sets = {rs["format"]: rs for rs in json.loads(text)["result_sets"]}
    counts = {t["id"]: t["successes"] for t in sets["inspect"]["tasks"]}
    assert counts == {"a": 3, "b": 0, "3": 2, "d": 3}  # d's numeric 0.5 passes at 0.5
    assert [t["successes"] for t in sets["csv"]["tasks"]] == [1]
    # Without it, an Inspect number passes only at exactly 1.
    argv = ["summary", str(log), "--scorer", "numeric", "--format", "json"]
    status, text, err = run(argv, capsys)
    assert status == 0, err
    (alone,) = json.loads(text)["result_sets"]
    assert {t["id"]: t["successes"] for t in alone["tasks"]}["d"] == 0


def test_summary_input_format_flag_skips_detection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "runs.log", jsonl({"passed": True, "task": "a"}, {"task": "a", "passed": 0})
    )
    status, text, _ = run(
        ["summary", str(path), "--input-format", "jsonl", "--format", "json"], capsys
    )
    assert status == 0
    assert json.loads(text)["result_sets"][0]["tasks"][0]["runs"] == 2


def test_summary_human_eval_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [
        {"task_id": "HumanEval/0", "completion": "  return 1", "result": "passed", "passed": True},
        {
            "task_id": "HumanEval/0",
            "completion": "  return 2",
            "result": "failed: ",
            "passed": False,
        },
        {"task_id": "HumanEval/1", "completion": "  pass", "result": "timed out", "passed": False},
    ]
    path = write(tmp_path / "samples.jsonl_results.jsonl", jsonl(*records))
    status, text, _ = run(["summary", str(path), "-k", "1", "--format", "json"], capsys)
    assert status == 0
    tasks = json.loads(text)["result_sets"][0]["tasks"]
    assert [(t["id"], t["successes"], t["runs"]) for t in tasks] == [
        ("HumanEval/0", 1, 2),
        ("HumanEval/1", 0, 1),
    ]


def test_summary_accepts_bom_and_crlf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = '{"task": "a", "passed": true}\r\n{"task": "a", "passed": false}\r\n'
    path = write(tmp_path / "r.jsonl", b"\xef\xbb\xbf" + text.encode())
    status, out, err = run(["summary", str(path), "-k", "1", "--format", "json"], capsys)
    assert (status, err) == (0, "")
    task = json.loads(out)["result_sets"][0]["tasks"][0]
    assert (task["id"], task["successes"], task["runs"]) == ("a", 1, 2)


# ---------------------------------------------------------------- exit 2 on bad input

GOOD_LINE = '{"task": "a", "passed": true}\n'


def _huge_line(tmp_path: Path) -> Path:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        handle.write(b'{"task": "')
        chunk = b"x" * 1_000_000
        for _ in range(100):
            handle.write(chunk)
    return path


Case = Callable[[Path], tuple[list[str], str]]

BAD_INPUTS: dict[str, Case] = {
    "empty file": lambda d: (
        [str(write(d / "e.jsonl", b""))],
        r"e\.jsonl: the file is empty",
    ),
    "jsonl with no tasks": lambda d: (
        [str(write(d / "b.jsonl", "\n\n \n"))],
        r"b\.jsonl: no tasks found",
    ),
    "yaml with no tasks": lambda d: (
        [str(write(d / "s.yaml", "suite: s\nmodel: m\ntasks: []\n"))],
        r"s\.yaml: tasks: expected a non-empty list",
    ),
    "c > n": lambda d: (
        [
            str(
                write(
                    d / "s.yaml",
                    "tasks:\n- {id: a, successes: 1, runs: 2}\n"
                    "- {id: b, successes: 1, runs: 2}\n- {id: c, successes: 1, runs: 2}\n"
                    "- {id: d, successes: 4, runs: 2}\n",
                )
            )
        ],
        r"s\.yaml: tasks\[3\]\.successes: 4 is more than runs \(2\)",
    ),
    "negative count": lambda d: (
        [str(write(d / "s.yaml", "tasks:\n- {id: a, successes: -1, runs: 2}\n"))],
        r"s\.yaml: tasks\[0\]\.successes: must not be negative, got -1",
    ),
    "repeated run": lambda d: (
        [
            str(
                write(
                    d / "r.jsonl",
                    jsonl(
                        {"task": "a", "run": 0, "passed": True},
                        {"task": "a", "run": 0, "passed": False},
                    ),
                )
            )
        ],
        r"r\.jsonl:2: run 0 of task 'a' appears twice",
    ),
    "passed yes": lambda d: (
        [str(write(d / "r.jsonl", GOOD_LINE + '{"task": "a", "passed": "yes"}\n'))],
        r'r\.jsonl:2: "passed": "yes" is not true, false, 1, 0 or null',
    ),
    "task list": lambda d: (
        [str(write(d / "r.jsonl", GOOD_LINE + '{"task": [1], "passed": true}\n'))],
        r"r\.jsonl:2: \"task\" \(or \"task_id\"\): \[1\] is not a task id",
    ),
    "NaN in jsonl": lambda d: (
        [str(write(d / "r.jsonl", '{"task":"a","passed":NaN}\n'))],
        r"r\.jsonl:1: not valid JSON: NaN",
    ),
    "NaN in tau-bench": lambda d: (
        [
            str(
                write(
                    d / "tb.json",
                    '[{"task_id": 0, "trial": 0, "reward": 1.0},\n'
                    ' {"task_id": 0, "trial": 1, "reward": NaN}]',
                )
            )
        ],
        r"tb\.json: \[1\]\.reward: NaN is not valid JSON",
    ),
    "Infinity in tau-bench": lambda d: (
        [str(write(d / "tb.json", '[{"task_id": 0, "trial": 0, "reward": Infinity}]'))],
        r"tb\.json: \[0\]\.reward: Infinity is not valid JSON",
    ),
    "truncated last line": lambda d: (
        [str(write(d / "r.jsonl", GOOD_LINE * 3 + '{"task": "a", "pa'))],
        r"r\.jsonl:4: not valid JSON: .*cut short",
    ),
    "binary junk jsonl": lambda d: (
        [str(write(d / "j.jsonl", b"\x89PNG" + random.Random(9).randbytes(3000)))],
        r"j\.jsonl:1: not (UTF-8 text|valid JSON)",
    ),
    "binary junk json": lambda d: (
        [str(write(d / "j.json", b"\x89PNG" + random.Random(9).randbytes(3000)))],
        r"j\.json: cannot tell the format; .*jsonl, yaml, tau-bench, tau2-bench, inspect",
    ),
    "100 MB line": lambda d: (
        [str(_huge_line(d))],
        r"huge\.jsonl:1: line is longer than 16 MiB",
    ),
    "unknown input format": lambda d: (
        [str(write(d / "r.jsonl", GOOD_LINE)), "--input-format", "xlsx"],
        r"--input-format: invalid choice: 'xlsx' \(choose from .*jsonl.*inspect",
    ),
    "unknown format in config": lambda d: (
        [
            "--config",
            str(write(d / "reportgen.yaml", "result_sets:\n  - {path: r.xlsx, format: xlsx}\n")),
        ],
        r"reportgen\.yaml: result_sets\[0\]\.format: unknown format 'xlsx'; known formats: ",
    ),
    "missing file": lambda d: (
        [str(d / "missing.jsonl")],
        r"missing\.jsonl: no such file",
    ),
    "folder of no known format": lambda d: (
        [str(write(d / "notes" / "notes.txt", "just some notes\n").parent)],
        r"notes: no result files of a known format in the folder \(1 file looked at\)",
    ),
    "undetectable format": lambda d: (
        [str(write(d / "notes.txt", "just some notes\n"))],
        r"notes\.txt: cannot tell the format; .*jsonl, yaml, tau-bench, tau2-bench, inspect",
    ),
    "several inspect scorers": lambda d: (
        [str(FIXTURES / "inspect" / "mini_zstd.eval")],
        r"mini_zstd\.eval: the log has several scorers \(match, numeric, boolean\)",
    ),
    "unknown inspect scorer": lambda d: (
        [str(FIXTURES / "inspect" / "mini.json"), "--scorer", "acc"],
        r"mini\.json: scorer 'acc' is not in this log; it has match, numeric, boolean",
    ),
    "--scorer with no input that has scorers": lambda d: (
        [str(write(d / "r.jsonl", GOOD_LINE)), "--scorer", "accuracy"],
        r"--scorer accuracy: no input holds several scores to pick from \(only inspect and "
        r"harbor files do; these are jsonl\)",
    ),
    "--threshold with no input that has scores": lambda d: (
        [str(write(d / "r.jsonl", GOOD_LINE)), "--threshold", "0.5"],
        r"--threshold 0\.5: no input gives scores to compare with it \(only inspect, harbor, "
        r"csv and parquet files do; these are jsonl\)",
    ),
    "threshold: on a set whose format has no scores": lambda d: (
        [
            "--config",
            str(
                write(
                    d / "c.yaml",
                    f"result_sets:\n  - path: {write(d / 'r.jsonl', GOOD_LINE)}\n"
                    "    threshold: 0.5\n",
                )
            ),
        ],
        r"r\.jsonl: threshold: applies to scores, which only inspect, harbor, csv and parquet "
        r"files hold; jsonl files hold a pass or fail per run",
    ),
    "scorer: on a set whose format has no scorers": lambda d: (
        [
            "--config",
            str(
                write(
                    d / "c.yaml",
                    f"result_sets:\n  - path: {write(d / 'r.jsonl', GOOD_LINE)}\n"
                    "    scorer: accuracy\n",
                )
            ),
        ],
        r"r\.jsonl: scorer: picks one of several scores, which only inspect and harbor "
        r"files hold; jsonl files hold one result per run",
    ),
    "bad -k": lambda d: (
        [str(write(d / "r.jsonl", GOOD_LINE)), "-k", "0"],
        r"-k: must be at least 1, got 0",
    ),
    "bad --confidence": lambda d: (
        [str(write(d / "r.jsonl", GOOD_LINE)), "--confidence", "95"],
        r"--confidence: must lie strictly between 0 and 1",
    ),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_exits_2_with_located_lines_and_no_output(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, expected = BAD_INPUTS[case](tmp_path)
    status, out, err = run(["summary", *args, "--format", "json"], capsys)
    assert status == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines and all(line.startswith("reportgen: error: ") for line in lines), err
    assert any(re.search(expected, line) for line in lines), err


def test_twenty_five_bad_lines_give_twenty_problems_and_a_stopped_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "bad.jsonl", '{"task": "a", "passed": "yes"}\n' * 25)
    status, out, err = run(["summary", str(path)], capsys)
    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert len(lines) == 21
    for number, line in enumerate(lines[:20], start=1):
        assert line.startswith(f"reportgen: error: {path}:{number}: "), line
    assert lines[20] == "reportgen: error: (stopped after 20 problems)"


def test_one_bad_file_among_good_ones_stops_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path / "good.jsonl", GOOD_LINE)
    bad = write(tmp_path / "bad.jsonl", '{"task": "a", "passed": 2}\n')
    status, out, err = run(
        ["summary", str(good), str(bad), str(FIXTURES / "tau2" / "results.json")], capsys
    )
    assert (status, out) == (2, "")
    assert err == (
        f'reportgen: error: {bad}:1: "passed": 2 is not true, false, 1, 0 or null\n'
        # The way past it, since the other files could be read.
        "reportgen: --skip-unreadable leaves out the files that cannot be read, lists them, "
        "and goes on\n"
    )


# ---------------------------------------------------------------- build on bad input


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_build_with_bad_input_leaves_the_existing_site_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path / "good.jsonl", jsonl(*runs_for("a", 3, 4), *runs_for("b", 4, 4)))
    site = tmp_path / "site"
    status, _, err = run(["build", str(good), "--output", str(site)], capsys)
    assert status == 0, err
    assert (site / "index.html").exists()
    write(site / "marker.txt", "mine\n")
    before = _snapshot(site)

    bad = write(tmp_path / "bad.jsonl", GOOD_LINE + '{"task": "a", "passed": "yes"}\n')
    status, out, err = run(["build", str(bad), "--output", str(site)], capsys)
    assert (status, out) == (2, "")
    assert f"{bad}:2: " in err and "Traceback" not in err
    assert _snapshot(site) == before
    # No staging folder is left beside the site either (the build cache may be).
    beside = sorted(p.name for p in tmp_path.iterdir() if p.name != ".reportgen-cache")
    assert beside == ["bad.jsonl", "good.jsonl", "site"]


def test_build_with_bad_input_creates_no_output_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path / "bad.jsonl", '{"task": "a", "passed": NaN}\n')
    status, _, err = run(["build", str(bad), "--output", str(tmp_path / "out")], capsys)
    assert status == 2
    assert f"{bad}:1: not valid JSON: NaN" in err
    assert not (tmp_path / "out").exists()


def test_one_of_a_thing_is_said_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = write(tmp_path / "one.jsonl", GOOD_LINE)
    status, text, _ = run(["summary", str(one)], capsys)
    assert status == 0
    assert "one  (jsonl; 1 task, 1 run)" in text
    assert "reliability@3 (1 task, 95% Student-t interval across tasks)" in text
    other = write(tmp_path / "other.jsonl", GOOD_LINE + '{"task": "b", "passed": false}\n')
    status, text, _ = run(["compare", str(one), str(other)], capsys)
    assert status == 0
    assert "1 shared task, k = 3" in text


def test_a_very_long_task_id_gets_a_line_of_its_own_not_a_wide_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_id = "t" * 5000
    lines = [
        json.dumps({"task": task, "passed": i % 2 == 0})
        for task in ("a", long_id, "b")
        for i in range(4)
    ]
    status, text, _ = run(
        ["summary", str(write(tmp_path / "r.jsonl", "\n".join(lines) + "\n"))], capsys
    )
    assert status == 0
    rows = text.splitlines()
    assert rows.count(long_id) == 1  # whole, on its own line
    table = rows[: next(i for i, row in enumerate(rows) if row.startswith("reliability@"))]
    assert max(len(row) for row in table if row != long_id) < 120
    # Its numbers follow on the next line, in the table's columns.
    after = rows[rows.index(long_id) + 1]
    assert after.split()[0] == "2/4" and after.startswith(" ")


def test_summary_without_the_coverage_check(
    suite_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text, _ = run(["summary", str(suite_file), "--format", "json"], capsys)
    assert status == 0
    (checked,) = json.loads(text)["result_sets"]
    status, text, _ = run(["summary", str(suite_file), "--format", "json", "--no-coverage"], capsys)
    assert status == 0
    (quick,) = json.loads(text)["result_sets"]
    assert checked["coverage"] is not None and quick["coverage"] is None
    # The same estimates; the unbiased one leads, as `estimate --no-coverage` has it.
    for estimator in ("plugin", "unbiased"):
        assert quick["reliability_at_k"][estimator] == checked["reliability_at_k"][estimator]
    assert quick["reliability_at_k"]["headline"] == "unbiased"
    status, text, _ = run(["summary", str(suite_file), "--no-coverage"], capsys)
    assert status == 0 and "coverage of each" not in text and "(headline)" in text
