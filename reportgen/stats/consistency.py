"""Outcome consistency: does a task give the same outcome every time it is run?

The Holistic Agent Leaderboard's reliability study (Rabanser et al., "Towards a
Science of AI Agent Reliability", arXiv 2602.16666; code in princeton-pli/hal-harness,
reliability_eval/metrics/consistency.py, compute_outcome_consistency, as changed on
2026-06-17) scores each task with at least two runs by

    C_out(task) = (2 p̂ - 1)^2 = 1 - 4 p̂ (1 - p̂),    p̂ = c / n,

1 when every run agrees (all pass or all fail), 0 at p̂ = 1/2, and the suite by the
plain mean over those tasks. (The paper's own formula, 1 - s²/(p̂(1 - p̂)) with the
sample variance s², is 0 for every task with mixed outcomes once clipped to [0, 1];
HAL's code replaced it with the form above.)

That per-task value is the plug-in estimate of (2p - 1)^2 for the task's true pass
rate p, and like the plug-in pass^k it is biased: E[p̂²] = p² + p(1 - p)/n, so it
overstates consistency by 4 p (1 - p) / n on average. Replacing p(1 - p) by its
unbiased estimate c (n - c) / (n (n - 1)) (the sample variance of the task's
outcomes) gives the unbiased estimate

    U(task) = 1 - 4 c (n - c) / (n (n - 1)),

which can fall below 0 for a single task (n = 2, c = 1 gives -1), though its mean over
tasks estimates the suite's consistency without bias. Pure: counts in, numbers out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from . import elementary
from .bootstrap import DEFAULT_SEED
from .estimate import EstimateError, FloatArray, IntArray, validate
from .plain import DEFAULT_CONFIDENCE
from .population import Population, outcome_probabilities

#: Resamples of each bootstrap interval of a suite's consistency.
CONSISTENCY_RESAMPLES = 2000
#: Simulated suites, and resamples of each, when checking those intervals' coverage
#: (Monte-Carlo error at 95% coverage with 400 suites: about +-0.011).
CONSISTENCY_CHECK_SUITES = 400
CONSISTENCY_CHECK_RESAMPLES = 300
#: Multinomial categories one coverage check draws at most (about 100 ns each here,
#: so about half a second), and the fewest suites worth reporting (coverage +-0.03
#: at 95%).
_CHECK_BUDGET = 6_000_000
MIN_CHECK_SUITES = 50

#: The two estimates, in the order pages list them.
ESTIMATORS = ("unbiased", "hal")


def hal_outcome_consistency(successes: IntArray, runs: IntArray) -> FloatArray:
    """(2 c/n - 1)^2 per task: HAL's C_out (NaN where a task has fewer than 2 runs)."""
    p = successes / runs
    return np.where(runs >= 2, (2.0 * p - 1.0) ** 2, np.nan)


def unbiased_outcome_consistency(successes: IntArray, runs: IntArray) -> FloatArray:
    """1 - 4 c (n - c) / (n (n - 1)) per task: unbiased for (2p - 1)^2 (NaN below 2 runs)."""
    c = successes.astype(np.float64)
    n = runs.astype(np.float64)
    pairs = np.maximum(n * (n - 1.0), 1.0)
    return np.where(runs >= 2, 1.0 - 4.0 * c * (n - c) / pairs, np.nan)


@dataclass(frozen=True)
class BootstrapMean:
    """The mean of per-task values with a percentile bootstrap interval over tasks,
    clamped to [0, 1]; low and high are None with fewer than two tasks."""

    estimate: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class OutcomeConsistency:
    """A suite's outcome consistency on both estimators, over the tasks with 2+ runs."""

    confidence: float
    resamples: int
    seed: int
    #: Tasks with at least two runs: the ones a consistency can be computed for.
    tasks: int
    #: Tasks left out for having one run.
    single_run_tasks: int
    unbiased: BootstrapMean
    hal: BootstrapMean

    def on(self, estimator: str) -> BootstrapMean:
        return self.unbiased if estimator == "unbiased" else self.hal


def _outcomes(runs: IntArray) -> tuple[IntArray, FloatArray]:
    """Every outcome (n, c) the tasks' numbers of runs allow, as rows of values on both
    estimators (ESTIMATORS order), and each task's offset into them: a task with c
    successes in n runs is outcome offset + c. Tasks with the same outcome have the
    same value, so a suite is a count of each outcome."""
    distinct = np.unique(runs)
    starts = np.concatenate([[0], np.cumsum(distinct + 1)[:-1]]).astype(np.int64)
    offsets = starts[np.searchsorted(distinct, runs)]
    n = np.repeat(distinct, distinct + 1)
    c = np.concatenate([np.arange(m + 1) for m in distinct]).astype(np.int64)
    values = np.stack([unbiased_outcome_consistency(c, n), hal_outcome_consistency(c, n)], axis=1)
    return offsets, values


def _levels(confidence: float) -> list[float]:
    return [(1.0 - confidence) / 2.0, 1.0 - (1.0 - confidence) / 2.0]


def _bootstrap(
    counts: IntArray,
    values: FloatArray,
    confidence: float,
    resamples: int,
    rng: np.random.Generator,
) -> FloatArray:
    """Percentile interval, clamped to [0, 1], of the mean over a suite whose tasks
    have each outcome counts[i] times: rows low and high, a column per estimator.

    Resampling the tasks with replacement draws each outcome's count from a
    multinomial, so a resample costs the number of distinct outcomes, not of tasks.
    """
    tasks = int(counts.sum())
    present = np.flatnonzero(counts)
    draws = rng.multinomial(tasks, counts[present] / tasks, size=resamples)
    means = elementary.matmul(draws.astype(np.float64), values[present]) / tasks
    return np.clip(np.quantile(means, _levels(confidence), axis=0), 0.0, 1.0)


def outcome_consistency(
    successes: npt.ArrayLike,
    runs: npt.ArrayLike,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = CONSISTENCY_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> OutcomeConsistency:
    """The suite's outcome consistency, unbiased and HAL's, each with a seeded
    percentile bootstrap interval over tasks (the same resamples for both).

    Only tasks are resampled: each task's value already carries the noise of its own
    runs, so redrawing runs too would count that noise twice.
    """
    c = np.asarray(successes, dtype=np.int64)
    n = np.asarray(runs, dtype=np.int64)
    validate(c, n, 1, confidence)
    if resamples < 2:
        raise EstimateError(f"resamples must be at least 2, got {resamples}")
    kept = n >= 2
    tasks = int(np.count_nonzero(kept))
    means: list[float | None] = [None, None]
    bounds: list[list[float | None]] = [[None, None], [None, None]]
    if tasks:
        offsets, values = _outcomes(n[kept])
        counts = np.bincount(offsets + c[kept], minlength=values.shape[0])
        means = [
            float(m)
            for m in elementary.matmul(counts[None, :].astype(np.float64), values)[0] / tasks
        ]
        if tasks >= 2:
            rng = np.random.default_rng(seed)
            bounds = _bootstrap(counts, values, confidence, resamples, rng).T.tolist()
    unbiased, hal = (
        BootstrapMean(mean, low, high) for mean, (low, high) in zip(means, bounds, strict=True)
    )
    return OutcomeConsistency(
        confidence=float(confidence),
        resamples=int(resamples),
        seed=int(seed),
        tasks=tasks,
        single_run_tasks=int(n.size - tasks),
        unbiased=unbiased,
        hal=hal,
    )


# ---------------------------------------------------------------- coverage


def true_outcome_consistency(population: Population) -> float:
    """E[(2p - 1)^2] = 4 E[p²] - 4 E[p] + 1 for true rates p drawn from `population`."""
    return 4.0 * population.mean_pass_hat_k(2) - 4.0 * population.mean + 1.0


@dataclass(frozen=True)
class ConsistencyCoverage:
    """How often each estimator's interval held the true consistency in simulated suites
    of the set's shape, and each estimator's mean error there (its bias)."""

    confidence: float
    suites: int
    resamples: int
    seed: int
    true_value: float
    population: Population
    #: Share of suites whose interval held the truth, by estimator (ESTIMATORS order).
    coverage: tuple[float, float]
    #: Mean over suites of (estimate - truth), by estimator.
    bias: tuple[float, float]

    def of(self, estimator: str) -> tuple[float, float]:
        """(coverage, bias) of one estimator."""
        i = ESTIMATORS.index(estimator)
        return self.coverage[i], self.bias[i]

    def monte_carlo_error(self, estimator: str) -> float:
        share = self.of(estimator)[0]
        return float(np.sqrt(share * (1.0 - share) / self.suites))


def _affordable_suites(outcomes: int, tasks: int, wanted: int, resamples: int) -> int:
    """Suites a check can simulate within a fixed budget of multinomial work (about
    half a second): one suite's bootstrap costs resamples x its distinct outcomes. 0
    where fewer than MIN_CHECK_SUITES fit: the check is then not made."""
    affordable = _CHECK_BUDGET // max(resamples * min(outcomes, tasks), 1)
    return 0 if affordable < MIN_CHECK_SUITES else int(min(wanted, affordable))


def _draw_suites(
    population: Population, runs: IntArray, suites: int, rng: np.random.Generator
) -> IntArray:
    """suites x outcomes: how many tasks of each simulated suite had each outcome (n, c),
    in _outcomes' order. The tasks with n runs split over c = 0..n as a multinomial
    with the population's beta-binomial probabilities, so no task is drawn one by one."""
    distinct, sizes = np.unique(runs, return_counts=True)
    return np.concatenate(
        [
            rng.multinomial(int(size), outcome_probabilities(population, int(m)), size=suites)
            for m, size in zip(distinct, sizes, strict=True)
        ],
        axis=1,
    ).astype(np.int64)


def check_consistency_coverage(
    runs: npt.ArrayLike,
    population: Population,
    confidence: float = DEFAULT_CONFIDENCE,
    suites: int = CONSISTENCY_CHECK_SUITES,
    resamples: int = CONSISTENCY_CHECK_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> ConsistencyCoverage | None:
    """Simulate suites of these tasks (each with its own n; tasks of one run left out)
    from `population`, and count how often each estimator's bootstrap interval, made
    as outcome_consistency makes it, holds the true consistency. Seeded. Fewer suites
    than asked where each costs much (many distinct outcomes), and None where even
    MIN_CHECK_SUITES would cost too much."""
    n = np.asarray(runs, dtype=np.int64)
    n = n[n >= 2]
    validate(np.zeros_like(n), n, 1, confidence)
    if n.size < 2:
        raise EstimateError("a coverage check needs at least two tasks with two runs")
    if suites < 1 or resamples < 2:
        raise EstimateError("a coverage check needs a suite and two resamples at least")
    _, values = _outcomes(n)
    tasks = int(n.size)
    suites = _affordable_suites(values.shape[0], tasks, suites, resamples)
    if suites == 0:
        return None
    truth = true_outcome_consistency(population)
    draw_stream, resample_stream = np.random.SeedSequence(seed).spawn(2)
    counts = _draw_suites(population, n, suites, np.random.default_rng(draw_stream))
    rng = np.random.default_rng(resample_stream)
    hits = np.zeros(len(ESTIMATORS), dtype=np.int64)
    for suite in range(suites):
        low, high = _bootstrap(counts[suite], values, confidence, resamples, rng)
        hits += (low <= truth) & (truth <= high)
    estimates = elementary.matmul(counts.astype(np.float64), values) / tasks  # suites x estimators
    return ConsistencyCoverage(
        confidence=float(confidence),
        suites=suites,
        resamples=int(resamples),
        seed=int(seed),
        true_value=truth,
        population=population,
        coverage=tuple(float(h) / suites for h in hits),  # type: ignore[arg-type]
        bias=tuple(float(b) for b in np.mean(estimates, axis=0) - truth),  # type: ignore[arg-type]
    )
