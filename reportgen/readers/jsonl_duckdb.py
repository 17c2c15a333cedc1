"""Large JSONL files of runs, grouped into per-task counts in DuckDB.

jsonl.py sends a file of 8 MiB and up here first: DuckDB groups it several times
faster than Python parses it line by line. This path gives up, leaving the tally
untouched, at the first thing that is not plainly well-formed (a line DuckDB
refuses, an odd value, a run given twice, a name no page can show): jsonl.py's
Python reader then reads the file again, counts the same, and names the line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..counts import EXCLUDED, FAIL, MEASURES, PASS
from .base import Tally
from .duckdb_common import (
    DIGITS,
    REPLACEABLE,
    connect,
    given_names,
    group_keys,
    ident,
    literal,
    measure_columns,
    mixed_codes,
    own_suite,
    plain_path,
    task_measures,
    task_urls,
)
from .fields import unprintable
from .source import Source

if TYPE_CHECKING:
    import duckdb

#: The keys of a canonical JSONL record that the count depends on, and the measures.
_JSONL_KEYS = (
    "task",
    "task_id",
    "passed",
    "suite",
    "model",
    "run",
    "category",
    "url",
    "condition",
    *MEASURES,
)


def read_jsonl_through_duckdb(source: Source, tally: Tally, max_line: int) -> bool:
    """Canonical JSONL grouped in DuckDB; the same counts as jsonl.read_jsonl.

    Returns False, with the tally untouched, whenever DuckDB refuses the file or any
    record is not plainly well-formed: the Python reader then reads it again and
    names each problem's line. Only clean files take this path to the end.
    """
    import duckdb

    try:
        with plain_path(source.path) as plain, connect() as con:
            tasks = _jsonl_tasks(con, plain, source, max_line, tally.fallback_suite)
            replaced = [w for w in REPLACEABLE if getattr(source, w)]
            groups = given_names(con, replaced) if tasks is not None else {}
    except duckdb.Error:
        return False
    if tasks is None:
        return False
    for suite, model, condition, task, counts, codes, category, urls, measures in tasks:
        tally.add_task(
            f"{source.path}",
            task,
            counts,
            codes,
            suite=own_suite(suite, tally),
            model=model,
            category=category,
            urls=urls,
            measures=measures,
            condition=condition,
            given=groups.get((suite, model, condition), {}),
        )
    return True


def _passed_given_as_null(con: duckdb.DuckDBPyConnection, plain: str, max_line: int) -> bool:
    """Whether every record read as not evaluated has "passed": null, rather than no
    "passed" at all (read_json reads both as NULL). The file's records are read again,
    unparsed, in the same order: a table's rowid is its record's place in both."""
    con.execute(
        "CREATE TEMP TABLE given AS SELECT json_exists(json, '$.passed') AS passed "
        f"FROM read_ndjson_objects({literal(plain)}, maximum_object_size = {max_line})"
    )
    found = con.execute(
        f"""SELECT (SELECT count(*) FROM given) = (SELECT count(*) FROM values_),
            count(*) FILTER (WHERE NOT g.passed)
        FROM v JOIN given g ON g.rowid = v._row WHERE v.code = {EXCLUDED}"""
    ).fetchone()
    return found is not None and found[0] and found[1] == 0


_Task = tuple[
    str,
    str,
    str,
    str,
    tuple[int, int, int],
    bytes,
    str | None,
    dict[int, str] | None,
    dict[str, bytes],
]


def _jsonl_tasks(
    con: duckdb.DuckDBPyConnection, plain: str, source: Source, max_line: int, fallback: str
) -> list[_Task] | None:
    """Each task's counts and run codes; None as soon as the Python reader might read
    anything differently."""
    _load_values(con, plain, source, max_line, fallback)
    if not _plainly_well_formed(con, plain, max_line):
        return None
    return _grouped_tasks(con)


# Each field comes back as JSON text, which DuckDB writes in one canonical form
# (escapes decoded where they can be, numbers normalised). Telling a value's type by
# its first character is several times faster than json_type, and slicing a string's
# inside faster than ->> when it holds no escape.


def _is_text(column: str) -> str:
    return f"starts_with({column}, '\"')"


def _is_whole(column: str) -> str:
    # Up to 18 digits always fits 64 bits; a longer number goes to the Python reader.
    return f"regexp_full_match({column}, '-?[0-9]{{1,18}}')"


def _text(column: str) -> str:
    return (
        f"CASE WHEN NOT {_is_text(column)} THEN NULL "
        f"WHEN contains({column}, '\\') THEN CAST({column} AS JSON) ->> '$' "
        f"ELSE {column}[2:-2] END"
    )


def _measure(name: str) -> str:
    """SQL for a measure as DOUBLE: NULL when absent or not one the Python reader takes
    (fields.measure_value: a finite number of at least 0; confidence at most 1)."""
    column = ident(name)
    value = f"TRY_CAST({column} AS DOUBLE)"
    top = " AND {value} <= 1" if name == "confidence" else ""
    return (
        f"CASE WHEN NOT {_is_text(column)} AND {column} NOT IN ('true', 'false') "
        f"AND isfinite({value}) AND {value} >= 0{top.format(value=value)} THEN {value} END"
    )


def _text_or_null(column: str) -> str:
    # Never empty: the Python reader refuses "", and an absent model reads as ''
    # below, so an empty one would slip through the checks made after grouping.
    return f"({column} IS NULL OR ({_is_text(column)} AND {column} <> '\"\"'))"


def _load_values(
    con: duckdb.DuckDBPyConnection, plain: str, source: Source, max_line: int, fallback: str
) -> None:
    """The file read once into the table values_ (one row a record, each field decoded,
    `bad` marking a record the Python reader would refuse) and the view v over it."""
    columns = ", ".join(f"{literal(key)}: 'JSON'" for key in _JSONL_KEYS)
    # DuckDB refuses a line that is not an object, or that gives one of these keys
    # twice (which the Python reader resolves as "last wins"): both go back to it.
    fields = ", ".join(f"CAST({ident(key)} AS VARCHAR) AS {ident(key)}" for key in _JSONL_KEYS)
    source_sql = (
        f"(SELECT {fields} FROM read_json({literal(plain)}, format = 'newline_delimited', "
        f"columns = {{{columns}}}, maximum_object_size = {max_line}))"
    )
    task, passed, run, url = '"task"', '"passed"', '"run"', '"url"'
    names = (_text('"suite"'), _text('"model"'), _text('"condition"'))
    # The file's own names where the config or command line replaces them (group_keys):
    # kept as given_<name>, for the warning when several are pooled.
    given = "".join(
        f"{sql} AS {ident('given_' + what)}, "
        for what, sql in zip(REPLACEABLE, names, strict=True)
        if getattr(source, what)
    )
    measures_ok = " AND ".join(
        f"({ident(n)} IS NULL OR {_measure(n)} IS NOT NULL)" for n in MEASURES
    )
    con.execute(
        f"""CREATE TEMP TABLE values_ AS SELECT
            coalesce({_text(task)}, {task}) AS task,
            CASE WHEN {passed} IS NULL THEN {EXCLUDED}
                WHEN {passed} IN ('true', '1') THEN {PASS} ELSE {FAIL} END AS code,
            {group_keys(source, *names, fallback)}, {given}
            {_text('"category"')} AS category, {_text(url)} AS url,
            CASE WHEN {_is_whole(run)} THEN CAST({run} AS BIGINT) END AS run_number,
            {_text(run)} AS run_text,
            {run} AS run,
            {", ".join(_measure(name) + f" AS {ident(name)}" for name in MEASURES)},
            NOT coalesce(
                (({_is_text(task)} AND {task} <> '""') OR {_is_whole(task)})
                AND ({passed} IS NULL OR {passed} IN ('true', 'false', '0', '1'))
                AND {_text_or_null('"suite"')} AND {_text_or_null('"model"')}
                AND {_text_or_null('"category"')} AND {_text_or_null('"condition"')}
                AND ({run} IS NULL OR {_is_text(run)} OR {_is_whole(run)})
                AND ({url} IS NULL OR ({_is_text(url)}
                     AND regexp_matches(lower({_text(url)}), '^https?://')))
                AND {measures_ok},
                false) AS bad
        FROM (SELECT coalesce("task", "task_id") AS "task",
                * EXCLUDE ("task", "task_id") FROM {source_sql})"""
    )
    # One pass over the file, materialised; a table's rowid is its record's place.
    con.execute("CREATE TEMP VIEW v AS SELECT rowid AS _row, * FROM values_")


def _plainly_well_formed(con: duckdb.DuckDBPyConnection, plain: str, max_line: int) -> bool:
    """No bad record, no missing "passed" read as null, and no run given twice."""
    flaws = con.execute("SELECT count(*) FILTER (WHERE bad) FROM v").fetchone()
    if flaws is None or flaws[0]:
        return False
    # DuckDB reads a missing "passed" (an error) and "passed": null (a run not
    # evaluated) alike: where any record reads as not evaluated, the file is asked again.
    nulls = con.execute(f"SELECT count(*) FILTER (WHERE code = {EXCLUDED}) FROM v").fetchone()
    if nulls is None or (nulls[0] and not _passed_given_as_null(con, plain, max_line)):
        return False
    # A run given twice: the Python reader names both lines. One distinct count over
    # the file is much cheaper than one per task. Runs are JSON text here, so 1 and "1"
    # stay apart, as they do in the Python reader.
    repeated = con.execute(
        """SELECT count(run) <> (SELECT count(*) FROM (SELECT DISTINCT
            suite, model, condition, task, run FROM v WHERE run IS NOT NULL)) FROM v"""
    ).fetchone()
    return repeated is not None and not repeated[0]


def _grouped_tasks(con: duckdb.DuckDBPyConnection) -> list[_Task] | None:
    """Each task's counts, run codes in run order, category and links; None when a name
    is one the Python reader would refuse."""
    rows = con.execute(
        f"""SELECT suite, model, condition, task, min(_row) AS first,
            count(*) FILTER (WHERE code = {PASS}), count(*) FILTER (WHERE code = {FAIL}),
            count(*) FILTER (WHERE code = {EXCLUDED}),
            arg_max(category, _row) FILTER (WHERE category IS NOT NULL),
            string_agg(chr(48 + code), '' ORDER BY run_number NULLS LAST, run_text, _row),
            count(run) > 0 AND count(run) < count(*) AS mixed
        FROM v GROUP BY suite, model, condition, task ORDER BY first"""
    ).fetchall()
    by_row: dict[tuple[str, str, str, str], str] = {}
    if any(row[-1] for row in rows):
        by_row = {(s_, m_, c_, t_): codes for s_, m_, c_, t_, codes in mixed_codes(con)}
    has_urls = con.execute("SELECT count(url) FROM v").fetchone()
    urls = task_urls(con, "run_number NULLS LAST, run_text") if has_urls and has_urls[0] else {}
    names = measure_columns(con)
    lengths = [passes + fails + excluded for *_, passes, fails, excluded, _, _, _ in rows]
    measures = (
        task_measures(con, names, "run_number NULLS LAST, run_text, _row", lengths)
        if names
        else [{}] * len(rows)
    )
    tasks: list[_Task] = []
    for row, packed in zip(rows, measures, strict=True):
        suite, model, condition, task_id, _, passes, fails, excluded, category, codes, _ = row
        # What Python's str.strip() and the page checks refuse, DuckDB's trim may not:
        # such a file goes back to the Python reader, which names the line.
        for name in (suite, model, condition, task_id, category):
            if name is not None and (not name.strip() or unprintable(name) is not None):
                if name == model == "":
                    continue
                return None
        key = (suite, model, condition, task_id)
        codes = by_row.get(key, codes)
        tasks.append(
            (
                suite,
                model,
                condition,
                task_id,
                (passes, passes + fails, excluded),
                codes.encode("ascii").translate(DIGITS),
                category,
                urls.get(key),
                packed,
            )
        )
    return tasks
