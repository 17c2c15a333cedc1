"""What the two readers that work in DuckDB share: table.py (CSV, TSV, Parquet and
JSONL of counts) and jsonl_duckdb.py (large JSONL of runs).

The connection (bounded memory, no extension ever downloaded), a file's path as
DuckDB should see it, SQL quoting, and the per-task queries over the view `v` both
readers build, one row a run: _row (its place in the file), suite, model,
condition, task, run, run_number, code (PASS, FAIL or EXCLUDED), url and the
measures (counts.MEASURES, DOUBLE, NULL where a run records none).

duckdb is imported inside the functions: commands that never read a table or a
large JSONL file do not pay for loading it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..counts import BASELINE, MEASURES, condition_key
from .base import Tally
from .source import Source

if TYPE_CHECKING:
    import duckdb

#: Per group (suite, model, condition) of a view, the file's own names by what they
#: name, where the config or command line replaced them (given_names).
GivenNames = dict[tuple[str | None, str, str | None], dict[str, list[str]]]


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def own_suite(suite: str | None, tally: Tally) -> str | None:
    """A group's suite as the file named it: None for rows grouped under the Tally's
    fallback (see group_keys), so the page says the suite is a guess from a name."""
    return None if suite == tally.fallback_suite else suite


def group_keys(source: Source, suite: str, model: str, condition: str, fallback: str) -> str:
    """SQL for the (suite, model, condition) a row belongs to, as the Tally keys it: the
    config's names first, then the row's; a row without a suite is given the suite the
    Tally falls back to (`fallback`), no model, and the baseline (NULL, which
    "baseline" is too; the Tally keys it ""). Grouped on these, runs that the Tally
    would merge are merged here too."""
    if source.suite:
        suite = literal(source.suite)
    elif suite != "NULL":  # without the column the Tally names (and marks) the fallback
        suite = f"coalesce({suite}, {literal(fallback)})"
    model = literal(source.model) if source.model else f"coalesce({model}, '')"
    if source.condition:
        condition = (
            literal(condition_key(source.condition)) if condition_key(source.condition) else "NULL"
        )
    else:
        condition = f"nullif({condition}, {literal(BASELINE)})"
    return f"{suite} AS suite, {model} AS model, {condition} AS condition"


#: The names a config or the command line may give in place of a file's.
REPLACEABLE = ("suite", "model", "condition")


def given_names(con: duckdb.DuckDBPyConnection, whats: list[str]) -> GivenNames:
    """Per group of v, the file's own names (its given_<what> columns) where group_keys
    put the config's or command line's in their place: the Tally warns when several
    were pooled into one group."""
    if not whats:
        return {}
    lists = ", ".join(f"list(DISTINCT coalesce({ident('given_' + w)}, ''))" for w in whats)
    rows = con.execute(f"SELECT suite, model, condition, {lists} FROM v GROUP BY ALL").fetchall()
    return {(s, m, c): dict(zip(whats, names, strict=True)) for s, m, c, *names in rows}


@contextmanager
def plain_path(path: Path) -> Iterator[str]:
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
def connect() -> Iterator[duckdb.DuckDBPyConnection]:
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


#: The codes come back as digits ("0", "1", "2"): this turns them into bytes 0, 1, 2.
DIGITS = bytes.maketrans(b"012", bytes((0, 1, 2)))


def mixed_codes(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str, str, str]]:
    """Codes in row order for tasks where only some runs carry an id (as JSONL keeps them)."""
    return con.execute(
        """SELECT suite, model, condition, task, string_agg(chr(48 + code), '' ORDER BY _row)
        FROM v GROUP BY suite, model, condition, task
        HAVING count(run) > 0 AND count(run) < count(*)"""
    ).fetchall()


def task_urls(
    con: duckdb.DuckDBPyConnection, order: str = "run_number NULLS LAST, run"
) -> dict[tuple[str, str, str, str], dict[int, str]]:
    """Transcript links by (suite, model, condition, task) and position in the run order."""
    # By run id where every run of the task has one, else by row. Whether they all do
    # is a window count of its own, in the inner query: DuckDB 2 refuses a window
    # function inside another's ORDER BY.
    by_id = ", ".join(
        f"CASE WHEN all_ids THEN {part.split()[0]} END NULLS LAST" for part in order.split(", ")
    )
    rows = con.execute(
        f"""SELECT suite, model, condition, task, position, url FROM (
            SELECT suite, model, condition, task, url, row_number() OVER (
                PARTITION BY suite, model, condition, task ORDER BY {by_id}, _row
            ) - 1 AS position
            FROM (
                SELECT *, count(run) OVER t = count(*) OVER t AS all_ids
                FROM v WINDOW t AS (PARTITION BY suite, model, condition, task)
            )
        ) WHERE url IS NOT NULL"""
    ).fetchall()
    urls: dict[tuple[str, str, str, str], dict[int, str]] = {}
    for suite, model, condition, task, position, url in rows:
        urls.setdefault((suite, model, condition, task), {})[position] = url
    return urls


def measure_columns(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The measures (counts.MEASURES) some run of the view v records, as columns of v."""
    counts = con.execute(
        "SELECT " + ", ".join(f"count({ident(name)})" for name in MEASURES) + " FROM v"
    ).fetchone()
    assert counts is not None
    return [name for name, count in zip(MEASURES, counts, strict=True) if count]


def task_measures(
    con: duckdb.DuckDBPyConnection, names: list[str], order: str, lengths: list[int]
) -> list[dict[str, bytes]]:
    """Each task's measures in run order, packed as TaskCounts keeps them, for the tasks
    of v in order of their first row (with `lengths`, their runs): the run order is
    `order`, or the row order for a task whose runs have ids only in part (as
    mixed_codes). A task keeps only the measures some run of it records."""
    import numpy as np

    values = ", ".join(f"coalesce({ident(n)}, 'NaN'::DOUBLE) AS {ident(n)}" for n in names)
    columns = con.execute(
        f"""SELECT {values} FROM (
            SELECT *, min(_row) OVER w AS first_,
                count(run) OVER w > 0 AND count(run) OVER w < count(*) OVER w AS mixed_
            FROM v WINDOW w AS (PARTITION BY suite, model, condition, task))
        ORDER BY first_, CASE WHEN mixed_ THEN _row END, {order}"""
    ).fetchnumpy()
    arrays = {name: np.asarray(columns[name], dtype=np.float64) for name in names}
    tasks: list[dict[str, bytes]] = []
    start = 0
    for length in lengths:
        end = start + length
        packed = {}
        for name, column in arrays.items():
            part = column[start:end]
            if not np.isnan(part).all():
                packed[name] = part.tobytes()
        tasks.append(packed)
        start = end
    return tasks
