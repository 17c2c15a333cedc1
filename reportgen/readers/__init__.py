"""Load: result files in, exact per-task counts out.

Every reader turns one file into run records or task counts and hands them to a
`Tally`, which groups them into result sets (one per suite and model) and checks
them. Problems are collected with their location (file and line, key path, or
zip member) and raised together, before anything is written.

Formats: canonical JSONL (also human-eval's *_results.jsonl), the canonical
YAML suite file, τ-bench and τ²-bench results, and Inspect AI logs (.eval and
.json, in `inspect_logs.py`).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

from ..errors import Problems, UserError
from ..limits import MAX_DOCUMENT_BYTES, MAX_YAML_BYTES, TooLarge, load_yaml, read_limited

FORMATS = ("jsonl", "yaml", "tau-bench", "tau2-bench", "inspect")

#: A JSONL line longer than this is refused without being read into memory whole.
MAX_LINE_BYTES = 16 * 1024 * 1024

#: τ-bench and τ²-bench count a run as passed when its reward is 1 within this.
REWARD_TOLERANCE = 1e-6

#: The most runs one task may have. Larger counts (in a YAML suite, a history or a
#: report) overflowed numpy's 64-bit integers with a traceback; no eval runs a
#: task a billion times.
MAX_COUNT = 10**9


# ---------------------------------------------------------------- the model


#: Run outcome codes, one byte per run: compact enough for millions of runs.
PASS, FAIL, EXCLUDED = 1, 0, 2


@dataclass
class TaskCounts:
    """One task of one result set: its counts, and its runs in run order when known."""

    id: str
    successes: int = 0
    runs: int = 0
    excluded: int = 0
    category: str | None = None
    #: One byte per recorded run (PASS, FAIL or EXCLUDED) in run order; None when
    #: the task was given as counts only, so no run order exists.
    codes: bytes | None = None
    #: Transcript links by position in the run order, when runs carry a url.
    urls: dict[int, str] = field(default_factory=dict)

    @property
    def outcomes(self) -> list[bool | None] | None:
        """The runs as True (passed), False (failed) or None (not evaluated)."""
        if self.codes is None:
            return None
        return [None if code == EXCLUDED else code == PASS for code in self.codes]


@dataclass
class ResultSet:
    """The tasks of one (suite, model) pair read from one or more files."""

    suite: str
    model: str
    name: str
    format: str
    sources: list[str]
    tasks: list[TaskCounts]

    @property
    def excluded_runs(self) -> int:
        return sum(t.excluded for t in self.tasks)

    @property
    def runs(self) -> int:
        return sum(t.runs for t in self.tasks)

    @property
    def evaluated_tasks(self) -> list[TaskCounts]:
        """Tasks with at least one evaluated run: the ones that can be estimated."""
        return [t for t in self.tasks if t.runs > 0]


@dataclass(frozen=True)
class Source:
    """One input file and how to read it (from the config or the command line)."""

    path: Path
    format: str | None = None
    suite: str | None = None
    model: str | None = None
    name: str | None = None
    scorer: str | None = None


# ---------------------------------------------------------------- tallying


def _append(values: array[int] | list[Any], value: Any) -> array[int] | list[Any]:
    """Append to a compact integer array, or to a list once a value does not fit one."""
    if isinstance(values, array):
        if type(value) is int:
            try:
                values.append(value)
                return values
            except OverflowError:
                pass
        values = list(values)
    values.append(value)
    return values


class _TaskTally:
    __slots__ = ("category", "codes", "counts_only", "positions", "run_ids", "urls")

    def __init__(self) -> None:
        self.codes = bytearray()
        #: Run ids and where each run was read (line or record), only when runs
        #: carry ids: duplicates are found by sorting once at the end. Machine
        #: integers while they fit (8 bytes a run, not a Python object each).
        self.run_ids: array[int] | list[Any] | None = None
        self.positions: array[int] | list[Any] | None = None
        self.urls: dict[int, str] = {}
        self.category: str | None = None
        self.counts_only: tuple[int, int, int] | None = None


class Tally:
    """Groups runs by (suite, model, task) for one source file, checking as it goes.

    A run's position is where it was read: a line number (turned into "file:line"
    by `locate`) or a ready-made location string such as a key path.
    """

    def __init__(self, source: Source, problems: Problems) -> None:
        self.source = source
        self.problems = problems
        self.groups: dict[tuple[str, str], dict[str, _TaskTally]] = {}
        self._last_key: tuple[str | None, str | None] | None = None
        self._last_tasks: dict[str, _TaskTally] = {}
        self.locate: Callable[[int], str] = lambda n: f"{source.path}:{n}"

    def where(self, position: int | str) -> str:
        return position if isinstance(position, str) else self.locate(position)

    def _tasks(
        self, suite: str | None, model: str | None, position: int | str
    ) -> dict[str, _TaskTally]:
        # The config's suite and model win over the file's; the file name is the last resort.
        key = (
            self.source.suite or suite or self.source.path.stem,
            self.source.model or model or "",
        )
        tasks = self.groups.get(key)
        if tasks is None:
            tasks = self.groups[key] = {}
            for what, name in zip(("suite", "model"), key, strict=True):
                self._check_text(position, what, name)
        return tasks

    def _check_text(self, position: int | str, what: str, text: str) -> None:
        """A located problem when an id or name holds a character no page can show."""
        problem = unprintable(text)
        if problem is not None:
            self.problems.add(f"{self.where(position)}: {what} {text!r} {problem}")

    def add_run(
        self,
        position: int | str,
        task: str,
        passed: bool | None,
        suite: str | None = None,
        model: str | None = None,
        run: Any = None,
        category: str | None = None,
        url: str | None = None,
    ) -> None:
        # Runs of one (suite, model) usually come in a row: reuse the last group.
        if self._last_key == (suite, model):
            tasks = self._last_tasks
        else:
            tasks = self._last_tasks = self._tasks(suite, model, position)
            self._last_key = (suite, model)
        tally = tasks.get(task)
        if tally is None:
            tally = tasks[task] = _TaskTally()
            self._check_text(position, "task id", task)
        if run is not None:
            ids, positions = tally.run_ids, tally.positions
            if ids is None or positions is None:
                ids = tally.run_ids = array("q")
                positions = tally.positions = array("q")
            # The common case inline (this runs once per line of a large file).
            if type(ids) is array and type(run) is int and -(1 << 63) <= run < (1 << 63):
                ids.append(run)
            else:
                tally.run_ids = _append(ids, run)
            if type(positions) is array and type(position) is int:
                positions.append(position)
            else:
                tally.positions = _append(positions, position)
        if category is not None and category != tally.category:
            self._check_text(position, "category", category)
            tally.category = category
        if url is not None:
            tally.urls[len(tally.codes)] = url
        tally.codes.append(EXCLUDED if passed is None else PASS if passed else FAIL)

    def add_counts(
        self,
        where: str,
        task: str,
        successes: int,
        runs: int,
        *,
        suite: str | None = None,
        model: str | None = None,
        category: str | None = None,
        excluded: int = 0,
    ) -> None:
        """A task given as counts only (the YAML suite file): no runs, no run order."""
        tally = self._tasks(suite, model, where)[task] = _TaskTally()
        self._check_text(where, "task id", task)
        if category is not None:
            self._check_text(where, "category", category)
        tally.category = category
        tally.counts_only = (successes, runs, excluded)

    def result_sets(
        self, format_name: str, suite: str | None, model: str | None
    ) -> list[ResultSet]:
        sets = []
        for (suite_name, model_name), tasks in self.groups.items():
            suite_name = suite or suite_name
            model_name = model or model_name
            counted = [self._counts(task_id, tally) for task_id, tally in tasks.items()]
            sets.append(
                ResultSet(
                    suite=suite_name,
                    model=model_name,
                    name=self.source.name or _default_name(suite_name, model_name),
                    format=format_name,
                    sources=[str(self.source.path)],
                    tasks=counted,
                )
            )
        return sets

    def _counts(self, task_id: str, tally: _TaskTally) -> TaskCounts:
        if tally.counts_only is not None:
            successes, runs, excluded = tally.counts_only
            return TaskCounts(task_id, successes, runs, excluded, tally.category)
        codes = bytes(tally.codes)
        urls = tally.urls
        if tally.run_ids is not None:
            # Runs carry ids: check each appears once (also when some runs have none,
            # which once skipped the check), and show them in run order.
            run_ids, positions = tally.run_ids, tally.positions
            assert positions is not None
            order = sorted(range(len(run_ids)), key=lambda i: _sort_key(run_ids[i]))
            keys = [_sort_key(run_ids[i]) for i in order]
            for before, after, i in zip(keys, keys[1:], order[1:], strict=False):
                if before == after and not self.problems.truncated:
                    first = order[keys.index(after)]
                    self.problems.add(
                        f"{self.where(positions[i])}: run {run_ids[i]!r} of task {task_id!r} "
                        f"appears twice (first at {self.where(positions[first])})"
                    )
            if len(run_ids) == len(codes):
                remap = {old: new for new, old in enumerate(order)}
                codes = bytes(codes[i] for i in order)
                urls = {remap[i]: u for i, u in urls.items()}
        excluded = codes.count(EXCLUDED)
        return TaskCounts(
            id=task_id,
            successes=codes.count(PASS),
            runs=len(codes) - excluded,
            excluded=excluded,
            category=tally.category,
            codes=codes,
            urls=dict(urls),
        )


def _sort_key(run: Any) -> tuple[int, Any]:
    return (0, run) if isinstance(run, int) else (1, str(run))


def _default_name(suite: str, model: str) -> str:
    return f"{model} · {suite}" if model else suite


# ---------------------------------------------------------------- field checks


def task_id_of(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


#: Characters no id, name or label may hold: controls (NUL, newline, escape, ...), which
#: broke the chart converter and split messages; lone surrogates, which cannot be
#: written as UTF-8; and the noncharacters U+FFFE and U+FFFF.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def unprintable(text: str) -> str | None:
    """Why text cannot be shown as an id or a name (its first bad character), or None."""
    found = _UNPRINTABLE.search(text)
    if found is None:
        return None
    char = found.group()
    if "\ud800" <= char <= "\udfff":
        kind = "a lone surrogate, which is not valid Unicode"
    elif char in "\ufffe\uffff":
        kind = "a Unicode noncharacter"
    else:
        kind = "a control character"
    return f"holds U+{ord(char):04X}, {kind}; ids and names must be printable text"


def _passed(value: Any) -> tuple[bool, bool | None]:
    """(ok, outcome): true/false, 1/0, or null for a run that could not be evaluated."""
    if value is None or isinstance(value, bool):
        return True, value
    if isinstance(value, int) and value in (0, 1):
        return True, value == 1
    return False, None


def _optional_text(value: Any) -> bool:
    return value is None or (isinstance(value, str) and bool(value.strip()))


def _http_url(value: Any) -> bool:
    return isinstance(value, str) and value.lower().startswith(("http://", "https://"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


#: Said of a document nested deeper than Python's parsers can recurse.
TOO_DEEP = "nested too deeply to read"


def json_loads(text: str | bytes) -> Any:
    """json.loads that refuses NaN and Infinity, which Python accepts by default,
    and says ValueError for a document too deeply nested to parse."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def _describe(value: Any) -> str:
    try:
        text = (
            json.dumps(value)
            if not isinstance(value, float) or math.isfinite(value)
            else str(value)
        )
    except RecursionError:
        text = f"a {type(value).__name__} {TOO_DEEP}"
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------- canonical JSONL


def _jsonl_lines(path: Path) -> Iterator[tuple[int, bytes | str]]:
    """(line number, line) for each non-blank line; an over-long line yields an error string."""
    with path.open("rb") as handle:
        number = 0
        while True:
            line = handle.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            number += 1
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                yield number, f"line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB"
                # Skip the rest of that line without holding it.
                while line and not line.endswith(b"\n"):
                    line = handle.readline(MAX_LINE_BYTES)
                continue
            if number == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]  # a UTF-8 byte-order mark, as some editors write
            if line.strip():
                yield number, line


def read_jsonl(source: Source, tally: Tally) -> None:
    """One run per line: {"task": "t1", "passed": true, ...}.

    This is the hot loop of a large build (a million lines), so the common
    record, with every field well-formed, takes a short path: orjson to parse,
    plain type checks, one call to the tally. Anything unusual goes through
    `_canonical_record`, which checks the same rules and says what is wrong.
    """
    problems = tally.problems
    name = source.path
    add_run = tally.add_run
    loads = orjson.loads
    for number, line in _jsonl_lines(source.path):
        # Stop once a problem beyond MAX_PROBLEMS was seen (Problems then adds the
        # "stopped after" line), so the user learns that more may follow.
        if problems.truncated:
            return
        if isinstance(line, str):
            problems.add(f"{name}:{number}: {line}")
            continue
        try:
            record = loads(line)
        except orjson.JSONDecodeError:
            # Slow path: the standard parser gives the message (and accepts
            # integers wider than 64 bits, which orjson refuses).
            try:
                record = json_loads(line)
            except UnicodeDecodeError:
                problems.add(f"{name}:{number}: not UTF-8 text (is this a binary file?)")
                continue
            except ValueError as error:
                hint = "" if line.endswith(b"\n") else " (the last line looks cut short)"
                problems.add(f"{name}:{number}: not valid JSON: {_json_reason(error)}{hint}")
                continue
        if type(record) is dict:
            get = record.get
            task = get("task")
            if task is None:
                task = get("task_id")
            passed = get("passed", _MISSING)
            suite, model, run = get("suite"), get("model"), get("run")
            category, url = get("category"), get("url")
            if (
                type(task) is str
                and task.strip()
                and (passed is True or passed is False or passed is None)
                and (suite is None or (type(suite) is str and suite.strip()))
                and (model is None or (type(model) is str and model.strip()))
                and (category is None or (type(category) is str and category.strip()))
                and (run is None or type(run) is int or type(run) is str)
                and (url is None or _http_url(url))
            ):
                add_run(number, task, passed, suite, model, run, category, url)
                continue
        _canonical_record(number, record, tally)


_MISSING = object()


def _json_reason(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        # In brackets: some messages end in "at" ("Unterminated string starting at").
        return f"{error.msg} (column {error.colno})"
    return str(error)


def _canonical_record(position: int, record: Any, tally: Tally) -> None:
    problems = tally.problems
    where = tally.where(position)
    if not isinstance(record, dict):
        problems.add(f'{where}: expected an object like {{"task": ..., "passed": ...}}')
        return
    raw_task = record.get("task", record.get("task_id"))
    task = task_id_of(raw_task)
    if task is None:
        what = "missing" if raw_task is None else f"{_describe(raw_task)} is not a task id"
        problems.add(f'{where}: "task" (or "task_id"): {what}; expected a string or integer')
        return
    if "passed" not in record:
        problems.add(f'{where}: "passed" is missing; expected true, false, 1, 0 or null')
        return
    ok, passed = _passed(record["passed"])
    if not ok:
        problems.add(
            f'{where}: "passed": {_describe(record["passed"])} is not true, false, 1, 0 or null'
        )
        return
    for key in ("suite", "model", "category"):
        if not _optional_text(record.get(key)):
            problems.add(f'{where}: "{key}" must be a non-empty string')
            return
    url = record.get("url")
    if url is not None and not _http_url(url):
        problems.add(f'{where}: "url" must be an http or https link')
        return
    run = record.get("run")
    if run is not None and (isinstance(run, bool) or not isinstance(run, int | str)):
        problems.add(f'{where}: "run" must be an integer or a string')
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
    )


# ---------------------------------------------------------------- YAML suite file


def yaml_load(text: str) -> Any:
    """limits.load_yaml (safe, with bounded aliases and nesting); every way it can fail
    on bad text raises YAMLError or ValueError."""
    try:
        return load_yaml(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    except (TypeError, AttributeError, OverflowError, KeyError, IndexError) as error:
        # PyYAML's constructors fail like this on malformed tagged values such as
        # !!timestamp "x" or !!bool "x" (ValueError, for !!float "abc", passes through).
        raise ValueError(f"a tagged value cannot be read ({error})") from None


def _yaml_document(path: Path, problems: Problems) -> Any:
    try:
        text = read_limited(path, MAX_YAML_BYTES).decode("utf-8-sig")
    except TooLarge as error:
        problems.add(f"{path}: {error}")
        return None
    except UnicodeDecodeError:
        problems.add(f"{path}: not UTF-8 text (is this a binary file?)")
        return None
    try:
        return yaml_load(text)
    except ValueError as error:
        problems.add(f"{path}: not valid YAML: {error}")
        return None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        reason = getattr(error, "problem", None) or str(error)
        problems.add(f"{path}{line}: not valid YAML: {reason}")
        return None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def read_yaml(source: Source, tally: Tally) -> None:
    """suite/model/tasks, each task with successes and runs, or outcomes."""
    problems = tally.problems
    path = source.path
    doc = _yaml_document(path, problems)
    if doc is None and not problems.items:
        problems.add(f"{path}: the file is empty; expected suite, model and tasks")
    if not isinstance(doc, dict):
        if doc is not None:
            problems.add(f"{path}: expected a mapping with a 'tasks' list at the top")
        return
    known = {"suite", "model", "tasks", "name", "description"}
    for key in doc:
        if key not in known:
            problems.add(f"{path}: unknown key {key!r}{_did_you_mean(str(key), known)}")
    for key in ("suite", "model"):
        if not _optional_text(doc.get(key)):
            problems.add(f"{path}: {key}: must be a non-empty string")
    tasks = doc.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        problems.add(f"{path}: tasks: expected a non-empty list of tasks")
        return
    # A bad suite or model (already reported) must not reach the tally: a list there
    # crashed with "unhashable type" instead of going on to check the tasks.
    suite = doc.get("suite") if _optional_text(doc.get("suite")) else None
    model = doc.get("model") if _optional_text(doc.get("model")) else None
    seen: dict[str, int] = {}
    for i, item in enumerate(tasks):
        task = task_id_of(item.get("id")) if isinstance(item, dict) else None
        if task is not None and task in seen:
            problems.add(f"{path}: tasks[{i}].id: {task!r} already given at tasks[{seen[task]}]")
            continue
        if task is not None:
            seen[task] = i
        _yaml_task(f"{path}: tasks[{i}]", item, tally, suite, model)


def _yaml_task(where: str, item: Any, tally: Tally, suite: str | None, model: str | None) -> None:
    problems = tally.problems
    if not isinstance(item, dict):
        problems.add(f"{where}: expected a mapping with id and successes/runs or outcomes")
        return
    known = {"id", "successes", "runs", "outcomes", "category", "excluded"}
    for key in item:
        if key not in known:
            problems.add(f"{where}: unknown key {key!r}{_did_you_mean(str(key), known)}")
    task = task_id_of(item.get("id"))
    if task is None:
        problems.add(f"{where}.id: expected a string or integer task id")
        return
    category = item.get("category")
    if not _optional_text(category):
        problems.add(f"{where}.category: must be a non-empty string")
        return
    if "outcomes" in item:
        if "successes" in item or "runs" in item:
            problems.add(f"{where}: give either outcomes or successes and runs, not both")
            return
        if "excluded" in item:
            # With outcomes, an excluded run is a null entry; a count beside them would be
            # a second, possibly contradicting, statement of the same thing.
            problems.add(f"{where}.excluded: with outcomes, give excluded runs as null entries")
            return
        outcomes = item["outcomes"]
        if not isinstance(outcomes, list) or not outcomes:
            problems.add(f"{where}.outcomes: expected a non-empty list of true/false/null")
            return
        for j, value in enumerate(outcomes):
            ok, passed = _passed(value)
            if not ok:
                problems.add(
                    f"{where}.outcomes[{j}]: {_describe(value)} is not true, false, 1, 0 or null"
                )
                return
            tally.add_run(
                f"{where}.outcomes[{j}]", task, passed, suite=suite, model=model, category=category
            )
        return
    successes, runs = _count(item.get("successes")), _count(item.get("runs"))
    for key, value in (("successes", successes), ("runs", runs)):
        if value is None:
            problems.add(f"{where}.{key}: expected a whole number, got {_describe(item.get(key))}")
            return
    assert successes is not None and runs is not None
    # `excluded` (runs that could not be evaluated, not part of runs) was accepted as a key
    # but silently dropped; it is now checked and counted like a null run in JSONL.
    excluded = _count(item.get("excluded", 0))
    if runs < 1:
        problems.add(f"{where}.runs: must be at least 1, got {runs}")
    elif runs > MAX_COUNT or (excluded is not None and excluded > MAX_COUNT):
        key = "runs" if runs > MAX_COUNT else "excluded"
        problems.add(f"{where}.{key}: must be at most {MAX_COUNT:,}, got {item[key]}")
    elif successes < 0:
        problems.add(f"{where}.successes: must not be negative, got {successes}")
    elif successes > runs:
        problems.add(f"{where}.successes: {successes} is more than runs ({runs})")
    elif excluded is None or excluded < 0:
        problems.add(
            f"{where}.excluded: expected a whole number of at least 0, "
            f"got {_describe(item.get('excluded'))}"
        )
    else:
        tally.add_counts(
            where,
            task,
            successes,
            runs,
            suite=suite,
            model=model,
            category=category,
            excluded=excluded,
        )


def _did_you_mean(key: str, known: set[str] | tuple[str, ...]) -> str:
    import difflib

    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


did_you_mean = _did_you_mean
describe = _describe


# ---------------------------------------------------------------- τ-bench and τ²-bench


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
    try:
        raw = read_limited(path, MAX_DOCUMENT_BYTES)
    except TooLarge as error:
        problems.add(f"{path}: {error}")
        return None
    except OSError as error:
        problems.add(f"{path}: cannot read: {error.strerror}")
        return None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    # NaN and Infinity are refused as in json_loads, but parsed first into markers so each
    # problem names its key path (e.g. "[3].reward") instead of only the file.
    constants: list[str] = []

    def constant(name: str) -> _NonFinite:
        constants.append(name)
        return _NonFinite(name)

    try:
        doc = json.loads(raw, parse_constant=constant, object_pairs_hook=_unique_keys)
        if not constants:
            return doc
        for where, name in _non_finite_paths(doc):
            if problems.truncated:
                break
            problems.add(f"{path}: {where}: {name} is not valid JSON; expected a number")
        return None
    except UnicodeDecodeError:
        problems.add(f"{path}: not UTF-8 text (is this a binary file?)")
    except json.JSONDecodeError as error:
        problems.add(f"{path}:{error.lineno}: not valid JSON: {_json_reason(error)}")
    except RecursionError:
        problems.add(f"{path}: not valid JSON: {TOO_DEEP}")
    except ValueError as error:
        problems.add(f"{path}: not valid JSON: {error}")
    return None


def _reward_passed(value: Any) -> bool | None:
    """Pass (reward 1) or fail (anything below); None for a reward outside 0 to 1, which
    was counted as a silent failure (a reward of 2 or -1 is a broken record)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    if not -REWARD_TOLERANCE <= value <= 1 + REWARD_TOLERANCE:
        return None
    return value >= 1 - REWARD_TOLERANCE


def _reward_problem(value: Any) -> str:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return f"expected a number{' from 0 to 1' if number else ''}, got {_describe(value)}"


def read_tau_bench(source: Source, tally: Tally, doc: Any = None) -> None:
    """τ-bench: a JSON array of {task_id, trial, reward, ...}."""
    problems = tally.problems
    path = source.path
    if doc is None:
        doc = load_json_document(path, problems)
        if doc is None:
            return
    if not isinstance(doc, list):
        problems.add(f"{path}: expected a JSON array of records with task_id, trial and reward")
        return
    if not doc:
        problems.add(f"{path}: the array is empty: no runs to count")
        return
    for i, record in enumerate(doc):
        where = f"{path}: [{i}]"
        if problems.truncated:  # not `full`: see read_jsonl
            return
        if not isinstance(record, dict):
            problems.add(f"{where}: expected an object with task_id, trial and reward")
            continue
        task = task_id_of(record.get("task_id"))
        if task is None:
            problems.add(f"{where}.task_id: expected a string or integer")
            continue
        passed = _reward_passed(record.get("reward"))
        if passed is None:
            problems.add(f"{where}.reward: {_reward_problem(record.get('reward'))}")
            continue
        trial = record.get("trial")
        if trial is not None and (isinstance(trial, bool) or not isinstance(trial, int)):
            problems.add(f"{where}.trial: expected an integer")
            continue
        tally.add_run(where, task, passed, run=trial)


#: τ²-bench's termination reason for a simulation that failed for reasons
#: outside the agent (it is left out of n and counted as excluded).
TAU2_INFRASTRUCTURE_ERROR = "infrastructure_error"


def read_tau2_bench(source: Source, tally: Tally, doc: Any = None) -> None:
    """τ²-bench: results.json with simulations[] (task_id, trial, reward_info.reward)."""
    problems = tally.problems
    path = source.path
    if doc is None:
        doc = load_json_document(path, problems)
        if doc is None:
            return
    sims = doc.get("simulations") if isinstance(doc, dict) else None
    key = "simulations"
    if sims is None and isinstance(doc, dict) and isinstance(doc.get("simulation_index"), list):
        # The split layout keeps one summary per simulation in simulation_index.
        sims, key = doc["simulation_index"], "simulation_index"
    if not isinstance(sims, list):
        problems.add(f"{path}: simulations: expected a list of simulation records")
        return
    if not sims:
        problems.add(f"{path}: simulations: the list is empty: no runs to count")
        return
    model = _tau2_model(doc)
    suite = _tau2_domain(doc)
    for i, sim in enumerate(sims):
        where = f"{path}: {key}[{i}]"
        if problems.truncated:  # not `full`: see read_jsonl
            return
        if not isinstance(sim, dict):
            problems.add(f"{where}: expected an object")
            continue
        task = task_id_of(sim.get("task_id"))
        if task is None:
            problems.add(f"{where}.task_id: expected a string or integer")
            continue
        trial = sim.get("trial")
        if trial is not None and (isinstance(trial, bool) or not isinstance(trial, int)):
            problems.add(f"{where}.trial: expected an integer")
            continue
        if sim.get("termination_reason") == TAU2_INFRASTRUCTURE_ERROR:
            tally.add_run(where, task, None, run=trial, suite=suite, model=model)
            continue
        if key == "simulation_index":
            reward, field_name = sim.get("reward"), "reward"
        else:
            info = sim.get("reward_info")
            reward = info.get("reward") if isinstance(info, dict) else None
            field_name = "reward_info.reward"
        passed = _reward_passed(reward)
        if passed is None:
            problems.add(f"{where}.{field_name}: {_reward_problem(reward)}")
            continue
        tally.add_run(where, task, passed, run=trial, suite=suite, model=model)


def _tau2_model(doc: dict[str, Any]) -> str | None:
    info = doc.get("info")
    agent = info.get("agent_info") if isinstance(info, dict) else None
    llm = agent.get("llm") if isinstance(agent, dict) else None
    return llm if isinstance(llm, str) and llm.strip() else None


def _tau2_domain(doc: dict[str, Any]) -> str | None:
    info = doc.get("info")
    env = info.get("environment_info") if isinstance(info, dict) else None
    domain = env.get("domain_name") if isinstance(env, dict) else None
    return domain if isinstance(domain, str) and domain.strip() else None


# ---------------------------------------------------------------- dispatch


Reader = Callable[[Source, Tally], None]


def _readers() -> dict[str, Reader]:
    from .inspect import read_inspect

    return {
        "jsonl": read_jsonl,
        "yaml": read_yaml,
        "tau-bench": read_tau_bench,
        "tau2-bench": read_tau2_bench,
        "inspect": read_inspect,
    }


def detect_format(path: Path) -> str | None:
    """Guess a file's format from its name and first bytes; None when unsure."""
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return "inspect"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".jsonl":
        return "jsonl"
    with path.open("rb") as handle:
        head = handle.read(64 * 1024)
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if head.startswith(b"PK\x03\x04"):
        return "inspect"
    if head.startswith(b"["):
        return "tau-bench"
    if head.startswith(b"{"):
        first_line = head.split(b"\n", 1)[0]
        if b'"passed"' in first_line and (b'"task"' in first_line or b'"task_id"' in first_line):
            return "jsonl"
        if b'"simulations"' in head or b'"simulation_index"' in head:
            return "tau2-bench"
        if b'"eval"' in head and (b'"samples"' in head or b'"results"' in head):
            return "inspect"
        return "tau2-bench" if b'"tasks"' in head and b'"info"' in head else None
    if suffix == ".json":
        return None
    return None


def load_source(source: Source, problems: Problems) -> tuple[str | None, list[ResultSet]]:
    """Read one file. Returns the format used (None if unreadable) and its result sets."""
    path = source.path
    if not path.exists():
        problems.add(f"{path}: no such file")
        return None, []
    if path.is_dir():
        problems.add(f"{path}: is a directory; give the result file inside it")
        return None, []
    if not os.access(path, os.R_OK):
        problems.add(f"{path}: cannot be read (permission denied)")
        return None, []
    special = not_regular(path)
    if special is not None:
        problems.add(f"{path}: {special}")
        return None, []
    if path.stat().st_size == 0:
        problems.add(f"{path}: the file is empty: no runs to count")
        return None, []
    name = source.format
    if name is None:
        name = detect_format(path)
        if name is None:
            # Name both ways to set it: the config key and the command-line flag.
            problems.add(
                f"{path}: cannot tell the format; set format: (or --input-format) "
                f"to one of {', '.join(FORMATS)}"
            )
            return None, []
    elif name not in FORMATS:
        problems.add(
            f"{path}: unknown format {name!r}{_did_you_mean(name, FORMATS)}; "
            f"known formats: {', '.join(FORMATS)}"
        )
        return None, []
    tally = Tally(source, problems)
    before = len(problems.items)
    _readers()[name](source, tally)
    if len(problems.items) > before:
        return name, []
    sets = tally.result_sets(name, source.suite, source.model)
    if not sets or not any(rs.tasks for rs in sets):
        problems.add(f"{path}: no tasks found")
    return name, sets


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
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
    )
    return f"is {kind}, not a regular file; save its contents to a file first"


@dataclass
class Loaded:
    result_sets: list[ResultSet]
    #: (path, format) for each file read, in order: the build reports what it detected.
    formats: list[tuple[str, str]]


def load_sources(sources: list[Source]) -> Loaded:
    """Read every source; merge result sets that share (suite, model); raise all problems."""
    problems = Problems()
    merged: dict[tuple[str, str], ResultSet] = {}
    formats: list[tuple[str, str]] = []
    for source in sources:
        format_name, sets = load_source(source, problems)
        if format_name is not None:
            formats.append((str(source.path), format_name))
        for rs in sets:
            key = (rs.suite, rs.model)
            if key not in merged:
                merged[key] = rs
                continue
            _merge(merged[key], rs, problems)
    problems.raise_if_any()
    if not merged:
        raise UserError("no result sets to report")
    for rs in merged.values():
        if not rs.evaluated_tasks:
            raise UserError(
                f"{', '.join(rs.sources)}: result set {rs.name!r} has no evaluated runs "
                f"(all {rs.excluded_runs} runs were excluded)"
            )
    return Loaded(result_sets=list(merged.values()), formats=formats)


def _merge(into: ResultSet, extra: ResultSet, problems: Problems) -> None:
    known = {t.id: t for t in into.tasks}
    for task in extra.tasks:
        if task.id in known:
            problems.add(
                f"{extra.sources[0]}: task {task.id!r} of {into.name!r} is also in "
                f"{into.sources[0]}; give each task's runs in one file"
            )
            continue
        into.tasks.append(task)
    into.sources.extend(extra.sources)
