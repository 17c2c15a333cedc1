"""reportgen.spark: per-task counts computed by Spark equal the counts reportgen's own
readers make from the same runs (and a plain Python tally of them), the sites built
from both carry the same numbers, and the printed Spark SQL run in Spark gives what
the printed DuckDB SQL gives in DuckDB.

The tests marked `spark` share one local Spark session (local[2], UI off) and skip
with a message when Java or pyspark is missing, except with CI=true, where they
fail instead. `make test` leaves them out (`-m "not spark"`); `make test-all` runs
them. The unmarked tests at the end need neither Java nor pyspark.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pytest

from reportgen.readers import Source, load_sources

from .test_sql import MORE_RUNS, sql
from .test_tables import _build, _numbers, _write_shapes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ROOT = Path(__file__).resolve().parent.parent


def _missing() -> str | None:
    """Why Spark cannot run here, or None."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install -e '.[spark]')"
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        return "no Java found (apt-get install openjdk-17-jre-headless, or set JAVA_HOME)"
    return None


def _require_spark() -> None:
    """Skip when Spark cannot run here, with the reason; with CI=true, fail instead."""
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the Spark tests must run with CI=true, but {missing}")
        pytest.skip(f"Spark tests skipped: {missing}")


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    """One local Spark session for the tests of this module (the JVM takes 10-20 s to
    start), stopped after them: its server threads would make later tests in the same
    process see a second thread."""
    _require_spark()
    from pyspark.sql import SparkSession

    # pyspark warns about the pandas version on import paths these tests never use.
    warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("reportgen-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _tally(rows: list[tuple[Any, ...]]) -> dict[tuple[str, str, str], tuple[int, int, int]]:
    """The independent reference: (successes, runs, excluded) per (suite, model, task),
    counted from the rows in plain Python."""
    counts: dict[tuple[str, str, str], Counter[Any]] = {}
    for suite, model, task, _, passed, _ in rows:
        counts.setdefault((suite, model, task), Counter())[passed] += 1
    return {key: (n[True], n[True] + n[False], n[None]) for key, n in counts.items()}


def _rows(frame: DataFrame) -> dict[tuple[str, str, str], tuple[int, int, int]]:
    return {
        (r["suite"], r["model"], r["task"]): (r["successes"], r["runs"], r["excluded"])
        for r in frame.collect()
    }


def _by_set(doc: dict[str, Any]) -> dict[tuple[str, str], Any]:
    return {(rs["suite"], rs["model"]): rs for rs in doc["result_sets"]}


# ------------------------------------------------ the same runs, the same counts


@pytest.mark.spark
@pytest.mark.parametrize("shape", ["jsonl", "parquet"])
def test_spark_counts_equal_the_readers_counts_and_build_the_same_site(
    spark: SparkSession, tmp_path: Path, shape: str
) -> None:
    from reportgen.spark import task_counts, write_counts

    # Two suites, two models, excluded runs, a task whose every run is excluded.
    shapes = _write_shapes(tmp_path, MORE_RUNS)
    path = str(shapes[shape])
    runs = spark.read.json(path) if shape == "jsonl" else spark.read.parquet(path)
    counts = task_counts(runs, suite="suite", model="model", category="category", run="run")
    assert counts.columns == [
        "suite", "model", "task", "category", "successes", "runs", "excluded"
    ]  # fmt: skip
    got = _rows(counts)
    assert got == _tally(MORE_RUNS)
    # Hand-counted from MORE_RUNS: model a's t2 passed once, failed once, one excluded.
    assert got[("s", "a", "t2")] == (1, 2, 1)
    assert got[("u", "a", "x1")] == (0, 0, 2)
    # reportgen's own reader of the same file agrees, set by set.
    for rs in load_sources([Source(shapes[shape])]).result_sets:
        for t in rs.tasks:
            assert got[(rs.suite, rs.model, t.id)] == (t.successes, t.runs, t.excluded)
            category = next(r["category"] for r in counts.collect() if r["task"] == t.id)
            assert category == t.category
    # Sites built from the runs and from the written counts carry the same numbers.
    direct = _by_set(_numbers(_build(tmp_path, "direct", shapes[shape])))
    for name in ("counts.parquet", "counts.csv"):
        written = write_counts(counts, tmp_path / name)
        assert written.is_file()
        assert _by_set(_numbers(_build(tmp_path, f"site-{name}", written))) == direct, name
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.spark
def test_spark_counts_equal_a_python_tally_of_random_runs(spark: SparkSession) -> None:
    from reportgen.spark import task_counts

    rng = random.Random(15)
    rows = []
    for suite in ("s1", "s2"):
        for model in ("m1", "m2", "m3"):
            for task in range(rng.randint(1, 60)):
                p = rng.choice([0.0, 1.0, rng.random()])
                for run in range(rng.randint(1, 12)):
                    passed = None if rng.random() < 0.1 else rng.random() < p
                    rows.append((suite, model, f"task-{task:03}", run, passed, None))
    frame = spark.createDataFrame(
        [r[:5] for r in rows], "suite string, model string, task string, run int, passed boolean"
    )
    got = _rows(task_counts(frame, suite="suite", model="model", run="run"))
    assert got == _tally(rows)


# ------------------------------------------------ the printed SQL in two engines

#: Passed as text, in every spelling the query reads, and some it cannot.
TEXT_RUNS = [
    ("s", "m", "a", " TRUE"),
    ("s", "m", "a", "1"),
    ("s", "m", "a", "0"),
    ("s", "m", "b", None),
    ("s", "m", "b", ""),
    ("s", "m", "b", "NaN"),
    ("s", "m", "b", "False"),
    ("s", "n", "c", "yes"),
    ("s", "n", "c", "2"),
    ("s", "n", "c", "true "),
]
#: Hand-counted: (suite, model, task, successes, runs, excluded, unreadable).
TEXT_COUNTS = [
    ("s", "m", "a", 2, 3, 0, 0),
    ("s", "m", "b", 0, 1, 3, 0),
    ("s", "n", "c", 1, 1, 0, 2),
]


@pytest.mark.spark
def test_printed_spark_and_duckdb_sql_give_the_same_counts(
    spark: SparkSession, tmp_path: Path
) -> None:
    flags = ["--columns", "suite=suite,model=model"]
    spark_query = sql("--dialect", "spark", "--table", "runs_text", *flags)
    duck_query = sql("--dialect", "duckdb", "--table", "runs_text", *flags)
    spark.createDataFrame(
        TEXT_RUNS, "suite string, model string, task string, passed string"
    ).createOrReplaceTempView("runs_text")
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE runs_text (suite VARCHAR, model VARCHAR, task VARCHAR, passed VARCHAR)"
    )
    con.executemany("INSERT INTO runs_text VALUES (?, ?, ?, ?)", TEXT_RUNS)
    in_spark = [tuple(r) for r in spark.sql(spark_query).collect()]
    assert in_spark == con.execute(duck_query).fetchall() == TEXT_COUNTS

    # Floating-point passed values: 1.0 and 0.0 count, NaN is an excluded run.
    floats = [("a", 1.0), ("a", 0.0), ("a", float("nan")), ("b", None), ("b", 1.0)]
    spark.createDataFrame(floats, "task string, passed double").createOrReplaceTempView("runs_f")
    con.execute("CREATE TABLE runs_f (task VARCHAR, passed DOUBLE)")
    con.executemany("INSERT INTO runs_f VALUES (?, ?)", floats)
    in_spark = [
        tuple(r) for r in spark.sql(sql("--dialect", "spark", "--table", "runs_f")).collect()
    ]
    in_duckdb = con.execute(sql("--dialect", "duckdb", "--table", "runs_f")).fetchall()
    assert in_spark == in_duckdb == [("a", 1, 2, 1, 0), ("b", 1, 1, 1, 0)]

    # The same on typed runs (booleans with nulls, categories), read from one Parquet
    # file by both engines, and the Spark API's counts equal the printed query's.
    from reportgen.spark import task_counts

    parquet = _write_shapes(tmp_path, MORE_RUNS)["parquet"]
    flags = ["--columns", "suite=suite,model=model,category=category"]
    runs = spark.read.parquet(str(parquet))
    runs.createOrReplaceTempView("runs_typed")
    in_spark = [
        tuple(r)
        for r in spark.sql(sql("--dialect", "spark", "--table", "runs_typed", *flags)).collect()
    ]
    in_duckdb = con.execute(sql("--dialect", "duckdb", "--table", str(parquet), *flags)).fetchall()
    assert in_spark == in_duckdb
    assert len(in_spark) == len(_tally(MORE_RUNS))
    api = task_counts(runs, suite="suite", model="model", category="category")
    assert [tuple(r) for r in api.collect()] == [r[:-1] for r in in_spark]
    assert {r[-1] for r in in_spark} == {0}  # nothing unreadable


# ------------------------------------------------ what the build would refuse


@pytest.mark.spark
@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (
            [("a", "1", 1), ("a", "yes", 2), ("b", "maybe", 1), ("b", "0", 2)],
            "column 'passed': 2 runs have a passed value that is not true, false, 1, 0 (1.0, 0.0) "
            "or null",
        ),
        ([("a", "1", 1), (None, "0", 1), (" ", "1", 2)], "column 'task': 2 runs have no task id"),
        (
            [("a", "1", 1), ("a", "0", 1), ("b", "1", 1)],
            "column 'run': 1 runs repeat a run id already given for their task, for example "
            "run 1 of task 'a' 2 times",
        ),
    ],
)
def test_runs_the_build_would_refuse_are_counted_with_examples(
    spark: SparkSession, rows: list[tuple[Any, ...]], expected: str
) -> None:
    from reportgen.errors import UserError
    from reportgen.spark import SparkCountsError, task_counts

    frame = spark.createDataFrame(rows, "task string, passed string, run int")
    with pytest.raises(SparkCountsError) as caught:
        task_counts(frame, run="run")
    message = str(caught.value)
    assert expected in message, message
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, UserError)
    if "passed value" in expected:
        assert "for example 'yes' (task 'a'), 'maybe' (task 'b')" in message


@pytest.mark.spark
def test_unknown_columns_are_named_with_the_ones_there_are(spark: SparkSession) -> None:
    from reportgen.spark import SparkCountsError, task_counts

    frame = spark.createDataFrame([("a", True)], "task_id string, passed boolean")
    with pytest.raises(SparkCountsError) as caught:
        task_counts(frame, model="model")
    assert caught.value.problems == [
        "task='task': the DataFrame has no such column (did you mean 'task_id'?); "
        "its columns are 'task_id', 'passed'",
        "model='model': the DataFrame has no such column; its columns are 'task_id', 'passed'",
    ]
    with pytest.raises(SparkCountsError, match="already given for task"):
        task_counts(frame, task="task_id", passed="task_id")


@pytest.mark.spark
def test_write_counts_writes_one_file_the_build_reads(spark: SparkSession, tmp_path: Path) -> None:
    from reportgen.spark import SparkCountsError, task_counts, write_counts

    # Task ids that look like numbers stay text; a backtick and a comma in a name survive.
    rows = [("007", True), ("007", False), ("a,`b", None), ("a,`b", True), ("10", True)]
    counts = task_counts(spark.createDataFrame(rows, "task string, passed boolean"))
    for name in ("out/counts.parquet", "out/counts.csv"):
        target = tmp_path / name
        target.parent.mkdir(exist_ok=True)
        target.write_text("an older file, replaced")
        assert write_counts(counts, target) == target
        (rs,) = load_sources([Source(target)]).result_sets
        assert [(t.id, t.successes, t.runs, t.excluded) for t in rs.tasks] == [
            ("007", 1, 2, 0),
            ("10", 1, 1, 0),
            ("a,`b", 1, 1, 1),
        ]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["counts.csv", "counts.parquet"]
    with pytest.raises(SparkCountsError, match=r"\.parquet, \.pq or \.csv file, not \.json"):
        write_counts(counts, tmp_path / "counts.json")
    runs = spark.createDataFrame(rows, "task string, passed boolean")
    with pytest.raises(SparkCountsError, match="no successes, runs column"):
        write_counts(runs, tmp_path / "runs.parquet")
    assert not (tmp_path / "counts.json").exists() and not (tmp_path / "runs.parquet").exists()


# ------------------------------------------------ without Spark


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )


def test_importing_reportgen_never_imports_pyspark() -> None:
    result = _python(
        "import io, sys, reportgen, reportgen.cli, reportgen.sql, reportgen.build\n"
        "reportgen.cli.main(['sql', '--dialect', 'spark', '--table', 't'], out=io.StringIO())\n"
        "print('pyspark' in sys.modules, 'py4j' in sys.modules)"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]


def test_without_pyspark_the_spark_module_says_what_to_install() -> None:
    result = _python("import sys\nsys.modules['pyspark'] = None\nimport reportgen.spark")
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        "ImportError: reportgen.spark needs pyspark (and Java 17 or later): "
        "pip install 'reportgen[spark]'"
    )


def test_without_java_the_spark_tests_skip_locally_and_fail_in_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv("CI", raising=False)
    # Without pyspark the reason names pyspark instead of Java; either way it is said.
    with pytest.raises(pytest.skip.Exception, match=r"Spark tests skipped: (no Java|pyspark)"):
        _require_spark()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(
        pytest.fail.Exception, match=r"must run with CI=true, but (no Java|pyspark)"
    ):
        _require_spark()


@pytest.mark.spark
def test_conditions_are_counted_apart_with_baseline_and_none_as_one(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A condition column: the Spark API's counts, the printed Spark query's and the
    DuckDB query's agree, keep each condition apart, and count 'baseline' and null as
    the one baseline the build reads."""
    from reportgen.spark import task_counts, write_counts

    runs = [
        ("a", None, "1"),
        ("a", "baseline", "0"),
        ("a", "typos", "0"),
        ("b", "baseline", "1"),
        ("b", "typos", "1"),
        ("b", "typos", None),
    ]
    schema = "task string, condition string, passed string"
    frame = spark.createDataFrame(runs, schema)
    frame.createOrReplaceTempView("runs_c")
    flags = ["--columns", "condition=condition"]
    con = duckdb.connect()
    con.execute("CREATE TABLE runs_c (task VARCHAR, condition VARCHAR, passed VARCHAR)")
    con.executemany("INSERT INTO runs_c VALUES (?, ?, ?)", runs)
    in_spark = [
        tuple(r)
        for r in spark.sql(sql("--dialect", "spark", "--table", "runs_c", *flags)).collect()
    ]
    in_duckdb = con.execute(sql("--dialect", "duckdb", "--table", "runs_c", *flags)).fetchall()
    expected = [
        (None, "a", 1, 2, 0, 0),
        (None, "b", 1, 1, 0, 0),
        ("typos", "a", 0, 1, 0, 0),
        ("typos", "b", 1, 1, 1, 0),
    ]
    assert sorted(in_spark, key=str) == sorted(in_duckdb, key=str) == sorted(expected, key=str)
    api = task_counts(frame, condition="condition")
    assert sorted((tuple(r) for r in api.collect()), key=str) == sorted(
        (r[:-1] for r in expected), key=str
    )
    counts = write_counts(api, tmp_path / "counts.parquet")
    sets = load_sources([Source(counts)]).result_sets
    assert sorted((rs.condition, rs.runs) for rs in sets) == [("", 3), ("typos", 2)]


@pytest.mark.spark
def test_a_run_given_as_baseline_and_as_no_condition_is_given_twice(spark: SparkSession) -> None:
    """'baseline' and null are one condition: a run id under both is one run given
    twice, as the build's readers say."""
    from reportgen.spark import SparkCountsError, task_counts

    runs = [("t1", None, 1, True), ("t1", "baseline", 1, False), ("t1", "typos", 1, True)]
    frame = spark.createDataFrame(runs, "task string, condition string, run int, passed boolean")
    with pytest.raises(SparkCountsError, match="1 runs repeat a run id"):
        task_counts(frame, condition="condition", run="run")
