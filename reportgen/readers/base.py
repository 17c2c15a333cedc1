"""What every reader shares: the input `Source`, the `Tally` that groups runs
into result sets and checks them, and the field checks and JSON helpers.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..counts import (
    EXCLUDED,
    FAIL,
    NAMED_BY_FILE_CONTENT,
    NAMED_BY_FILE_NAME,
    NAMED_BY_FOLDER,
    PASS,
    ResultSet,
    TaskCounts,
)
from ..errors import Problems
from ..limits import (
    MAX_DOCUMENT_BYTES,
    MAX_YAML_BYTES,
    JsonPlan,
    JsonProblem,
    MiB,
    TooLarge,
    check_json_values,
    check_size,
    load_yaml,
    plan_json,
    read_limited,
)

#: The values of the `errors:` setting (and --errors).
ERROR_CHOICES = ("exclude", "fail")


@dataclass(frozen=True)
class Source:
    """One input file and how to read it (from the config or the command line)."""

    path: Path
    format: str | None = None
    suite: str | None = None
    model: str | None = None
    name: str | None = None
    scorer: str | None = None
    #: The scorer came from --scorer, which names one for every input: an input
    #: whose format has no scorers ignores it (one given for the set itself is an error).
    scorer_from_flag: bool = False
    #: What a run that ended in an error counts as, for the formats that record errors
    #: apart from failures: "exclude" (the default: left out of n and counted as
    #: excluded) or "fail".
    errors: str | None = None
    #: Table columns by what they hold, e.g. (("task", "instance_id"),): `columns:`
    #: in the config or --columns; a tuple of pairs so a Source stays hashable.
    columns: tuple[tuple[str, str], ...] = ()
    #: The score a run needs to pass, for formats that give a score (Harbor's
    #: reward, a table's score column).
    threshold: float | None = None
    #: The threshold came from --threshold, for every input: as scorer_from_flag.
    threshold_from_flag: bool = False
    #: Where `suite` and `model` were given: in the config, or on the command line.
    named_in: tuple[str, str] = ("the config", "the config")
    #: A file that cannot be read is listed and left out (--skip-unreadable), instead
    #: of stopping the build.
    skip_unreadable: bool = False

    @property
    def error_outcome(self) -> bool | None:
        """What a run that ended in an error counts as: None (excluded) or False."""
        return False if self.errors == "fail" else None


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


#: File names that say what a file is, not which suite it holds: a file given alone
#: with one of these is named after its folder ("results.json" is no suite's name).
GENERIC_STEMS = frozenset(
    {"results", "result", "report", "output", "outputs", "eval", "evals", "log", "logs", "runs"}
)

#: Line numbers of a folder's files are (file index << _FILE_SHIFT) + line.
_FILE_SHIFT = 40
_LINE_MASK = (1 << _FILE_SHIFT) - 1


class _TaskTally:
    __slots__ = (
        "category",
        "codes",
        "counts_only",
        "detail",
        "notes",
        "ordered",
        "positions",
        "run_ids",
        "urls",
    )

    def __init__(self) -> None:
        self.codes = bytearray()
        #: Run ids and where each run was read (line or record), only when runs
        #: carry ids: duplicates are found by sorting once at the end. Machine
        #: integers while they fit (8 bytes a run, not a Python object each).
        self.run_ids: array[int] | list[Any] | None = None
        self.positions: array[int] | list[Any] | None = None
        self.urls: dict[int, str] = {}
        self.notes: dict[int, str] = {}
        self.detail: str | None = None
        self.category: str | None = None
        self.counts_only: tuple[int, int, int] | None = None
        #: With counts_only: `codes` holds the runs already in run order (a table
        #: grouped by DuckDB); without it the task has no run-by-run record.
        self.ordered = False


class Tally:
    """Groups runs by (suite, model, task) for one source file, checking as it goes.

    A run's position is where it was read: a line number (turned into "file:line"
    by `locate`) or a ready-made location string such as a key path.
    """

    def __init__(self, source: Source, problems: Problems) -> None:
        self.source = source
        self.problems = problems
        self.groups: dict[tuple[str, str], dict[str, _TaskTally]] = {}
        #: Each group's (suite, model) origins: NAMED_BY_* or a reader's own words.
        self.named_by: dict[tuple[str, str], dict[str, str]] = {}
        #: Each group's figures as the harness reported them (add_figure).
        self.figures: dict[tuple[str, str], list[tuple[str, float]]] = {}
        #: Each group's inputs (as given) that held some of its runs, in order.
        self.inputs_of: dict[tuple[str, str], list[str]] = {}
        self._input = ""
        self._last_group = ("", "")
        self._last_key: tuple[str | None, str | None] | None = None
        self._last_tasks: dict[str, _TaskTally] = {}
        self.locate: Callable[[int], str] = lambda n: f"{source.path}:{n}"
        #: Added to line numbers by line-based readers, so that in a folder of files
        #: each line number also says which file it is in (see start_file).
        self.line_base = 0
        self._files: list[Path] = []
        self._read_from: dict[str, str] = {}
        self._default_suite = ("", "")
        self.start_input(source.path)
        #: While a file may yet be skipped (hold), what it adds waits here.
        self._held: list[tuple[Callable[..., None], tuple[Any, ...], dict[str, Any]]] | None
        self._held = None

    def hold(self) -> None:
        """Keep what the next file adds apart until `keep` (or `drop`, when the file turns
        out unreadable and is skipped): no run of a skipped file is counted."""
        self._held = []

    def _check_held(
        self,
        position: int | str,
        task: str,
        suite: str | None,
        model: str | None,
        category: str | None,
    ) -> None:
        """While held, the checks that adding would make of names, made now: a file whose
        names no page can show is then skipped like any other unreadable file."""
        for what, text in (("task id", task), ("suite", suite), ("model", model)):
            if text is not None:
                self._check_text(position, what, text)
        if category is not None:
            self._check_text(position, "category", category)

    def keep(self) -> None:
        held, self._held = self._held or [], None
        for method, args, kwargs in held:
            method(*args, **kwargs)

    def drop(self) -> None:
        self._held = None

    def start_input(self, path: Path) -> None:
        """The next input given (a file or a folder): the suite it falls back to is its own."""
        # A folder's whole name ("runs.v2"), a file's name without its suffix unless that
        # only says what the file is. A folder given as "." or ".." is named as the folder
        # it is (symbolic links kept).
        self._last_key = None  # the same names may fall back to another suite now
        self._input = str(path)
        folder = Path(os.path.abspath(path if path.is_dir() else path.parent))
        named = folder.name or str(path)
        if path.is_dir() or (path.stem.lower() in GENERIC_STEMS and not unprintable(named)):
            self._default_suite = (named, NAMED_BY_FOLDER)
        else:
            self._default_suite = (path.stem, NAMED_BY_FILE_NAME)

    def start_file(self, path: Path) -> None:
        """The input moves on to its next file (of a folder, or of files given one by one):
        line numbers from here on are that file's."""
        self._files.append(path)
        self.line_base = (len(self._files) - 1) << _FILE_SHIFT
        files = self._files
        self.locate = lambda n: f"{files[n >> _FILE_SHIFT]}:{n & _LINE_MASK}"
        self._read_from = {}

    def named_from(self, suite: str | None = None, model: str | None = None) -> None:
        """Where the reader found the suite and model it passes for this file, for the
        set page: a field ("info.agent_info.llm") or a convention ("the file's name,
        <model>.<run_id>.json")."""
        self._read_from = {
            what: text for what, text in (("suite", suite), ("model", model)) if text is not None
        }

    def suite_from_name(self) -> None:
        """The reader read this file's name for other things (its model and run): the
        suite falls back to the folder's name rather than to the rest of it."""
        if self._default_suite[1] == NAMED_BY_FILE_NAME and self._files:
            folder = Path(os.path.abspath(self._files[-1].parent))
            self._default_suite = (folder.name, NAMED_BY_FOLDER)
            self._last_key = None

    @property
    def fallback_suite(self) -> str:
        """The suite of runs whose file names none: the input's folder's or file's name."""
        return self._default_suite[0]

    def where(self, position: int | str) -> str:
        return position if isinstance(position, str) else self.locate(position)

    def describe_task(
        self, task: str, detail: str, suite: str | None = None, model: str | None = None
    ) -> None:
        """What a task asks (its input, shortened), kept from the first run that says;
        call after the task's first add_run."""
        if self._held is not None:
            self._held.append((self.describe_task, (task, detail, suite, model), {}))
            return
        tally = self._tasks(suite, model, "").get(task)
        if tally is not None and tally.detail is None and detail:
            tally.detail = detail

    def add_figure(
        self,
        where: str,
        label: str,
        value: float,
        suite: str | None = None,
        model: str | None = None,
    ) -> None:
        """A figure the harness itself reported for these runs ("accuracy" 0.2625 of a
        run's results.json), shown beside reportgen's so the two can be reconciled."""
        if self._held is not None:
            self._held.append((self.add_figure, (where, label, value, suite, model), {}))
            return
        self._tasks(suite, model, where)
        key = self._last_group
        self.figures.setdefault(key, []).append((f"{label} ({where})", value))

    def _tasks(
        self, suite: str | None, model: str | None, position: int | str
    ) -> dict[str, _TaskTally]:
        # The config's (or the command line's) suite and model win over the file's; the
        # file's or folder's name is the last resort.
        suite_in, model_in = self.source.named_in
        read_from = self._read_from
        if self.source.suite:
            suite, suite_by = self.source.suite, suite_in
        elif suite:
            suite_by = read_from.get("suite", NAMED_BY_FILE_CONTENT)
        else:
            suite, suite_by = self._default_suite
        if self.source.model:
            model, model_by = self.source.model, model_in
        else:
            model_by = read_from.get("model", NAMED_BY_FILE_CONTENT) if model else ""
        key = self._last_group = (suite, model or "")
        inputs = self.inputs_of.setdefault(key, [])
        if self._input not in inputs:
            inputs.append(self._input)
        tasks = self.groups.get(key)
        if tasks is None:
            tasks = self.groups[key] = {}
            self.named_by[key] = {"suite": suite_by, "model": model_by}
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
        note: str | None = None,
    ) -> None:
        """One run; `note` says why it was not evaluated (passed None), where known."""
        if self._held is not None:
            self._check_held(position, task, suite, model, category)
            args = (position, task, passed, suite, model, run, category, url, note)
            self._held.append((self.add_run, args, {}))
            return
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
        if note is not None and passed is None:
            tally.notes[len(tally.codes)] = note
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
        if self._held is not None:
            self._check_held(where, task, suite, model, category)
            kwargs = {"suite": suite, "model": model, "category": category, "excluded": excluded}
            self._held.append((self.add_counts, (where, task, successes, runs), kwargs))
            return
        tasks = self._tasks(suite, model, where)
        if task in tasks:
            # Two files of a folder (or two entries) stating one task's counts.
            self.problems.add(f"{where}: task {task!r} is given more than once")
            return
        tally = tasks[task] = _TaskTally()
        self._check_text(where, "task id", task)
        if category is not None:
            self._check_text(where, "category", category)
        tally.category = category
        tally.counts_only = (successes, runs, excluded)

    def add_task(
        self,
        where: str,
        task: str,
        counts: tuple[int, int, int],
        codes: bytes,
        *,
        suite: str | None = None,
        model: str | None = None,
        category: str | None = None,
        urls: dict[int, str] | None = None,
    ) -> None:
        """A task whose runs were counted and put in run order elsewhere (a table
        grouped in DuckDB): its (successes, evaluated runs, excluded runs) and its
        run codes, one byte per run, so the task page can still draw the runs."""
        if self._held is not None:
            self._check_held(where, task, suite, model, category)
            kwargs = {"suite": suite, "model": model, "category": category, "urls": urls}
            self._held.append((self.add_task, (where, task, counts, codes), kwargs))
            return
        self.add_counts(
            where,
            task,
            *counts[:2],
            suite=suite,
            model=model,
            category=category,
            excluded=counts[2],
        )
        tally = self._tasks(suite, model, where)[task]
        tally.codes = bytearray(codes)
        tally.ordered = True
        tally.urls = urls or {}

    def result_sets(self, format_name: str) -> list[ResultSet]:
        """One result set per (suite, model) read, each naming the inputs that held it."""
        sets = []
        for key, tasks in self.groups.items():
            suite_name, model_name = key
            counted = [self._counts(task_id, tally) for task_id, tally in tasks.items()]
            sets.append(
                ResultSet(
                    suite=suite_name,
                    model=model_name,
                    name=self.source.name or _default_name(suite_name, model_name),
                    format=format_name,
                    sources=list(self.inputs_of[key]),
                    tasks=counted,
                    named_by=dict(self.named_by[key]),
                    figures=list(self.figures.get(key, ())),
                )
            )
        return sets

    def _counts(self, task_id: str, tally: _TaskTally) -> TaskCounts:
        if tally.counts_only is not None:
            successes, runs, excluded = tally.counts_only
            if not tally.ordered:
                return TaskCounts(
                    task_id, successes, runs, excluded, tally.category, detail=tally.detail
                )
            return TaskCounts(
                task_id,
                successes,
                runs,
                excluded,
                tally.category,
                codes=bytes(tally.codes),
                urls=dict(tally.urls),
            )
        codes = bytes(tally.codes)
        urls, notes = tally.urls, tally.notes
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
                notes = {remap[i]: note for i, note in notes.items()}
        excluded = codes.count(EXCLUDED)
        return TaskCounts(
            id=task_id,
            successes=codes.count(PASS),
            runs=len(codes) - excluded,
            excluded=excluded,
            category=tally.category,
            codes=codes,
            urls=dict(urls),
            notes=dict(notes),
            detail=tally.detail,
        )


#: Characters of a harness's own error message kept in a run's note.
NOTE_CHARS = 160


def short_note(*parts: Any) -> str:
    """A run's note from the harness's words: the text parts joined with "; ", each on
    one line and cut to NOTE_CHARS, so that a traceback does not fill the page."""
    kept = []
    for part in parts:
        if isinstance(part, str) and part.strip():
            text = " ".join(part.split())
            kept.append(text if len(text) <= NOTE_CHARS else text[: NOTE_CHARS - 1] + "…")
    return "; ".join(kept)


def fraction(value: Any) -> float | None:
    """A harness's own rate (accuracy) when it is a number from 0 to 1, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value <= 1 else None


def agent_with_model(agent: Any, model: Any) -> str | None:
    """One name for what was evaluated: "terminus-2 (claude-sonnet-4-5)", so that two
    agents run with one model are never one result set; either alone when the other
    is missing (or they are the same), None when both are."""
    named = [v if isinstance(v, str) and v.strip() else None for v in (agent, model)]
    who, what = named
    if who and what and who != what:
        return f"{who} ({what})"
    return who or what


def _sort_key(run: Any) -> tuple[int, Any]:
    return (0, run) if isinstance(run, int) else (1, str(run))


def _default_name(suite: str, model: str) -> str:
    return f"{model} · {suite}" if model else suite


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


def parse_passed(value: Any) -> tuple[bool, bool | None]:
    """(ok, outcome): true/false, 1/0, or null for a run that could not be evaluated."""
    if value is None or isinstance(value, bool):
        return True, value
    if isinstance(value, int) and value in (0, 1):
        return True, value == 1
    return False, None


def is_optional_text(value: Any) -> bool:
    return value is None or (isinstance(value, str) and bool(value.strip()))


def is_http_url(value: Any) -> bool:
    return isinstance(value, str) and value.lower().startswith(("http://", "https://"))


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


def _text_keys(value: Any) -> Any:
    """A parsed document with every mapping key as text, as JSON needs them."""
    if isinstance(value, dict):
        return {str(key): _text_keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_text_keys(item) for item in value]
    return value


def describe(value: Any) -> str:
    """A value as a message quotes it: as JSON spells it (true, null, "text"), which
    is also YAML's spelling, shortened; a YAML date or other object as its text."""
    try:
        text = (
            json.dumps(value, default=str, ensure_ascii=False)
            if not isinstance(value, float) or math.isfinite(value)
            else str(value)
        )
    except RecursionError:
        text = f"a {type(value).__name__} {TOO_DEEP}"
    except (TypeError, ValueError):  # a YAML mapping with a date or a list for a key
        text = describe(_text_keys(value))
    return text if len(text) <= 40 else text[:37] + "..."


def key_text(key: Any) -> str:
    """A mapping's key as a message quotes it: 'titel', or a YAML date or number as its text."""
    return repr(key) if isinstance(key, str) else describe(key)


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


def did_you_mean(key: str, known: set[str] | tuple[str, ...]) -> str:
    import difflib

    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


describe = describe


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
    (limits.plan_json, which refuses a record or a rest beyond the limits before
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


#: How much of a file sniffing looks at.
HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Reader:
    """One input format: its name, how to recognise a file, and how to read it.

    `suffixes` settle the format by the file name alone; otherwise `sniff` looks
    at the first 64 KiB (byte-order mark and leading white space removed).
    `read` hands every run or task count to the tally, reporting problems
    through `tally.problems` with their location.
    """

    name: str
    suffixes: tuple[str, ...]
    sniff: Callable[[bytes], bool]
    read: Callable[[Source, Tally], None]
    #: One line for `reportgen formats` and the README's format table.
    summary: str
    #: For a folder input: of the files found in it that were detected as this
    #: format (sorted), the ones to read. Formats whose folders also hold summaries
    #: of the same runs (a run-level file beside per-trial files, a job summary)
    #: drop those here; by default every file is read.
    folder_files: Callable[[list[Path]], list[Path]] | None = None
    #: Whether a run may carry several scores, one of them picked with scorer:.
    scorers: bool = False
    #: Whether a run may be given as a score, which passes at threshold: or more.
    scores: bool = False
    #: Whether a file detected as this format inside a folder input is a result file,
    #: from its first 64 KiB (as for sniff). A harness's or reportgen's own YAML config
    #: beside the results is not, nor a site's history.jsonl kept there.
    in_folder: Callable[[bytes], bool] | None = None


def never(head: bytes) -> bool:
    """For formats recognised by their suffix only."""
    return False
