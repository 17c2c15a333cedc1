"""The data model every stage shares: per-task counts and result sets.

Readers fill it, the statistics read its counts, and the task pages read the
run order kept in `codes`.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: Run outcome codes, one byte per run: compact enough for millions of runs.
PASS, FAIL, EXCLUDED = 1, 0, 2
#: The most runs one task may have. Larger counts (in a YAML suite, a history or a
#: report) overflowed numpy's 64-bit integers with a traceback; no eval runs a
#: task a billion times.
MAX_COUNT = 10**9


#: What a run may record beside its outcome, in the order pages list them: its cost
#: (in the harness's currency, usually US dollars), its wall time in seconds, the
#: tokens it used, and the agent's own confidence that it passed, in [0, 1].
MEASURES = ("cost", "duration", "tokens", "confidence")

#: The condition of runs made as the suite stands, unperturbed. Runs that name no
#: condition are baseline runs too: both are stored as "" and shown as this word.
BASELINE = "baseline"


def condition_key(condition: str | None) -> str:
    """A run's condition as result sets key it: "" for the baseline (none, or "baseline")."""
    return "" if condition is None or condition == BASELINE else condition


def whole_number(text: str) -> int | None:
    """ASCII digits and nothing else, as an int; None for anything else.

    str.isdigit() alone also takes "²", which int() refuses. More than 18 digits
    reads as 10**18, above every count reportgen accepts, without an int() of
    thousands of digits (which Python refuses too).
    """
    if not text.isascii() or not text.isdigit():
        return None
    return int(text) if len(text) <= 18 else 10**18


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
    #: Why a run was not evaluated, by position in the run order, where the harness
    #: says ("never graded: test_timeout; log runs/.../sessions"), for the task page.
    notes: dict[int, str] = field(default_factory=dict)
    #: What the task asks, shortened, where the harness records it (an Inspect
    #: sample's input), shown beside its id.
    detail: str | None = None
    #: Per-run measures (MEASURES) in run order, one 8-byte float per run of `codes`
    #: (NaN where that run did not record it), packed like `codes`: a million runs
    #: take 8 MB a measure. Only the measures some run of the task recorded.
    measures: dict[str, bytes] = field(default_factory=dict)

    def measure(self, name: str) -> array[float] | None:
        """One measure's values in run order (NaN where missing), or None."""
        packed = self.measures.get(name)
        if packed is None:
            return None
        values = array("d")
        values.frombytes(packed)
        return values

    @property
    def outcomes(self) -> list[bool | None] | None:
        """The runs as True (passed), False (failed) or None (not evaluated)."""
        if self.codes is None:
            return None
        return [None if code == EXCLUDED else code == PASS for code in self.codes]


#: Where a result set's suite or model came from (ResultSet.named_by), when not from
#: a field of the file (a reader names the field with Tally.named_from), the config or
#: the command line. The folder's or file's name is a guess: the set page says so.
NAMED_BY_FILE_CONTENT = "the file"
NAMED_BY_FOLDER = "the folder's name"
NAMED_BY_FILE_NAME = "the file's name"
GUESSES = frozenset({NAMED_BY_FOLDER, NAMED_BY_FILE_NAME})


@dataclass
class ResultSet:
    """The tasks of one (suite, model, condition) read from one or more files."""

    suite: str
    model: str
    name: str
    format: str
    sources: list[str]
    tasks: list[TaskCounts]
    #: Where the suite and the model were taken from ("suite" and "model" -> NAMED_BY_*,
    #: a field of the file, or the config), so that a page can say which are guesses.
    named_by: dict[str, str] = field(default_factory=dict)
    #: Figures the harness itself reported for these runs, as (what and where, value):
    #: ("accuracy (runs/x/results.json)", 0.2625), to set beside reportgen's own.
    figures: list[tuple[str, float]] = field(default_factory=list)
    #: The condition the runs were made under: "" for the baseline, else a
    #: perturbation's name ("typos"). Sets differing only here are compared for
    #: robustness, never pooled.
    condition: str = ""
    #: Names the files gave that the config or the command line replaced with one
    #: ("model" -> ["A", "B"]; "" for runs that gave none): runs of each were pooled.
    pooled: dict[str, list[str]] = field(default_factory=dict)

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

    @property
    def identity(self) -> tuple[str, str, str]:
        """What tells result sets apart: (suite, model, condition)."""
        return (self.suite, self.model, self.condition)

    def counts_by_task(self) -> dict[str, tuple[int, int]]:
        """{task id: (successes, evaluated runs)} of the evaluated tasks: what every
        comparison and plan is made from."""
        return {t.id: (t.successes, t.runs) for t in self.evaluated_tasks}


def identity(rs: dict[str, Any]) -> tuple[str, str, str]:
    """A result set of a report.json or a history line as sets are matched, like
    ResultSet.identity: by suite, model and condition (files written before conditions
    have none: the baseline)."""
    return (rs["suite"], rs["model"], condition_key(rs.get("condition")))


def naming_note(rs: ResultSet) -> str | None:
    """Where the set's names come from, for its page: "Model from eval.model in the
    files; suite from the folder's name, a guess: ...". None when the user named both
    (in the config or on the command line), or nothing is known of either."""
    given = ("the config", "the command line")
    if all(rs.named_by.get(what) in given for what in ("model", "suite")):
        return None
    parts = []
    for what, flag in (("model", "--model"), ("suite", "--suite")):
        named_by = rs.named_by.get(what)
        if not named_by:
            continue
        if named_by in GUESSES:
            parts.append(
                f"{what} from {named_by}, a guess: the files do not name it ({what}: in the "
                f"config or {flag} names it)"
            )
        elif named_by in (*given, NAMED_BY_FILE_CONTENT):
            parts.append(f"{what} from {named_by}")
        else:
            parts.append(f"{what} from {named_by} in the files")
    if not parts:
        return None
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def naming_guesses(rs: ResultSet) -> Iterator[str]:
    """A warning when the set's model is a guess from a folder's name (a harness's job
    that names no agent or model): runs are grouped by it, so it must be said. A suite
    named after its input is only shown on the page: it splits no agent's runs."""
    for what, given in rs.pooled.items():
        none = BASELINE if what == "condition" else f"no {what}"
        shown = ", ".join(repr(name) if name else none for name in given[:4])
        more = f" and {len(given) - 4} more" if len(given) > 4 else ""
        name = getattr(rs, what) or BASELINE
        where = rs.named_by.get(what, "the config or the command line")
        yield (
            f"the {what} {name!r} from {where} stands for {len(given)} {what}s the files "
            f"name ({shown}{more}): their runs are pooled in this set; leave the {what} to "
            "the files to keep them apart"
        )
    named_by = rs.named_by.get("model")
    if named_by in GUESSES:
        yield (
            f"the model {rs.model!r} takes {named_by}, since the files do not name the "
            "model: each such folder is taken as one agent; name it with model: in the "
            "config or --model to read several as one"
        )
