"""Per-task counts from a Spark DataFrame of runs, for `reportgen build`.

    from reportgen.spark import task_counts, write_counts
    counts = task_counts(spark.read.parquet("s3://evals/runs/"), task="task_id",
                         passed="resolved", model="model", suite="suite")
    write_counts(counts, "counts.parquet")

The grouping runs in Spark, with the very aggregate expressions that `reportgen sql
--dialect spark` prints (reportgen/sql.py), so both ways give the same counts, and
pass, fail, excluded and unreadable mean what they mean there: 'true' and '1' pass,
'false' and '0' fail, null (or an empty, 'null', 'none', 'na' or 'nan' string) is
an excluded run, whatever the column's type. What the build would refuse is refused
here instead, before anything is written: passed values that are none of these, a
missing or blank task id, and (when `run` is given) a run id given twice for one
task. The error counts each kind and shows a few examples; only these counts and
examples, and the per-task counts themselves, ever reach the driver.

This is the only module that imports pyspark; `import reportgen` never does.
"""

from __future__ import annotations

import contextlib
import csv
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import UserError
from .readers.fields import did_you_mean
from .sql import (
    IDENTITY,
    RUNS_WITH_VALUE,
    condition_expression,
    count_conditions,
    count_expressions,
    quote,
)

try:
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "reportgen.spark needs pyspark (and Java 17 or later): pip install 'reportgen[spark]'"
    ) from error

__all__ = ["SparkCountsError", "task_counts", "write_counts"]

#: Examples shown per kind of problem; the rest are counted.
EXAMPLES = 5
#: The counts format's columns, in the order write_counts writes them.
COUNT_COLUMNS = (
    "suite",
    "model",
    "condition",
    "task",
    "category",
    "successes",
    "runs",
    "excluded",
)
#: The query's column of runs with an unreadable passed value, dropped once checked.
_UNREADABLE = "unreadable"


class SparkCountsError(UserError, ValueError):
    """The runs (or the arguments) cannot make a counts file: one line per problem,
    each with its count and a few examples."""


def _spark_ident(name: str, what: str) -> str:
    # reportgen.sql's quoting: backticks, a backtick in the name doubled.
    return quote("spark", name, what)


def task_counts(
    df: DataFrame,
    task: str = "task",
    passed: str = "passed",
    suite: str | None = None,
    model: str | None = None,
    category: str | None = None,
    run: str | None = None,
    condition: str | None = None,
) -> DataFrame:
    """Per-task counts of a DataFrame of runs (one row per run), computed by Spark.

    Each argument names the DataFrame's column for that field; suite, model,
    condition (baseline or a perturbation's name) and category are optional, and the
    counts are grouped by every one given. `run`, when
    given, is used only to check that no run id appears twice for a task (the run
    order is not part of the counts); that check is a second pass over the runs.

    Returns a DataFrame with the columns of the counts format: suite, model and
    condition (when given), task, category (when given), successes, runs (runs
    evaluated) and excluded (runs whose passed value is null), ordered by suite,
    model, condition and task. The counts
    are computed once (and kept with localCheckpoint) so that they can be checked.
    Raises SparkCountsError, naming what is wrong, for a column that does not exist or
    runs the build would refuse.
    """
    fields = {"task": task, "passed": passed, "suite": suite, "model": model}
    fields |= {"condition": condition, "category": category, "run": run}
    names = {field: name for field, name in fields.items() if name is not None}
    _check_columns(df, names)
    col = {field: _spark_ident(name, f"{field}=") for field, name in names.items()}
    keys: list[str] = [field for field in IDENTITY if field in col]

    # The printed query's two groupings, with its own expressions: first by task and
    # passed value (the value untouched), then by task, each distinct value read once.
    inner = [F.count(F.lit(1)).alias(RUNS_WITH_VALUE)]
    outer = []
    if "category" in col:
        # As in the printed query: one category per task, the largest.
        inner.append(F.expr(f"max({col['category']})").alias(names["category"]))
        outer.append(F.expr(f"max({col['category']})").alias("category"))
    for name, sql in count_expressions("spark", col["passed"]):
        outer.append(F.expr(sql).alias(name))
    first = [_grouped(field, col, names) for field in (*keys, "passed")]
    by_value = df.groupBy(*first).agg(*inner)
    grouped = by_value.groupBy(*[F.expr(col[field]).alias(field) for field in keys])
    # Computed once: the checks below and every later use read these rows, not the runs.
    counts = grouped.agg(*outer).localCheckpoint()

    blank_task = "task IS NULL OR trim(CAST(task AS STRING)) = ''"
    summary = counts.agg(
        F.expr(f"coalesce(sum({_UNREADABLE}), 0)").alias("unreadable"),
        F.expr(
            f"coalesce(sum(CASE WHEN {blank_task} THEN runs + excluded + {_UNREADABLE} END), 0)"
        ).alias("blank"),
    ).first()
    assert summary is not None  # an aggregate without grouping gives one row
    problems = _problems(df, col, names, summary["unreadable"], summary["blank"])
    if "run" in col:
        problems += _repeated_runs(df, col, names, keys)
    if problems:
        raise SparkCountsError(problems)
    order = [F.col(field) for field in keys]
    return counts.drop(_UNREADABLE).orderBy(*order)


def _grouped(field: str, col: dict[str, str], names: dict[str, str]) -> Any:
    """A column as the runs are first grouped by it: the condition as the printed
    query groups it ('baseline' and null alike), under its own name."""
    if field != "condition":
        return F.expr(col[field])
    return F.expr(condition_expression("spark", col[field])).alias(names[field])


def _check_columns(df: DataFrame, names: dict[str, str]) -> None:
    columns = df.columns
    listing = ", ".join(repr(c) for c in columns) or "none"
    missing = [
        f"{field}={name!r}: the DataFrame has no such column"
        f"{did_you_mean(name, tuple(columns))}; its columns are {listing}"
        for field, name in names.items()
        if name not in columns
    ]
    taken: dict[str, str] = {}
    for field, name in names.items():
        if name.lower() == RUNS_WITH_VALUE:
            missing.append(f"{field}={name!r}: the name of a column of the counting itself")
        elif name in taken:
            missing.append(f"{field}={name!r}: the column is already given for {taken[name]}")
        taken.setdefault(name, field)
    if missing:
        raise SparkCountsError(missing)


def _where(row: Any, names: dict[str, str]) -> str:
    """A run's identity as a message gives it: task 't1' (suite 's', model 'a')."""
    parts = [f"{field} {row[field]!r}" for field in IDENTITY[:-1] if field in names]
    return f"task {row['task']!r}" + (f" ({', '.join(parts)})" if parts else "")


def _examples(df: DataFrame, col: dict[str, str], condition: str, *extra: str) -> list[Any]:
    """A few runs matching the condition (a second pass over the runs, on error only)."""
    wanted = [f for f in (*IDENTITY, *extra) if f in col]
    rows: list[Any] = (
        df.filter(F.expr(condition))
        .select(*[F.expr(col[f]).alias(f) for f in wanted])
        .limit(EXAMPLES)
        .collect()
    )
    return rows


def _problems(
    df: DataFrame, col: dict[str, str], names: dict[str, str], unreadable: int, blank: int
) -> list[str]:
    problems = []
    if unreadable:
        # The same condition the unreadable count used, taken from the printed query.
        condition = count_conditions("spark", col["passed"])[_UNREADABLE]
        shown = ", ".join(
            f"{row['passed']!r} ({_where(row, names)})"
            for row in _examples(df, col, condition, "passed")
        )
        problems.append(
            f"column {names['passed']!r}: {unreadable:,} runs have a passed value that is not "
            "true, false, 1, 0 (1.0, 0.0) or null (nor an empty, 'null', 'none', 'na' or "
            f"'nan' string), for example {shown}"
        )
    if blank:
        condition = f"{col['task']} IS NULL OR trim(CAST({col['task']} AS STRING)) = ''"
        shown = ", ".join(
            f"task {row['task']!r}"
            + "".join(f", {f} {row[f]!r}" for f in IDENTITY[:-1] if f in names)
            for row in _examples(df, col, condition)
        )
        problems.append(
            f"column {names['task']!r}: {blank:,} runs have no task id (null or blank), "
            f"for example {shown}"
        )
    return problems


def _repeated_runs(
    df: DataFrame, col: dict[str, str], names: dict[str, str], keys: list[str]
) -> list[str]:
    """Run ids given twice for a task: a second pass over the runs, grouped by run id,
    made only when `run` is given."""
    # The condition as the counts group it ('baseline' and null as one): a run id given
    # under both is one run given twice.
    grouped = df.groupBy(*[_grouped(f, col, names).alias(f) for f in (*keys, "run")])
    repeated = grouped.count().filter(F.col("count") > 1).filter(F.col("run").isNotNull())
    total = repeated.agg(F.expr("coalesce(sum(count - 1), 0)")).first()
    repeats = total[0] if total is not None else 0
    if not repeats:
        return []
    rows = repeated.limit(EXAMPLES).collect()
    shown = ", ".join(
        f"run {row['run']!r} of {_where(row, names)} {row['count']} times" for row in rows
    )
    return [
        f"column {names['run']!r}: {repeats:,} runs repeat a run id already given for their "
        f"task, for example {shown}"
    ]


# ---------------------------------------------------------------- writing


def write_counts(df: DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write counts (task_counts' result) as ONE file that `reportgen build` reads:
    Parquet for a .parquet or .pq path, CSV for .csv. The rows come to the driver a
    partition at a time (counts are one row per task, small next to the runs) and are
    written to a temporary file beside the target, which replaces it only when
    complete: an interrupted write leaves no half-written counts behind.

    Returns the path written. Raises SparkCountsError for another suffix or a
    DataFrame without task, successes and runs columns.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".parquet", ".pq", ".csv"):
        raise SparkCountsError(
            f"{target}: write counts to a .parquet, .pq or .csv file, not "
            f"{suffix or 'a name without a suffix'}"
        )
    needed = [c for c in ("task", "successes", "runs") if c not in df.columns]
    if needed:
        raise SparkCountsError(
            f"{target}: the DataFrame has no {', '.join(needed)} column: write the result "
            f"of task_counts (its columns are {', '.join(repr(c) for c in df.columns)})"
        )
    columns = [c for c in COUNT_COLUMNS if c in df.columns]
    frame = df.select(*[F.col(f"`{c}`") for c in columns])
    target.parent.mkdir(parents=True, exist_ok=True)
    with _replacing(target) as (temp_csv, temp_final):
        with temp_csv.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            for row in frame.toLocalIterator():
                writer.writerow(["" if value is None else value for value in row])
        if temp_final != temp_csv:
            _csv_to_parquet(temp_csv, temp_final, frame.schema, columns)
    return target


@contextlib.contextmanager
def _replacing(target: Path) -> Iterator[tuple[Path, Path]]:
    """Temporary paths beside `target`: the CSV the rows go to, and the file that
    replaces the target in one rename on success (the same CSV, or Parquet made from
    it). Whatever is left over is removed, success or not."""
    stem = f".{target.name}.{os.getpid()}.tmp"
    temp_csv = target.with_name(stem + ".csv")
    temp_final = temp_csv if target.suffix.lower() == ".csv" else target.with_name(stem)
    try:
        yield temp_csv, temp_final
        os.replace(temp_final, target)
    finally:
        temp_csv.unlink(missing_ok=True)
        temp_final.unlink(missing_ok=True)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _csv_to_parquet(source: Path, target: Path, schema: T.StructType, columns: list[str]) -> None:
    import duckdb

    # Types are given, not guessed: a task id such as "007" stays text.
    types = {
        field.name: "BIGINT" if isinstance(field.dataType, T.IntegralType) else "VARCHAR"
        for field in schema.fields
    }
    spec = ", ".join(f"{_literal(c)}: {_literal(types[c])}" for c in columns)
    con = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    )
    with con:
        con.execute(
            f"COPY (SELECT * FROM read_csv({_literal(str(source))}, header = true, "
            f"columns = {{{spec}}}, quote = '\"', escape = '\"', delim = ',')) "
            f"TO {_literal(str(target))} (FORMAT parquet)"
        )
