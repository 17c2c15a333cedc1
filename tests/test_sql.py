"""`reportgen sql`: the printed query, run for real in DuckDB, gives the counts that
reading the runs directly gives; the other dialects' texts are checked word for word."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import duckdb
import pytest

from reportgen.cli import main

from .test_tables import MIXED_RUNS, _build, _numbers, _write_shapes


def sql(*argv: str) -> str:
    out = io.StringIO()
    assert main(["sql", *argv], out=out) == 0
    return out.getvalue()


def failure(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["sql", *argv], out=out)
    assert status == 2, out.getvalue()
    assert out.getvalue() == ""
    return err.getvalue()


#: MIXED_RUNS plus a second suite: a task whose every run is excluded, runs given
#: as 1/0 text, and a task that always passes.
MORE_RUNS = [
    *MIXED_RUNS,
    ("u", "a", "x1", 1, None, "easy"),
    ("u", "a", "x1", 2, None, "easy"),
    ("u", "a", "x2", 1, True, "hard"),
    ("u", "a", "x2", 2, True, "hard"),
    ("u", "b", "x1", 1, False, "easy"),
    ("u", "b", "x2", 1, True, "hard"),
    ("u", "b", "x2", 2, False, "hard"),
]


def _counts_through_sql(tmp_path: Path, table_sql: str, flags: list[str]) -> Path:
    """Make the table `runs` in DuckDB, run the printed query, save it as Parquet."""
    counts = tmp_path / "counts.parquet"
    query = sql("--dialect", "duckdb", "--table", "runs", *flags)
    con = duckdb.connect()
    con.execute(f"CREATE TABLE runs AS {table_sql}")
    con.execute(f"COPY ({query}) TO '{counts}' (FORMAT parquet)")
    return counts


def test_duckdb_counts_build_the_same_report_as_the_runs(tmp_path: Path) -> None:
    shapes = _write_shapes(tmp_path, MORE_RUNS)
    jsonl = shapes["jsonl"]
    counts = _counts_through_sql(
        tmp_path,
        f"SELECT * FROM read_json('{jsonl}', format = 'newline_delimited')",
        ["--columns", "suite=suite,model=model,category=category,run=run"],
    )
    # Each result set (suite, model) from the counts equals the one from the runs.
    direct = _numbers(_build(tmp_path, "direct", jsonl))
    through = _numbers(_build(tmp_path, "through", counts))

    def by_set(doc: dict) -> dict:  # type: ignore[type-arg]
        return {(rs["suite"], rs["model"]): rs for rs in doc["result_sets"]}

    assert len(direct["result_sets"]) == 4
    assert by_set(through) == by_set(direct)
    # Hand-counted: suite u, model a: x1 has every run excluded (no task left, two
    # excluded runs), x2 passes twice.
    ua = by_set(through)[("u", "a")]
    assert [(t["id"], t["successes"], t["runs"]) for t in ua["tasks"]] == [("x2", 2, 2)]
    assert ua["excluded_runs"] == 2


def test_passed_as_integers_and_text_count_alike(tmp_path: Path) -> None:
    shapes = _write_shapes(tmp_path, MORE_RUNS)
    reference = _numbers(_build(tmp_path, "direct", shapes["jsonl"]))
    # The same runs with passed as 1/0 integers, then as text with stray spaces and case.
    for name, passed in [
        ("ints", "CAST(passed AS INTEGER)"),
        ("text", "CASE WHEN passed THEN ' TRUE' WHEN NOT passed THEN 'false ' ELSE 'NULL' END"),
        ("floats", "CAST(passed AS DOUBLE)"),
        ("decimals", "CAST(passed AS DECIMAL(3, 1))"),
    ]:
        folder = tmp_path / name
        folder.mkdir()
        counts = _counts_through_sql(
            folder,
            f"SELECT * REPLACE ({passed} AS passed) FROM read_json('{shapes['jsonl']}')",
            ["--columns", "suite=suite,model=model,category=category"],
        )
        assert _numbers(_build(folder, "site", counts)) == reference, name


def test_the_airline_runs_give_the_airline_counts(tmp_path: Path) -> None:
    tables = Path(__file__).parent / "fixtures" / "tables"
    counts = tmp_path / "airline.csv"
    query = sql(
        "--dialect",
        "duckdb",
        "--table",
        str(tables / "airline-runs.parquet"),
        "--columns",
        "suite=suite,model=model",
    )
    # The query orders tasks by id as text ("10" before "2"), the fixture by number;
    # in the same order the sums agree to the last bit.
    duckdb.connect().execute(
        f"COPY (SELECT * FROM ({query}) ORDER BY CAST(task AS INTEGER)) TO '{counts}' (HEADER)"
    )
    expected = _numbers(_build(tmp_path, "a", tables / "airline-counts.csv"))
    assert _numbers(_build(tmp_path, "b", counts)) == expected


def test_unreadable_passed_values_stop_the_build(tmp_path: Path) -> None:
    counts = _counts_through_sql(
        tmp_path,
        "SELECT * FROM (VALUES ('t1', 'yes'), ('t1', '1'), ('t2', '0'), ('t2', 'maybe')) "
        "AS r(task, passed)",
        [],
    )
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["build", str(counts), "-o", str(tmp_path / "site")], out=out)
    assert status == 2
    message = err.getvalue()
    assert "row 1, column 'unreadable': 1 runs of this task have a passed value" in message
    assert "row 2, column 'unreadable'" in message
    assert not (tmp_path / "site").exists()


def test_a_hostile_column_name_is_quoted(tmp_path: Path) -> None:
    con = duckdb.connect()
    con.execute('CREATE TABLE "we""ird" ("ta""sk" VARCHAR, "pass`ed" BOOLEAN)')
    con.execute("""INSERT INTO "we""ird" VALUES ('a', true), ('a', NULL), ('b', false)""")
    query = sql(
        "--dialect", "duckdb", "--table", 'we"ird', "--columns", 'task=ta"sk,passed=pass`ed'
    )
    rows = con.execute(query).fetchall()
    assert rows == [("a", 1, 1, 1, 0), ("b", 0, 1, 0, 0)]
    # The injection a naive quote would let through stays a name.
    spark = sql("--dialect", "spark", "--table", "t", "--columns", "task=a` FROM x; --")
    assert "`a`` FROM x; --` AS `task`" in spark


GOLDEN_FLAGS = [
    "--table",
    "proj.evals.runs",
    "--columns",
    "task=task_id,passed=resolved,model=model,suite=suite",
]

#: Checked by hand against each engine's documentation: quoting, the string type, the
#: 64-bit integer type (INT64 in BigQuery), a subquery in FROM with an alias.
GOLDEN = Path(__file__).parent / "fixtures" / "sql"


@pytest.mark.parametrize("dialect", ["bigquery", "postgres", "spark"])
def test_golden_texts(dialect: str) -> None:
    assert sql("--dialect", dialect, *GOLDEN_FLAGS) == (GOLDEN / f"{dialect}.sql").read_text()


def test_the_postgres_text_counts_as_duckdb_does() -> None:
    # DuckDB's parser is Postgres's, so the Postgres text (TEXT, SUM(CASE ...) and
    # BIGINT) runs there too: on the same table it counts as the DuckDB text does.
    con = duckdb.connect()
    con.execute("CREATE TABLE runs (task VARCHAR, passed VARCHAR)")
    values = [("a", "1"), ("a", " True"), ("a", "0"), ("b", None), ("b", "nan"), ("b", "x")]
    con.executemany("INSERT INTO runs VALUES (?, ?)", values)
    postgres = con.execute(sql("--dialect", "postgres", "--table", "runs")).fetchall()
    assert postgres == con.execute(sql("--dialect", "duckdb", "--table", "runs")).fetchall()
    # Hand-counted: a passes twice in three runs; b has two excluded runs and one unreadable.
    assert postgres == [("a", 2, 3, 0, 0), ("b", 0, 0, 2, 1)]


def test_the_duckdb_text_runs_as_the_spark_text_reads() -> None:
    # The dialects differ only in quoting and the count function.
    duck = sql("--dialect", "duckdb", *GOLDEN_FLAGS)
    spark = sql("--dialect", "spark", *GOLDEN_FLAGS)
    assert duck.replace('"', "`").replace("VARCHAR", "STRING").replace("duckdb", "spark") == spark


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--table", "t"], "the following arguments are required: --dialect"),
        (["--dialect", "mysql", "--table", "t"], "invalid choice: 'mysql'"),
        (["--dialect", "duckdb"], "the following arguments are required: --table"),
        (
            ["--dialect", "duckdb", "--table", "t", "--columns", "tsk=a"],
            "unknown field 'tsk' (did you mean 'task'?)",
        ),
        (
            ["--dialect", "duckdb", "--table", "t", "--columns", "task"],
            "--columns: 'task' is not FIELD=COLUMN",
        ),
        (
            ["--dialect", "duckdb", "--table", "t", "--columns", "task=a,task=b"],
            "--columns: task is given twice ('a' and 'b')",
        ),
        (
            ["--dialect", "duckdb", "--table", "t", "--columns", "runs=n"],
            "--columns: runs is what the query writes",
        ),
        (
            ["--dialect", "bigquery", "--table", "t", "--columns", "task=a`b"],
            "BigQuery names cannot hold",
        ),
        (["--dialect", "postgres", "--table", "a..b"], "--table: the name is empty"),
        (["--dialect", "postgres", "--table", " "], "--table: the name is empty"),
        (["--dialect", "spark", "--table", "t\nx"], "--table: 't\\nx'"),
        (
            ["--dialect", "spark", "--table", "t", "--columns", "passed=Reportgen_Runs"],
            "--columns passed: 'reportgen_runs' is the name the query gives its own column",
        ),
    ],
)
def test_bad_flags_exit_2(argv: list[str], expected: str) -> None:
    assert expected in failure(*argv)


def test_help_names_the_dialects() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["sql", "--help"])
    assert "{duckdb,spark,bigquery,postgres}" in out.getvalue()
    json.dumps(out.getvalue())
