"""Tables (CSV, TSV, Parquet) of runs or of per-task counts, read through DuckDB.

A table of runs has one row per run (task, passed, and optionally run, suite,
model, condition, category, url, measures); a table of counts one row per task
(task, successes, runs, optionally excluded, suite, model, condition, category).
Which one a file is follows from its columns. Columns are found by name, through
common aliases, or through a mapping (`columns:` in the config, --columns on the
command line).

This module opens the file and finds its columns; table_rows.py does everything
row by row inside DuckDB: the checks (each problem names the file, the row and the
column), the grouping into per-task counts, and the run order of each task, which
comes back as one short string of codes per task. Rows are numbered from 1, the
header and blank lines not counted.

Per-task counts as JSONL (`read_jsonl_counts`) are read here too, as a table whose
messages name lines. Large JSONL files of runs have a DuckDB reader of their own,
jsonl_duckdb.py.

duckdb is imported inside the read functions: commands that never read a table
do not pay for loading it.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base import Tally
from .documents import json_loads, json_reason, jsonl_lines
from .duckdb_common import connect, ident, literal, plain_path
from .fields import did_you_mean
from .reader import Reader
from .source import Source
from .table_counts import read_counts
from .table_rows import ROW, BadTable, Columns, Places, read_runs

#: What a column can hold, and the names it is found under without a mapping, the
#: canonical name first (it wins when an alias is present too).
ALIASES: dict[str, tuple[str, ...]] = {
    "task": ("task", "task_id", "instance_id", "sample_id", "example_id", "doc_id"),
    "run": ("run", "trial", "run_id", "epoch", "attempt", "repeat_index"),
    "passed": ("passed", "success", "resolved", "is_resolved", "correct"),
    "suite": ("suite",),
    "model": ("model",),
    "condition": ("condition",),
    "category": ("category",),
    "url": ("url",),
    "cost": ("cost", "cost_usd", "total_cost"),
    "duration": ("duration", "duration_seconds", "wall_time"),
    "tokens": ("tokens", "total_tokens"),
    "confidence": ("confidence",),
    "successes": ("successes",),
    "runs": ("runs",),
    "excluded": ("excluded",),
}
FIELDS = tuple(ALIASES)
#: A score column stands for passed when no other passed column exists.
SCORE = "score"


def _resolve(
    columns: list[tuple[str, str]], source: Source, where: str
) -> tuple[Columns, str | None]:
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
            raise BadTable(
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
            raise BadTable(
                f"{where}: more than one column could hold {field}: "
                f"{', '.join(repr(m) for m in found)}; say which one with "
                f"columns: {{{field}: NAME}} in the config or --columns {field}=NAME"
            )
        if found:
            names[field] = found[0]
            taken.add(found[0])
    if names.get("passed") is not None and names["passed"].lower() == SCORE:
        score = names["passed"]
    return Columns(names, types), score


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
    with plain_path(path) as plain, connect() as con:
        try:
            relation, row_number = open_sql(con, plain)
            # A column of the file named as the row number's (any case) is left out:
            # read as the row number, it misplaced every message.
            names = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
            clash = [name for name, *_ in names if name.lower() == ROW]
            exclude = f" EXCLUDE ({ident(clash[0])})" if clash else ""
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
        place = Places()
        if lines is not None:
            numbers = lines()
            # Only when DuckDB skipped the same blank lines (it read len(numbers) records).
            if con.execute("SELECT count(*) FROM src").fetchone() == (len(numbers),):
                place = Places(numbers)
        try:
            cols, score = _resolve(columns, source, where)
            if cols.get("successes") is not None and cols.get("runs") is not None:
                if cols.get("task") is None:
                    raise BadTable(f"{where}: a table of counts needs a task column")
                read_counts(con, cols, source, tally, where, place)
                return
            missing = [f for f in ("task", "passed") if cols.get(f) is None]
            if missing:
                raise BadTable(_missing_message(where, missing, columns, score))
            read_runs(con, cols, score, source, tally, where, place)
        except BadTable as bad:
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
        f"header = true, all_varchar = true, delim = {literal(delimiter)}, quote = '\"', "
        "escape = '\"', comment = '', skip = 0, strict_mode = true"
    )

    def open_csv(con: Any, plain: str) -> tuple[str, str]:
        # Materialised once: every check and the grouping read it again, and a table's
        # rowid is the row's place in the file (DuckDB keeps insertion order).
        con.execute(f"CREATE TEMP TABLE raw AS SELECT * FROM read_csv({literal(plain)}, {options})")
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
    scan = f"read_parquet({literal(plain)})"
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
        f"CREATE TEMP TABLE raw AS SELECT * FROM read_json({literal(plain)}, "
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
