"""The `Tally` every reader fills, which groups runs into result sets and checks them.

The rest of the reader contract: the input `Source` (source.py) and the `Reader` each
format module defines (reader.py). The field checks readers share are in fields.py,
document loading in documents.py.
"""

from __future__ import annotations

import math
import os
from array import array
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..counts import (
    EXCLUDED,
    FAIL,
    NAMED_BY_FILE_CONTENT,
    NAMED_BY_FILE_NAME,
    NAMED_BY_FOLDER,
    PASS,
    ResultSet,
    TaskCounts,
    condition_key,
)
from ..errors import Problems
from .fields import unprintable
from .source import Source

#: A result set's identity in the Tally: (suite, model, condition), "" for none.
GroupKey = tuple[str, str, str]


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
        "counted_at",
        "counts_only",
        "detail",
        "measures",
        "notes",
        "ordered",
        "positions",
        "refused_runs",
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
        #: With counts_only: where they were given, for the message if runs follow,
        #: and whether that message was said (once a task).
        self.counted_at = ""
        self.refused_runs = False
        #: Per-run measures by name, one value per run in `codes` (NaN where a run has
        #: none); None until a run of the task records one.
        self.measures: dict[str, array[float]] | None = None
        #: With counts_only: `codes` holds the runs already in run order (a table
        #: grouped by DuckDB); without it the task has no run-by-run record.
        self.ordered = False


def _add_measures(tally: _TaskTally, values: dict[str, float]) -> None:
    """One run's measures, before its code is appended: every column grows by one, and
    a measure first seen now starts with NaN for the task's earlier runs."""
    columns = tally.measures
    if columns is None:
        columns = tally.measures = {}
    for name in values:
        if name not in columns:
            columns[name] = array("d", [math.nan]) * len(tally.codes)
    for name, column in columns.items():
        column.append(values.get(name, math.nan))


class Tally:
    """Groups runs by (suite, model, condition) and task for one source file, checking
    as it goes.

    A run's position is where it was read: a line number (turned into "file:line"
    by `locate`) or a ready-made location string such as a key path.
    """

    def __init__(self, source: Source, problems: Problems) -> None:
        self.source = source
        self.problems = problems
        self.groups: dict[GroupKey, dict[str, _TaskTally]] = {}
        #: Each group's (suite, model) origins: NAMED_BY_* or a reader's own words.
        self.named_by: dict[GroupKey, dict[str, str]] = {}
        #: Each group's figures as the harness reported them (add_figure).
        self.figures: dict[GroupKey, list[tuple[str, float]]] = {}
        #: Each group's inputs (as given) that held some of its runs, in order.
        self.inputs_of: dict[GroupKey, list[str]] = {}
        self._input = ""
        self._last_group: GroupKey = ("", "", "")
        self._last_key: tuple[str | None, str | None, str | None] | None = None
        self._last_tasks: dict[str, _TaskTally] = {}
        self.locate: Callable[[int], str] = lambda n: f"{source.path}:{n}"
        #: Added to line numbers by line-based readers, so that in a folder of files
        #: each line number also says which file it is in (see start_file).
        self.line_base = 0
        self._files: list[Path] = []
        #: How many files this tally reads, across every input given (read_inputs).
        self.file_count = 1
        #: Each group's names that the config or command line replaced ("model" ->
        #: the files' models, "" for none): more than one were pooled in the group.
        self.given: dict[GroupKey, dict[str, set[str]]] = {}
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
        condition: str | None = None,
    ) -> None:
        """While held, the checks that adding would make of names, made now: a file whose
        names no page can show is then skipped like any other unreadable file."""
        named = (("task id", task), ("suite", suite), ("model", model), ("condition", condition))
        for what, text in named:
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
        self,
        suite: str | None,
        model: str | None,
        position: int | str,
        condition: str | None = None,
        given: Mapping[str, Iterable[str | None]] | None = None,
    ) -> dict[str, _TaskTally]:
        # The config's (or the command line's) suite, model and condition win over the
        # file's; the file's or folder's name is the last resort for the suite.
        # `given`: where the names were replaced already (SQL groups so), the file's own.
        own = {"suite": [suite], "model": [model], "condition": [condition]}
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
        condition = condition_key(self.source.condition or condition)
        key = self._last_group = (suite, model or "", condition)
        self._note_given(key, own if given is None else given)
        inputs = self.inputs_of.setdefault(key, [])
        if self._input not in inputs:
            inputs.append(self._input)
        tasks = self.groups.get(key)
        if tasks is None:
            tasks = self.groups[key] = {}
            self.named_by[key] = {"suite": suite_by, "model": model_by}
            for what, name in zip(("suite", "model", "condition"), key, strict=True):
                self._check_text(position, what, name)
        return tasks

    def _note_given(self, key: GroupKey, names: Mapping[str, Iterable[str | None]]) -> None:
        """Names a file gave for a suite, model or condition that the config or the
        command line replaces: the group's set warns when they were more than one."""
        for what, given in names.items():
            if getattr(self.source, what):
                noted = self.given.setdefault(key, {}).setdefault(what, set())
                for name in given:
                    noted.add((condition_key(name) if what == "condition" else name) or "")

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
        measures: dict[str, float] | None = None,
        condition: str | None = None,
    ) -> None:
        """One run; `note` says why it was not evaluated (passed None), where known;
        `measures` what else it recorded (counts.MEASURES), already checked; `condition`
        the perturbation it was made under, if any."""
        if self._held is not None:
            self._check_held(position, task, suite, model, category, condition)
            args = (position, task, passed, suite, model, run, category, url, note, measures)
            self._held.append((self.add_run, args, {"condition": condition}))
            return
        # Runs of one group usually come in a row: reuse the last one.
        if self._last_key == (suite, model, condition):
            tasks = self._last_tasks
        else:
            tasks = self._last_tasks = self._tasks(suite, model, position, condition)
            self._last_key = (suite, model, condition)
        tally = tasks.get(task)
        if tally is None:
            tally = tasks[task] = _TaskTally()
            self._check_text(position, "task id", task)
        elif tally.counts_only is not None:
            # Counted already (a file of counts, or a table grouped in DuckDB): a run
            # added now would not be counted. Said once, as add_counts says it.
            if not tally.refused_runs:
                self.problems.add(_given_twice(self.where(position), task, tally.counted_at))
                tally.refused_runs = True
            return
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
        if measures or tally.measures is not None:
            _add_measures(tally, measures or {})
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
        condition: str | None = None,
        given: Mapping[str, Iterable[str | None]] | None = None,
    ) -> None:
        """A task given as counts only (the YAML suite file): no runs, no run order.
        `given`: the file's own names where those passed were replaced already."""
        if self._held is not None:
            self._check_held(where, task, suite, model, category, condition)
            kwargs = {
                "suite": suite,
                "model": model,
                "category": category,
                "excluded": excluded,
                "condition": condition,
                "given": given,
            }
            self._held.append((self.add_counts, (where, task, successes, runs), kwargs))
            return
        tasks = self._tasks(suite, model, where, condition, given)
        if task in tasks:
            # Two files of a folder (or two entries) stating one task's counts, or
            # counts after runs of it.
            self.problems.add(_given_twice(where, task, tasks[task].counted_at))
            return
        tally = tasks[task] = _TaskTally()
        self._check_text(where, "task id", task)
        if category is not None:
            self._check_text(where, "category", category)
        tally.category = category
        tally.counts_only = (successes, runs, excluded)
        tally.counted_at = where

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
        measures: dict[str, bytes] | None = None,
        condition: str | None = None,
        given: Mapping[str, Iterable[str | None]] | None = None,
    ) -> None:
        """A task whose runs were counted and put in run order elsewhere (a table
        grouped in DuckDB): its (successes, evaluated runs, excluded runs) and its
        run codes, one byte per run, so the task page can still draw the runs; and
        its measures, packed as TaskCounts keeps them; `given`, the file's own names
        where the config's or command line's were put in their place in SQL."""
        if self._held is not None:
            self._check_held(where, task, suite, model, category, condition)
            kwargs = {
                "suite": suite,
                "model": model,
                "category": category,
                "urls": urls,
                "measures": measures,
                "condition": condition,
                "given": given,
            }
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
            condition=condition,
            given=given or {},
        )
        tally = self._tasks(suite, model, where, condition, {})[task]
        tally.codes = bytearray(codes)
        tally.ordered = True
        tally.urls = urls or {}
        if measures:
            tally.measures = {}
            for name, packed in measures.items():
                tally.measures[name] = column = array("d")
                column.frombytes(packed)

    def result_sets(self, format_name: str) -> list[ResultSet]:
        """One result set per (suite, model, condition) read, each naming the inputs
        that held it."""
        sets = []
        for key, tasks in self.groups.items():
            suite_name, model_name, condition = key
            counted = [self._counts(task_id, tally) for task_id, tally in tasks.items()]
            sets.append(
                ResultSet(
                    suite=suite_name,
                    model=model_name,
                    condition=condition,
                    name=self.source.name or _default_name(suite_name, model_name, condition),
                    format=format_name,
                    sources=list(self.inputs_of[key]),
                    tasks=counted,
                    named_by=dict(self.named_by[key]),
                    pooled={
                        what: sorted(names)
                        for what, names in self.given.get(key, {}).items()
                        if len(names) > 1
                    },
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
                measures=_packed(tally.measures, None),
            )
        codes = bytes(tally.codes)
        urls, notes = tally.urls, tally.notes
        order: list[int] | None = None
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
            if len(run_ids) != len(codes):
                order = None
            else:
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
            measures=_packed(tally.measures, order),
        )


def _packed(columns: dict[str, array[float]] | None, order: list[int] | None) -> dict[str, bytes]:
    """Measures as TaskCounts keeps them, in run order when the runs were sorted."""
    if not columns:
        return {}
    if order is None:
        return {name: column.tobytes() for name, column in columns.items()}
    return {
        name: array("d", [column[i] for i in order]).tobytes() for name, column in columns.items()
    }


def _given_twice(where: str, task: str, first: str) -> str:
    # A task's counts hold all its runs: no runs or counts of it may follow.
    also = f" (first at {first})" if first else ""
    return f"{where}: task {task!r} is given more than once{also}"


def _sort_key(run: Any) -> tuple[int, Any]:
    return (0, run) if isinstance(run, int) else (1, str(run))


def _default_name(suite: str, model: str, condition: str) -> str:
    name = f"{model} · {suite}" if model else suite
    return f"{name} · {condition}" if condition else name
