"""Tables of per-task counts (CSV, TSV, Parquet, JSON lines), checked row by row in
DuckDB with table_rows' checks, each task's counts handed to the Tally."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..counts import MAX_COUNT
from .base import Tally
from .duckdb_common import given_names, ident, own_suite
from .source import Source
from .table_rows import (
    EXAMPLES,
    ROW,
    UNREADABLE,
    BadTable,
    Check,
    Columns,
    Places,
    braced,
    given_columns,
    group_key_columns,
    is_number,
    raw_text,
    run_checks,
    say,
    task_check,
    text_checks,
    text_sql,
)

if TYPE_CHECKING:
    import duckdb

#: The optional text fields of a table of counts.
_COUNT_TEXT = ("suite", "model", "condition", "category")


def read_counts(
    con: duckdb.DuckDBPyConnection,
    cols: Columns,
    source: Source,
    tally: Tally,
    where: str,
    place: Places,
) -> None:
    """A table of per-task counts: every cell checked, then each row's counts checked
    against each other and each task given once, then handed to the Tally."""
    unreadable = [name for name in cols.types if name.lower() == UNREADABLE]
    whats = _counts_view(con, cols, source, tally, unreadable)
    if not run_checks(con, _count_checks(cols, unreadable), tally, where, place):
        return
    if not run_checks(con, _relation_checks(cols), tally, where, place):
        return
    if _repeated_tasks(con, tally, where, place):
        return
    groups = given_names(con, whats)
    rows = con.execute(
        """SELECT _row, task, CAST(successes AS BIGINT), CAST(runs AS BIGINT),
            CAST(coalesce(excluded, 0) AS BIGINT), suite, model, condition, category
        FROM v ORDER BY _row"""
    ).fetchall()
    if not rows:
        tally.problems.add(f"{where}: the table has column names but no rows: no tasks to count")
    for row, task, c, n, x, suite, model, condition, category in rows:
        tally.add_counts(
            f"{where}: {place(row)}",
            task,
            c,
            n,
            suite=own_suite(suite, tally),
            model=model,
            category=category,
            excluded=x,
            condition=condition,
            given=groups.get((suite, model, condition), {}),
        )


def _counts_view(
    con: duckdb.DuckDBPyConnection,
    cols: Columns,
    source: Source,
    tally: Tally,
    unreadable: list[str],
) -> list[str]:
    """The view v: each row's counts as numbers, beside the cells as written; returns
    the names the file gives where the source replaces them (given_columns)."""
    raw_unreadable = ident(unreadable[0]) if len(unreadable) == 1 else "0"
    given, whats = given_columns(cols, source)
    con.execute(
        f"""CREATE TEMP VIEW v AS SELECT {ROW} AS _row,
            {raw_unreadable} AS raw_unreadable,
            {text_sql(cols, "task", integers=True)} AS task,
            {_count_value(cols, "successes")} AS successes,
            {_count_value(cols, "runs")} AS runs,
            {_count_value(cols, "excluded")} AS excluded,
            {", ".join(f"{ident(cols.names[f])} AS raw_{f}" for f in ("successes", "runs"))},
            {ident(cols.names["excluded"]) if cols.get("excluded") else "NULL"} AS raw_excluded,
            {group_key_columns(source, cols, tally)},
            {text_sql(cols, "category")} AS category
            {raw_text(cols, _COUNT_TEXT)}{given}
        FROM src"""
    )
    return whats


def _count_checks(cols: Columns, unreadable: list[str]) -> list[Check]:
    """The checks of each cell: the task, the counts, the names, and the column of
    unreadable runs that `reportgen sql` writes."""
    checks = [task_check(cols)]
    for field in ("successes", "runs", "excluded"):
        name = cols.get(field)
        if name is not None:
            checks.extend(_whole_number_checks(field, name))
    checks.extend(text_checks(cols, _COUNT_TEXT))
    if len(unreadable) == 1:
        # Written by `reportgen sql`: runs whose passed value the query could not read.
        checks.append(
            Check(
                "coalesce(TRY_CAST(raw_unreadable AS DOUBLE), 1) <> 0",
                "raw_unreadable",
                say(
                    f"column {braced(unreadable[0])}: {{0}} runs of this task have a passed "
                    "value that is not true, false, 1, 0 or empty; fix them in the table "
                    "and run the query again"
                ),
            )
        )
    return checks


def _whole_number_checks(field: str, name: str) -> list[Check]:
    """A count column (`field`, the file's column `name`): a whole number from 0 to
    MAX_COUNT in every row."""
    value, raw = field, f"raw_{field}"
    # An empty excluded cell means none; empty successes or runs is an error.
    missing = f"{raw} IS NULL" if field != "excluded" else "false"
    # The bounds are checked on whole numbers only: 1e400 is not one, and is not
    # also "more than a billion".
    whole = f"(NOT isinf({value}) AND NOT isnan({value}) AND {value} = floor({value}))"
    return [
        Check(
            f"{missing} OR ({raw} IS NOT NULL AND ({value} IS NULL OR NOT {whole}))",
            raw,
            say(f"column {braced(name)}: expected a whole number, got {{0}}"),
        ),
        Check(
            f"{whole} AND {value} < 0",
            raw,
            say(f"column {braced(name)}: must not be negative, got {{0}}"),
        ),
        Check(
            f"{whole} AND {value} > {MAX_COUNT}",
            raw,
            say(f"column {braced(name)}: must be at most {MAX_COUNT:,}, got {{0}}"),
        ),
    ]


def _relation_checks(cols: Columns) -> list[Check]:
    """The checks of a row's counts against each other, once each count is whole."""
    successes, runs = cols.names["successes"], cols.names["runs"]
    return [
        Check(
            # A task whose every run was excluded has runs 0, as in JSONL.
            "runs < 1 AND coalesce(excluded, 0) < 1",
            "runs",
            say(f"column {braced(runs)}: must be at least 1 (or excluded at least 1), got {{0}}"),
        ),
        Check(
            "successes > runs",
            "successes, runs",
            say(f"column {braced(successes)}: {{0}} is more than runs ({{1}})"),
        ),
    ]


def _repeated_tasks(
    con: duckdb.DuckDBPyConnection, tally: Tally, where: str, place: Places
) -> bool:
    """Names the rows of each task given twice; True when there is one."""
    duplicates = con.execute(
        f"""SELECT task, list(_row ORDER BY _row) AS rows FROM v
        GROUP BY suite, model, condition, task
        HAVING count(*) > 1 ORDER BY rows[2] LIMIT {EXAMPLES}"""
    ).fetchall()
    for task, rows_of in duplicates:
        tally.problems.add(
            f"{where}: {place(rows_of[1])}: task {task!r} already given at {place(rows_of[0])}"
        )
    return bool(duplicates)


def _count_value(cols: Columns, field: str) -> str:
    """SQL for a count column as DOUBLE (NULL when missing or not a number)."""
    name = cols.get(field)
    if name is None:
        return "0"
    sql_type = cols.type(field)
    if sql_type == "VARCHAR":
        return f"TRY_CAST(trim({ident(name)}) AS DOUBLE)"
    if is_number(sql_type):
        return f"CAST({ident(name)} AS DOUBLE)"
    if sql_type == "JSON":  # JSONL whose records disagree on the type: numbers only
        value = ident(name)
        return (
            f"CASE WHEN json_type({value}) IN ('BIGINT', 'UBIGINT', 'DOUBLE') "
            f"THEN CAST({value} AS DOUBLE) END"
        )
    raise BadTable(f"column {name!r} ({field}) holds {sql_type} values; expected whole numbers")
