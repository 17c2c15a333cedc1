"""Tables (CSV, TSV, Parquet) of runs or of per-task counts, read through DuckDB.

A table of runs has one row per run (task, passed, and optionally run, suite,
model, category, url); a table of counts one row per task (task, successes,
runs, optionally excluded, suite, model, category). Which one a file is follows
from its columns. Columns are found by name, through common aliases, or through
a mapping (`columns:` in the config, --columns on the command line).

Everything row by row happens inside DuckDB: the checks (each problem names the
file, the row and the column), the grouping into per-task counts, and the run
order of each task, which comes back as one short string of codes per task.
Rows are numbered from 1, the header and blank lines not counted.

Two JSONL readings live here too, since they share this machinery: per-task
counts as JSONL (`read_jsonl_counts`), and large canonical JSONL of runs
(`read_jsonl_through_duckdb`), which gives up, leaving the Python reader in
jsonl.py to name the line, at the first thing that is not plainly well-formed.

duckdb is imported inside the read functions: commands that never read a table
do not pay for loading it.
"""

from __future__ import annotations

import csv
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..counts import EXCLUDED, FAIL, MAX_COUNT, PASS
from .base import (
    Reader,
    Source,
    Tally,
    did_you_mean,
    json_loads,
    json_reason,
    jsonl_lines,
    unprintable,
)

if TYPE_CHECKING:
    import duckdb

#: What a column can hold, and the names it is found under without a mapping, the
#: canonical name first (it wins when an alias is present too).
ALIASES: dict[str, tuple[str, ...]] = {
    "task": ("task", "task_id", "instance_id", "sample_id", "example_id", "doc_id"),
    "run": ("run", "trial", "run_id", "epoch", "attempt", "repeat_index"),
    "passed": ("passed", "success", "resolved", "is_resolved", "correct"),
    "suite": ("suite",),
    "model": ("model",),
    "category": ("category",),
    "url": ("url",),
    "successes": ("successes",),
    "runs": ("runs",),
    "excluded": ("excluded",),
}
FIELDS = tuple(ALIASES)
#: A score column stands for passed when no other passed column exists.
SCORE = "score"
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


class _Bad(Exception):
    """A problem with the table as a whole (its columns): one located message."""


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _is_number(sql_type: str) -> bool:
    return sql_type in _NUMBER_TYPES or sql_type.startswith("DECIMAL")


@dataclass(frozen=True)
class _Columns:
    """Which file column holds each field, and its DuckDB type."""

    names: dict[str, str]
    types: dict[str, str]

    def get(self, field: str) -> str | None:
        return self.names.get(field)

    def type(self, field: str) -> str:
        return self.types[self.names[field]]


def _resolve(
    columns: list[tuple[str, str]], source: Source, where: str
) -> tuple[_Columns, str | None]:
    """Map fields to file columns. Returns the mapping and the passed column when it is
    a score (so the messages can mention threshold)."""
    types = dict(columns)
    by_lower: dict[str, list[str]] = {}
    for name, _ in columns:
        by_lower.setdefault(name.lower(), []).append(name)
    listing = column_listing([name for name, _ in columns])
    names: dict[str, str] = {}
    for field, wanted in source.columns:
        if wanted in types:
            names[field] = wanted
            continue
        matches = by_lower.get(wanted.lower(), [])
        if len(matches) != 1:
            raise _Bad(
                f"{where}: column {wanted!r} (given for {field}) is not in the file"
                f"{did_you_mean(wanted, tuple(types))}; its columns are {listing}"
            )
        names[field] = matches[0]
    taken = set(names.values())
    score: str | None = None
    for field, aliases in ALIASES.items():
        if field in names:
            continue
        found = [m for alias in aliases for m in by_lower.get(alias, []) if m not in taken]
        canonical = [m for m in found if m.lower() == field]
        if len(canonical) == 1:
            found = canonical
        if not found and field == "passed":
            found = [m for m in by_lower.get(SCORE, []) if m not in taken]
            score = found[0] if len(found) == 1 else None
        if len(found) > 1:
            raise _Bad(
                f"{where}: more than one column could hold {field}: "
                f"{', '.join(repr(m) for m in found)}; say which one with "
                f"columns: {{{field}: NAME}} in the config or --columns {field}=NAME"
            )
        if found:
            names[field] = found[0]
            taken.add(found[0])
    if names.get("passed") is not None and names["passed"].lower() == SCORE:
        score = names["passed"]
    return _Columns(names, types), score


# ---------------------------------------------------------------- SQL pieces


def _text(cols: _Columns, field: str, *, integers: bool = False) -> str:
    """SQL for a text field (NULL when the table has no such column)."""
    name = cols.get(field)
    if name is None:
        return "NULL"
    sql_type = cols.type(field)
    if sql_type == "VARCHAR":
        return _ident(name)
    if integers and sql_type in _INTEGER_TYPES:
        return f"CAST({_ident(name)} AS VARCHAR)"
    if sql_type == "JSON":  # JSONL whose records disagree on the type: text only
        value = _ident(name)
        whole = f"CAST(CAST({value} AS HUGEINT) AS VARCHAR)" if integers else "NULL"
        return (
            f"CASE json_type({value}) WHEN 'VARCHAR' THEN {value} ->> '$' "
            f"WHEN 'BIGINT' THEN {whole} WHEN 'UBIGINT' THEN {whole} END"
        )
    kind = "text or whole numbers" if integers else "text"
    raise _Bad(f"column {name!r} ({field}) holds {sql_type} values; expected {kind}")


def _own(suite: str | None, tally: Tally) -> str | None:
    """A group's suite as the file named it: None for rows grouped under the Tally's
    fallback (see _group_keys), so the page says the suite is a guess from a name."""
    return None if suite == tally.fallback_suite else suite


def _group_keys(source: Source, suite: str, model: str, fallback: str) -> str:
    """SQL for the (suite, model) a row belongs to, as the Tally keys it: the config's
    names first, then the row's; a row without a suite is given the suite the Tally
    falls back to (`fallback`), and no model. Grouped on these, runs that the Tally
    would merge are merged here too."""
    if source.suite:
        suite = _literal(source.suite)
    elif suite != "NULL":  # without the column the Tally names (and marks) the fallback
        suite = f"coalesce({suite}, {_literal(fallback)})"
    model = _literal(source.model) if source.model else f"coalesce({model}, '')"
    return f"{suite} AS suite, {model} AS model"


def _passed_code(cols: _Columns, threshold: float | None) -> str:
    """SQL for each run's outcome code: PASS, FAIL, EXCLUDED, or 9 for a bad value."""
    name = cols.get("passed")
    assert name is not None
    column = _ident(name)
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
    if _is_number(sql_type):
        return number(f"CAST({column} AS DOUBLE)", EXCLUDED)
    if sql_type != "VARCHAR":
        raise _Bad(f"column {name!r} (passed) holds {sql_type} values; expected true/false or 1/0")
    trimmed = f"trim({column})"
    nulls = ", ".join(_literal(w) for w in NULL_WORDS)
    return (
        f"CASE WHEN {column} IS NULL OR lower({trimmed}) IN ({nulls}) THEN {EXCLUDED} "
        f"WHEN lower({trimmed}) = 'true' OR {trimmed} = 'C' THEN {PASS} "
        f"WHEN lower({trimmed}) = 'false' OR {trimmed} IN ('I', 'P', 'N') THEN {FAIL} "
        f"ELSE {number(f'TRY_CAST({trimmed} AS DOUBLE)', 9)} END"
    )


def _count_value(cols: _Columns, field: str) -> str:
    """SQL for a count column as DOUBLE (NULL when missing or not a number)."""
    name = cols.get(field)
    if name is None:
        return "0"
    sql_type = cols.type(field)
    if sql_type == "VARCHAR":
        return f"TRY_CAST(trim({_ident(name)}) AS DOUBLE)"
    if _is_number(sql_type):
        return f"CAST({_ident(name)} AS DOUBLE)"
    if sql_type == "JSON":  # JSONL whose records disagree on the type: numbers only
        value = _ident(name)
        return (
            f"CASE WHEN json_type({value}) IN ('BIGINT', 'UBIGINT', 'DOUBLE') "
            f"THEN CAST({value} AS DOUBLE) END"
        )
    raise _Bad(f"column {name!r} ({field}) holds {sql_type} values; expected whole numbers")


@dataclass(frozen=True)
class _Check:
    """Rows that break one rule: a SQL condition, the values to show, the message."""

    condition: str
    values: str
    message: Callable[[tuple[Any, ...]], str]


@dataclass(frozen=True)
class _Places:
    """How a message names a record: "row 5" of a table; "line 7" of JSON lines, whose
    blank lines hold no record but count as lines (`lines`: each record's line)."""

    lines: list[int] | None = None

    def __call__(self, row: int) -> str:
        return f"row {row}" if self.lines is None else f"line {self.lines[row - 1]}"

    @property
    def plural(self) -> str:
        return "rows" if self.lines is None else "lines"


def _run_checks(
    con: duckdb.DuckDBPyConnection,
    checks: list[_Check],
    tally: Tally,
    where: str,
    place: _Places,
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
    text = str(value) if isinstance(value, Decimal) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _braced(name: str) -> str:
    """A column name quoted for a message template (its braces doubled)."""
    return repr(name).replace("{", "{{").replace("}", "}}")


def _say(template: str) -> Callable[[tuple[Any, ...]], str]:
    """A message from a template with {0}, {1}, ... for the offending row's values."""

    def message(values: tuple[Any, ...]) -> str:
        return template.format(*(_shown(v) for v in values))

    return message


def _text_checks(cols: _Columns, fields: tuple[str, ...]) -> list[_Check]:
    """Optional text fields: NULL (an empty cell) is fine, blank text or a bad url is not.

    The checks run on the view `v`, where each field has its own name (suite, model,
    category, url) whatever the table's column is called; messages name the column.
    """
    checks = []
    for field in fields:
        name = cols.get(field)
        if name is None:
            continue
        column = _ident(field)
        checks.append(
            _Check(
                f"{column} IS NOT NULL AND trim({column}) = ''",
                column,
                _say(f"column {_braced(name)}: {{0}} must be a non-empty string"),
            )
        )
        if field == "url":
            checks.append(
                _Check(
                    f"{column} IS NOT NULL AND NOT regexp_matches(lower({column}), '^https?://')",
                    column,
                    _say(f"column {_braced(name)}: {{0}} is not an http or https link"),
                )
            )
    return checks


def _task_check(cols: _Columns) -> _Check:
    name = cols.names["task"]
    return _Check(
        "task IS NULL OR trim(task) = ''",
        "task",
        _say(f"column {_braced(name)}: the task id is missing"),
    )


# ---------------------------------------------------------------- runs


def _read_runs(
    con: duckdb.DuckDBPyConnection,
    cols: _Columns,
    score: str | None,
    source: Source,
    tally: Tally,
    where: str,
    place: _Places,
) -> None:
    passed_name = cols.names["passed"]
    passed = _ident(passed_name)
    run = _text(cols, "run", integers=True)
    con.execute(
        f"""CREATE TEMP VIEW v AS SELECT {ROW} AS _row,
            {_text(cols, "task", integers=True)} AS task,
            {run} AS run,
            TRY_CAST({run} AS BIGINT) AS run_number,
            {_passed_code(cols, source.threshold)} AS code,
            {passed} AS passed_raw,
            {_group_keys(source, _text(cols, "suite"), _text(cols, "model"), tally.fallback_suite)},
            {_text(cols, "category")} AS category, {_text(cols, "url")} AS url
        FROM src"""
    )
    expected = "true, false, 1, 0, C, I or empty"
    if score is not None and source.threshold is None:
        expected += " (for scores, set threshold: or --threshold)"
    elif source.threshold is not None:
        expected = f"a number (passes at {source.threshold:g} or more), true, false or empty"
    checks = [
        _task_check(cols),
        _Check(
            "code = 9",
            "passed_raw",
            _say(f"column {_braced(passed_name)}: {{0}} is not {expected}"),
        ),
        *_text_checks(cols, ("suite", "model", "category", "url")),
    ]
    if not _run_checks(con, checks, tally, where, place):
        return
    # Run order: by run id when every run of the task has one (whole numbers first, by
    # value, then the others as text: the JSONL reader's order), else by row.
    order = "run_number NULLS LAST, run, _row"
    tasks = con.execute(
        f"""SELECT suite, model, task, min(_row) AS first,
            count(*) FILTER (WHERE code = {PASS}), count(*) FILTER (WHERE code = {FAIL}),
            count(*) FILTER (WHERE code = {EXCLUDED}),
            arg_max(category, _row) FILTER (WHERE category IS NOT NULL),
            string_agg(chr(48 + code), '' ORDER BY {order}),
            count(run) - count(DISTINCT coalesce(CAST(run_number AS VARCHAR), run)) AS repeats,
            count(run) > 0 AND count(run) < count(*) AS mixed
        FROM v GROUP BY suite, model, task ORDER BY first"""
    ).fetchall()
    if not tasks:
        tally.problems.add(f"{where}: the table has column names but no rows: no runs to count")
        return
    # A run id given twice for a task is an error, as in JSONL; only then are the
    # rows looked up, to name them.
    if any(row[-2] for row in tasks):
        _duplicate_runs(con, tally, where, cols, place)
        return
    by_row: dict[tuple[str, str, str], str] = {}
    if any(row[-1] for row in tasks):
        by_row = {(s, m, t): codes for s, m, t, codes in _mixed_codes(con)}
    urls = _urls(con) if cols.get("url") is not None else {}
    for suite, model, task, first, passes, fails, excluded, category, codes, _, _ in tasks:
        key = (suite, model, task)
        codes = by_row.get(key, codes)
        tally.add_task(
            f"{where}: {place(first)}",
            task,
            (passes, passes + fails, excluded),
            codes.encode("ascii").translate(_DIGITS),
            suite=_own(suite, tally),
            model=model,
            category=category,
            urls=urls.get(key),
        )


#: The codes come back as digits ("0", "1", "2"): this turns them into bytes 0, 1, 2.
_DIGITS = bytes.maketrans(b"012", bytes((0, 1, 2)))


def _mixed_codes(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str, str]]:
    """Codes in row order for tasks where only some runs carry an id (as JSONL keeps them)."""
    return con.execute(
        """SELECT suite, model, task, string_agg(chr(48 + code), '' ORDER BY _row)
        FROM v GROUP BY suite, model, task
        HAVING count(run) > 0 AND count(run) < count(*)"""
    ).fetchall()


def _urls(
    con: duckdb.DuckDBPyConnection, order: str = "run_number NULLS LAST, run"
) -> dict[tuple[str, str, str], dict[int, str]]:
    """Transcript links by (suite, model, task) and position in the run order."""
    # By run id where every run of the task has one, else by row. Whether they all do
    # is a window count of its own, in the inner query: DuckDB 2 refuses a window
    # function inside another's ORDER BY.
    by_id = ", ".join(
        f"CASE WHEN all_ids THEN {part.split()[0]} END NULLS LAST" for part in order.split(", ")
    )
    rows = con.execute(
        f"""SELECT suite, model, task, position, url FROM (
            SELECT suite, model, task, url, row_number() OVER (
                PARTITION BY suite, model, task ORDER BY {by_id}, _row
            ) - 1 AS position
            FROM (
                SELECT *, count(run) OVER t = count(*) OVER t AS all_ids
                FROM v WINDOW t AS (PARTITION BY suite, model, task)
            )
        ) WHERE url IS NOT NULL"""
    ).fetchall()
    urls: dict[tuple[str, str, str], dict[int, str]] = {}
    for suite, model, task, position, url in rows:
        urls.setdefault((suite, model, task), {})[position] = url
    return urls


def _duplicate_runs(
    con: duckdb.DuckDBPyConnection, tally: Tally, where: str, cols: _Columns, place: _Places
) -> None:
    """Names the rows of each run id given twice for one task."""
    rows = con.execute(
        f"""SELECT task, run, list(_row ORDER BY _row) AS rows FROM v WHERE run IS NOT NULL
        GROUP BY suite, model, task, coalesce(CAST(run_number AS VARCHAR), run), run
        HAVING count(*) > 1 ORDER BY rows[2] LIMIT {EXAMPLES}"""
    ).fetchall()
    for task, run, rows_of in rows:
        tally.problems.add(
            f"{where}: {place(rows_of[1])}, column {cols.names['run']!r}: run {run!r} of task "
            f"{task!r} appears twice (first at {place(rows_of[0])})"
        )


# ---------------------------------------------------------------- counts


def _read_counts(
    con: duckdb.DuckDBPyConnection,
    cols: _Columns,
    source: Source,
    tally: Tally,
    where: str,
    place: _Places,
) -> None:
    unreadable = [name for name in cols.types if name.lower() == UNREADABLE]
    raw_unreadable = _ident(unreadable[0]) if len(unreadable) == 1 else "0"
    con.execute(
        f"""CREATE TEMP VIEW v AS SELECT {ROW} AS _row,
            {raw_unreadable} AS raw_unreadable,
            {_text(cols, "task", integers=True)} AS task,
            {_count_value(cols, "successes")} AS successes,
            {_count_value(cols, "runs")} AS runs,
            {_count_value(cols, "excluded")} AS excluded,
            {", ".join(f"{_ident(cols.names[f])} AS raw_{f}" for f in ("successes", "runs"))},
            {_ident(cols.names["excluded"]) if cols.get("excluded") else "NULL"} AS raw_excluded,
            {_group_keys(source, _text(cols, "suite"), _text(cols, "model"), tally.fallback_suite)},
            {_text(cols, "category")} AS category
        FROM src"""
    )
    checks = [_task_check(cols)]
    for field in ("successes", "runs", "excluded"):
        name = cols.get(field)
        if name is None:
            continue
        value, raw = field, f"raw_{field}"
        # An empty excluded cell means none; empty successes or runs is an error.
        missing = f"{raw} IS NULL" if field != "excluded" else "false"
        # The bounds are checked on whole numbers only: 1e400 is not one, and is not
        # also "more than a billion".
        whole = f"(NOT isinf({value}) AND NOT isnan({value}) AND {value} = floor({value}))"
        checks.append(
            _Check(
                f"{missing} OR ({raw} IS NOT NULL AND ({value} IS NULL OR NOT {whole}))",
                raw,
                _say(f"column {_braced(name)}: expected a whole number, got {{0}}"),
            )
        )
        checks.append(
            _Check(
                f"{whole} AND {value} < 0",
                raw,
                _say(f"column {_braced(name)}: must not be negative, got {{0}}"),
            )
        )
        checks.append(
            _Check(
                f"{whole} AND {value} > {MAX_COUNT}",
                raw,
                _say(f"column {_braced(name)}: must be at most {MAX_COUNT:,}, got {{0}}"),
            )
        )
    checks.extend(_text_checks(cols, ("suite", "model", "category")))
    if len(unreadable) == 1:
        # Written by `reportgen sql`: runs whose passed value the query could not read.
        checks.append(
            _Check(
                "coalesce(TRY_CAST(raw_unreadable AS DOUBLE), 1) <> 0",
                "raw_unreadable",
                _say(
                    f"column {_braced(unreadable[0])}: {{0}} runs of this task have a passed "
                    "value that is not true, false, 1, 0 or empty; fix them in the table "
                    "and run the query again"
                ),
            )
        )
    if not _run_checks(con, checks, tally, where, place):
        return
    successes, runs = cols.names["successes"], cols.names["runs"]
    relations = [
        _Check(
            # A task whose every run was excluded has runs 0, as in JSONL.
            "runs < 1 AND coalesce(excluded, 0) < 1",
            "runs",
            _say(f"column {_braced(runs)}: must be at least 1 (or excluded at least 1), got {{0}}"),
        ),
        _Check(
            "successes > runs",
            "successes, runs",
            _say(f"column {_braced(successes)}: {{0}} is more than runs ({{1}})"),
        ),
    ]
    if not _run_checks(con, relations, tally, where, place):
        return
    duplicates = con.execute(
        f"""SELECT task, list(_row ORDER BY _row) AS rows FROM v GROUP BY suite, model, task
        HAVING count(*) > 1 ORDER BY rows[2] LIMIT {EXAMPLES}"""
    ).fetchall()
    for task, rows_of in duplicates:
        tally.problems.add(
            f"{where}: {place(rows_of[1])}: task {task!r} already given at {place(rows_of[0])}"
        )
    if duplicates:
        return
    rows = con.execute(
        """SELECT _row, task, CAST(successes AS BIGINT), CAST(runs AS BIGINT),
            CAST(coalesce(excluded, 0) AS BIGINT), suite, model, category
        FROM v ORDER BY _row"""
    ).fetchall()
    if not rows:
        tally.problems.add(f"{where}: the table has column names but no rows: no tasks to count")
    for row, task, c, n, x, suite, model, category in rows:
        tally.add_counts(
            f"{where}: {place(row)}",
            task,
            c,
            n,
            suite=_own(suite, tally),
            model=model,
            category=category,
            excluded=x,
        )


# ---------------------------------------------------------------- files


@contextmanager
def _plain_path(path: Path) -> Iterator[str]:
    """The file's path as DuckDB should see it. DuckDB expands *, ? and [ in a path
    as a glob, so such a file is read through a link with a plain name instead."""
    resolved = str(path.resolve())
    if not any(c in resolved for c in "*?[]{}"):
        yield resolved
        return
    with tempfile.TemporaryDirectory(prefix="reportgen-") as folder:
        link = Path(folder) / ("input" + path.suffix.lower())
        link.symlink_to(resolved)
        yield str(link)


#: DuckDB's working memory. By default it may take 80% of the machine: reading
#: 2,000,000 JSONL runs it held about 350 MB at its peak, taking a build past its
#: 400 MB budget. Beyond the limit it spills to disk, into a private folder.
DUCKDB_MEMORY = "300MB"


@contextmanager
def _connect() -> Iterator[duckdb.DuckDBPyConnection]:
    import duckdb

    # Spilled data goes to a folder of this build's own (DuckDB's default is .tmp in
    # the working folder), removed with the connection.
    with tempfile.TemporaryDirectory(prefix="reportgen-duckdb-") as spill:
        # No extension is ever downloaded: CSV, Parquet and JSON are built in.
        con = duckdb.connect(
            config={
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
                "memory_limit": DUCKDB_MEMORY,
                "temp_directory": spill,
            }
        )
        try:
            yield con
        finally:
            con.close()


def _duckdb_reason(error: Exception) -> str:
    """DuckDB's message, first line only, without its "Invalid Input Error:" prefix."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    head, sep, rest = text.partition("Error: ")
    if sep and len(head) < 30:
        text = rest
    return text if len(text) <= 200 else text[:197] + "..."


def _read_table(
    source: Source,
    tally: Tally,
    open_sql: Callable[[Any, str], tuple[str, str]],
    kind: str,
    explain: Callable[[], str | None] | None = None,
    lines: Callable[[], list[int]] | None = None,
) -> None:
    """Reads a table (or JSON lines) through DuckDB. `open_sql` opens the file on a
    connection and returns the relation to read it from and the SQL of each row's
    number in the file (from 1). `lines`, for JSON lines, gives each record's line number, for
    messages to name lines rather than records."""
    import duckdb

    path = source.path
    where = str(path)
    what = "field" if kind == "JSONL" else "column"
    tally.named_from(suite=f"the suite {what}", model=f"the model {what}")
    with _plain_path(path) as plain, _connect() as con:
        try:
            relation, row_number = open_sql(con, plain)
            # A column of the file named as the row number's (any case) is left out:
            # read as the row number, it misplaced every message.
            names = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
            clash = [name for name, *_ in names if name.lower() == ROW]
            exclude = f" EXCLUDE ({_ident(clash[0])})" if clash else ""
            con.execute(
                f"CREATE TEMP VIEW src AS SELECT *{exclude}, {row_number} AS {ROW} FROM {relation}"
            )
            columns = [
                (str(name), str(sql_type))
                for name, sql_type, *_ in con.execute("DESCRIBE src").fetchall()
                if name != ROW
            ]
        except duckdb.Error as error:
            # DuckDB's own message rarely says where; a plain re-read can.
            located = explain() if explain is not None else None
            reason = located or f"cannot be read as {kind}: {_duckdb_reason(error)}"
            tally.problems.add(f"{where}: {reason}")
            return
        place = _Places()
        if lines is not None:
            numbers = lines()
            # Only when DuckDB skipped the same blank lines (it read len(numbers) records).
            if con.execute("SELECT count(*) FROM src").fetchone() == (len(numbers),):
                place = _Places(numbers)
        try:
            cols, score = _resolve(columns, source, where)
            if cols.get("successes") is not None and cols.get("runs") is not None:
                if cols.get("task") is None:
                    raise _Bad(f"{where}: a table of counts needs a task column")
                _read_counts(con, cols, source, tally, where, place)
                return
            missing = [f for f in ("task", "passed") if cols.get(f) is None]
            if missing:
                raise _Bad(_missing_message(where, missing, columns, score))
            _read_runs(con, cols, score, source, tally, where, place)
        except _Bad as bad:
            message = str(bad)
            tally.problems.add(message if message.startswith(where) else f"{where}: {message}")
        except duckdb.Error as error:
            tally.problems.add(f"{where}: cannot be read as {kind}: {_duckdb_reason(error)}")


#: A message lists at most this many of a file's columns, each cut to NAME_SHOWN
#: characters: a header is the first line of whatever file was given, which may be a
#: credential, and error messages end up in CI logs.
COLUMNS_SHOWN = 12
NAME_SHOWN = 24


def column_listing(names: list[str]) -> str:
    """A file's column names as a message lists them: few, and each cut short."""
    if not names:
        return "none"
    shown = [
        repr(name if len(name) <= NAME_SHOWN else name[: NAME_SHOWN - 1] + "…")
        for name in names[:COLUMNS_SHOWN]
    ]
    more = len(names) - COLUMNS_SHOWN
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _missing_message(
    where: str, missing: list[str], columns: list[tuple[str, str]], score: str | None
) -> str:
    listing = column_listing([name for name, _ in columns])
    wanted = "; ".join(
        f"{field}: one of {', '.join(ALIASES[field])}"
        + (f" or {SCORE} with threshold:" if field == "passed" else "")
        for field in missing
    )
    return (
        f"{where}: no column for {' and '.join(missing)} ({wanted}; or a table of counts "
        f"with task, successes and runs). Its columns are {listing}; map yours with "
        "columns: in the config or --columns task=NAME,passed=NAME"
    )


#: Delimiters a .csv file may use; the header line decides (a .tsv always uses tabs).
_DELIMITERS = (",", ";", "\t", "|")


def _delimiter(path: Path) -> str:
    if path.suffix.lower() == ".tsv":
        return "\t"
    with path.open("rb") as handle:
        first = handle.readline(64 * 1024).decode("utf-8", "replace")
    return max(_DELIMITERS, key=first.count)


def _csv_sql(delimiter: str) -> Callable[[Any, str], tuple[str, str]]:
    # The dialect is fixed (no guessing: a guess on a damaged file read it as something
    # else, such as one column named "task,passed"). Every cell is read as text and
    # checked here, so a value a type guess did not foresee ("yes" far down a column of
    # booleans) gets a located message.
    options = (
        f"header = true, all_varchar = true, delim = {_literal(delimiter)}, quote = '\"', "
        "escape = '\"', comment = '', skip = 0, strict_mode = true"
    )

    def open_csv(con: Any, plain: str) -> tuple[str, str]:
        # Materialised once: every check and the grouping read it again, and a table's
        # rowid is the row's place in the file (DuckDB keeps insertion order).
        con.execute(
            f"CREATE TEMP TABLE raw AS SELECT * FROM read_csv({_literal(plain)}, {options})"
        )
        return "raw", "rowid + 1"

    return open_csv


def _csv_problem(path: Path, delimiter: str) -> str | None:
    """The first line Python's csv module cannot read, or whose cells do not match the
    header: said when DuckDB refuses a file, since its messages seldom name the line."""
    with path.open("rb") as raw:
        head = raw.read(4096).removeprefix(b"\xef\xbb\xbf")
    text = head.lstrip()
    at = head[: len(head) - len(text)].count(b"\n") + 1  # the line the text starts on
    # JSON in a .csv file, or read as CSV because that format was given: DuckDB only
    # says that it could not sniff the dialect, or finds no usable columns. What
    # follows the bracket tells JSON from a header such as "[task],passed".
    after = text[1:].lstrip()[:1]
    if text[:1] == b"{" and after in (b'"', b"}"):
        return (
            f"line {at} starts a JSON object: this looks like JSON lines, not CSV; give "
            "its format, for example --input-format jsonl (format: in a config file)"
        )
    if text[:1] == b"[" and after and after in b'{["]-0123456789':
        return (
            f"line {at} starts a JSON array: this looks like JSON, not CSV; give its "
            "format with --input-format (format: in a config file; reportgen formats "
            "lists them)"
        )
    number = 0
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter=delimiter, strict=True)
            width = None
            for row in reader:
                number = reader.line_num
                if not row:
                    continue
                if width is None:
                    width = len(row)
                elif len(row) != width:
                    return (
                        f"line {number}: {len(row)} cells where the header has {width} "
                        f"(separated by {delimiter!r})"
                    )
    except csv.Error as error:
        return f"line {number + 1}: not valid CSV: {error}"
    except UnicodeDecodeError:
        with path.open("rb") as raw:
            for number, line in enumerate(raw, start=1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError:
                    return f"line {number}: not UTF-8 text (is this a binary file?)"
    return None


def _repeated_column(path: Path, delimiter: str, source: Source) -> str | None:
    """A header that names a column reportgen would read twice (any case): DuckDB
    renames the second ("passed_1"), so the first would silently win."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            header = next(csv.reader(handle, delimiter=delimiter), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return None  # the reading proper says what is wrong
    read = {alias for aliases in ALIASES.values() for alias in aliases} | {SCORE}
    read |= {wanted.lower() for _, wanted in source.columns}
    places: dict[str, list[int]] = {}
    for place, name in enumerate(header, 1):
        places.setdefault(name.strip().lower(), []).append(place)
    for name, found in places.items():
        if name in read and len(found) > 1:
            spellings = list(dict.fromkeys(header[i - 1].strip() for i in found))
            named = (
                f"{len(found)} columns are named {spellings[0]!r}"
                if len(spellings) == 1
                else f"columns {' and '.join(map(repr, spellings))} differ only in case"
            )
            numbers = ", ".join(str(i) for i in found)
            return (
                f"line 1: {named} (columns {numbers}); rename all but one, so that it is "
                "clear which to read"
            )
    return None


def read_csv(source: Source, tally: Tally) -> None:
    """A comma- or tab-separated table, with a header row."""
    path = source.path
    delimiter = _delimiter(path)
    repeated = _repeated_column(path, delimiter, source)
    if repeated is not None:
        tally.problems.add(f"{path}: {repeated}")
        return
    _read_table(source, tally, _csv_sql(delimiter), "CSV", lambda: _csv_problem(path, delimiter))


def read_parquet(source: Source, tally: Tally) -> None:
    """A Parquet file."""
    _read_table(source, tally, _open_parquet, "Parquet")


def _open_parquet(con: Any, plain: str) -> tuple[str, str]:
    # A Parquet file states each column's smallest and largest value, and DuckDB trusts
    # them: to skip rows a filter cannot match and to pick the type of a sum. A writer
    # that got them wrong (a file with 210813889544194 in a column said to stop at 2)
    # made a check count a row that its listing then skipped. Nothing read here is
    # sped up much by them, so they are not used.
    con.execute("SET disabled_optimizers = 'filter_pushdown,statistics_propagation'")
    scan = f"read_parquet({_literal(plain)})"
    names = con.execute(f"DESCRIBE SELECT * FROM {scan}").fetchall()
    if all(str(name).lower() != "file_row_number" for name, *_ in names):
        # DuckDB's virtual column: the row's place in the file, read in place.
        return scan, "file_row_number + 1"
    # The file has a column of that name, which hides the virtual one: read into a
    # table, whose rowid keeps the file's order, as for CSV.
    con.execute(f"CREATE TEMP TABLE raw AS SELECT * FROM {scan}")
    return "raw", "rowid + 1"


def read_jsonl_counts(source: Source, tally: Tally) -> None:
    """JSONL of per-task counts, one object per line: {"task": ..., "successes": ..., "runs": ...}.
    Messages name the line of each record (blank lines counted)."""
    _read_table(
        source,
        tally,
        _open_jsonl_counts,
        "JSONL",
        lambda: _jsonl_problem(source.path),
        lambda: _record_lines(source.path),
    )


def _open_jsonl_counts(con: Any, plain: str) -> tuple[str, str]:
    # Types are guessed from every record, so a late odd value cannot break the read.
    con.execute(
        f"CREATE TEMP TABLE raw AS SELECT * FROM read_json({_literal(plain)}, "
        "format = 'newline_delimited', records = true, sample_size = -1)"
    )
    return "raw", "rowid + 1"


def _record_lines(path: Path) -> list[int]:
    """The line number of each record, in order, as DuckDB numbers a file's records."""
    return [number for number, _ in jsonl_lines(path)]


def _jsonl_problem(path: Path) -> str | None:
    """The first line that is not a JSON object, when DuckDB refuses a counts file."""
    for number, line in jsonl_lines(path):
        if isinstance(line, str):
            return f"line {number}: {line}"
        try:
            record = json_loads(line)
        except UnicodeDecodeError:
            return f"line {number}: not UTF-8 text (is this a binary file?)"
        except ValueError as error:
            return f"line {number}: not valid JSON: {json_reason(error)}"
        if not isinstance(record, dict):
            return f'line {number}: expected an object like {{"task": ..., "successes": ...}}'
    return None


def _header_names(head: bytes) -> set[str]:
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    separator = "\t" if first.count("\t") > first.count(",") else ","
    return {name.strip().strip('"').lower() for name in first.split(separator)}


def sniff_csv(head: bytes) -> bool:
    """A header naming a task column and a passed column, or successes and runs."""
    names = _header_names(head)

    def has(field: str) -> bool:
        return bool(names & set(ALIASES[field]))

    return len(names) > 1 and has("task") and (has("passed") or (has("successes") and has("runs")))


def sniff_parquet(head: bytes) -> bool:
    return head.startswith(b"PAR1")


CSV = Reader(
    name="csv",
    suffixes=(".csv", ".tsv"),
    sniff=sniff_csv,
    read=read_csv,
    summary="a table with a header row, one row per run or one per task's counts",
    scores=True,
)
PARQUET = Reader(
    name="parquet",
    suffixes=(".parquet", ".pq"),
    sniff=sniff_parquet,
    read=read_parquet,
    summary="a Parquet table, one row per run or one per task's counts",
    scores=True,
)


# ---------------------------------------------------------------- large JSONL

#: The keys of a canonical JSONL record that the count depends on.
_JSONL_KEYS = ("task", "task_id", "passed", "suite", "model", "run", "category", "url")


def read_jsonl_through_duckdb(source: Source, tally: Tally, max_line: int) -> bool:
    """Canonical JSONL grouped in DuckDB; the same counts as jsonl.read_jsonl.

    Returns False, with the tally untouched, whenever DuckDB refuses the file or any
    record is not plainly well-formed: the Python reader then reads it again and
    names each problem's line. Only clean files take this path to the end.
    """
    import duckdb

    try:
        with _plain_path(source.path) as plain, _connect() as con:
            tasks = _jsonl_tasks(con, plain, source, max_line, tally.fallback_suite)
    except duckdb.Error:
        return False
    if tasks is None:
        return False
    for suite, model, task, counts, codes, category, urls in tasks:
        tally.add_task(
            f"{source.path}",
            task,
            counts,
            codes,
            suite=_own(suite, tally),
            model=model,
            category=category,
            urls=urls,
        )
    return True


def _passed_given_as_null(path: Path, records: list[int], max_line: int) -> bool:
    """Whether each of these records (numbered from 0, blank lines skipped, as DuckDB
    numbers them) has "passed": null, rather than no "passed" at all."""
    wanted = iter(records)
    target = next(wanted, None)
    for index, (_, line) in enumerate(jsonl_lines(path, max_line)):
        if index == target:
            if isinstance(line, str):
                return False  # too long a line: the line-by-line reader names it
            try:
                record = json_loads(line)
            except ValueError:
                return False
            if not isinstance(record, dict) or "passed" not in record:
                return False
            if record["passed"] is not None:
                return False
            target = next(wanted, None)
            if target is None:
                return True
    return target is None


_Task = tuple[str, str, str, tuple[int, int, int], bytes, str | None, dict[int, str] | None]


def _jsonl_tasks(
    con: duckdb.DuckDBPyConnection, plain: str, source: Source, max_line: int, fallback: str
) -> list[_Task] | None:
    columns = ", ".join(f"{_literal(key)}: 'JSON'" for key in _JSONL_KEYS)
    # Each field comes back as JSON text, which DuckDB writes in one canonical form
    # (escapes decoded where they can be, numbers normalised). Telling a value's type
    # by its first character is several times faster than json_type, and slicing a
    # string's inside faster than ->> when it holds no escape. DuckDB refuses a line
    # that is not an object, or that gives one of these keys twice (which the Python
    # reader resolves as "last wins"): both go back to it.
    fields = ", ".join(f"CAST({_ident(key)} AS VARCHAR) AS {_ident(key)}" for key in _JSONL_KEYS)
    source_sql = (
        f"(SELECT {fields} FROM read_json({_literal(plain)}, format = 'newline_delimited', "
        f"columns = {{{columns}}}, maximum_object_size = {max_line}))"
    )

    def is_text(column: str) -> str:
        return f"starts_with({column}, '\"')"

    def is_whole(column: str) -> str:
        # Up to 18 digits always fits 64 bits; a longer number goes to the Python reader.
        return f"regexp_full_match({column}, '-?[0-9]{{1,18}}')"

    def text(column: str) -> str:
        return (
            f"CASE WHEN NOT {is_text(column)} THEN NULL "
            f"WHEN contains({column}, '\\') THEN CAST({column} AS JSON) ->> '$' "
            f"ELSE {column}[2:-2] END"
        )

    def text_or_null(column: str) -> str:
        # Never empty: the Python reader refuses "", and an absent model reads as ''
        # below, so an empty one would slip through the checks made after grouping.
        return f"({column} IS NULL OR ({is_text(column)} AND {column} <> '\"\"'))"

    task, passed, run, url = '"task"', '"passed"', '"run"', '"url"'
    con.execute(
        f"""CREATE TEMP TABLE values_ AS SELECT
            coalesce({text(task)}, {task}) AS task,
            CASE WHEN {passed} IS NULL THEN {EXCLUDED}
                WHEN {passed} IN ('true', '1') THEN {PASS} ELSE {FAIL} END AS code,
            {_group_keys(source, text('"suite"'), text('"model"'), fallback)},
            {text('"category"')} AS category, {text(url)} AS url,
            CASE WHEN {is_whole(run)} THEN CAST({run} AS BIGINT) END AS run_number,
            {text(run)} AS run_text,
            {run} AS run,
            NOT coalesce(
                (({is_text(task)} AND {task} <> '""') OR {is_whole(task)})
                AND ({passed} IS NULL OR {passed} IN ('true', 'false', '0', '1'))
                AND {text_or_null('"suite"')} AND {text_or_null('"model"')}
                AND {text_or_null('"category"')}
                AND ({run} IS NULL OR {is_text(run)} OR {is_whole(run)})
                AND ({url} IS NULL OR ({is_text(url)}
                     AND regexp_matches(lower({text(url)}), '^https?://'))),
                false) AS bad
        FROM (SELECT coalesce("task", "task_id") AS "task",
                * EXCLUDE ("task", "task_id") FROM {source_sql})"""
    )
    # One pass over the file, materialised; a table's rowid is its record's place.
    con.execute("CREATE TEMP VIEW v AS SELECT rowid AS _row, * FROM values_")
    flaws = con.execute("SELECT count(*) FILTER (WHERE bad) FROM v").fetchone()
    if flaws is None or flaws[0]:
        return None
    # DuckDB reads a missing "passed" (an error) and "passed": null (a run not
    # evaluated) alike; the few lines concerned are looked at again.
    nulls = [
        row
        for (row,) in con.execute(
            f"SELECT _row FROM v WHERE code = {EXCLUDED} ORDER BY _row"
        ).fetchall()
    ]
    if nulls and not _passed_given_as_null(source.path, nulls, max_line):
        return None
    # A run given twice: the Python reader names both lines. One distinct count over
    # the file is much cheaper than one per task. Runs are JSON text here, so 1 and "1"
    # stay apart, as they do in the Python reader.
    repeated = con.execute(
        """SELECT count(run) <> (SELECT count(*) FROM
            (SELECT DISTINCT suite, model, task, run FROM v WHERE run IS NOT NULL)) FROM v"""
    ).fetchone()
    if repeated is None or repeated[0]:
        return None
    rows = con.execute(
        f"""SELECT suite, model, task, min(_row) AS first,
            count(*) FILTER (WHERE code = {PASS}), count(*) FILTER (WHERE code = {FAIL}),
            count(*) FILTER (WHERE code = {EXCLUDED}),
            arg_max(category, _row) FILTER (WHERE category IS NOT NULL),
            string_agg(chr(48 + code), '' ORDER BY run_number NULLS LAST, run_text, _row),
            count(run) > 0 AND count(run) < count(*) AS mixed
        FROM v GROUP BY suite, model, task ORDER BY first"""
    ).fetchall()
    by_row: dict[tuple[str, str, str], str] = {}
    if any(row[-1] for row in rows):
        by_row = {(s_, m_, t_): codes for s_, m_, t_, codes in _mixed_codes(con)}
    has_urls = con.execute("SELECT count(url) FROM v").fetchone()
    urls = _urls(con, "run_number NULLS LAST, run_text") if has_urls and has_urls[0] else {}
    tasks: list[_Task] = []
    for suite, model, task_id, _, passes, fails, excluded, category, codes, _ in rows:
        # What Python's str.strip() and the page checks refuse, DuckDB's trim may not:
        # such a file goes back to the Python reader, which names the line.
        for name in (suite, model, task_id, category):
            if name is not None and (not name.strip() or unprintable(name) is not None):
                if name == model == "":
                    continue
                return None
        key = (suite, model, task_id)
        codes = by_row.get(key, codes)
        tasks.append(
            (
                suite,
                model,
                task_id,
                (passes, passes + fails, excluded),
                codes.encode("ascii").translate(_DIGITS),
                category,
                urls.get(key),
            )
        )
    return tasks
