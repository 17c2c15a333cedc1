"""History across builds: one JSON line per build, carried from site to site.

Each line holds, for every result set, the build's label, the per-task counts
and the headline estimates with their intervals. A build reads the previous
history (a file, or the published site's history.jsonl fetched by CI), adds or
replaces its own entry, and writes the result into the new site, so the file
is swapped in with the rest of the site only when the build is complete.

Labels never come from the wall clock (builds must be reproducible): --label,
else the commit (GITHUB_SHA or git), else SOURCE_DATE_EPOCH, else a counter.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .counts import BASELINE, MAX_COUNT, whole_number
from .counts import identity as set_identity
from .errors import Problems, UserError
from .limits import MAX_DOCUMENT_BYTES, MAX_RECORD_BYTES, TooLarge, check_size
from .readers.documents import json_loads, jsonl_lines, not_regular
from .readers.fields import unprintable

if TYPE_CHECKING:
    from .stats.compare import Comparison
    from .stats.estimate import SuiteInterval
    from .stats.task_tests import TaskTests

Json = dict[str, Any]

HISTORY_FILE = "history.jsonl"
SCHEMA_VERSION = 1


# ---------------------------------------------------------------- labels


def _git_commit(cwd: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def default_label(entries: Sequence[Json], cwd: Path) -> str:
    """The commit if known, else the pinned build time, else the next build number."""
    sha = os.environ.get("GITHUB_SHA", "").strip()
    if sha:
        # Checked as --label is: a label the next build's history check refuses would
        # be written into the published history.jsonl and stop every later build.
        problem = unprintable(sha[:7])
        if problem is not None:
            raise UserError(f"GITHUB_SHA: {sha[:7]!r} {problem}; give --label instead")
        return sha[:7]
    commit = _git_commit(cwd)
    if commit:
        return commit
    epoch = whole_number(os.environ.get("SOURCE_DATE_EPOCH", "").strip())
    if epoch is not None:
        # A moment past what datetime holds falls through to the build number.
        with contextlib.suppress(OverflowError, ValueError, OSError):
            return dt.datetime.fromtimestamp(epoch, tz=dt.UTC).strftime("%Y-%m-%d %H:%M")
    return f"build {len(entries) + 1}"


# ---------------------------------------------------------------- reading


def read_history(path: Path, flag: str = "--history") -> list[Json]:
    """Entries of a history file, oldest first; every problem names its line."""
    if not path.exists():
        return []  # the first build of a report has no history yet
    if path.is_dir():
        raise UserError(f"{flag}: {path} is a folder; give its {HISTORY_FILE}")
    special = not_regular(path)
    if special is not None:
        raise UserError(f"{flag}: {path}: {special}")
    problems = Problems()
    entries: list[Json] = []
    try:
        check_size(path, MAX_DOCUMENT_BYTES)
        # A line at a time: only the entries are kept, never the whole file, and each
        # line's values are counted before it is parsed (json_loads).
        for number, raw in jsonl_lines(path, MAX_RECORD_BYTES):
            where = f"{path}:{number}"
            if isinstance(raw, str):  # a line beyond the limit, not read
                problems.add(f"{where}: {raw}")
                continue
            try:
                entry = json_loads(raw)
            except (UnicodeDecodeError, ValueError) as error:
                problems.add(f"{where}: not a JSON history entry ({error})")
                continue
            problem = _entry_problem(entry)
            if problem and not entries and not problems.items and _is_a_run(entry):
                # A results file given as the history: one line that says so, not a
                # schema problem on every line.
                raise UserError(
                    f"{where}: this is a run of results (it has task and passed), not a "
                    f"history entry; give the published site's {HISTORY_FILE}"
                )
            if problem:
                problems.add(f"{where}: {problem}")
                continue
            entries.append(entry)
    except TooLarge as error:
        raise UserError(f"{flag}: {path}: {error}") from None
    except OSError as error:
        raise UserError(f"{flag}: {path}: cannot read ({error.strerror})") from None
    problems.raise_if_any()
    return entries


def _is_a_run(entry: Any) -> bool:
    return isinstance(entry, dict) and "passed" in entry and ("task" in entry or "task_id" in entry)


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return "expected an object with label and result_sets"
    if entry.get("schema_version") != SCHEMA_VERSION:
        return f"schema_version must be {SCHEMA_VERSION}"
    if not isinstance(entry.get("label"), str) or not entry["label"].strip():
        return "label: expected a non-empty string"
    if unprintable(entry["label"]):
        return f"label: {entry['label']!r} {unprintable(entry['label'])}"
    sets = entry.get("result_sets")
    if not isinstance(sets, list):
        return "result_sets: expected a list"
    for i, rs in enumerate(sets):
        if not isinstance(rs, dict):
            return f"result_sets[{i}]: expected an object"
        for key in ("suite", "model", "name"):
            if not isinstance(rs.get(key), str):
                return f"result_sets[{i}].{key}: expected a string"
            if unprintable(rs[key]):
                return f"result_sets[{i}].{key}: {rs[key]!r} {unprintable(rs[key])}"
        condition = rs.get("condition", "")
        if not isinstance(condition, str) or unprintable(condition) or condition == BASELINE:
            # Left out for the baseline, so histories written before conditions still match.
            return f"result_sets[{i}].condition: expected a perturbation's name"
        tasks = rs.get("tasks")
        if not isinstance(tasks, dict):
            return f"result_sets[{i}].tasks: expected an object of task id to [successes, runs]"
        if not tasks:
            # A build's result set has at least one task: no suite estimate without one.
            return f"result_sets[{i}].tasks: empty; a result set has at least one task"
        for task, counts in tasks.items():
            if unprintable(task):
                return f"result_sets[{i}].tasks: task id {task!r} {unprintable(task)}"
            ok = (
                isinstance(counts, list)
                and len(counts) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in counts)
                and 0 <= counts[0] <= counts[1]
                and 1 <= counts[1] <= MAX_COUNT
            )
            if not ok:
                return (
                    f"result_sets[{i}].tasks[{task!r}]: expected [successes, runs] "
                    f"with 0 <= successes <= runs and 1 <= runs <= {MAX_COUNT:,}"
                )
        if not isinstance(rs.get("reliability_at_k"), dict):
            return f"result_sets[{i}].reliability_at_k: missing"
        # Copied into every later history as read: each value must be what a build
        # writes (a "NaN" string was passed on verbatim).
        blocks = {f"reliability_at_k.{name}": rs["reliability_at_k"].get(name) for name in _SERIES}
        blocks["pass_rate"] = rs.get("pass_rate")
        for where, block in blocks.items():
            problem = _interval_problem(block)
            if problem:
                return f"result_sets[{i}].{where}{problem}"
        if rs["reliability_at_k"].get("headline", "plugin") not in _SERIES:
            return f"result_sets[{i}].reliability_at_k.headline: expected one of {_SERIES}"
    return None


_SERIES = ("plugin", "unbiased")


def _interval_problem(block: Any) -> str | None:
    """What is wrong with an interval as history_entry writes it (None if absent)."""
    if block is None:
        return None
    if not isinstance(block, dict):
        return ": expected an object of estimate, low, high, sd, t and df"
    for key, value in block.items():
        if value is None:
            continue
        if key == "df":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                return f".df: expected a whole number or null, not {value!r:.40}"
        elif isinstance(value, bool) or not isinstance(value, int | float):
            return f".{key}: expected a number or null, not {value!r:.40}"
        elif not math.isfinite(value):  # 1e400 is read as inf
            return f".{key}: expected a finite number or null"
    return None


# ---------------------------------------------------------------- writing


def merge(entries: list[Json], entry: Json) -> list[Json]:
    """Append `entry`, or put it in place of an earlier entry with the same label."""
    labels = [e["label"] for e in entries]
    if entry["label"] in labels:
        merged = list(entries)
        merged[labels.index(entry["label"])] = entry
        return merged
    return [*entries, entry]


def history_bytes(entries: list[Json]) -> bytes:
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entries]
    return ("\n".join(lines) + "\n").encode("utf-8")


# ---------------------------------------------------------------- trends


def task_test_level(confidence: float) -> float:
    """The level of the pages' per-task tests: one minus the report's confidence."""
    return round(1 - confidence, 12)


@dataclass(frozen=True)
class TrendPoint:
    """One build of one result set."""

    label: str
    #: The estimate the trend follows: the result set's headline in this build.
    estimator: str
    plugin: SuiteInterval
    unbiased: SuiteInterval
    pass_rate: SuiteInterval
    tasks: int
    #: Paired comparison with the previous build on shared tasks (None for the first).
    step: Comparison | None
    #: The tasks whose pass^k (of `estimator`) moved most since the previous build.
    movers: list[tuple[str, float]]
    #: Each task shared with the previous build tested for a change in pass rate.
    tests: TaskTests | None = None

    @property
    def lead(self) -> SuiteInterval:
        """reliability@k of the followed estimate (the plug-in where the other is undefined)."""
        if self.estimator == "unbiased" and self.unbiased.estimate is not None:
            return self.unbiased
        return self.plugin

    @property
    def change(self) -> SuiteInterval | None:
        """The paired change from the previous build, of the followed estimate."""
        if self.step is None:
            return None
        return self.step.unbiased if self.change_estimator == "unbiased" else self.step.plugin

    @property
    def change_estimator(self) -> str | None:
        """Which estimate `change` is of ("unbiased" or "plugin"); None for a first build."""
        if self.step is None:
            return None
        if self.estimator == "unbiased" and self.step.unbiased.estimate is not None:
            return "unbiased"
        return "plugin"

    @property
    def significant(self) -> bool:
        """The paired interval of the change from the previous build excludes zero."""
        d = self.change
        return (
            d is not None and d.low is not None and d.high is not None and (d.low > 0 or d.high < 0)
        )


def trend(
    entries: list[Json],
    identity: tuple[str, str, str],
    k: int,
    confidence: float,
    estimator: str = "unbiased",
) -> list[TrendPoint]:
    """The builds in which this (suite, model, condition) appears, oldest first, with
    their steps.

    Every number is recomputed from the stored per-task counts with this
    build's k and confidence, so a trend stays consistent when they change;
    steps and movers follow `estimator`, this build's headline.
    """
    # Here, not at the top: reading a history and naming a build need no numpy, and a
    # build that keeps the whole site does only that.
    import numpy as np

    from .stats.compare import compare
    from .stats.estimate import estimate_suite, mean_with_t_interval
    from .stats.task_tests import shared_task_tests

    points: list[TrendPoint] = []
    previous: dict[str, tuple[int, int]] | None = None
    for entry in entries:
        match = next(
            (rs for rs in entry["result_sets"] if set_identity(rs) == identity),
            None,
        )
        if match is None:
            continue
        counts = {task: (c, n) for task, (c, n) in match["tasks"].items()}
        step = None
        tests = None
        movers: list[tuple[str, float]] = []
        if previous is not None and set(previous) & set(counts):
            tests = shared_task_tests(previous, counts, level=task_test_level(confidence))
            step = compare(counts, previous, k, confidence)
            use_unbiased = estimator == "unbiased" and step.unbiased.estimate is not None
            diff = step.diff_unbiased if use_unbiased else step.diff_plugin
            order = np.argsort(-np.abs(np.nan_to_num(diff)), kind="stable")
            movers = [(step.shared[i], float(diff[i])) for i in order[:10] if diff[i] != 0]
        suite_now = estimate_suite(
            [c for c, _ in counts.values()], [n for _, n in counts.values()], k, confidence
        )
        points.append(
            TrendPoint(
                label=entry["label"],
                estimator=estimator,
                plugin=suite_now.plugin,
                unbiased=suite_now.unbiased,
                pass_rate=mean_with_t_interval(suite_now.tasks.pass_rate, confidence),
                tasks=len(counts),
                step=step,
                movers=movers,
                tests=tests,
            )
        )
        previous = counts
    return points


@dataclass(frozen=True)
class SiteHistory:
    """The history as the new site carries it."""

    label: str
    entries: list[Json]
    #: Result-set id -> its trend over the builds.
    trends: dict[str, list[TrendPoint]]


def site_history(
    previous: list[Json],
    entry: Json,
    sets: Sequence[tuple[str, tuple[str, str, str], str]],
    k: int,
    confidence: float,
) -> SiteHistory:
    """Add this build's entry to the history and work out each result set's trend.

    `sets` are (id, (suite, model, condition), headline estimator) of this build's
    result sets.
    """
    entries = merge(previous, entry)
    trends = {
        set_id: trend(entries, identity, k, confidence, estimator)
        for set_id, identity, estimator in sets
    }
    return SiteHistory(label=entry["label"], entries=entries, trends=trends)
