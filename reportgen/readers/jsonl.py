"""Canonical JSONL, one run per line (also human-eval's *_results.jsonl)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from ..counts import MEASURES
from ..errors import Problems
from ..json_scan import check_json_values
from ..limits import MAX_JSON_VALUES, TooLarge
from .base import Tally
from .documents import MAX_LINE_BYTES, json_loads, json_reason, jsonl_lines
from .fields import (
    describe,
    is_http_url,
    is_optional_text,
    measure_rule,
    measure_value,
    parse_passed,
    task_id_of,
)
from .reader import Reader
from .source import Source

#: From this size on, a file is first read through DuckDB (bench/run.py measures both
#: ways); below it, loading DuckDB costs more than it saves.
DUCKDB_MIN_BYTES = 8 * 1024 * 1024


def first_long_line(path: Path) -> int | None:
    """The number of the first line longer than MAX_LINE_BYTES, if any.

    DuckDB takes lines up to 32 MiB whatever its maximum_object_size, so a file it
    reads is checked here first: a pass of memchr over 16 MiB blocks, about 0.03 s
    for 200 MB (and none for a file too small to hold such a line).
    """
    if path.stat().st_size <= MAX_LINE_BYTES:
        return None
    line, length = 1, 0  # the current line's number and its bytes so far
    with path.open("rb", buffering=0) as handle:
        while block := handle.read(MAX_LINE_BYTES):
            first = block.find(b"\n")
            if first < 0:
                length += len(block)
            elif length + first > MAX_LINE_BYTES:
                return line
            else:
                # Every line wholly inside the block is shorter than the block.
                line += block.count(b"\n")
                length = len(block) - block.rfind(b"\n") - 1
            if length > MAX_LINE_BYTES:
                return line
    return None


def read_jsonl(source: Source, tally: Tally) -> None:
    """One run per line: {"task": "t1", "passed": true, ...}.

    A large file is grouped in DuckDB first (several times faster than parsing each
    line in Python); a small one, or one DuckDB refuses, goes through the Python
    reader below, which gives the same counts.
    """
    tally.named_from(suite="the suite field", model="the model field")
    first = _first_record(source.path)
    if _is_history_entry(first):
        # Every line would be refused for want of a task: say once what the file is.
        tally.problems.add(
            f"{source.path}:1: this is a build of a reportgen history (history.jsonl), not "
            "result runs; give it as --history, or as check's --baseline"
        )
        return
    long_line = first_long_line(source.path)  # a history needs no scan: it is refused
    if _holds_counts(first):
        from .table import read_jsonl_counts

        if long_line is not None:
            megabytes = MAX_LINE_BYTES // (1024 * 1024)
            tally.problems.add(f"{source.path}:{long_line}: line is longer than {megabytes} MiB")
        else:
            read_jsonl_counts(source, tally)
        return
    # A line too long for the limit goes to the loop below, which names it and still
    # checks the lines after it. DuckDB counts a file on its own: where other files add
    # runs too, runs of one task in two of them are merged (and their ids checked
    # against each other) only by the loop below.
    if (
        long_line is None
        and tally.file_count == 1
        and source.path.stat().st_size >= DUCKDB_MIN_BYTES
    ):
        from .jsonl_duckdb import read_jsonl_through_duckdb

        # Any refusal or odd record hands the file back to the loop below, which
        # names every problem with its line.
        if read_jsonl_through_duckdb(source, tally, MAX_LINE_BYTES):
            return
    read_jsonl_lines(source, tally)


def _first_record(path: Path) -> Any:
    """The first line's JSON value; None when there is none or it is not JSON."""
    for _, line in jsonl_lines(path, MAX_LINE_BYTES):
        try:
            return json_loads(line)
        except ValueError:
            return None
    return None


def _is_history_entry(record: Any) -> bool:
    """A build of a site's history.jsonl, which no run or count record looks like."""
    return isinstance(record, dict) and {"schema_version", "label", "result_sets"} <= record.keys()


#: How a history.jsonl line starts, as reportgen writes it (a line may be megabytes
#: long, more than the head a folder's files are told apart by).
_HISTORY_START = re.compile(rb'\{\s*"schema_version"\s*:\s*[0-9]+\s*,\s*"label"\s*:')


def not_a_history(head: bytes) -> bool:
    """For a folder input: a history.jsonl kept beside the results is passed over."""
    return _HISTORY_START.match(head) is None


def _holds_counts(record: Any) -> bool:
    """A file of per-task counts: its first record has successes and runs, no passed."""
    return (
        isinstance(record, dict)
        and "successes" in record
        and "runs" in record
        and "passed" not in record
    )


#: A value takes at least two bytes: a shorter line cannot pass MAX_JSON_VALUES.
_COUNTED_FROM = 2 * MAX_JSON_VALUES


def read_jsonl_lines(source: Source, tally: Tally) -> None:
    """The Python reader: line by line, every problem located at its line.

    This is the hot loop of a large build (a million lines), so the common
    record, with every field well-formed, takes a short path: orjson to parse,
    plain type checks, one call to the tally. Anything unusual goes through
    `_canonical_record`, which checks the same rules and says what is wrong.
    """
    problems = tally.problems
    name = source.path
    add_run = tally.add_run
    loads = orjson.loads
    base = tally.line_base
    for number, line in jsonl_lines(source.path, MAX_LINE_BYTES):
        # Stop once a problem beyond MAX_PROBLEMS was seen (Problems then adds the
        # "stopped after" line), so the user learns that more may follow.
        if problems.truncated:
            return
        if isinstance(line, str):
            problems.add(f"{name}:{number}: {line}")
            continue
        if len(line) > _COUNTED_FROM:  # only a line this long can hold too many values
            try:
                check_json_values(line)
            except TooLarge as error:
                problems.add(f"{name}:{number}: {error}")
                continue
        try:
            record = loads(line)
        except orjson.JSONDecodeError:
            record = _parsed_slowly(line, f"{name}:{number}", problems)
            if record is _MISSING:
                continue
        if type(record) is dict:
            get = record.get
            task = get("task")
            if task is None:
                task = get("task_id")
            passed = get("passed", _MISSING)
            suite, model, run = get("suite"), get("model"), get("run")
            category, url, condition = get("category"), get("url"), get("condition")
            measures = None
            if (
                "cost" in record
                or "duration" in record
                or "tokens" in record
                or "confidence" in record
            ):
                measures = _measures(record)
            if (
                measures is not _BAD
                and type(task) is str
                and task.strip()
                and (passed is True or passed is False or passed is None)
                and (suite is None or (type(suite) is str and suite.strip()))
                and (model is None or (type(model) is str and model.strip()))
                and (category is None or (type(category) is str and category.strip()))
                and (condition is None or (type(condition) is str and condition.strip()))
                and (run is None or type(run) is int or type(run) is str)
                and (url is None or is_http_url(url))
            ):
                add_run(
                    number + base,
                    task,
                    passed,
                    suite,
                    model,
                    run,
                    category,
                    url,
                    None,
                    measures,
                    condition,
                )
                continue
        _canonical_record(number + base, record, tally)


_MISSING = object()
_BAD: dict[str, float] = {}


def _parsed_slowly(line: bytes, where: str, problems: Problems) -> Any:
    """A line orjson refused, read by the standard parser, which gives the message;
    _MISSING once the problem is named."""
    try:
        return json_loads(line)
    except UnicodeDecodeError:
        problems.add(f"{where}: not UTF-8 text (is this a binary file?)")
    except ValueError as error:
        hint = "" if line.endswith(b"\n") else " (the last line looks cut short)"
        problems.add(f"{where}: not valid JSON: {json_reason(error)}{hint}")
    return _MISSING


def _measures(record: dict[str, Any]) -> dict[str, float] | None:
    """The record's measures (null ones left out), None when it has none, or _BAD when
    one is not a number the measure takes (the slow path then says which)."""
    measures = {}
    for name in MEASURES:
        raw = record.get(name)
        if raw is not None:
            value = measure_value(name, raw)
            if value is None:
                return _BAD
            measures[name] = value
    return measures or None


def _canonical_record(position: int, record: Any, tally: Tally) -> None:
    problems = tally.problems
    where = tally.where(position)
    if not isinstance(record, dict):
        problems.add(f'{where}: expected an object like {{"task": ..., "passed": ...}}')
        return
    # "task": null falls back to "task_id", as on the short path above.
    raw_task = record.get("task")
    if raw_task is None:
        raw_task = record.get("task_id")
    task = task_id_of(raw_task)
    if task is None:
        what = "missing" if raw_task is None else f"{describe(raw_task)} is not a task id"
        expected = "expected a string or integer"
        if isinstance(raw_task, float) and raw_task.is_integer() and abs(raw_task) >= 2**64:
            # orjson reads a whole number this wide as a float: its last digits are gone.
            expected = "a whole number of 2**64 or more is not read exactly; write it as a string"
        problems.add(f'{where}: "task" (or "task_id"): {what}; {expected}')
        return
    if "passed" not in record:
        problems.add(f'{where}: "passed" is missing; expected true, false, 1, 0 or null')
        return
    ok, passed = parse_passed(record["passed"])
    if not ok:
        problems.add(
            f'{where}: "passed": {describe(record["passed"])} is not true, false, 1, 0 or null'
        )
        return
    for key in ("suite", "model", "category", "condition"):
        if not is_optional_text(record.get(key)):
            problems.add(f'{where}: "{key}" must be a non-empty string')
            return
    url = record.get("url")
    if url is not None and not is_http_url(url):
        problems.add(f'{where}: "url" must be an http or https link')
        return
    run = record.get("run")
    if run is not None and (isinstance(run, bool) or not isinstance(run, int | str)):
        # orjson reads an integer of 2**64 or more as a float: say what was read.
        problems.add(
            f'{where}: "run" must be an integer below 2**64 or a string, got {describe(run)}'
        )
        return
    for name in MEASURES:
        raw = record.get(name)
        if raw is not None and measure_value(name, raw) is None:
            problems.add(f'{where}: "{name}": {describe(raw)} is not {measure_rule(name)}')
            return
    tally.add_run(
        position,
        task,
        passed,
        suite=record.get("suite"),
        model=record.get("model"),
        run=run,
        category=record.get("category"),
        url=url,
        measures=_measures(record),
        condition=record.get("condition"),
    )


def sniff(head: bytes) -> bool:
    """A JSON object whose first line has "passed" and a task key."""
    first_line = head.split(b"\n", 1)[0]
    return (
        head.startswith(b"{")
        and b'"passed"' in first_line
        and (b'"task"' in first_line or b'"task_id"' in first_line)
    )


READER = Reader(
    name="jsonl",
    suffixes=(".jsonl",),
    sniff=sniff,
    read=read_jsonl,
    in_folder=not_a_history,
    summary='one run per line: {"task": ..., "passed": true}; human-eval\'s *_results.jsonl too',
)
