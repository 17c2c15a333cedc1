"""Per-task change tests: did a task's pass rate fall (or rise) beyond noise?

Pure, like the rest of stats/: counts in, a frozen result out. Each task was
run n_b times in the baseline and n_c times in the candidate; its successes are
two independent binomial samples. For each shared task two one-sided exact
tests are made, "the candidate's pass rate is lower" and "... higher", and the
tasks form a family whose error rate is controlled across them.

The test. Fisher's exact test conditions on the total successes of both sides:
under "no change", the candidate's successes then follow a hypergeometric law
(draw n_c runs from the n_b + n_c pooled runs, of which c_b + c_c passed), so
the one-sided p-value is a hypergeometric tail, exact with no approximation.
It is the default because it is fast for any counts and, being conditional,
its smallest attainable p-value is fixed by the margins alone, which allows
the screening below. Boschloo's test (scipy.stats.boschloo_exact) is offered
too: it is unconditional, uses Fisher's p-value as its statistic and maximises
over the unknown common pass rate, so it is never less powerful than Fisher's
and often more; it is also orders of magnitude slower (bench/bench_task_tests.py).

The family. Holm's step-down procedure (Holm 1979) controls the family-wise
error rate: the chance that even one unchanged task is called regressed.
Benjamini-Hochberg's step-up procedure (1995) controls the false discovery
rate instead: the expected share of false calls among the calls. Adjusted
p-values are the usual monotone ones, so "adjusted p <= level" is the decision.

Screening (Fisher only, default on). A task at 10/10 in both builds cannot
produce a small p-value whatever happens: given its margins, the most extreme
table still has p = 1. Tarone (1990) showed that hypotheses whose smallest
attainable p-value exceeds the level can be left out of the family without
losing error control, because that smallest value depends only on the margins,
which the conditional test holds fixed. Holm (or BH) then pays only for the
tasks that could have shown a change, which matters in suites near the
ceiling. Boschloo's test is unconditional, so it always tests every shared
task.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .estimate import EstimateError, FloatArray

Counts = Mapping[str, tuple[int, int]]

TESTS = ("fisher", "boschloo")
CONTROLS = ("holm", "bh")
DEFAULT_LEVEL = 0.05

#: Verdicts, from worst to best.
REGRESSED, MOVED_DOWN, UNCHANGED, MOVED_UP, IMPROVED = (
    "regressed",
    "moved down",
    "unchanged",
    "moved up",
    "improved",
)

#: Grid points Boschloo's test maximises over (scipy's default is 32).
BOSCHLOO_POINTS = 32


# ---------------------------------------------------------------- single tests


#: Tables small enough for the exact tails below: at most this many pooled runs in
#: one task, and a sum over tasks of pooled runs squared (the work of summing a
#: tail in whole numbers grows about so) of at most EXACT_BUDGET: about half a
#: second, as much as importing scipy.stats, which does the work beyond. 10,000
#: tasks of 100 runs a side fit; a build's worked examples never import it.
EXACT_MAX_POOLED = 2000
EXACT_BUDGET = 500_000_000


def _exact_sized(nb: np.ndarray, nc: np.ndarray) -> bool:
    pooled = (nb + nc).astype(np.float64)
    return pooled.size == 0 or (
        float(pooled.max()) <= EXACT_MAX_POOLED and float(np.sum(pooled * pooled)) <= EXACT_BUDGET
    )


def _hypergeometric_terms(cb: int, nb: int, cc: int, nc: int) -> tuple[list[int], int, int]:
    """C(K, x) C(N - K, n_c - x) for every x of the support, with its first x and C(N, n_c).

    Whole numbers throughout: each term comes from the previous one by exact
    integer steps, so a tail divided by C(N, n_c) is the correctly rounded p-value.
    """
    pooled, passed = nb + nc, cb + cc
    first, last = max(0, passed - nb), min(passed, nc)
    a = math.comb(passed, first)  # C(K, x)
    b = math.comb(pooled - passed, nc - first)  # C(N - K, n_c - x)
    terms = [a * b]
    for x in range(first, last):
        a = a * (passed - x) // (x + 1)
        b = b * (nc - x) // (pooled - passed - nc + x + 1)
        terms.append(a * b)
    return terms, first, math.comb(pooled, nc)


def fisher_p_values(
    baseline_successes: Sequence[int] | np.ndarray,
    baseline_runs: Sequence[int] | np.ndarray,
    candidate_successes: Sequence[int] | np.ndarray,
    candidate_runs: Sequence[int] | np.ndarray,
) -> tuple[FloatArray, FloatArray]:
    """One-sided Fisher p-values (lower, higher) that the candidate's pass rate moved.

    X, the candidate's successes, is hypergeometric given both margins:
    p_lower = P(X <= c_c), p_higher = P(X >= c_c). Assumes validated counts.
    """
    cb, nb = np.asarray(baseline_successes), np.asarray(baseline_runs)
    cc, nc = np.asarray(candidate_successes), np.asarray(candidate_runs)
    if _exact_sized(nb, nc):
        lower: list[float] = []
        higher: list[float] = []
        # The terms depend on the margins alone (both run counts and the pooled
        # successes), which many tasks share (10,000 tasks of 100 runs a side have
        # at most 201): each margin's terms are summed once, as running totals,
        # and a task's tails are read from them. Still whole numbers, so the
        # p-values are the same correctly rounded quotients.
        margins: dict[tuple[int, int, int], tuple[list[int], int, int]] = {}
        for b, m, c, n in zip(cb.tolist(), nb.tolist(), cc.tolist(), nc.tolist(), strict=True):
            found = margins.get((m, n, b + c))
            if found is None:
                terms, first, total = _hypergeometric_terms(b, m, c, n)
                found = margins[(m, n, b + c)] = (list(itertools.accumulate(terms)), first, total)
            running, first, total = found
            at = c - first
            lower.append(running[at] / total)
            higher.append((running[-1] - (running[at - 1] if at else 0)) / total)
        return np.array(lower, dtype=np.float64), np.array(higher, dtype=np.float64)
    # scipy.stats is imported here, not at the top: it takes most of a second, and
    # `reportgen estimate` reaches this module (through the history) without it.
    from scipy import stats

    pooled, passed = nb + nc, cb + cc
    low = stats.hypergeom.cdf(cc, pooled, passed, nc)
    high = stats.hypergeom.sf(cc - 1, pooled, passed, nc)
    return np.minimum(low, 1.0), np.minimum(high, 1.0)


def fisher_smallest_p_values(
    baseline_successes: Sequence[int] | np.ndarray,
    baseline_runs: Sequence[int] | np.ndarray,
    candidate_successes: Sequence[int] | np.ndarray,
    candidate_runs: Sequence[int] | np.ndarray,
) -> tuple[FloatArray, FloatArray]:
    """The smallest p-values (lower, higher) the margins allow: the tails at the support's ends."""
    cb, nb = np.asarray(baseline_successes), np.asarray(baseline_runs)
    cc, nc = np.asarray(candidate_successes), np.asarray(candidate_runs)
    if _exact_sized(nb, nc):
        lower: list[float] = []
        higher: list[float] = []
        ends: dict[tuple[int, int, int], tuple[float, float]] = {}  # by margins, as above
        for b, m, c, n in zip(cb.tolist(), nb.tolist(), cc.tolist(), nc.tolist(), strict=True):
            found = ends.get((m, n, b + c))
            if found is None:
                pooled, passed = m + n, b + c
                total = math.comb(pooled, n)
                found = ends[(m, n, passed)] = (
                    math.comb(passed, x := max(0, passed - m))
                    * math.comb(pooled - passed, n - x)
                    / total,
                    math.comb(passed, x := min(passed, n))
                    * math.comb(pooled - passed, n - x)
                    / total,
                )
            lower.append(found[0])
            higher.append(found[1])
        return np.array(lower, dtype=np.float64), np.array(higher, dtype=np.float64)
    from scipy import stats  # not at the top: see fisher_p_values

    pooled, passed = nb + nc, cb + cc
    fewest = np.maximum(0, passed - nb)
    most = np.minimum(passed, nc)
    return (
        stats.hypergeom.pmf(fewest, pooled, passed, nc),
        stats.hypergeom.pmf(most, pooled, passed, nc),
    )


def boschloo_p_values(
    baseline_successes: Sequence[int] | np.ndarray,
    baseline_runs: Sequence[int] | np.ndarray,
    candidate_successes: Sequence[int] | np.ndarray,
    candidate_runs: Sequence[int] | np.ndarray,
) -> tuple[FloatArray, FloatArray]:
    """One-sided Boschloo p-values (lower, higher), one scipy call per task and side."""
    from scipy import stats  # not at the top: see fisher_p_values

    lower, higher = [], []
    for cb, nb, cc, nc in zip(
        baseline_successes, baseline_runs, candidate_successes, candidate_runs, strict=True
    ):
        cb, nb, cc, nc = int(cb), int(nb), int(cc), int(nc)
        if cb + cc in (0, nb + nc):
            # Every run passed (or failed) on both sides: no table is more extreme,
            # and scipy's statistic is undefined there.
            lower.append(1.0)
            higher.append(1.0)
            continue
        # Columns are the two samples: candidate first, so "less" means a lower rate.
        table = np.array([[cc, cb], [nc - cc, nb - cb]])
        for side, out in (("less", lower), ("greater", higher)):
            p = stats.boschloo_exact(table, alternative=side, n=BOSCHLOO_POINTS).pvalue
            out.append(min(float(p), 1.0))
    return np.array(lower, dtype=np.float64), np.array(higher, dtype=np.float64)


# ---------------------------------------------------------------- multiplicity


def holm(p_values: Sequence[float] | np.ndarray) -> FloatArray:
    """Holm's step-down adjusted p-values: max over j <= i of (m - j + 1) p_(j), capped at 1."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return adjusted


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> FloatArray:
    """Benjamini-Hochberg step-up adjusted p-values: min over j >= i of m p_(j) / j, capped at 1."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = m * p[order] / np.arange(1, m + 1)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    return adjusted


def adjust(p_values: Sequence[float] | np.ndarray, control: str) -> FloatArray:
    if control == "holm":
        return holm(p_values)
    if control == "bh":
        return benjamini_hochberg(p_values)
    raise EstimateError(f"control must be one of {', '.join(CONTROLS)}, got {control!r}")


# ---------------------------------------------------------------- a whole family


@dataclass(frozen=True)
class TaskChange:
    """One shared task: its counts on both sides, both tests and the verdict.

    adjusted_* is None when the task was screened out of that side's family
    (its smallest attainable p-value is above the level, so it cannot count).
    """

    id: str
    baseline: tuple[int, int]
    candidate: tuple[int, int]
    p_lower: float
    p_higher: float
    adjusted_lower: float | None
    adjusted_higher: float | None
    verdict: str

    @property
    def change(self) -> float:
        """The candidate's pass rate minus the baseline's."""
        return self.candidate[0] / self.candidate[1] - self.baseline[0] / self.baseline[1]

    @property
    def p(self) -> float:
        """The one-sided p-value in the direction of the change (a rise's is of a rise;
        an unchanged task's, of a fall)."""
        return self.p_higher if self.change > 0 else self.p_lower

    @property
    def adjusted(self) -> float | None:
        """`p` adjusted across its family; None when screened out of it."""
        return self.adjusted_higher if self.change > 0 else self.adjusted_lower


@dataclass(frozen=True)
class TaskTests:
    """Every shared task tested both ways, worst first; new and gone tasks listed only."""

    test: str
    control: str
    level: float
    screened: bool
    #: A fall smaller than this (in pass rate) is not called a regression even if beyond noise.
    min_drop: float
    tasks: tuple[TaskChange, ...]
    #: How many tasks each family held (after screening).
    family_lower: int
    family_higher: int
    only_in_candidate: tuple[str, ...]
    only_in_baseline: tuple[str, ...]

    def with_verdict(self, *verdicts: str) -> tuple[TaskChange, ...]:
        return tuple(t for t in self.tasks if t.verdict in verdicts)

    @property
    def regressed(self) -> tuple[TaskChange, ...]:
        return self.with_verdict(REGRESSED)

    @property
    def improved(self) -> tuple[TaskChange, ...]:
        return self.with_verdict(IMPROVED)

    @property
    def moved(self) -> tuple[TaskChange, ...]:
        return self.with_verdict(MOVED_DOWN, MOVED_UP)

    @property
    def changed(self) -> tuple[TaskChange, ...]:
        """Every task whose pass rate differs, worst first."""
        return tuple(t for t in self.tasks if t.verdict != UNCHANGED)

    @property
    def calls_first(self) -> tuple[TaskChange, ...]:
        """The changed tasks in the order a table reads best: the falls called
        regressed, the rises called improved, then the changes within noise (down,
        then up), each group by the p-value in its own direction, smallest first.

        `changed` ranks on the p-value of a fall alone, so the clearest rise came
        last, below every change within noise.
        """
        group = {REGRESSED: 0, IMPROVED: 1, MOVED_DOWN: 2, MOVED_UP: 3}

        def key(t: TaskChange) -> tuple[int, float, float, tuple[tuple[int, int, str], ...]]:
            return group[t.verdict], t.p, -abs(t.change), natural_key(t.id)

        return tuple(sorted(self.changed, key=key))


def _family(
    p: FloatArray, smallest: FloatArray | None, level: float, control: str
) -> tuple[list[float | None], int]:
    members = np.ones(p.size, dtype=bool) if smallest is None else smallest <= level
    adjusted: list[float | None] = [None] * p.size
    if members.any():
        values = adjust(p[members], control)
        for position, value in zip(np.flatnonzero(members), values, strict=True):
            adjusted[int(position)] = float(value)
    return adjusted, int(members.sum())


def task_tests(
    ids: Sequence[str],
    baseline: tuple[Sequence[int] | np.ndarray, Sequence[int] | np.ndarray],
    candidate: tuple[Sequence[int] | np.ndarray, Sequence[int] | np.ndarray],
    level: float = DEFAULT_LEVEL,
    test: str = "fisher",
    control: str = "holm",
    screen: bool = True,
    min_drop: float = 0.0,
    only_in_candidate: Sequence[str] = (),
    only_in_baseline: Sequence[str] = (),
) -> TaskTests:
    """Test each task (ids[i]: baseline (c, n) vs candidate (c, n)) both ways.

    A task regressed when its adjusted "lower" p-value is at most `level` and its
    pass rate fell by at least `min_drop`; improved likewise upwards; otherwise it
    moved (its pass rate differs) or is unchanged. Tasks come worst first: by
    the "lower" p-value, then the change, then id.
    """
    if test not in TESTS:
        raise EstimateError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if control not in CONTROLS:
        raise EstimateError(f"control must be one of {', '.join(CONTROLS)}, got {control!r}")
    if not 0 < level < 1:
        raise EstimateError(f"level must lie strictly between 0 and 1, got {level}")
    if not 0 <= min_drop <= 1:
        raise EstimateError(f"min_drop must lie between 0 and 1, got {min_drop}")
    cb, nb = (np.asarray(v, dtype=np.int64) for v in baseline)
    cc, nc = (np.asarray(v, dtype=np.int64) for v in candidate)
    if not len(ids) == cb.size == nb.size == cc.size == nc.size:
        raise EstimateError("every task needs counts on both sides")
    if cb.size and (
        (nb < 1).any() or (nc < 1).any() or (cb < 0).any() or (cc < 0).any()
        or (cb > nb).any() or (cc > nc).any()
    ):  # fmt: skip
        raise EstimateError("counts must satisfy 0 <= successes <= runs and runs >= 1")
    screened = screen and test == "fisher"
    if test == "fisher":
        lower, higher = fisher_p_values(cb, nb, cc, nc)
    else:
        lower, higher = boschloo_p_values(cb, nb, cc, nc)
    smallest_lower = smallest_higher = None
    if screened:
        smallest_lower, smallest_higher = fisher_smallest_p_values(cb, nb, cc, nc)
    adjusted_lower, family_lower = _family(lower, smallest_lower, level, control)
    adjusted_higher, family_higher = _family(higher, smallest_higher, level, control)
    rows = []
    # Python ints, not numpy scalars, in the loop: the same quotients, a tenth the time.
    cbs, nbs, ccs, ncs = cb.tolist(), nb.tolist(), cc.tolist(), nc.tolist()
    lowers, highers = lower.tolist(), higher.tolist()
    for i, task_id in enumerate(ids):
        change = ccs[i] / ncs[i] - cbs[i] / nbs[i]
        down, up = adjusted_lower[i], adjusted_higher[i]
        # Both sides' decisions use rate differences computed the same way, so a
        # task equal in rate on both sides is "unchanged" even at unequal run counts.
        if down is not None and down <= level and -change >= min_drop and change < 0:
            verdict = REGRESSED
        elif up is not None and up <= level and change > 0:
            verdict = IMPROVED
        elif change < 0:
            verdict = MOVED_DOWN
        elif change > 0:
            verdict = MOVED_UP
        else:
            verdict = UNCHANGED
        rows.append(
            TaskChange(
                id=task_id,
                baseline=(cbs[i], nbs[i]),
                candidate=(ccs[i], ncs[i]),
                p_lower=lowers[i],
                p_higher=highers[i],
                adjusted_lower=down,
                adjusted_higher=up,
                verdict=verdict,
            )
        )
    rows.sort(key=lambda t: (t.p_lower, t.change, natural_key(t.id)))
    return TaskTests(
        test=test,
        control=control,
        level=level,
        screened=screened,
        min_drop=min_drop,
        tasks=tuple(rows),
        family_lower=family_lower,
        family_higher=family_higher,
        only_in_candidate=tuple(sorted(only_in_candidate, key=natural_key)),
        only_in_baseline=tuple(sorted(only_in_baseline, key=natural_key)),
    )


def shared_task_tests(
    baseline: Counts,
    candidate: Counts,
    level: float = DEFAULT_LEVEL,
    test: str = "fisher",
    control: str = "holm",
    screen: bool = True,
    min_drop: float = 0.0,
) -> TaskTests:
    """task_tests on the tasks both mappings hold; the others are listed, not tested."""
    shared = sorted(set(baseline) & set(candidate), key=natural_key)
    return task_tests(
        shared,
        ([baseline[t][0] for t in shared], [baseline[t][1] for t in shared]),
        ([candidate[t][0] for t in shared], [candidate[t][1] for t in shared]),
        only_in_candidate=[t for t in candidate if t not in baseline],
        only_in_baseline=[t for t in baseline if t not in candidate],
        level=level,
        test=test,
        control=control,
        screen=screen,
        min_drop=min_drop,
    )


def fisher_p_lower(baseline: tuple[int, int], candidate: tuple[int, int]) -> float:
    """The one-sided Fisher p-value that one task's pass rate fell: for worked examples."""
    lower, _ = fisher_p_values([baseline[0]], [baseline[1]], [candidate[0]], [candidate[1]])
    return float(lower[0])


def smallest_p_lower(baseline: tuple[int, int], candidate: tuple[int, int]) -> float:
    """The smallest p-value a fall could reach with these margins (Tarone's screen)."""
    lower, _ = fisher_smallest_p_values(
        [baseline[0]], [baseline[1]], [candidate[0]], [candidate[1]]
    )
    return float(lower[0])


_DIGIT_RUNS = re.compile(r"([0-9]+)")


@functools.lru_cache(maxsize=1 << 16)
def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort "task-2" before "task-10": runs of ASCII digits compare as numbers.

    A run is compared by its length without leading zeros, then by its digits, so a
    5,000-digit id sorts like the number it spells without converting it (Python
    refuses int() of more than 4,300 digits), and "٣" or "²" stay text.
    """
    key = []
    for part in _DIGIT_RUNS.split(text):
        if not part:
            continue
        if part[0] in "0123456789":
            digits = part.lstrip("0")
            key.append((0, len(digits), digits))
        else:
            key.append((1, 0, part))
    return tuple(key)
