"""Loading documents safely: JSON files whole or a record at a time, JSON lines, YAML.

Every loader keeps to the limits of limits.py (sizes, JSON values, YAML aliases and
nesting), refuses NaN and Infinity and a JSON key given twice, and says what is
wrong with its location: added to the build's problems, or raised as BadDocument.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import Problems
from ..json_scan import JsonPlan, JsonProblem, check_json_values, plan_json
from ..limits import (
    MAX_DOCUMENT_BYTES,
    MAX_YAML_BYTES,
    MiB,
    TooLarge,
    check_size,
    load_yaml,
    read_limited,
)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


#: Said of a document nested deeper than Python's parsers can recurse.
TOO_DEEP = "nested too deeply to read"


def json_loads(text: str | bytes, *, counted: bool = False) -> Any:
    """json.loads that refuses NaN and Infinity, which Python accepts by default, and
    more than MAX_JSON_VALUES values (TooLarge, a ValueError; `counted`: the caller has
    checked); says ValueError for a document too deeply nested to parse."""
    if not counted:
        check_json_values(text)
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def json_reason(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        # In brackets: some messages end in "at" ("Unterminated string starting at").
        return f"{error.msg} (column {error.colno})"
    return str(error)


def yaml_load(text: str, *, fast: bool = False) -> Any:
    """limits.load_yaml (safe, with bounded aliases, nodes and nesting; libyaml's parser
    when `fast`); every way it can fail on bad text raises YAMLError or ValueError."""
    try:
        return load_yaml(text, fast=fast)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    except (TypeError, AttributeError, OverflowError, KeyError, IndexError) as error:
        # PyYAML's constructors fail like this on malformed tagged values such as
        # !!timestamp "x" or !!bool "x" (ValueError, for !!float "abc", passes through).
        raise ValueError(f"a tagged value cannot be read ({error})") from None


class BadDocument(Exception):
    """A whole file that cannot be read: the message is one located line."""


def yaml_document(path: Path) -> Any:
    """A YAML file's value (the config, a suite file), within MAX_YAML_BYTES and the
    limits of load_yaml, parsed by libyaml; BadDocument says what is wrong and where."""
    try:
        text = read_limited(path, MAX_YAML_BYTES).decode("utf-8-sig")
    except TooLarge as error:
        raise BadDocument(f"{path}: {error}") from None
    except UnicodeDecodeError:
        raise BadDocument(f"{path}: not UTF-8 text (is this a binary file?)") from None
    except OSError as error:
        raise BadDocument(f"{path}: cannot read: {error.strerror}") from None
    try:
        return yaml_load(text, fast=True)
    except ValueError as error:
        raise BadDocument(f"{path}: not valid YAML: {error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        reason = getattr(error, "problem", None) or str(error)
        raise BadDocument(f"{path}{line}: not valid YAML: {reason}") from None


class _NonFinite:
    """Stands in for a NaN or Infinity while a document is parsed, so it can be located."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _non_finite_paths(doc: Any) -> Iterator[tuple[str, str]]:
    """(key path, constant) for each _NonFinite in doc, in document order."""
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, _NonFinite):
            yield where or "(top level)", value.name
        elif isinstance(value, dict):
            prefix = f"{where}." if where else ""
            stack.extend((f"{prefix}{key}", item) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in reversed(list(enumerate(value))))


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object, refusing a key given twice: json.loads kept the last, so a second
    "reward" silently replaced the first."""
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            raise ValueError(f"key {key!r} appears twice in one object")
        doc[key] = value
    return doc


def load_json_document(path: Path, problems: Problems) -> Any:
    """A whole JSON file's value, or None when a problem (added) stops it being read.
    Up to MAX_DOCUMENT_BYTES on disk, but read whole only up to MAX_RECORD_BYTES and
    MAX_JSON_VALUES: formats whose files grow with their runs use load_json_records."""
    records = load_json_records(path, problems)
    return None if records is None else records.top


#: A JSON document up to this size is parsed in one piece, as it always was: a few
#: times this in memory at most, and json's own messages. A larger one is read a
#: record at a time (load_json_records).
WHOLE_JSON_BYTES = 4 * MiB


@dataclass
class Records:
    """A JSON document read for its records (τ-bench's trials, Inspect's samples)."""

    #: The document; when it was read a record at a time, with the records' array empty.
    top: Any
    #: The key holding the records, or None for the top-level array (or none found).
    key: str | None
    count: int
    #: (index, record) of each record, read as they are asked for; a record holding NaN
    #: or Infinity is reported and left out, and a part that is not valid JSON stops
    #: them, reported.
    items: Iterator[tuple[int, Any]]


def _no_items() -> Iterator[tuple[int, Any]]:
    return iter(())


def load_json_records(
    path: Path, problems: Problems, keys: tuple[str, ...] = (), top: bool = False
) -> Records | None:
    """A JSON document whose records are the items of its top-level array (`top`) or
    of the first of `keys` at its top that holds an array; None when a problem (added)
    stops it being read.

    Memory follows the largest record, not the file: a large file is scanned once
    (json_scan.plan_json, which refuses a record or a rest beyond the limits before
    anything is built) and its records are then parsed a batch at a time.
    """
    try:
        size = check_size(path, MAX_DOCUMENT_BYTES)
        if size <= WHOLE_JSON_BYTES:
            return _whole_records(path, read_limited(path, WHOLE_JSON_BYTES), keys, top, problems)
        with path.open("rb") as handle:
            bom = 3 if handle.read(3) == b"\xef\xbb\xbf" else 0
            fd = handle.fileno()
            read = _reader(fd, bom)
            try:
                plan = plan_json(read, size - bom, keys, top)
                rest = (
                    []
                    if plan.array is not None and plan.key is None
                    else _rest(path, fd, bom, plan)
                )
            except JsonProblem as error:
                line, column = _line_column(read, error.offset)
                problems.add(f"{path}:{line}: not valid JSON: {error} (column {column})")
                return None
    except TooLarge as error:
        problems.add(f"{path}: {error}")
        return None
    except OSError as error:
        problems.add(f"{path}: cannot read: {error.strerror}")
        return None
    except _Unreadable as error:
        problems.add(str(error))
        return None
    if plan.array is None:
        return Records(rest, None, 0, _no_items())
    return Records(rest, plan.key, plan.count, _record_batches(path, bom, plan, problems))


class _Unreadable(Exception):
    """A part of a large document that did not parse: the message is located."""


def _whole_records(
    path: Path, raw: bytes, keys: tuple[str, ...], top: bool, problems: Problems
) -> Records | None:
    """A small document, parsed in one piece (after its values are counted)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        check_json_values(raw)
    except TooLarge as error:
        problems.add(f"{path}: {error}")
        return None
    constants: list[str] = []
    try:
        doc = _parse(raw, constants)
    except UnicodeDecodeError:
        problems.add(f"{path}: not UTF-8 text (is this a binary file?)")
        return None
    except json.JSONDecodeError as error:
        problems.add(f"{path}:{error.lineno}: not valid JSON: {json_reason(error)}")
        return None
    except ValueError as error:
        problems.add(f"{path}: not valid JSON: {error}")
        return None
    if constants:
        _report_constants(path, "", doc, problems)
        return None
    if top and isinstance(doc, list):
        return Records(doc, None, len(doc), enumerate(doc))
    for key in keys if isinstance(doc, dict) else ():
        if isinstance(doc.get(key), list):
            return Records(doc, key, len(doc[key]), enumerate(doc[key]))
    return Records(doc, None, 0, _no_items())


def _parse(text: bytes | str, constants: list[str]) -> Any:
    """json.loads refusing a key given twice, with each NaN or Infinity parsed into a
    marker (and named in `constants`), so that each problem can name its key path."""

    def constant(name: str) -> _NonFinite:
        constants.append(name)
        return _NonFinite(name)

    try:
        return json.loads(text, parse_constant=constant, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def _report_constants(path: Path, prefix: str, doc: Any, problems: Problems) -> None:
    for where, name in _non_finite_paths(doc):
        if problems.truncated:
            break
        if where == "(top level)" and prefix:
            where = prefix
        elif prefix:
            where = prefix + ("" if where.startswith("[") else ".") + where
        problems.add(f"{path}: {where}: {name} is not valid JSON; expected a number")


def _line_column(read: Callable[[int, int], bytes], offset: int) -> tuple[int, int]:
    """Line and column (in characters, as json counts them) of a byte offset."""
    line, line_start, at = 1, 0, 0
    while at < offset:
        data = read(at, min(MiB, offset - at))
        if not data:
            break
        newlines = data.count(b"\n")
        if newlines:
            line += newlines
            line_start = at + data.rindex(b"\n") + 1
        at += len(data)
    column, at = 1, line_start
    while at < offset:
        data = read(at, min(MiB, offset - at))
        if not data:
            break
        column += len(data.translate(None, _CONTINUATION))
        at += len(data)
    return line, column


#: The bytes that continue a UTF-8 character: left out when counting characters.
_CONTINUATION = bytes(range(0x80, 0xC0))


#: A part of a piece of a large document: (file offset, length) to read, or (the file
#: offset it stands at, bytes) put in place of what is there.
_Part = tuple[int, int | bytes]


def _piece_text(fd: int, bom: int, parts: list[_Part]) -> str:
    """The parts as one text: read into a single buffer and decoded, so a large record
    is held as bytes only until it is text (UnicodeDecodeError when it is not UTF-8)."""
    sizes = [part if isinstance(part, int) else len(part) for _, part in parts]
    buffer = bytearray(sum(sizes))
    with memoryview(buffer) as view:
        at = 0
        for (offset, part), size in zip(parts, sizes, strict=True):
            if isinstance(part, bytes):
                view[at : at + size] = part
            else:
                target, position = view[at : at + size], bom + offset
                while len(target):
                    done = os.preadv(fd, [target], position)
                    if not done:
                        raise JsonProblem("the file ends early (did it change?)", offset)
                    target, position = target[done:], position + done
            at += size
    return buffer.decode()


def _piece_problem(
    path: Path, read: Callable[[int, int], bytes], parts: list[_Part], error: ValueError
) -> str:
    """A located message for a piece of a large document that did not parse."""
    if isinstance(error, UnicodeDecodeError):
        return f"{path}: not UTF-8 text (is this a binary file?)"
    if not isinstance(error, json.JSONDecodeError):
        return f"{path}: not valid JSON: {error}"
    at = len(error.doc[: error.pos].encode())
    offset = parts[-1][0]
    for start, part in parts:
        size = part if isinstance(part, int) else len(part)
        if at < size:
            offset = start + (at if isinstance(part, int) else 0)
            break
        at -= size
    line, column = _line_column(read, offset)
    return f"{path}:{line}: not valid JSON: {error.msg} (column {column})"


def _rest(path: Path, fd: int, bom: int, plan: JsonPlan) -> Any:
    """The document with its records' array left empty (all of it, when it has none),
    parsed: within the limits plan_json checked. _Unreadable when it does not parse or
    holds NaN or Infinity (named by the first such key path, as there is no record
    to skip)."""
    parts: list[_Part] = [(plan.start, plan.end - plan.start)]
    if plan.array is not None:
        first, last = plan.array
        parts = [(plan.start, first - plan.start), (first, b"[]"), (last + 1, plan.end - last - 1)]
    constants: list[str] = []
    try:
        doc = _parse(_piece_text(fd, bom, parts), constants)
    except ValueError as error:
        raise _Unreadable(_piece_problem(path, _reader(fd, bom), parts, error)) from None
    for where, name in _non_finite_paths(doc) if constants else ():
        raise _Unreadable(f"{path}: {where}: {name} is not valid JSON; expected a number")
    return doc


def _reader(fd: int, bom: int) -> Callable[[int, int], bytes]:
    """Reads `count` bytes at an offset of the document (after its byte-order mark)."""
    return lambda at, count: os.pread(fd, count, bom + at)


def _record_batches(
    path: Path, bom: int, plan: JsonPlan, problems: Problems
) -> Iterator[tuple[int, Any]]:
    """The records of a large document, parsed a batch at a time (see Records.items)."""
    assert plan.array is not None
    first, last = plan.array
    starts = [(first + 1, 0), *plan.cuts]
    prefix = plan.key or ""
    with path.open("rb") as handle:
        fd = handle.fileno()
        for i, (start, index) in enumerate(starts):
            stop = starts[i + 1][0] - 1 if i + 1 < len(starts) else last
            parts: list[_Part] = [(start - 1, b"["), (start, stop - start), (stop, b"]")]
            constants: list[str] = []
            try:
                batch = _parse(_piece_text(fd, bom, parts), constants)
            except ValueError as error:
                problems.add(_piece_problem(path, _reader(fd, bom), parts, error))
                return
            for j, record in enumerate(batch):
                if constants and next(_non_finite_paths(record), None) is not None:
                    _report_constants(path, f"{prefix}[{index + j}]", record, problems)
                    continue
                yield index + j, record


#: A JSONL line longer than this is refused without being read into memory whole.
MAX_LINE_BYTES = 16 * 1024 * 1024


def jsonl_lines(path: Path, max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | str]]:
    """(line number, line) for each non-blank line of a JSON-lines file, a byte-order
    mark on the first line left out (the lines DuckDB counts as records); a line longer
    than `max_line` yields an error string instead, without being held whole."""
    with path.open("rb") as handle:
        number = 0
        while True:
            line = handle.readline(max_line + 1)
            if not line:
                return
            number += 1
            if len(line) > max_line and not line.endswith(b"\n"):
                yield number, f"line is longer than {max_line // (1024 * 1024)} MiB"
                # Skip the rest of that line without holding it.
                while line and not line.endswith(b"\n"):
                    line = handle.readline(max_line)
                continue
            if number == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]  # a UTF-8 byte-order mark, as some editors write
            if line.strip():
                yield number, line


def not_regular(path: Path) -> str | None:
    """Why a path that exists is not a file to read, or None for a regular file.

    A FIFO blocked the build (or read as empty) and a device such as /dev/zero
    never ends or was reported as "not UTF-8 text".
    """
    try:
        mode = path.stat().st_mode
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
    )
    return f"is {kind}, not a regular file; save its contents to a file first"
