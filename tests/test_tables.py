"""Tables (CSV, TSV, Parquet) of runs or of per-task counts, read through DuckDB.

The fixtures in tests/fixtures/tables hold one real run (τ-bench, gpt-4o, airline:
50 tasks x 4 trials) in every shape; the reference counts are computed here from
the τ-bench file itself, with plain Python, and checked against τ-bench's
published pass^k.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reportgen.cli import main
from reportgen.errors import UserError
from reportgen.readers import Source, detect_format, load_sources

from .conftest import FIXTURES, examples

TABLES = FIXTURES / "tables"
TAU_BENCH = FIXTURES / "tau-bench" / "gpt-4o-airline-small.json"


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


def reference_counts() -> dict[str, tuple[int, int]]:
    """{task: (passes, runs)} straight from the τ-bench file: reward 1 is a pass."""
    counts: dict[str, list[int]] = {}
    for record in json.loads(TAU_BENCH.read_text()):
        entry = counts.setdefault(str(record["task_id"]), [0, 0])
        entry[0] += abs(record["reward"] - 1) <= 1e-6
        entry[1] += 1
    return {task: (c, n) for task, (c, n) in counts.items()}


def counts_of(path: Path, **options: Any) -> dict[str, tuple[int, int]]:
    (rs,) = load_sources([Source(path, **options)]).result_sets
    return {t.id: (t.successes, t.runs) for t in rs.tasks}


def user_error(path: Path, *extra: str) -> str:
    """The message of a command that must fail with exit 2 (no traceback)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["summary", str(path), *extra], out=out)
    assert status == 2, out.getvalue()
    return err.getvalue()


def problems_of(path: Path, **options: Any) -> list[str]:
    with pytest.raises(UserError) as caught:
        load_sources([Source(path, **options)])
    return caught.value.problems


# ------------------------------------------------ every shape loads to the right counts

SHAPES = [
    ("airline-runs.csv", {}),
    ("airline-runs.parquet", {}),
    ("airline-counts.csv", {}),
    ("airline-counts.parquet", {}),
    ("airline-counts.jsonl", {}),
    ("airline-inspect.tsv", {}),
    ("airline-rewards.csv", {"columns": (("passed", "reward"),), "threshold": 1.0}),
    ("airline-runs.jsonl", {}),
]


@pytest.mark.parametrize(("name", "options"), SHAPES, ids=[name for name, _ in SHAPES])
def test_each_shape_loads_to_the_reference_counts(name: str, options: dict[str, Any]) -> None:
    assert counts_of(TABLES / name, **options) == reference_counts()


def test_the_counts_give_tau_bench_published_pass_hat_k() -> None:
    # τ-bench's README: pass^1..4 = 0.420, 0.273, 0.220, 0.200 (mean over tasks of
    # C(c, k) / C(n, k)), recomputed here from the counts read from a table.
    counts = counts_of(TABLES / "airline-counts.parquet").values()
    for k, published in zip((1, 2, 3, 4), (0.420, 0.273, 0.220, 0.200), strict=True):
        value = sum(math.comb(c, k) / math.comb(n, k) for c, n in counts) / len(counts)
        assert value == pytest.approx(published, abs=5e-4)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("airline-runs.csv", "csv"),
        ("airline-inspect.tsv", "csv"),
        ("airline-runs.parquet", "parquet"),
        ("airline-counts.parquet", "parquet"),
    ],
)
def test_tables_are_detected_by_suffix(name: str, expected: str) -> None:
    assert detect_format(TABLES / name) == expected


def test_tables_are_detected_by_content_without_a_suffix(tmp_path: Path) -> None:
    for name, expected in (("airline-runs.csv", "csv"), ("airline-counts.parquet", "parquet")):
        copy = tmp_path / name.replace(".", "_")
        copy.write_bytes((TABLES / name).read_bytes())
        assert detect_format(copy) == expected
    other = tmp_path / "notes"
    other.write_text("name,colour\nx,red\n")
    assert detect_format(other) is None


def test_a_task_in_two_tables_of_a_folder_is_refused_naming_both(tmp_path: Path) -> None:
    """Each table's tasks are counted whole (in DuckDB): a task whose runs two tables of
    one set hold is refused, naming where it was first, never counted from one alone."""
    header = "task,run,passed,model\n"
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "1.csv").write_text(header + "a,1,1,m\nb,1,1,m\n")
    (tmp_path / "runs" / "2.csv").write_text(header + "a,2,0,m\n")
    (problem,) = problems_of(tmp_path / "runs")
    assert problem == (
        f"{tmp_path / 'runs' / '2.csv'}: row 1: task 'a' is given more than once "
        f"(first at {tmp_path / 'runs' / '1.csv'}: row 1)"
    )


def test_run_ids_that_are_not_whole_numbers_are_text(tmp_path: Path) -> None:
    """1.5 is not run 2, nor 1_0 run 10, nor 1e0 run 1 (DuckDB's TRY_CAST reads each so):
    they are distinct runs, ordered after the whole numbers, as text."""
    path = tmp_path / "r.csv"
    path.write_text("task,run,passed\nt,1.5,1\nt,2,0\nu,1_0,1\nu,10,0\nv,1e0,1\nv,1,0\n")
    (rs,) = load_sources([Source(path)]).result_sets
    assert [(t.id, t.successes, t.runs, t.outcomes) for t in rs.tasks] == [
        ("t", 1, 2, [False, True]),
        ("u", 1, 2, [False, True]),
        ("v", 1, 2, [False, True]),
    ]


def test_runs_keep_their_order_and_excluded_runs(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    # Runs out of order, with ids as text: 10 sorts after 9, as whole numbers do in JSONL.
    path.write_text("task,run,passed\nt,10,1\nt,9,0\nt,2,\nt,1,true\nu,1,C\n")
    (rs,) = load_sources([Source(path)]).result_sets
    t, u = rs.tasks
    assert (t.id, t.successes, t.runs, t.excluded) == ("t", 2, 3, 1)
    assert t.outcomes == [True, None, False, True]
    assert (u.successes, u.runs, u.outcomes) == (1, 1, [True])


# ------------------------------------------------ the same runs, the same report


def _numbers(site: Path) -> Any:
    """report.json without what names the input (its format)."""
    doc = json.loads((site / "report.json").read_text())
    for rs in doc["result_sets"]:
        rs.pop("format")
    return doc


def _build(tmp_path: Path, name: str, *files: Path) -> Path:
    site = tmp_path / name
    status, _ = run(["build", *map(str, files), "-o", str(site), "--no-cache"])
    assert status == 0
    return site


def test_jsonl_csv_parquet_and_counts_build_identical_reports(tmp_path: Path) -> None:
    shapes = ["airline-runs.jsonl", "airline-runs.csv", "airline-runs.parquet"]
    shapes += ["airline-counts.csv", "airline-counts.parquet", "airline-counts.jsonl"]
    reports = [_numbers(_build(tmp_path, name, TABLES / name)) for name in shapes]
    assert reports[0]["result_sets"][0]["name"] == "gpt-4o · airline"
    for other in reports[1:]:
        assert other == reports[0]


MIXED_RUNS = [
    # suite, model, task, run, passed, category: two models, excluded runs, categories.
    ("s", "a", "t1", 1, True, "easy"),
    ("s", "a", "t1", 2, None, "easy"),
    ("s", "a", "t1", 3, True, "easy"),
    ("s", "a", "t2", 1, False, "hard"),
    ("s", "b", "t1", 1, True, "easy"),
    ("s", "a", "t2", 2, True, "hard"),
    ("s", "b", "t2", 2, None, "hard"),
    ("s", "b", "t1", 2, False, "easy"),
    ("s", "a", "t3", 1, True, None),
    ("s", "b", "t2", 1, True, "hard"),
    ("s", "a", "t2", 3, None, "hard"),
    ("s", "b", "t3", 1, False, None),
    ("s", "a", "t3", 2, True, None),
    ("s", "b", "t3", 2, False, None),
]


def _write_shapes(folder: Path, rows: list[tuple[Any, ...]]) -> dict[str, Path]:
    """The runs as JSONL, CSV and Parquet, and their counts as CSV."""
    keys = ("suite", "model", "task", "run", "passed", "category")
    jsonl = folder / "runs.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps(
                {k: v for k, v in zip(keys, row, strict=True) if v is not None or k == "passed"}
            )
            + "\n"
            for row in rows
        )
    )
    csv = folder / "runs.csv"
    cell = {True: "true", False: "false", None: ""}
    csv.write_text(
        ",".join(keys)
        + "\n"
        + "".join(f"{s},{m},{t},{r},{cell[p]},{c or ''}\n" for s, m, t, r, p, c in rows)
    )
    parquet = folder / "runs.parquet"
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE runs (suite VARCHAR, model VARCHAR, task VARCHAR, run BIGINT, "
        "passed BOOLEAN, category VARCHAR)"
    )
    con.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.execute(f"COPY runs TO '{parquet}' (FORMAT parquet)")
    tally: dict[tuple[str, str, str], Counter[Any]] = {}
    categories: dict[tuple[str, str, str], Any] = {}
    for s, m, t, _, p, c in rows:
        tally.setdefault((s, m, t), Counter())[p] += 1
        categories[(s, m, t)] = c
    counts = folder / "counts.csv"
    counts.write_text(
        "suite,model,task,successes,runs,excluded,category\n"
        + "".join(
            f"{s},{m},{t},{n[True]},{n[True] + n[False]},{n[None]},{categories[(s, m, t)] or ''}\n"
            for (s, m, t), n in tally.items()
        )
    )
    return {"jsonl": jsonl, "csv": csv, "parquet": parquet, "counts": counts}


def test_excluded_runs_and_categories_count_alike_in_every_shape(tmp_path: Path) -> None:
    shapes = _write_shapes(tmp_path, MIXED_RUNS)
    reports = {name: _numbers(_build(tmp_path, name, path)) for name, path in shapes.items()}
    first = reports["jsonl"]
    # Hand-counted: model a has t1 2/2 (1 excluded), t2 1/2 (1 excluded), t3 2/2.
    by_model = {rs["model"]: rs for rs in first["result_sets"]}
    assert [
        (t["id"], t["successes"], t["runs"], t["excluded_runs"]) for t in by_model["a"]["tasks"]
    ] == [
        ("t1", 2, 2, 1),
        ("t2", 1, 2, 1),
        ("t3", 2, 2, 0),
    ]
    assert by_model["b"]["excluded_runs"] == 1
    for name in ("csv", "parquet", "counts"):
        assert reports[name] == first, name


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["m1", "m2"]),
            st.integers(0, 6),
            st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=7),
        ),
        min_size=1,
        max_size=8,
        unique_by=lambda item: (item[0], item[1]),
    ),
    st.randoms(use_true_random=False),
)
def test_any_suite_reads_the_same_from_csv_as_from_jsonl(
    tmp_path_factory: pytest.TempPathFactory, tasks: list[Any], rng: Any
) -> None:
    rows = [
        ("s", model, f"task {task}", run + 1, passed, None)
        for model, task, outcomes in tasks
        for run, passed in enumerate(outcomes)
    ]
    rng.shuffle(rows)  # runs of a task need not be together, nor in order
    folder = tmp_path_factory.mktemp("shape")
    shapes = _write_shapes(folder, rows)
    loaded = {}
    for name, path in shapes.items():
        try:
            result = load_sources([Source(path)]).result_sets
        except UserError as error:
            loaded[name] = error.problems[-1].split(": ", 1)[1]  # all runs excluded
            continue
        loaded[name] = sorted(
            (
                rs.model,
                t.id,
                t.successes,
                t.runs,
                t.excluded,
                t.outcomes if name != "counts" else None,
            )
            for rs in result
            for t in rs.tasks
        )
    assert loaded["csv"] == loaded["jsonl"] == loaded["parquet"]
    if isinstance(loaded["jsonl"], list):
        assert [row[:5] for row in loaded["counts"]] == [row[:5] for row in loaded["jsonl"]]


# ------------------------------------------------ sites from each shape


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("airline-runs.csv", []),
        ("airline-runs.parquet", []),
        ("airline-counts.csv", []),
        ("airline-counts.parquet", []),
        ("airline-inspect.tsv", []),
        ("airline-rewards.csv", ["--columns", "passed=reward", "--threshold", "1"]),
    ],
)
def test_a_site_builds_from_each_table(tmp_path: Path, name: str, extra: list[str]) -> None:
    site = tmp_path / "site"
    status, _ = run(["build", str(TABLES / name), "-o", str(site), "--no-cache", *extra])
    assert status == 0
    report = json.loads((site / "report.json").read_text())
    (rs,) = report["result_sets"]
    assert {t["id"]: (t["successes"], t["runs"]) for t in rs["tasks"]} == reference_counts()
    page = (site / rs["tasks"][1]["page"]).read_text()
    if "counts" in name:
        assert "No run-by-run record" in page and '<ol class="strip"' not in page
    else:
        assert '<ol class="strip"' in page and "No run-by-run record" not in page


def test_counts_flow_into_compare_and_plan(tmp_path: Path) -> None:
    status, out = run(
        [
            "compare",
            str(TABLES / "airline-counts.csv"),
            str(TABLES / "airline-runs.parquet"),
            "--format",
            "json",
        ]
    )
    assert status == 0
    doc = json.loads(out)
    # The same runs on both sides: every paired difference is zero.
    assert doc["shared_tasks"] == 50
    assert doc["difference"]["unbiased"]["estimate"] == 0
    assert all(t["difference"]["plugin"] == 0 for t in doc["tasks"])
    for name in ("airline-counts.csv", "airline-runs.jsonl"):
        # A result file has no headline spread to plan from: only a report does (with
        # the default spread instead, the plan differed from its own site's).
        argv = ["plan", "--target-halfwidth", "0.05", "--report", str(TABLES / name)]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert run(argv)[0] == 2
        assert "is not a built site or its report.json; build it first" in err.getvalue()


def test_counts_flow_into_history(tmp_path: Path) -> None:
    # Each build extends the history it is given; the second reads the first site's copy.
    first, second = tmp_path / "one", tmp_path / "two"
    for site, history, label in (
        (first, tmp_path / "none.jsonl", "one"),
        (second, first / "history.jsonl", "two"),
    ):
        config = tmp_path / "reportgen.yaml"
        config.write_text(
            f"history: {history}\nlabel: {label}\nresult_sets:\n"
            f"  - path: {TABLES / 'airline-counts.parquet'}\n"
        )
        status, _ = run(["build", "--config", str(config), "-o", str(site), "--no-cache"])
        assert status == 0
    lines = (second / "history.jsonl").read_text().splitlines()
    assert [json.loads(line)["label"] for line in lines] == ["one", "two"]


# ------------------------------------------------ mapping columns


def test_config_columns_and_threshold_map_a_table(tmp_path: Path) -> None:
    config = tmp_path / "reportgen.yaml"
    config.write_text(
        "result_sets:\n"
        f"  - path: {TABLES / 'airline-rewards.csv'}\n"
        "    columns: {passed: reward, run: trial}\n"
        "    threshold: 1\n"
        "    suite: airline\n"
    )
    status, out = run(["summary", "--config", str(config), "--format", "json"])
    assert status == 0
    (rs,) = json.loads(out)["result_sets"]
    assert {t["id"]: (t["successes"], t["runs"]) for t in rs["tasks"]} == reference_counts()


def test_columns_flag_maps_names_no_alias_knows(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("problem,attempt_no,ok\np1,1,1\np1,2,0\np2,1,1\n")
    message = user_error(path)
    assert "no column for task and passed" in message and "'problem'" in message
    status, out = run(
        [
            "summary",
            str(path),
            "--columns",
            "task=problem,passed=ok,run=attempt_no",
            "--format",
            "json",
        ]
    )
    assert status == 0
    tasks = json.loads(out)["result_sets"][0]["tasks"]
    assert sorted((t["id"], t["successes"], t["runs"]) for t in tasks) == [
        ("p1", 1, 2),
        ("p2", 1, 1),
    ]


@pytest.mark.parametrize("shape", ["runs", "counts"])
def test_text_columns_under_other_names_are_read_and_checked(tmp_path: Path, shape: str) -> None:
    # suite, model, category (and a run's url) mapped to columns of other names: their
    # checks once named the table's column inside a view that only has the field's.
    path = tmp_path / "r.csv"
    if shape == "runs":
        head, rows = "problem,ok,bench,who,kind,link", ["p1,1,b,m,c,https://x.org/1"]
        mapping = "task=problem,passed=ok,suite=bench,model=who,category=kind,url=link"
    else:
        head, rows = "problem,wins,tries,bench,who,kind", ["p1,1,2,b,m,c"]
        mapping = "task=problem,successes=wins,runs=tries,suite=bench,model=who,category=kind"
    path.write_text("\n".join([head, *rows]) + "\n")
    columns = tuple(tuple(pair.split("=")) for pair in mapping.split(","))
    (rs,) = load_sources([Source(path, columns=columns)]).result_sets  # type: ignore[arg-type]
    assert (rs.suite, rs.model, rs.tasks[0].category) == ("b", "m", "c")
    blank = rows[0].replace(",b,", ", ,")
    path.write_text("\n".join([head, blank]) + "\n")
    with pytest.raises(UserError, match="row 1, column 'bench': ' ' must be a non-empty string"):
        load_sources([Source(path, columns=columns)])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("    columns: [task]\n", r"result_sets\[0\]\.columns: expected a mapping"),
        ("    columns: {tsk: a}\n", r"unknown field 'tsk' \(did you mean 'task'\?\)"),
        ("    columns: {task: ''}\n", r"columns\.task: expected a column name"),
        ("    threshold: high\n", r"result_sets\[0\]\.threshold: expected a number"),
        ("    threshold: .nan\n", r"threshold: expected a number"),
    ],
)
def test_bad_column_settings_are_named(tmp_path: Path, text: str, expected: str) -> None:
    config = tmp_path / "reportgen.yaml"
    config.write_text(f"result_sets:\n  - path: {TABLES / 'airline-runs.csv'}\n" + text)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status, _ = run(["summary", "--config", str(config)])
    assert status == 2 and re.search(expected, err.getvalue()), err.getvalue()


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--columns", "task"], "--columns: 'task' is not FIELD=COLUMN"),
        (["--columns", "tsk=a"], "--columns: unknown field 'tsk' (did you mean 'task'?)"),
        (["--threshold", "x"], "--threshold: 'x' is not a number"),
        (["--threshold", "inf"], "--threshold: 'inf' is not a number"),
        (["--threshold", "1e400"], "--threshold: expected a finite number"),
        (["--threshold", "0.5_0"], "--threshold: '0.5_0' is not a number"),
        (["--columns", "task=nope"], "column 'nope' (given for task) is not in the file"),
    ],
)
def test_bad_column_flags_exit_2(flags: list[str], expected: str) -> None:
    assert expected in user_error(TABLES / "airline-runs.csv", *flags)


def test_ambiguous_columns_list_the_candidates(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("sample_id,doc_id,correct,resolved\na,b,1,1\n")
    message = user_error(path)
    assert "more than one column could hold task: 'sample_id', 'doc_id'" in message
    assert "--columns task=NAME" in message
    status, _ = run(["summary", str(path), "--columns", "task=sample_id,passed=correct"])
    assert status == 0


def test_canonical_names_win_over_aliases(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("task,task_id,passed,correct\nt,x,1,0\nt,x,1,0\n")
    assert counts_of(path) == {"t": (2, 2)}


def test_a_score_needs_a_threshold_unless_it_is_one_or_zero(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("task,score\na,0.75\na,1\nb,0.2\n")
    message = user_error(path)
    assert "row 1, column 'score': '0.75' is not" in message and "threshold" in message
    assert counts_of(path, threshold=0.5) == {"a": (2, 2), "b": (0, 1)}


# ------------------------------------------------ damaged and hostile tables


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "task,passed\na,true\nb,yes\nc,maybe\n",
            ["row 2, column 'passed': 'yes' is not", "row 3"],
        ),
        ("task,passed\na,2\n", ["row 1, column 'passed': '2' is not"]),
        ("task,passed\na,1e400\n", ["row 1, column 'passed': '1e400' is not"]),
        ("task,passed\n,1\n", ["row 1, column 'task': the task id is missing"]),
        (
            "task,passed,url\na,1,javascript:x\n",
            ["row 1, column 'url': 'javascript:x' is not an http"],
        ),
        ("task,passed,model\na,1,'  '\n", []),
        (
            "task,run,passed\na,1,1\nb,1,0\na,1,0\n",
            ["row 3, column 'run': run '1' of task 'a' appears twice (first at row 1)"],
        ),
        # 1 and 01 in a column of text are one whole number: named, both spellings (the
        # file once vanished with no message: the check and the naming grouped apart).
        (
            "task,run,passed\na,1,1\na,01,0\nb,x,1\n",
            ["row 2, column 'run': run '01' of task 'a' appears twice (first at row 1 as '1')"],
        ),
        ("task,passed\n", ["has column names but no rows"]),
        ("task\na\n", ["no column for passed"]),
        ('task,passed\n"a\n', ["line 2: not valid CSV: unexpected end of data"]),
        ("task,passed\na,1,extra,cells\n", ["line 2: 4 cells where the header has 2"]),
        (b"task,passed\n\xff\xfe,1\n", ["line 2: not UTF-8 text"]),
        (
            '\n{"task": "a", "run": 1, "passed": true}\n{"task": "a", "run": 2}\n',
            [
                "line 2 starts a JSON object: this looks like JSON lines, not CSV",
                "--input-format jsonl",
            ],
        ),
        (
            b'\xef\xbb\xbf[\n  {"task": "a", "passed": true}\n]\n',
            ["line 1 starts a JSON array: this looks like JSON, not CSV", "reportgen formats"],
        ),
        (
            "[task],passed\na,1\nb,1,extra\n",
            ["line 3: 3 cells where the header has 2"],
        ),
    ],
    ids=[
        "bad-values",
        "two",
        "huge",
        "no-task",
        "bad-url",
        "blank-model",
        "repeat-run",
        "repeat-run-spelt-two-ways",
        "header-only",
        "no-passed",
        "open-quote",
        "ragged",
        "not-utf8",
        "json",
        "json-array-with-bom",
        "bracketed-header",
    ],
)
def test_bad_run_tables_are_located(tmp_path: Path, text: str | bytes, expected: list[str]) -> None:
    path = tmp_path / "runs.csv"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    if not expected:  # a quoted blank is text, not an empty cell
        path.write_text('task,passed,model\na,1,"  "\n')
        expected = ["row 1, column 'model': '  ' must be a non-empty string"]
    message = user_error(path)
    assert "Traceback" not in message
    for part in expected:
        assert f"{path}: " in message and part in message, message


def test_many_bad_values_are_counted_after_the_first_few(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("task,passed\n" + "a,oops\n" * 50)
    problems = problems_of(path)
    assert len(problems) == 6 and problems[-1] == f"{path}: 45 more rows like row 5"


def test_a_cell_gets_one_message_and_the_messages_come_in_row_order(tmp_path: Path) -> None:
    path = tmp_path / "counts.csv"
    path.write_text("task,successes,runs\na,1,4\nb,1e400,4\nc,x,4\nd,-1,4\n")
    assert problems_of(path) == [
        f"{path}: row 2, column 'successes': expected a whole number, got '1e400'",
        f"{path}: row 3, column 'successes': expected a whole number, got 'x'",
        f"{path}: row 4, column 'successes': must not be negative, got '-1'",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("task,successes,runs\na,5,4\n", "row 1, column 'successes': 5 is more than runs (4)"),
        (
            "task,successes,runs\na,-1,4\n",
            "row 1, column 'successes': must not be negative, got '-1'",
        ),
        (
            "task,successes,runs\na,1.5,4\n",
            "row 1, column 'successes': expected a whole number, got '1.5'",
        ),
        ("task,successes,runs\na,x,4\n", "expected a whole number, got 'x'"),
        ("task,successes,runs\na,,4\n", "expected a whole number, got an empty cell"),
        (
            "task,successes,runs\na,1,99999999999999999999\n",
            "column 'runs': must be at most 1,000,000,000",
        ),
        (
            "task,successes,runs\na,0,0\n",
            "row 1, column 'runs': must be at least 1 (or excluded at least 1), got 0",
        ),
        ("task,successes,runs,excluded\na,1,2,-3\n", "column 'excluded': must not be negative"),
        ("task,successes,runs\na,1,2\nb,1,2\na,2,2\n", "row 3: task 'a' already given at row 1"),
        ("successes,runs\n1,2\n", "a table of counts needs a task column"),
    ],
)
def test_bad_counts_tables_are_located(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "counts.csv"
    path.write_text(text)
    message = user_error(path)
    assert f"{path}: " in message and expected in message, message


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ("('a', 1, 2), ('b', 5, 4)", "row 2, column 'successes': 5 is more than runs (4)"),
        ("('a', 1, 2), ('b', 1, -4)", "row 2, column 'runs': must not be negative, got -4"),
        (
            "('a', 1, 2), ('b', 0.5, 4)",
            "row 2, column 'successes': expected a whole number, got 0.5",
        ),
        ("('a', 1, 2), ('b', 1, 2), ('a', 2, 2)", "row 3: task 'a' already given at row 1"),
    ],
)
def test_bad_counts_parquet_stops_the_build_with_exit_2(
    tmp_path: Path, rows: str, expected: str
) -> None:
    # What Spark, a warehouse or pandas may write: typed Parquet, not CSV text.
    path = tmp_path / "counts.parquet"
    duckdb.connect().execute(
        f"COPY (SELECT * FROM (VALUES {rows}) AS c(task, successes, runs)) TO '{path}'"
    )
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["build", str(path), "-o", str(tmp_path / "site")], out=out)
    assert status == 2
    assert f"{path}: {expected}" in err.getvalue(), err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ('{"task": "a", "successes": 5, "runs": 4}', "line 1, column 'successes': 5 is more"),
        ('{"task": "a", "successes": "x", "runs": 4}', "line 1, column 'successes': expected a "),
        (
            '{"task": "a", "successes": 1, "runs": 4}\n{"task": "b", "successes": true, "runs": 4}',
            "line 2, column 'successes': expected a whole number, got 'true'",
        ),
        # Blank lines hold no record, but the message names the line an editor shows.
        (
            '{"task": "a", "successes": 1, "runs": 4}\n\n  \t\r\n{"task": "b", "successes": 5, '
            '"runs": 4}',
            "line 4, column 'successes': 5 is more than runs (4)",
        ),
        (
            '\ufeff\n{"task": "a", "successes": 1, "runs": 4}\n\n{"task": "a", "successes": 1, '
            '"runs": 4}',
            "line 4: task 'a' already given at line 2",
        ),
        (
            '{"task": "a", "successes": true, "runs": 4}',
            "column 'successes' (successes) holds BOOLEAN",
        ),
        # A name of another type than text, among records that give text: never read
        # as absent (a condition 7 once went into the baseline, a suite true into
        # the file's own suite), and said once, not also as an empty name.
        (
            '{"task": "a", "successes": 1, "runs": 4, "condition": "typos"}\n'
            '{"task": "b", "successes": 1, "runs": 4, "condition": 7}',
            "line 2, column 'condition': 7 is not text",
        ),
        (
            '{"task": "a", "successes": 1, "runs": 4, "suite": "s"}\n'
            '{"task": "b", "successes": 1, "runs": 4, "suite": true}',
            "line 2, column 'suite': true is not text",
        ),
        (
            '{"task": "a", "successes": 1, "runs": 4, "model": "m"}\n'
            '{"task": "b", "successes": 1, "runs": 4, "model": [1]}',
            "line 2, column 'model': [1] is not text\n",
        ),
        (
            '{"task": "a", "successes": 1, "runs": 4, "category": "easy"}\n'
            '{"task": "b", "successes": 1, "runs": 4, "category": {"x": 1}}',
            "line 2, column 'category': {\"x\":1} is not text",
        ),
        ('{"task": "a", "successes": 1, "runs": 4}\n[1]', "line 2"),
        ('{"task": "a", "successes": 1, "runs": 4}\n{"task": "a", "successes', "line 2"),
    ],
)
def test_bad_counts_jsonl_is_located(tmp_path: Path, lines: str, expected: str) -> None:
    path = tmp_path / "counts.jsonl"
    path.write_text(lines + "\n")
    message = user_error(path)
    assert f"{path}: " in message and expected in message, message
    assert "must be a non-empty string" not in message, message


def test_many_bad_counts_jsonl_lines_are_summed_up_by_line(tmp_path: Path) -> None:
    path = tmp_path / "counts.jsonl"
    records = [json.dumps({"task": f"t{i}", "successes": 5, "runs": 4}) for i in range(30)]
    path.write_text("\n\n".join(records) + "\n")  # a blank line after each record
    message = user_error(path)
    # The 5th record is on line 9; the first few are named, the rest counted.
    assert f"{path}: line 9, column 'successes': 5 is more" in message, message
    assert f"{path}: 25 more lines like line 9" in message, message


def test_counts_accept_whole_numbers_written_as_decimals_and_empty_excluded(tmp_path: Path) -> None:
    # pandas writes 3.0 for whole numbers in a column that also holds a gap.
    path = tmp_path / "counts.csv"
    path.write_text("task,successes,runs,excluded\na,3.0,4.0,\nb,0,2,1.0\n")
    (rs,) = load_sources([Source(path)]).result_sets
    assert [(t.id, t.successes, t.runs, t.excluded, t.codes) for t in rs.tasks] == [
        ("a", 3, 4, 0, None),
        ("b", 0, 2, 1, None),
    ]


def test_byte_order_mark_quotes_and_crlf_are_read(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_bytes(
        b'\xef\xbb\xbf"task","passed"\r\n"a, with comma",1\r\n'
        b'"say ""hi""",0\r\n"a, with comma",""\r\n'
    )
    (rs,) = load_sources([Source(path)]).result_sets
    assert [(t.id, t.successes, t.runs, t.excluded) for t in rs.tasks] == [
        ("a, with comma", 1, 1, 1),
        ('say "hi"', 0, 1, 0),
    ]


def test_semicolons_are_detected(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("task;passed\na;1\na;0\n")
    assert counts_of(path) == {"a": (1, 2)}


def test_truncated_and_fake_parquet_are_refused(tmp_path: Path) -> None:
    data = (TABLES / "airline-runs.parquet").read_bytes()
    for name, content in (
        ("cut.parquet", data[: len(data) // 2]),
        ("tail.parquet", data[:8] + data[-40:]),
        ("fake.parquet", b"PAR1 not really"),
        ("text.parquet", b"task,passed\na,1\n"),
    ):
        path = tmp_path / name
        path.write_bytes(content)
        message = user_error(path)
        assert message.startswith(f"reportgen: error: {path}: cannot be read as Parquet: "), message
        assert "Traceback" not in message and message.count("\n") == 1


def test_parquet_columns_of_the_wrong_type_are_named(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    duckdb.sql(f"COPY (SELECT 1.5 AS task, [1, 2] AS passed) TO '{path}' (FORMAT parquet)")
    message = user_error(path)
    assert "column 'task' (task) holds DECIMAL" in message or "holds DOUBLE" in message, message
    path2 = tmp_path / "r2.parquet"
    duckdb.sql(f"COPY (SELECT 'a' AS task, [1, 2] AS passed) TO '{path2}' (FORMAT parquet)")
    assert "column 'passed' (passed) holds INTEGER[] values" in user_error(path2)


def test_parquet_numbers_and_integer_tasks(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    duckdb.sql(
        "COPY (SELECT * FROM (VALUES (7, 1, 1), (7, 2, 0), (8, 1, NULL), (8, 2, 1)) "
        f"AS t(task_id, trial, resolved)) TO '{path}' (FORMAT parquet)"
    )
    assert counts_of(path) == {"7": (1, 2), "8": (1, 1)}
    bad = tmp_path / "bad.parquet"
    duckdb.sql(f"COPY (SELECT 'a' AS task, 3 AS passed) TO '{bad}' (FORMAT parquet)")
    assert "row 1, column 'passed': 3 is not" in user_error(bad)


def test_a_file_name_with_glob_characters_reads_only_itself(tmp_path: Path) -> None:
    (tmp_path / "a1.csv").write_text("task,passed\nother,1\n")
    path = tmp_path / "a[1]*.csv"
    path.write_text("task,passed\nmine,0\n")
    assert counts_of(path) == {"mine": (0, 1)}


def test_unprintable_task_ids_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text('task,passed\n"a\x1bb",1\n')
    message = user_error(path)
    assert f"{path}: row 1: task id" in message


def test_reading_a_table_needs_no_extension_download() -> None:
    from reportgen.readers.duckdb_common import connect

    with connect() as con:
        settings_ = dict(
            con.execute(
                "SELECT name, value FROM duckdb_settings() WHERE name LIKE 'auto%known_extensions'"
            ).fetchall()
        )
    assert settings_ == {
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    }


# ------------------------------------------------ large JSONL through DuckDB

_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from(["", " ", "x", "1", "Ab"])
)
_RECORD = st.fixed_dictionaries(
    {"task": st.sampled_from(["t1", "t2", " t3", 4, -7, 10**19, 2.0, 'q"\\', "é\u0301"])},
    optional={
        "passed": st.one_of(st.booleans(), st.none(), st.sampled_from([0, 1, 2, 1.0, "yes"])),
        "task_id": st.sampled_from(["t1", 5, None]),
        "suite": st.sampled_from(["s", None, "", 3]),
        "model": st.sampled_from(["m", "n", None]),
        "run": st.one_of(st.integers(0, 4), st.sampled_from(["r1", "r2", None, 1.5, True])),
        "category": st.sampled_from(["easy", None, " "]),
        "url": st.sampled_from(["https://x.test/a", "HTTP://x.test/b", "ftp://x", None]),
        "other": _VALUES,
    },
)


#: Well-formed records, so the DuckDB path is taken to the end (run ids unique per
#: task are not guaranteed: a repeat sends the file back to the Python reader).
_CLEAN = st.fixed_dictionaries(
    {
        # Escapes, accents, emoji and negative numbers: DuckDB hands back JSON text,
        # which the reader takes apart itself.
        "task": st.sampled_from(["t1", "t2", "t 3", 4, -4, 'a"b', "c\\d", "é👩‍👧", "x\u00e9"]),
        "passed": st.one_of(st.booleans(), st.none(), st.sampled_from([0, 1])),
    },
    optional={
        "suite": st.sampled_from(["s", "u", 's/"t"']),
        "model": st.sampled_from(["m", "n"]),
        "run": st.one_of(st.integers(-3, 30), st.sampled_from(["r1", "r2", "10", "1", 'r"'])),
        "category": st.sampled_from(["easy", "hard"]),
        "url": st.sampled_from(["https://x.test/a", "HTTP://x.test/b"]),
        "other": _VALUES,
    },
)


def _jsonl_result(path: Path, columns: tuple[tuple[str, str], ...] = ()) -> Any:
    try:
        sets = load_sources([Source(path, columns=columns)]).result_sets
    except UserError as error:
        return error.problems
    return [
        (
            rs.suite,
            rs.model,
            [
                (t.id, t.successes, t.runs, t.excluded, t.category, t.codes, t.urls)
                for t in rs.tasks
            ],
        )
        for rs in sets
    ]


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.one_of(
        st.lists(_CLEAN, min_size=1, max_size=30),
        st.lists(st.one_of(_RECORD, st.just([1, 2]), st.just("null")), min_size=1, max_size=12),
    ),
    st.booleans(),
)
# Empty strings: refused by the Python reader, so the DuckDB path must hand the file
# back (an empty suite beside an absent model once slipped through).
@example([{"task": "t1", "passed": None, "suite": ""}], False)
@example([{"task": "t1", "passed": True, "model": ""}], False)
@example([{"task": "t1", "passed": False, "category": ""}], False)
@example([{"task": "", "passed": False}], False)
def test_jsonl_through_duckdb_reads_exactly_as_the_python_reader(
    tmp_path_factory: pytest.TempPathFactory, records: list[Any], duplicate_key: bool
) -> None:
    from reportgen.readers import jsonl

    path = tmp_path_factory.mktemp("jsonl") / "runs.jsonl"
    lines = [json.dumps(r) for r in records]
    if duplicate_key and lines[0].startswith('{"task"'):
        lines[0] = '{"passed": true, ' + lines[0][1:]  # "passed" may now be given twice
    path.write_text("\n".join(lines) + "\n")
    slow = _jsonl_result(path)
    saved = jsonl.DUCKDB_MIN_BYTES
    jsonl.DUCKDB_MIN_BYTES = 0
    try:
        fast = _jsonl_result(path)
    finally:
        jsonl.DUCKDB_MIN_BYTES = saved
    assert fast == slow


def test_jsonl_through_duckdb_takes_escapes_and_numbers_to_the_end(tmp_path: Path) -> None:
    """Values DuckDB hands back as JSON text with quotes, escapes or signs: the DuckDB
    path reads them itself (it does not hand the file back) and agrees with Python."""
    from reportgen.errors import Problems
    from reportgen.readers import jsonl
    from reportgen.readers.base import Tally
    from reportgen.readers.jsonl_duckdb import read_jsonl_through_duckdb

    tasks = ['a"b', "c\\d", "é👩‍👧", -4, 12, "x/y"]
    runs = [-1, 0, 7, "1", 'r"', "é"]
    lines = []
    for number, task in enumerate(tasks):
        for index, run in enumerate(runs):
            record = {"task": task, "run": run, "passed": (number + index) % 3 == 0}
            lines.append(json.dumps(record, ensure_ascii=number % 2 == 0))
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tally = Tally(Source(path), Problems())
    assert read_jsonl_through_duckdb(Source(path), tally, 1 << 20)
    (rs,) = tally.result_sets("jsonl")
    assert [t.id for t in rs.tasks] == [str(t) for t in tasks]
    slow = _jsonl_result(path)
    saved = jsonl.DUCKDB_MIN_BYTES
    jsonl.DUCKDB_MIN_BYTES = 0
    try:
        assert _jsonl_result(path) == slow
    finally:
        jsonl.DUCKDB_MIN_BYTES = saved


def test_jsonl_through_duckdb_takes_clean_files_and_hands_back_the_rest(tmp_path: Path) -> None:
    from reportgen.errors import Problems
    from reportgen.readers.base import Tally
    from reportgen.readers.jsonl_duckdb import read_jsonl_through_duckdb

    clean = TABLES / "airline-runs.jsonl"
    tally = Tally(Source(clean), Problems())
    assert read_jsonl_through_duckdb(Source(clean), tally, 1 << 20)
    (rs,) = tally.result_sets("jsonl")
    assert {t.id: (t.successes, t.runs) for t in rs.tasks} == reference_counts()
    for bad in ('{"task": "a"}', '{"task": "a", "passed": "yes"}', "[1]", '{"task": "a", "passed'):
        path = tmp_path / "bad.jsonl"
        path.write_text('{"task": "b", "passed": true}\n' + bad + "\n")
        tally = Tally(Source(path), Problems())
        assert not read_jsonl_through_duckdb(Source(path), tally, 1 << 20)
        assert tally.groups == {} and tally.problems.items == []


def test_jsonl_through_duckdb_tells_passed_null_from_passed_missing(tmp_path: Path) -> None:
    """A "passed": null is a run not evaluated, read to the end; no "passed" is an error,
    handed back. DuckDB reads both as NULL, so the records are asked again by place:
    blank lines, escaped keys and the records after them must line up."""
    from reportgen.errors import Problems
    from reportgen.readers.base import Tally
    from reportgen.readers.jsonl_duckdb import read_jsonl_through_duckdb

    lines = [
        '{"task": "a", "passed": true}',
        "",
        "   ",
        '{"task": "a", "passed": null}',
        '{"task": "b", "pass\\u0065d": null}',
        '{"task": "b", "passed": false}',
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    tally = Tally(Source(path), Problems())
    assert read_jsonl_through_duckdb(Source(path), tally, 1 << 20)
    (rs,) = tally.result_sets("jsonl")
    assert [(t.id, t.successes, t.runs, t.excluded) for t in rs.tasks] == [
        ("a", 1, 1, 1),
        ("b", 0, 1, 1),
    ]
    # The same file with one record's "passed" left out, before and after the nulls.
    for missing in (0, 5):
        broken = list(lines)
        broken[missing] = (
            broken[missing].replace(', "passed": true', "").replace(', "passed": false', "")
        )
        path.write_text("\n".join(broken) + "\n")
        tally = Tally(Source(path), Problems())
        assert not read_jsonl_through_duckdb(Source(path), tally, 1 << 20)
        assert tally.groups == {}


def test_duckdb_is_loaded_only_when_a_table_is_read() -> None:
    import subprocess
    import sys

    script = (
        "import sys, io\n"
        "from reportgen.cli import main\n"
        "main(['summary', sys.argv[1], '--format', 'json'], out=io.StringIO())\n"
        "print('duckdb' in sys.modules)\n"
    )
    seen = [
        subprocess.run(
            [sys.executable, "-c", script, str(TABLES / name)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for name in ("airline-runs.jsonl", "airline-runs.csv")
    ]
    assert seen == ["False", "True"]


@pytest.mark.parametrize(
    "name", ["airline-runs.csv", "airline-counts.parquet", "airline-runs.parquet"]
)
def test_randomly_damaged_tables_exit_0_or_2_without_a_traceback(tmp_path: Path, name: str) -> None:
    import random

    rng = random.Random(name)
    data = (TABLES / name).read_bytes()
    for i in range(40):
        damaged = bytearray(data)
        how = rng.choice(["flip", "cut", "insert"])
        if how == "flip":
            for _ in range(rng.randint(1, 8)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        elif how == "cut":
            del damaged[rng.randrange(1, len(damaged)) :]
        else:
            at = rng.randrange(len(damaged))
            damaged[at:at] = rng.choice([b'"', b",,,", b"\n", b"\x00", b"\xff\xfe", b"1e999"])
        path = tmp_path / f"{i}{Path(name).suffix}"
        path.write_bytes(bytes(damaged))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status, _ = run(["summary", str(path), "--format", "json"])
        assert status in (0, 2), (how, err.getvalue())
        assert "Traceback" not in err.getvalue()
        if status == 2:
            assert all(
                line.startswith(f"reportgen: error: {path}") for line in err.getvalue().splitlines()
            ), err.getvalue()


def test_a_column_mapping_for_a_file_that_is_not_a_table_is_refused() -> None:
    message = user_error(TABLES / "airline-runs.jsonl", "--columns", "task=id")
    assert "a column mapping (columns: or --columns) applies to tables (csv, parquet)" in message


def test_duckdb_works_in_bounded_memory_and_spills_into_a_folder_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from reportgen.errors import Problems
    from reportgen.readers import duckdb_common
    from reportgen.readers.base import Tally
    from reportgen.readers.jsonl_duckdb import read_jsonl_through_duckdb

    spills = tmp_path / "tmp"
    spills.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spills))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with duckdb_common.connect() as con:
        limit, folder = con.execute(
            "SELECT current_setting('memory_limit'), current_setting('temp_directory')"
        ).fetchone()
        assert Path(folder).parent == spills and Path(folder).is_dir()
    assert limit == "286.1 MiB"  # DuckDB's spelling of duckdb_common.DUCKDB_MEMORY, 300 MB
    # A limit small enough that the file's runs do not fit: DuckDB spills or gives up,
    # and either way the counts are the Python reader's, and nothing is left behind.
    monkeypatch.setattr(duckdb_common, "DUCKDB_MEMORY", "2MB")
    runs = tmp_path / "runs.jsonl"
    runs.write_text(
        "".join(
            json.dumps({"task": f"task-{i % 500}", "run": i // 500, "passed": i % 3 > 0}) + "\n"
            for i in range(60_000)
        )
    )
    tally = Tally(Source(runs), Problems())
    if read_jsonl_through_duckdb(Source(runs), tally, 1 << 20):
        (rs,) = tally.result_sets("jsonl")
        counts = {t.id: (t.successes, t.runs) for t in rs.tasks}
        assert counts == {f"task-{j}": (80, 120) for j in range(500)}
    assert list(work.iterdir()) == [] and list(spills.iterdir()) == []


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("passed,task,passed", "line 1: 2 columns are named 'passed' (columns 1, 3)"),
        ("task\tpassed\tPassed", "line 1: columns 'passed' and 'Passed' differ only in case"),
        ("Task,passed,TASK", "line 1: columns 'Task' and 'TASK' differ only in case"),
    ],
)
def test_a_column_named_twice_is_refused_not_read_first_wins(
    tmp_path: Path, header: str, said: str
) -> None:
    separator = "\t" if "\t" in header else ","
    path = tmp_path / ("runs.tsv" if separator == "\t" else "runs.csv")
    path.write_text(header + "\n" + separator.join(["0", "a", "1"]) + "\n")
    assert said in user_error(path)


def test_a_repeated_column_nobody_reads_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("task,passed,note,note\na,1,x,y\na,0,x,y\n")
    assert counts_of(path) == {"a": (1, 2)}
    # A column the mapping names counts as read.
    with_map = tmp_path / "mapped.csv"
    with_map.write_text("task,ok,ok\na,1,0\n")
    (problem,) = problems_of(with_map, columns=(("passed", "ok"),))
    assert "2 columns are named 'ok'" in problem


def test_transcript_links_read_alike_from_every_table_of_runs(tmp_path: Path) -> None:
    # A table of runs with a url column once failed in DuckDB 2 ("window functions are
    # not allowed in window definitions"); a large JSONL with links went back to the
    # Python reader. Links follow the run order: by run id where every run of the task
    # has one (t1), else by row (t2, one run without an id).
    from reportgen.errors import Problems
    from reportgen.readers import jsonl
    from reportgen.readers.base import Tally
    from reportgen.readers.jsonl_duckdb import read_jsonl_through_duckdb

    runs = [
        ("t1", 2, True, "https://x.org/t1/2"),
        ("t2", None, True, "https://x.org/t2/a"),
        ("t1", 1, False, "https://x.org/t1/1"),
        ("t2", 1, False, None),
        ("t2", 2, True, "https://x.org/t2/c"),
    ]
    records = [
        {"task": t, "passed": p} | ({"run": r} if r is not None else {}) | ({"url": u} if u else {})
        for t, r, p, u in runs
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    expected = _jsonl_result(path)  # the Python reader: the file is small
    ((_, _, tasks),) = expected
    assert [(t[0], t[6]) for t in tasks] == [
        ("t1", {0: "https://x.org/t1/1", 1: "https://x.org/t1/2"}),
        ("t2", {0: "https://x.org/t2/a", 2: "https://x.org/t2/c"}),
    ]
    tally = Tally(Source(path), Problems())
    assert read_jsonl_through_duckdb(Source(path), tally, 1 << 20)  # not handed back
    saved = jsonl.DUCKDB_MIN_BYTES
    jsonl.DUCKDB_MIN_BYTES = 0
    try:
        assert _jsonl_result(path) == expected
    finally:
        jsonl.DUCKDB_MIN_BYTES = saved
    table = tmp_path / "runs.csv"
    table.write_text(
        "task,run,passed,url\n"
        + "".join(
            f"{t},{'' if r is None else r},{str(p).lower()},{u or ''}\n" for t, r, p, u in runs
        )
    )
    parquet = tmp_path / "runs.parquet"
    as_text = f"SELECT * FROM read_csv('{table}', all_varchar=true)"
    duckdb.connect().execute(f"COPY ({as_text}) TO '{parquet}' (FORMAT parquet)")
    for path in (table, parquet):
        (rs,) = load_sources([Source(path)]).result_sets
        assert [(t.id, t.codes, t.urls) for t in rs.tasks] == [(t[0], t[5], t[6]) for t in tasks]


_RUN_FIELDS = ("suite", "model", "task", "run", "passed", "category", "url")


def _without_paths(result: Any) -> Any:
    """A reading's result, its problems (if refused) without the file they name."""
    if result and isinstance(result[0], str):
        return [problem.split(": ", 1)[1] for problem in result]
    return result


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["m1", "m2"]),
            st.integers(0, 4),
            st.one_of(st.none(), st.integers(0, 5)),  # a run id, or none
            st.sampled_from([True, False, None]),
            st.one_of(st.none(), st.sampled_from(["c1", "c2"])),
            st.one_of(st.none(), st.integers(0, 99)),  # a transcript link, or none
        ),
        min_size=1,
        max_size=25,
    ),
    st.sets(st.sampled_from(_RUN_FIELDS), max_size=len(_RUN_FIELDS)),
)
def test_a_table_with_renamed_columns_and_links_reads_as_its_jsonl(
    tmp_path_factory: pytest.TempPathFactory, rows: list[Any], renamed: set[str]
) -> None:
    # Every optional column a table of runs may have, some under names no alias knows
    # (mapped with columns), read from CSV, from Parquet and from JSONL through DuckDB,
    # gives what the Python reader gives the same runs as JSONL.
    from reportgen.readers import jsonl

    folder = tmp_path_factory.mktemp("renamed")
    runs = []
    seen: set[tuple[str, int, int]] = set()
    for model, task, run, passed, category, link in rows:
        if run is not None and (model, task, run) in seen:
            run = None  # a run id given twice is refused alike everywhere: not this test's
        if run is not None:
            seen.add((model, task, run))
        url = None if link is None else f"https://x.org/{model}/{task}/{link}"
        runs.append(("s", model, f"t{task}", run, passed, category, url))
    records = [
        {k: v for k, v in zip(_RUN_FIELDS, row, strict=True) if v is not None or k == "passed"}
        for row in runs
    ]
    source = folder / "runs.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    expected = _jsonl_result(source)
    saved = jsonl.DUCKDB_MIN_BYTES
    jsonl.DUCKDB_MIN_BYTES = 0
    try:
        assert _jsonl_result(source) == expected
    finally:
        jsonl.DUCKDB_MIN_BYTES = saved
    names = {field: f"my_{field}" if field in renamed else field for field in _RUN_FIELDS}
    columns = tuple((field, names[field]) for field in sorted(renamed))
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE runs ("
        + ", ".join(
            f"{names[f]} {'BIGINT' if f == 'run' else 'BOOLEAN' if f == 'passed' else 'VARCHAR'}"
            for f in _RUN_FIELDS
        )
        + ")"
    )
    con.executemany(f"INSERT INTO runs VALUES ({', '.join('?' * len(_RUN_FIELDS))})", runs)
    for suffix in ("csv", "parquet"):
        path = folder / f"runs.{suffix}"
        options = "(FORMAT parquet)" if suffix == "parquet" else "(HEADER, DELIMITER ',')"
        con.execute(f"COPY runs TO '{path}' {options}")
        assert _without_paths(_jsonl_result(path, columns)) == _without_paths(expected), suffix
