"""Paired comparison of two result sets on the tasks they share.

Pure, like estimate.py: counts in, differences and intervals out; no files, no
YAML, no templates. Both sets are given as mappings from task id to
(successes, runs). Only tasks present in both sets are compared; the others
are listed (only_in_a, only_in_b), never dropped silently.

Why a paired design: when both models run the same tasks, the task-to-task
spread (easy tasks vs hard tasks) is common to both and cancels in the
per-task difference d_i = A_i - B_i. The interval for the mean difference then
depends only on the spread of d, which is usually much smaller than the spread
of either model's values. Miller (2024), "Adding Error Bars to Evals", section
on paired differences, makes the same argument for eval scores; the interval
here is the textbook paired Student-t interval over the shared tasks.

Ordering: every list of task ids (shared tasks, only_in_a, only_in_b, flipped)
is sorted by id, so the result does not depend on the order of the inputs. The
per-task table (`Comparison.ranked`) puts the biggest regressions first, by the
headline difference (the unbiased one when every shared task has k runs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import elementary
from .estimate import (
    EstimateError,
    FloatArray,
    IntArray,
    SuiteInterval,
    TaskEstimates,
    estimate_tasks,
    mean_with_t_interval,
)
from .plain import DEFAULT_CONFIDENCE, counted

Counts = Mapping[str, tuple[int, int]]
Json = dict[str, Any]

# Differences of values in [0, 1] lie in [-1, 1]; the t interval is clamped there.
_DIFFERENCE_RANGE = (-1.0, 1.0)

# Below this many shared tasks a sample correlation is too unstable to report.
_MIN_TASKS_FOR_CORRELATION = 3


@dataclass(frozen=True)
class Comparison:
    """A versus B on their shared tasks; every per-task array follows `shared`.

    plugin, unbiased and pass_rate are paired t intervals for the mean of the
    per-task differences A - B (df = shared - 1, clamped to [-1, 1]; no
    interval with one shared task). `unbiased` has estimate None when some
    shared task has fewer than k runs on either side. `correlation` is the
    Pearson correlation of the two sides' plug-in pass^k values, None when
    undefined.
    """

    k: int
    confidence: float
    shared: tuple[str, ...]
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    a: TaskEstimates
    b: TaskEstimates
    diff_plugin: FloatArray
    diff_unbiased: FloatArray
    diff_pass_rate: FloatArray
    plugin: SuiteInterval
    unbiased: SuiteInterval
    pass_rate: SuiteInterval
    correlation: float | None
    a_only_solved: tuple[str, ...]
    b_only_solved: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def headline(self) -> str:
        """The difference to lead with: the unbiased one whenever it is defined.

        A difference of plug-in means carries the difference of the two
        sides' biases, which does not cancel when their pass rates differ; the
        difference of unbiased means is unbiased for the true difference.
        """
        return "unbiased" if self.unbiased.estimate is not None else "plugin"

    @property
    def lead(self) -> SuiteInterval:
        return self.unbiased if self.headline == "unbiased" else self.plugin

    @property
    def diff_lead(self) -> FloatArray:
        """Each shared task's pass^k difference A - B by the headline estimator."""
        return self.diff_unbiased if self.headline == "unbiased" else self.diff_plugin

    @property
    def ranked(self) -> IntArray:
        """Indices into `shared`, biggest regressions (most negative diff_lead) first.
        `shared` is sorted by id, so the stable sort breaks ties by id."""
        return np.argsort(self.diff_lead, kind="stable").astype(np.int64)


def _counts_arrays(name: str, counts: Counts) -> tuple[list[str], IntArray, IntArray]:
    """Validate one side's mapping and return (sorted ids, successes, runs)."""
    if not isinstance(counts, Mapping):
        raise EstimateError(f"set {name} must map task ids to (successes, runs)")
    for task in counts:
        if not isinstance(task, str):
            raise EstimateError(f"set {name}: task ids must be strings, got {task!r}")
    ids = sorted(counts)
    successes: list[int] = []
    runs: list[int] = []
    for task in ids:
        value = counts[task]
        try:
            c, n = value
        except (TypeError, ValueError):
            raise EstimateError(
                f"set {name}, task {task!r}: expected (successes, runs), got {value!r}"
            ) from None
        for what, x in (("successes", c), ("runs", n)):
            # bool is an int subclass; True as a count is almost surely a bug upstream.
            if isinstance(x, bool) or not isinstance(x, int | np.integer):
                raise EstimateError(
                    f"set {name}, task {task!r}: {what} must be a whole number, got {x!r}"
                )
        if n < 1:
            raise EstimateError(f"set {name}, task {task!r}: runs must be at least 1, got {n}")
        if not 0 <= c <= n:
            raise EstimateError(
                f"set {name}, task {task!r}: successes must lie between 0 and runs ({n}), got {c}"
            )
        successes.append(int(c))
        runs.append(int(n))
    return ids, np.asarray(successes, dtype=np.int64), np.asarray(runs, dtype=np.int64)


def _pearson(x: FloatArray, y: FloatArray) -> float | None:
    """Sample Pearson correlation, or None when it is undefined or unstable.

    Checked with np.ptp rather than a zero variance: the mean of identical
    floats can differ from them by an ulp, which would turn a constant column
    into rounding noise with a spurious correlation.
    """
    if x.shape[0] < _MIN_TASKS_FOR_CORRELATION or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    dx = x - np.mean(x)
    dy = y - np.mean(y)
    sxx = float(elementary.dot(dx, dx))
    syy = float(elementary.dot(dy, dy))
    if sxx == 0.0 or syy == 0.0:
        return None
    # Dividing by each root separately avoids underflow of sxx * syy.
    r = float(elementary.dot(dx, dy)) / np.sqrt(sxx) / np.sqrt(syy)
    return float(min(max(r, -1.0), 1.0))


def _short_list(names: Sequence[str], limit: int = 10) -> str:
    """'a', 'b' and 3 more: quoted, as the report's other warnings quote task ids (a
    name cannot then run into the words around it)."""
    shown = ", ".join(repr(name) for name in names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def compare(
    a: Counts,
    b: Counts,
    k: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Comparison:
    """Compare result set A with B on their shared tasks (differences are A - B).

    Raises EstimateError for invalid counts or parameters, and when the two
    sets share no task.
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise EstimateError(f"k must be a whole number of at least 1, got {k!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise EstimateError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    a_ids, a_c, a_n = _counts_arrays("A", a)
    b_ids, b_c, b_n = _counts_arrays("B", b)

    b_index = {task: i for i, task in enumerate(b_ids)}
    a_keep = [i for i, task in enumerate(a_ids) if task in b_index]
    shared = tuple(a_ids[i] for i in a_keep)
    if not shared:
        raise EstimateError(
            f"sets A ({len(a_ids)} tasks) and B ({len(b_ids)} tasks) share no task id; "
            "there is nothing to compare"
        )
    b_keep = [b_index[task] for task in shared]
    shared_set = set(shared)
    only_in_a = tuple(task for task in a_ids if task not in shared_set)
    only_in_b = tuple(task for task in b_ids if task not in shared_set)

    ea = estimate_tasks(a_c[a_keep], a_n[a_keep], int(k), confidence)
    eb = estimate_tasks(b_c[b_keep], b_n[b_keep], int(k), confidence)
    diff_plugin = ea.plugin - eb.plugin
    # NaN on either side (k > n) propagates: the difference is undefined too.
    diff_unbiased = ea.unbiased - eb.unbiased
    diff_pass_rate = ea.pass_rate - eb.pass_rate

    solved_a = ea.successes == ea.runs
    solved_b = eb.successes == eb.runs
    a_only_solved = tuple(shared[i] for i in np.flatnonzero(solved_a & ~solved_b))
    b_only_solved = tuple(shared[i] for i in np.flatnonzero(solved_b & ~solved_a))

    warnings: list[str] = []
    for side, names in (("A", only_in_a), ("B", only_in_b)):
        if names:
            warnings.append(
                f"{counted(len(names), 'task appears', 'tasks appear')} only in {side}, left out "
                f"of the comparison: {_short_list(names)}"
            )
    short = [shared[i] for i in np.flatnonzero((ea.runs < k) | (eb.runs < k))]
    if short:
        warnings.append(
            f"the unbiased pass^{k} difference is undefined (null) because "
            f"{counted(len(short), 'shared task has', 'shared tasks have')} fewer than k = {k} "
            f"runs on at least one side: {_short_list(short)}"
        )
    if len(shared) < 2:
        warnings.append(
            "one shared task only: the paired interval needs at least two shared tasks (null)"
        )
    correlation = _pearson(ea.plugin, eb.plugin)
    if correlation is None:
        reason = (
            f"fewer than {_MIN_TASKS_FOR_CORRELATION} shared tasks"
            if len(shared) < _MIN_TASKS_FOR_CORRELATION
            else "one side's plug-in values do not vary across tasks"
        )
        warnings.append(f"the correlation between A and B is undefined (null): {reason}")

    return Comparison(
        k=int(k),
        confidence=float(confidence),
        shared=shared,
        only_in_a=only_in_a,
        only_in_b=only_in_b,
        a=ea,
        b=eb,
        diff_plugin=diff_plugin,
        diff_unbiased=diff_unbiased,
        diff_pass_rate=diff_pass_rate,
        plugin=mean_with_t_interval(diff_plugin, confidence, clamp=_DIFFERENCE_RANGE),
        unbiased=mean_with_t_interval(diff_unbiased, confidence, clamp=_DIFFERENCE_RANGE),
        pass_rate=mean_with_t_interval(diff_pass_rate, confidence, clamp=_DIFFERENCE_RANGE),
        correlation=correlation,
        a_only_solved=a_only_solved,
        b_only_solved=b_only_solved,
        warnings=tuple(warnings),
    )


# ---------------------------------------------------------------- JSON
