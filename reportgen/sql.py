"""The SQL that turns a warehouse table of runs into the counts `reportgen build` reads.

One row per run goes in (a task id, a passed value, optionally suite, model,
condition and category); one row per task comes out, with the columns of the
counts format: task, successes, runs (evaluated runs), excluded (runs whose passed
is null), and suite, model, condition, category when they are mapped. Runs of
different conditions (a perturbation's name, or baseline) are never counted
together. The query runs on the engine
that already holds the data; only the counts leave it.

A passed value is read as text, so the same query works whether the column is a
boolean, a 0/1 integer, a 0.0/1.0 float or a string: 'true', '1' and '1.0' pass,
'false', '0' and '0.0' fail, null (or an empty, 'null', 'none', 'na' or 'nan'
string, as the table reader reads them) is an excluded run. Any other value is
counted in an extra column, `unreadable`, which the counts reader refuses when it
is not zero, so nothing is dropped in silence.

Reading every value as text costs: cast, trimmed and lowered on each of 10^8 rows,
it made the query ten times slower than a bare GROUP BY. So the query groups twice:
first by task and passed value (a plain hash aggregation, the value untouched),
then by task, reading as text only the few distinct values each task has and
summing their runs.

Pure text generation: nothing here connects to anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from .counts import BASELINE
from .errors import UserError
from .readers.fields import unprintable

DIALECTS = ("duckdb", "spark", "bigquery", "postgres")
#: Fields the query uses; run and url are accepted (build's --columns takes them)
#: but the counts need neither.
IDENTITY = ("suite", "model", "condition", "task")
USED = ("task", "passed", "suite", "model", "condition", "category")
IGNORED = ("run", "url")
#: Text a passed value may hold, after lower(trim(...)). A floating-point 1 or 0 reads
#: as '1.0' or '0.0' in DuckDB and Spark; the table reader takes them as numbers too.
PASS_WORDS = ("true", "1", "1.0")
FAIL_WORDS = ("false", "0", "0.0")
NULL_WORDS = ("", "null", "none", "na", "nan")
#: Suffixes that make DuckDB's --table a file it reads directly.
FILE_SUFFIXES = (".parquet", ".csv", ".tsv", ".json", ".jsonl", ".ndjson")


@dataclass(frozen=True)
class _Dialect:
    quote: str  # the identifier quote character
    text: str  # the string type to cast passed to
    integer: str  # the 64-bit integer type (the sums are cast to it)


_DIALECTS = {
    "duckdb": _Dialect('"', "VARCHAR", "BIGINT"),
    "spark": _Dialect("`", "STRING", "BIGINT"),
    "bigquery": _Dialect("`", "STRING", "INT64"),
    "postgres": _Dialect('"', "TEXT", "BIGINT"),
}
#: The inner query's column: how many runs of a task have one passed value. A table
#: column of this name is refused (it would be shadowed).
RUNS_WITH_VALUE = "reportgen_runs"


def quote(dialect: str, name: str, what: str) -> str:
    """One identifier quoted for the dialect; `what` names it in an error."""
    if not name:
        raise UserError(f"{what}: the name is empty")
    problem = unprintable(name)
    if problem is not None:
        raise UserError(f"{what}: {name!r} {problem}")
    q = _DIALECTS[dialect].quote
    if dialect == "bigquery" and ("`" in name or "\\" in name):
        # BigQuery escapes inside quoted names with backslashes, a second language
        # to get right; names holding these are refused instead.
        raise UserError(f"{what}: {name!r}: BigQuery names cannot hold ` or \\ here")
    return q + name.replace(q, q + q) + q


def table_ref(dialect: str, table: str) -> str:
    """The table: dotted parts quoted one by one (project.dataset.table, schema.table);
    for DuckDB a file path (a known suffix or a slash) is read as a file."""
    if not table.strip():
        raise UserError("--table: the name is empty")
    if dialect == "duckdb" and ("/" in table or table.lower().endswith(FILE_SUFFIXES)):
        problem = unprintable(table)
        if problem is not None:
            raise UserError(f"--table: {table!r} {problem}")
        return "'" + table.replace("'", "''") + "'"
    return ".".join(quote(dialect, part, "--table") for part in table.split("."))


#: The count columns of the query, in order; `unreadable` is not part of the counts
#: format proper (the reader refuses a file where it is not zero).
COUNTS = ("successes", "runs", "excluded", "unreadable")


def count_conditions(dialect: str, passed: str) -> dict[str, str]:
    """The condition each of COUNTS counts, `passed` being the quoted passed column."""
    spec = _DIALECTS[dialect]
    value = f"lower(trim(CAST({passed} AS {spec.text})))"

    def words(items: tuple[str, ...]) -> str:
        return ", ".join("'" + w + "'" for w in items)

    return {
        # "IS NOT NULL AND": a condition that is null for every row of a task would
        # make count_if null rather than 0 in DuckDB.
        "successes": f"{passed} IS NOT NULL AND {value} IN ({words(PASS_WORDS)})",
        "runs": f"{passed} IS NOT NULL AND {value} IN ({words(PASS_WORDS + FAIL_WORDS)})",
        "excluded": f"{passed} IS NULL OR {value} IN ({words(NULL_WORDS)})",
        "unreadable": f"{passed} IS NOT NULL AND {value} NOT IN "
        f"({words(PASS_WORDS + FAIL_WORDS + NULL_WORDS)})",
    }


def condition_expression(dialect: str, condition: str) -> str:
    """The quoted condition column as runs are grouped by it: 'baseline' and null are
    one condition (the baseline, null), as the build reads them; the two grouped
    apart would give a task twice."""
    return f"NULLIF(CAST({condition} AS {_DIALECTS[dialect].text}), '{BASELINE}')"


def count_expressions(dialect: str, passed: str) -> list[tuple[str, str]]:
    """(column name, SQL aggregate) for each of COUNTS, over the inner query's rows (one
    per task and passed value, with RUNS_WITH_VALUE runs); `passed` is the quoted
    passed column. reportgen.spark aggregates with these very expressions, so the Spark
    path and the printed Spark query count alike by construction."""
    spec = _DIALECTS[dialect]
    runs = quote(dialect, RUNS_WITH_VALUE, "alias")
    return [
        (name, f"CAST(SUM(CASE WHEN {condition} THEN {runs} ELSE 0 END) AS {spec.integer})")
        for name, condition in count_conditions(dialect, passed).items()
    ]


def counts_query(dialect: str, table: str, columns: dict[str, str]) -> str:
    """The GROUP BY query, as text ending in a newline. `columns` maps fields (task,
    passed, suite, model, condition, category, run, url) to the table's column names;
    task and passed default to their own names."""
    if dialect not in _DIALECTS:
        raise UserError(f"--dialect: {dialect!r} is not one of {', '.join(DIALECTS)}")
    names = {"task": "task", "passed": "passed", **columns}
    col = {
        field: quote(dialect, names[field], f"--columns {field}")
        for field in USED
        if field in names
    }
    for field in IGNORED:
        if field in names:
            quote(dialect, names[field], f"--columns {field}")  # checked all the same

    taken = [f for f in (*USED, *IGNORED) if names.get(f, "").lower() == RUNS_WITH_VALUE]
    if taken:
        raise UserError(
            f"--columns {taken[0]}: {RUNS_WITH_VALUE!r} is the name the query gives its own "
            "column; rename the column in a view first"
        )

    def alias(field: str) -> str:
        return quote(dialect, field, "alias")

    keys = [field for field in IDENTITY if field in col]
    group = ", ".join(col[field] for field in keys)
    grouped = {field: col[field] for field in keys}
    if "condition" in grouped:
        grouped["condition"] = condition_expression(dialect, col["condition"])
    inner = [
        col[field] if grouped[field] == col[field] else f"{grouped[field]} AS {col[field]}"
        for field in keys
    ]
    outer = [f"  {col[field]} AS {alias(field)}" for field in keys]
    if "category" in col:
        # One category per task: the largest, should the runs disagree.
        inner.append(f"MAX({col['category']}) AS {col['category']}")
        outer.append(f"  MAX({col['category']}) AS {alias('category')}")
    inner += [col["passed"], f"COUNT(*) AS {alias(RUNS_WITH_VALUE)}"]
    outer += [f"  {c} AS {alias(name)}" for name, c in count_expressions(dialect, col["passed"])]
    lines = [
        f"-- Per-task counts for reportgen build ({dialect}); save the result as Parquet or CSV.",
        "SELECT",
        ",\n".join(outer),
        "FROM (",
        f"  SELECT {', '.join(inner)}",
        f"  FROM {table_ref(dialect, table)}",
        f"  GROUP BY {', '.join(grouped.values())}, {col['passed']}",
        ") AS runs",
        f"GROUP BY {group}",
        f"ORDER BY {group}",
    ]
    return "\n".join(lines) + "\n"
