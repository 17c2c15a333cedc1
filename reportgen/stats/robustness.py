"""Robustness: how much of a suite's reliability survives a perturbation.

The Holistic Agent Leaderboard's reliability study (Rabanser et al., arXiv
2602.16666; princeton-pli/hal-harness, reliability_eval/metrics/robustness.py,
compute_robustness_ratio) scores a perturbation (injected faults, restructured
inputs, reworded prompts) by

    R = min(Acc_perturbed / Acc_baseline, 1),

each accuracy pooled over every (task, run) of its condition, and undefined where
the baseline's accuracy is below 1e-8. It pairs no tasks, so a perturbed run of
an easier task mix reads as robustness; the cap at 1 hides a gain and pulls an
average down; and it comes without an interval.

Here the two conditions are paired by task. Over the tasks that both evaluated
with at least k runs, with x_i and y_i the unbiased pass^k of task i under the
perturbation and at baseline,

    ratio = mean(x) / mean(y),

the perturbed reliability@k as a share of the baseline's (with k = 1, of the pass
rate), uncapped. Its interval is Fieller's: the values θ for which
mean(x) - θ mean(y) lies within t standard errors of 0, with the paired
covariance in that standard error; the ratio's counterpart of reliability@k's
Student-t interval over tasks. Where the baseline's mean is itself within t
standard errors of 0 that set is unbounded, and no bound is given. Pure: counts
in, numbers out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from . import elementary
from .bootstrap import DEFAULT_SEED
from .estimate import EstimateError, FloatArray, IntArray, t_quantile, unbiased_pass_hat_k
from .plain import DEFAULT_CONFIDENCE

#: Below this baseline accuracy HAL's ratio is undefined (its code's threshold).
HAL_MIN_BASELINE = 1e-8
#: Simulated suites when checking the interval's coverage (Monte-Carlo error at
#: 95% coverage with 2,000 suites: about +-0.005), and the most tasks they may
#: hold in all (each costs two binomial draws and two pass^k values).
RATIO_CHECK_SUITES = 2000
_CHECK_BUDGET = 4_000_000
#: The fewest suites worth reporting (coverage +-0.015 at 95%).
MIN_CHECK_SUITES = 200


def hal_robustness(
    base_successes: IntArray, base_runs: IntArray, successes: IntArray, runs: IntArray
) -> float:
    """HAL's R: pooled accuracy under the perturbation over pooled baseline accuracy,
    capped at 1; NaN where the baseline's is below HAL_MIN_BASELINE (or no run counts)."""
    base_total, total = int(np.sum(base_runs)), int(np.sum(runs))
    if base_total == 0 or total == 0:
        return math.nan
    base = int(np.sum(base_successes)) / base_total
    if base < HAL_MIN_BASELINE:
        return math.nan
    return min(int(np.sum(successes)) / total / base, 1.0)


@dataclass(frozen=True)
class RatioInterval:
    """A perturbed condition's reliability@k over the baseline's, paired by task."""

    k: int
    confidence: float
    #: The shared tasks it is over (both conditions evaluated them with k+ runs).
    tasks: int
    #: The mean pass^k over them under the perturbation, and at baseline (None
    #: without a task).
    mean: float | None
    baseline_mean: float | None
    #: mean(x) / mean(y); None where the baseline's mean is 0.
    estimate: float | None
    #: Fieller's bounds; None with fewer than two tasks, or where the interval is
    #: unbounded (the baseline's mean is within t standard errors of 0).
    low: float | None
    high: float | None

    @property
    def unbounded(self) -> bool:
        return self.tasks >= 2 and self.estimate is not None and self.low is None


@dataclass(frozen=True)
class _Fieller:
    """The quadratic a θ² - 2 b θ + c ≤ 0 whose solutions are Fieller's set (arrays:
    one per simulated suite, or 0-d for one suite)."""

    a: FloatArray
    b: FloatArray
    c: FloatArray

    def covers(self, theta: float) -> npt.NDArray[np.bool_]:
        result: npt.NDArray[np.bool_] = self.a * theta**2 - 2.0 * self.b * theta + self.c <= 0.0
        return result


def _fieller(x: FloatArray, y: FloatArray, t: float) -> _Fieller:
    """From paired values along the last axis (tasks): (x̄ - θ ȳ)² ≤ t² Var(x̄ - θ ȳ)."""
    m = x.shape[-1]
    mx, my = x.mean(axis=-1), y.mean(axis=-1)
    dx, dy = x - mx[..., None], y - my[..., None]
    # Variances and covariance of the two means (sample moments over m - 1, over m).
    scale = t * t / (m * (m - 1))
    vxx = (dx * dx).sum(axis=-1) * scale
    vyy = (dy * dy).sum(axis=-1) * scale
    vxy = (dx * dy).sum(axis=-1) * scale
    return _Fieller(a=my * my - vyy, b=mx * my - vxy, c=mx * mx - vxx)


def ratio_interval(
    perturbed: npt.ArrayLike,
    baseline: npt.ArrayLike,
    k: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> RatioInterval:
    """The ratio of means of paired per-task values (each task's pass^k under the
    perturbation and at baseline) with Fieller's interval at `confidence`."""
    x = np.asarray(perturbed, dtype=np.float64)
    y = np.asarray(baseline, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise EstimateError("the two conditions' values must pair task by task")
    m = int(x.size)
    mean_x = float(x.mean()) if m else None
    mean_y = float(y.mean()) if m else None
    estimate = mean_x / mean_y if mean_x is not None and mean_y else None
    low = high = None
    if m >= 2 and estimate is not None:
        f = _fieller(x, y, t_quantile(confidence, m - 1))
        a, b, c = float(f.a), float(f.b), float(f.c)
        if a > 0:
            # The set holds the estimate whenever a > 0, so the roots are real (a
            # negative discriminant here is rounding).
            root = math.sqrt(max(b * b - a * c, 0.0))
            low, high = max((b - root) / a, 0.0), (b + root) / a
    return RatioInterval(int(k), float(confidence), m, mean_x, mean_y, estimate, low, high)


def paired_ratio(
    base_successes: IntArray,
    base_runs: IntArray,
    successes: IntArray,
    runs: IntArray,
    k: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> RatioInterval:
    """ratio_interval of the unbiased pass^k, over the tasks (given in pairs) that have
    at least k runs in both conditions."""
    kept = (base_runs >= k) & (runs >= k)
    return ratio_interval(
        unbiased_pass_hat_k(successes[kept], runs[kept], k),
        unbiased_pass_hat_k(base_successes[kept], base_runs[kept], k),
        k,
        confidence,
    )


@dataclass(frozen=True)
class RatioCoverage:
    """How often the interval held the true ratio in simulated suites."""

    k: int
    confidence: float
    suites: int
    tasks: int
    seed: int
    #: The population's ratio: mean q^k over mean p^k of its task pairs.
    true_value: float
    #: Share of suites whose Fieller set (bounded or not) held it.
    coverage: float
    #: Mean estimate minus the truth (a ratio of means is biased by a little).
    bias: float
    #: Share of suites whose interval was unbounded.
    unbounded: float

    @property
    def monte_carlo_error(self) -> float:
        """The standard error of `coverage` from simulating finitely many suites."""
        return math.sqrt(self.coverage * (1.0 - self.coverage) / self.suites)


def check_ratio_coverage(
    base_rates: npt.ArrayLike,
    rates: npt.ArrayLike,
    base_runs: npt.ArrayLike,
    runs: npt.ArrayLike,
    tasks: int,
    k: int,
    confidence: float = DEFAULT_CONFIDENCE,
    suites: int = RATIO_CHECK_SUITES,
    seed: int = DEFAULT_SEED,
) -> RatioCoverage | None:
    """Simulate suites of `tasks` tasks, each drawn (with replacement) from a
    population of task pairs (a baseline pass rate, a perturbed one, and the runs of
    each), and count how often paired_ratio's interval holds the population's ratio.
    Seeded. Fewer suites than asked where they would cost too much, and None where
    even MIN_CHECK_SUITES would."""
    p = np.asarray(base_rates, dtype=np.float64)
    q = np.asarray(rates, dtype=np.float64)
    n_base = np.asarray(base_runs, dtype=np.int64)
    n = np.asarray(runs, dtype=np.int64)
    if tasks < 2 or p.size == 0 or min(int(n_base.min()), int(n.min())) < k:
        raise EstimateError("a coverage check needs two tasks with k runs in both conditions")
    suites = min(suites, _CHECK_BUDGET // tasks)
    if suites < MIN_CHECK_SUITES:
        return None
    base_mean = float(elementary.power(p, 1.0 - p, k).mean())
    truth = float(elementary.power(q, 1.0 - q, k).mean()) / base_mean
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, p.size, size=(suites, tasks))
    base_table, base_start = _pass_hat_k_table(n_base, k)
    table, start = _pass_hat_k_table(n, k)
    y = base_table[base_start[pick] + rng.binomial(n_base[pick], p[pick])]
    x = table[start[pick] + rng.binomial(n[pick], q[pick])]
    f = _fieller(x, y, t_quantile(confidence, tasks - 1))
    mean_y = y.mean(axis=1)
    estimates = x.mean(axis=1) / np.where(mean_y > 0, mean_y, np.nan)
    return RatioCoverage(
        k=int(k),
        confidence=float(confidence),
        suites=int(suites),
        tasks=int(tasks),
        seed=int(seed),
        true_value=truth,
        coverage=float(np.mean(f.covers(truth))),
        bias=float(np.nanmean(estimates) - truth),
        unbounded=float(np.mean(f.a <= 0)),
    )


def _pass_hat_k_table(runs: IntArray, k: int) -> tuple[FloatArray, IntArray]:
    """Unbiased pass^k of every count a task of the population can draw, and where
    each task's counts start in that table: table[start[i] + c] is task i's value at
    c passes. A table over the distinct run counts, not a value per draw: the draws
    repeat a few counts hundreds of thousands of times."""
    distinct, inverse = np.unique(runs, return_inverse=True)
    ends = np.cumsum(distinct + 1)
    successes = np.concatenate([np.arange(n + 1) for n in distinct.tolist()])
    table = unbiased_pass_hat_k(successes, np.repeat(distinct, distinct + 1), k, exact=False)
    starts: IntArray = (ends - (distinct + 1))[inverse]
    return table, starts


def smoothed_rates(successes: IntArray, runs: IntArray) -> FloatArray:
    """(c + 1/2) / (n + 1): a task's pass rate kept off 0 and 1, as the population a
    build's check draws from (a task seen passing 4 of 4 may still fail)."""
    result: FloatArray = (successes + 0.5) / (runs + 1.0)
    return result
