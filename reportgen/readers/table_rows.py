"""The row-by-row work on a table inside DuckDB, for table.py.

A table of runs (read_runs) or of per-task counts (read_counts), once its columns
are known (`Columns`), is checked row by row in SQL (each problem names the file,
the row and the column, the first few of each kind, the rest counted) and grouped
into per-task counts with each task's run order, handed to the Tally.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ..counts import EXCLUDED, FAIL, MEASURES, PASS
from .base import Tally
from .duckdb_common import (
    DIGITS,
    REPLACEABLE,
    given_names,
    group_keys,
    ident,
    literal,
    mixed_codes,
    own_suite,
    task_measures,
    task_urls,
)
from .fields import measure_rule
from .source import Source

if TYPE_CHECKING:
    import duckdb

#: Cell values (after trimming, any case) that mean "not evaluated", like null in JSONL.
NULL_WORDS = ("", "null", "none", "na", "nan")
#: The counts column `reportgen sql` adds: runs whose passed value it could not read.
UNREADABLE = "unreadable"
#: The row number's column name inside DuckDB (unlikely to be a column of the file).
ROW = "__reportgen_row"
#: Located examples given per kind of problem; the rest are counted.
EXAMPLES = 5

_SIGNED = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT")
_INTEGER_TYPES = (*_SIGNED, *("U" + t for t in _SIGNED))
_NUMBER_TYPES = (*_INTEGER_TYPES, "FLOAT", "DOUBLE")


class BadTable(Exception):
    """A problem with the table as a whole (its columns): one located message."""


def is_number(sql_type: str) -> bool:
    return sql_type in _NUMBER_TYPES or sql_type.startswith("DECIMAL")


@dataclass(frozen=True)
class Columns:
    """Which file column holds each field, and its DuckDB type."""

    names: dict[str, str]
    types: dict[str, str]

    def get(self, field: str) -> str | None:
        return self.names.get(field)

    def type(self, field: str) -> str:
        return self.types[self.names[field]]


# ---------------------------------------------------------------- SQL pieces


def text_sql(cols: Columns, field: str, *, integers: bool = False) -> str:
    """SQL for a text field (NULL when the table has no such column)."""
    name = cols.get(field)
    if name is None:
        return "NULL"
    sql_type = cols.type(field)
    if sql_type == "VARCHAR":
        return ident(name)
    if integers and sql_type in _INTEGER_TYPES:
        return f"CAST({ident(name)} AS VARCHAR)"
    if sql_type == "JSON":  # JSONL whose records disagree on the type: text only
        value = ident(name)
        whole = f"CAST(CAST({value} AS HUGEINT) AS VARCHAR)" if integers else "NULL"
        return (
            f"CASE json_type({value}) WHEN 'VARCHAR' THEN {value} ->> '$' "
            f"WHEN 'BIGINT' THEN {whole} WHEN 'UBIGINT' THEN {whole} END"
        )
    kind = "text or whole numbers" if integers else "text"
    raise BadTable(f"column {name!r} ({field}) holds {sql_type} values; expected {kind}")


def _measure(cols: Columns, field: str) -> str:
    """SQL for a measure column as DOUBLE: NULL when empty, a null word or NaN (not
    recorded), infinity for text that is not a number (which its check then names)."""
    name = cols.get(field)
    if name is None:
        return "CAST(NULL AS DOUBLE)"
    sql_type = cols.type(field)
    column = ident(name)
    if is_number(sql_type):
        value = f"CAST({column} AS DOUBLE)"
    elif sql_type == "VARCHAR":
        nulls = ", ".join(literal(w) for w in NULL_WORDS)
        value = (
            f"CASE WHEN {column} IS NULL OR lower(trim({column})) IN ({nulls}) THEN NULL "
            f"ELSE coalesce(TRY_CAST(trim({column}) AS DOUBLE), 'Infinity'::DOUBLE) END"
        )
    elif sql_type == "JSON":  # JSONL whose records disagree on the type
        value = (
            f"CASE WHEN json_type({column}) IN ('BIGINT', 'UBIGINT', 'DOUBLE') "
            f"THEN CAST({column} AS DOUBLE) WHEN json_type({column}) <> 'NULL' "
            "THEN 'Infinity'::DOUBLE END"
        )
    else:
        raise BadTable(f"column {name!r} ({field}) holds {sql_type} values; expected numbers")
    return f"CASE WHEN isnan({value}) THEN NULL ELSE {value} END"


def _cell(cols: Columns, field: str) -> str:
    """A measure's cell as written, for a message."""
    name = cols.get(field)
    return "NULL" if name is None else ident(name)


def _measure_checks(cols: Columns) -> list[Check]:
    """A measure's cell is empty or a finite number of at least 0 (confidence at most 1):
    what fields.measure_value takes."""
    checks = []
    for field in MEASURES:
        name = cols.get(field)
        if name is None:
            continue
        value = ident(field)
        top = f" OR {value} > 1" if field == "confidence" else ""
        checks.append(
            Check(
                f"{value} IS NOT NULL AND (NOT isfinite({value}) OR {value} < 0{top})",
                ident(field + "_cell"),
                say(f"column {braced(name)}: {{0}} is not {measure_rule(field)}"),
            )
        )
    return checks


def _passed_code(cols: Columns, threshold: float | None) -> str:
    """SQL for each run's outcome code: PASS, FAIL, EXCLUDED, or 9 for a bad value."""
    name = cols.get("passed")
    assert name is not None
    column = ident(name)
    sql_type = cols.type("passed")

    def number(value: str, missing: int) -> str:
        if threshold is not None:
            decide = f"WHEN {value} >= {threshold!r} THEN {PASS} ELSE {FAIL}"
        else:
            decide = f"WHEN {value} = 1 THEN {PASS} WHEN {value} = 0 THEN {FAIL} ELSE 9"
        return (
            f"CASE WHEN {value} IS NULL THEN {missing} WHEN isnan({value}) THEN {EXCLUDED} "
            f"WHEN isinf({value}) THEN 9 {decide} END"
        )

    if sql_type == "BOOLEAN":
        return (
            f"CASE WHEN {column} IS NULL THEN {EXCLUDED} WHEN {column} THEN {PASS} ELSE {FAIL} END"
        )
    if is_number(sql_type):
        return number(f"CAST({column} AS DOUBLE)", EXCLUDED)
    if sql_type != "VARCHAR":
        raise BadTable(
            f"column {name!r} (passed) holds {sql_type} values; expected true/false or 1/0"
        )
    trimmed = f"trim({column})"
    nulls = ", ".join(literal(w) for w in NULL_WORDS)
    return (
        f"CASE WHEN {column} IS NULL OR lower({trimmed}) IN ({nulls}) THEN {EXCLUDED} "
        f"WHEN lower({trimmed}) = 'true' OR {trimmed} = 'C' THEN {PASS} "
        f"WHEN lower({trimmed}) = 'false' OR {trimmed} IN ('I', 'P', 'N') THEN {FAIL} "
        f"ELSE {number(f'TRY_CAST({trimmed} AS DOUBLE)', 9)} END"
    )


@dataclass(frozen=True)
class Check:
    """Rows that break one rule: a SQL condition, the values to show, the message."""

    condition: str
    values: str
    message: Callable[[tuple[Any, ...]], str]


@dataclass(frozen=True)
class Places:
    """How a message names a record: "row 5" of a table; "line 7" of JSON lines, whose
    blank lines hold no record but count as lines (`lines`: each record's line)."""

    lines: list[int] | None = None

    def __call__(self, row: int) -> str:
        return f"row {row}" if self.lines is None else f"line {self.lines[row - 1]}"

    @property
    def plural(self) -> str:
        return "rows" if self.lines is None else "lines"


def run_checks(
    con: duckdb.DuckDBPyConnection,
    checks: list[Check],
    tally: Tally,
    where: str,
    place: Places,
) -> bool:
    """Counts every rule's offending rows in one pass; names the first few of each.
    Returns True when all rows pass."""
    if not checks:
        return True
    counts = con.execute(
        "SELECT " + ", ".join(f"count(*) FILTER (WHERE {c.condition})" for c in checks) + " FROM v"
    ).fetchone()
    assert counts is not None
    found: list[tuple[int, str]] = []  # (row, message): said in row order
    more: list[str] = []
    for check, count in zip(checks, counts, strict=True):
        if not count:
            continue
        rows = con.execute(
            f"SELECT _row, {check.values} FROM v WHERE {check.condition} "
            f"ORDER BY _row LIMIT {EXAMPLES}"
        ).fetchall()
        found.extend(
            (row[0], f"{where}: {place(row[0])}, {check.message(row[1:])}") for row in rows
        )
        if count > len(rows):
            last = place(rows[-1][0])
            more.append(f"{where}: {count - len(rows):,} more {place.plural} like {last}")
    for _, message in sorted(found, key=lambda item: item[0]):
        tally.problems.add(message)
    for message in more:
        tally.problems.add(message)
    return not any(counts)


def _shown(value: Any) -> str:
    if value is None:
        return "an empty cell"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    # A Parquet DECIMAL comes back as Decimal: shown as the number, not Decimal('0.5').
    return _cut(str(value) if isinstance(value, Decimal) else repr(value))


def _cut(text: str) -> str:
    """A value as a message quotes it: at most 40 characters."""
    return text if len(text) <= 40 else text[:37] + "..."


def _not_text(name: str) -> Callable[[tuple[Any, ...]], str]:
    def message(values: tuple[Any, ...]) -> str:
        return f"column {braced(name)}: {_cut(str(values[0]))} is not text"

    return message


def given_columns(cols: Columns, source: Source) -> tuple[str, list[str]]:
    """SQL adding to the view v, as given_<name>, each name column of the file that the
    config or command line replaces, and those names (see duckdb_common.given_names)."""
    whats = [w for w in REPLACEABLE if getattr(source, w) and cols.get(w) is not None]
    return "".join(f", {text_sql(cols, w)} AS {ident('given_' + w)}" for w in whats), whats


def braced(name: str) -> str:
    """A column name quoted for a message template (its braces doubled)."""
    return repr(name).replace("{", "{{").replace("}", "}}")


def say(template: str) -> Callable[[tuple[Any, ...]], str]:
    """A message from a template with {0}, {1}, ... for the offending row's values."""

    def message(values: tuple[Any, ...]) -> str:
        return template.format(*(_shown(v) for v in values))

    return message


def group_key_columns(source: Source, cols: Columns, tally: Tally) -> str:
    names = (text_sql(cols, "suite"), text_sql(cols, "model"), text_sql(cols, "condition"))
    return group_keys(source, *names, tally.fallback_suite)


#: The optional text fields of a table of runs.
_RUN_TEXT = ("suite", "model", "condition", "category", "url")


def raw_text(cols: Columns, fields: tuple[str, ...]) -> str:
    """SQL adding to the view v, as raw_<field>, each text field of JSON lines whose
    records disagree on its type: text_sql reads a value that is not text as NULL (no
    "condition": 7 in the baseline), so its check must see the value as written."""
    return "".join(
        f", {ident(cols.names[f])} AS {ident('raw_' + f)}"
        for f in fields
        if cols.get(f) is not None and cols.type(f) == "JSON"
    )


def text_checks(cols: Columns, fields: tuple[str, ...]) -> list[Check]:
    """Optional text fields: NULL (an empty cell) is fine, blank text, a value of
    another type (JSON lines) or a bad url is not.

    The checks run on the view `v`, where each field has its own name (suite, model,
    category, url) whatever the table's column is called; messages name the column.
    """
    checks = []
    for field in fields:
        name = cols.get(field)
        if name is None:
            continue
        column = ident(field)
        blank = f"{column} IS NOT NULL AND trim({column}) = ''"
        if cols.type(field) == "JSON":
            raw = ident(f"raw_{field}")
            other = f"json_type({raw}) NOT IN ('VARCHAR', 'NULL')"
            # The value as JSON writes it, unquoted: '7' would read as text.
            checks.append(Check(other, raw, _not_text(name)))
            blank += f" AND NOT coalesce({other}, false)"  # said once, as not text
        checks.append(
            Check(blank, column, say(f"column {braced(name)}: {{0}} must be a non-empty string"))
        )
        if field == "url":
            checks.append(
                Check(
                    f"{column} IS NOT NULL AND NOT regexp_matches(lower({column}), '^https?://')",
                    column,
                    say(f"column {braced(name)}: {{0}} is not an http or https link"),
                )
            )
    return checks


def task_check(cols: Columns) -> Check:
    name = cols.names["task"]
    return Check(
        "task IS NULL OR trim(task) = ''",
        "task",
        say(f"column {braced(name)}: the task id is missing"),
    )


# ---------------------------------------------------------------- runs


def read_runs(
    con: duckdb.DuckDBPyConnection,
    cols: Columns,
    score: str | None,
    source: Source,
    tally: Tally,
    where: str,
    place: Places,
) -> None:
    """A table of runs: every cell checked, then grouped into per-task counts."""
    passed_name = cols.names["passed"]
    whats = _runs_view(con, cols, source, tally)
    expected = "true, false, 1, 0, C, I or empty"
    if score is not None and source.threshold is None:
        expected += " (for scores, set threshold: or --threshold)"
    elif source.threshold is not None:
        expected = f"a number (passes at {source.threshold:g} or more), true, false or empty"
    checks = [
        task_check(cols),
        Check(
            "code = 9",
            "passed_raw",
            say(f"column {braced(passed_name)}: {{0}} is not {expected}"),
        ),
        *text_checks(cols, _RUN_TEXT),
        *_measure_checks(cols),
    ]
    if not run_checks(con, checks, tally, where, place):
        return
    # Run order: by run id when every run of the task has one (whole numbers first, by
    # value, then the others as text: the JSONL reader's order), else by row.
    order = "run_number NULLS LAST, run, _row"
    tasks = _task_rows(con, order)
    if not tasks:
        tally.problems.add(f"{where}: the table has column names but no rows: no runs to count")
        return
    # A run id given twice for a task is an error, as in JSONL; only then are the
    # rows looked up, to name them.
    if any(row[-2] for row in tasks):
        _duplicate_runs(con, tally, where, cols, place)
        return
    by_row: dict[tuple[str, str, str, str], str] = {}
    if any(row[-1] for row in tasks):
        by_row = {(s, m, c, t): codes for s, m, c, t, codes in mixed_codes(con)}
    urls = task_urls(con) if cols.get("url") is not None else {}
    # Only the table's measure columns are read: v is a view over the file, so each
    # query is another pass over it.
    names = [name for name in MEASURES if cols.get(name) is not None]
    lengths = [row[5] + row[6] + row[7] for row in tasks]
    measures = task_measures(con, names, order, lengths) if names else [{}] * len(tasks)
    groups = given_names(con, whats)
    for row, packed in zip(tasks, measures, strict=True):
        suite, model, condition, task, first, passes, fails, excluded, category, codes, _, _ = row
        key = (suite, model, condition, task)
        codes = by_row.get(key, codes)
        tally.add_task(
            f"{where}: {place(first)}",
            task,
            (passes, passes + fails, excluded),
            codes.encode("ascii").translate(DIGITS),
            suite=own_suite(suite, tally),
            model=model,
            category=category,
            urls=urls.get(key),
            measures=packed,
            condition=condition,
            given=groups.get((suite, model, condition), {}),
        )


def _runs_view(
    con: duckdb.DuckDBPyConnection, cols: Columns, source: Source, tally: Tally
) -> list[str]:
    """The view v: each row's run as values, beside the cells as written; returns the
    names the file gives where the source replaces them (given_columns)."""
    run = text_sql(cols, "run", integers=True)
    given, whats = given_columns(cols, source)
    con.execute(
        f"""CREATE TEMP VIEW v AS SELECT {ROW} AS _row,
            {text_sql(cols, "task", integers=True)} AS task,
            {run} AS run,
            {_whole(run)} AS run_number,
            {_passed_code(cols, source.threshold)} AS code,
            {ident(cols.names["passed"])} AS passed_raw,
            {group_key_columns(source, cols, tally)},
            {text_sql(cols, "category")} AS category, {text_sql(cols, "url")} AS url,
            {", ".join(f"{_measure(cols, m)} AS {ident(m)}" for m in MEASURES)},
            {", ".join(f"{_cell(cols, m)} AS {ident(m + '_cell')}" for m in MEASURES)}
            {raw_text(cols, _RUN_TEXT)}{given}
        FROM src"""
    )
    return whats


def _whole(run: str) -> str:
    """SQL for a run id's value when its text is a whole number (else NULL). Not
    TRY_CAST, which also takes ' 1', '1.5' (as 2), '1e0' and '1_0' (as 10)."""
    return f"CASE WHEN regexp_full_match({run}, '-?[0-9]{{1,18}}') THEN CAST({run} AS BIGINT) END"


#: What tells one run of a task from another: its whole number, else its text. The
#: check for a repeated run and the query that names the rows both group on it.
_RUN_ID = "coalesce(CAST(run_number AS VARCHAR), run)"


def _task_rows(con: duckdb.DuckDBPyConnection, order: str) -> list[tuple[Any, ...]]:
    """Per task, by first row: suite, model, condition, task, first row, passes, failures,
    excluded, category, codes in run order, repeated run ids, whether ids are partial."""
    return con.execute(
        f"""SELECT suite, model, condition, task, min(_row) AS first,
            count(*) FILTER (WHERE code = {PASS}), count(*) FILTER (WHERE code = {FAIL}),
            count(*) FILTER (WHERE code = {EXCLUDED}),
            arg_max(category, _row) FILTER (WHERE category IS NOT NULL),
            string_agg(chr(48 + code), '' ORDER BY {order}),
            count(run) - count(DISTINCT {_RUN_ID}) AS repeats,
            count(run) > 0 AND count(run) < count(*) AS mixed
        FROM v GROUP BY suite, model, condition, task ORDER BY first"""
    ).fetchall()


def _duplicate_runs(
    con: duckdb.DuckDBPyConnection, tally: Tally, where: str, cols: Columns, place: Places
) -> None:
    """Names the rows of each run id given twice for one task."""
    rows = con.execute(
        f"""SELECT task, list(run ORDER BY _row), list(_row ORDER BY _row) AS rows
        FROM v WHERE run IS NOT NULL GROUP BY suite, model, condition, task, {_RUN_ID}
        HAVING count(*) > 1 ORDER BY rows[2] LIMIT {EXAMPLES}"""
    ).fetchall()
    for task, runs, rows_of in rows:
        # 1 and 01 in a column of text are one whole number: say so where they differ.
        same = "" if runs[0] == runs[1] else f" as {runs[0]!r}"
        tally.problems.add(
            f"{where}: {place(rows_of[1])}, column {cols.names['run']!r}: run {runs[1]!r} of task "
            f"{task!r} appears twice (first at {place(rows_of[0])}{same})"
        )
