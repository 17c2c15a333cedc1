"""What runs cost, and how steady that is: cost per run, cost per reliable success,
and resource consistency.

Resource consistency is the Holistic Agent Leaderboard's C_res (Rabanser et al.,
arXiv 2602.16666; princeton-pli/hal-harness, reliability_eval/metrics/consistency.py,
compute_resource_consistency). For each resource a task's runs recorded (cost, wall
time, tokens), the coefficient of variation over the runs with a value above 0,

    CV = sd / mean    (sd with divisor m - 1, over m >= 2 such runs, mean > 0),

and per task C_res = exp(-mean of its CVs): 1 when every run cost the same, falling
towards 0 as runs spread. A suite's value is the mean over the tasks that have one.
(HAL's code takes every run, passed or failed, and also API calls, actions and
errors, which result files rarely record; it uses tokens only to estimate a missing
cost. Here tokens are a resource of their own when recorded.)

Each suite value has a seeded percentile bootstrap interval over tasks. There is no
simple population model of costs to check its coverage against, so pages say so.
Pure: arrays in, numbers out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from . import elementary
from .bootstrap import DEFAULT_SEED
from .consistency import BootstrapMean
from .estimate import EstimateError, FloatArray, IntArray
from .plain import DEFAULT_CONFIDENCE

#: The measures resource consistency is made of, in the order pages list them.
RESOURCES = ("cost", "duration", "tokens")
#: Resamples of each bootstrap interval.
RESOURCE_RESAMPLES = 2000
#: Multinomial weights drawn at once (resamples x tasks), to bound memory.
_CHUNK = 2_000_000


@dataclass(frozen=True)
class ResourceConsistency:
    """HAL's C_res over a suite, with the resources it was made of."""

    resources: tuple[str, ...]
    #: Tasks with a value: at least one resource with two runs above 0.
    tasks: int
    value: BootstrapMean
    #: Each resource's coefficient of variation, averaged over the tasks that have one
    #: (RESOURCES order, None where no task has one).
    mean_cv: tuple[float | None, ...]


@dataclass(frozen=True)
class CostPerRun:
    """Mean cost of a run (total over the runs that recorded one, divided by their
    number), and of a reliable success: k runs' cost over reliability@k."""

    runs: int
    per_run: BootstrapMean
    #: None where reliability@k is 0 (no run of k ever succeeds).
    per_reliable_success: BootstrapMean | None
    k: int


@dataclass(frozen=True)
class ResourceSummary:
    confidence: float
    resamples: int
    seed: int
    consistency: ResourceConsistency | None
    cost: CostPerRun | None


def task_cv(task_of_run: IntArray, values: FloatArray, tasks: int) -> FloatArray:
    """Each task's CV of one resource over its runs with a value above 0 (NaN runs and
    values of 0 left out, as HAL leaves them); NaN where fewer than two remain."""
    kept = values > 0  # False for NaN too
    owner, value = task_of_run[kept], values[kept]
    count = np.bincount(owner, minlength=tasks).astype(np.float64)
    mean = np.bincount(owner, weights=value, minlength=tasks) / np.maximum(count, 1.0)
    # Two passes (the mean first), so a large mean does not swamp the spread.
    squares = np.bincount(owner, weights=(value - mean[owner]) ** 2, minlength=tasks)
    sd = np.sqrt(squares / np.maximum(count - 1.0, 1.0))
    return np.where(count >= 2, sd / np.where(count >= 2, mean, 1.0), np.nan)


def _resampled_sums(columns: FloatArray, resamples: int, rng: np.random.Generator) -> FloatArray:
    """resamples x columns: each column's sum over a bootstrap resample of the tasks (the
    rows of `columns`). Every statistic here is a ratio of such sums, so one resampling
    serves them all."""
    tasks = columns.shape[0]
    rows = max(1, _CHUNK // tasks)
    parts = []
    for start in range(0, resamples, rows):
        size = min(rows, resamples - start)
        # How often each task is drawn, as a row of weights: draws shifted by their row.
        drawn = rng.integers(0, tasks, size=(size, tasks)) + (np.arange(size) * tasks)[:, None]
        weights = np.bincount(drawn.ravel(), minlength=size * tasks).reshape(size, tasks)
        weights = weights.astype(np.float64)
        # Sums in numpy's fixed order, not BLAS's (which picks its order by the CPU).
        parts.append(np.stack([elementary.dot(weights, column) for column in columns.T], 1))
    return np.concatenate(parts)


def _interval(
    estimate: float, replicates: FloatArray, confidence: float, enough: bool
) -> BootstrapMean:
    """The percentile interval of a statistic's replicates (those that are defined: a
    resample with no cost, or no reliable success, has none)."""
    defined = replicates[np.isfinite(replicates)]
    if not enough or defined.size < replicates.size // 2:
        return BootstrapMean(estimate, None, None)
    levels = [(1.0 - confidence) / 2.0, 1.0 - (1.0 - confidence) / 2.0]
    low, high = np.quantile(defined, levels)
    return BootstrapMean(estimate, float(low), float(high))


def _per_task_consistency(
    task_of_run: IntArray, measures: Mapping[str, FloatArray], tasks: int
) -> tuple[tuple[str, ...], FloatArray, FloatArray, FloatArray]:
    """(the resources present, each one's CV per task (a row each), each task's C_res
    (0 where it has none), and 1 where it has one)."""
    present = tuple(name for name in RESOURCES if name in measures)
    if not present:
        return present, np.empty((0, tasks)), np.zeros(tasks), np.zeros(tasks)
    cvs = np.stack([task_cv(task_of_run, measures[name], tasks) for name in present])
    counted = np.sum(~np.isnan(cvs), axis=0)
    mean_cv = np.where(np.isnan(cvs), 0.0, cvs).sum(axis=0) / np.maximum(counted, 1)
    has = (counted > 0).astype(np.float64)
    return present, cvs, elementary.exp(-mean_cv) * has, has


def summarise_resources(
    task_of_run: IntArray,
    measures: Mapping[str, FloatArray],
    pass_hat_k: FloatArray,
    k: int,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = RESOURCE_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> ResourceSummary:
    """A set's resource consistency and costs, each with a seeded percentile bootstrap
    over tasks (one resampling for all). `task_of_run` gives each run's task (an index
    into pass_hat_k); each measure holds one value a run, NaN where missing.

    The cost of a reliable success is k x cost per run / mean pass^k, with pass^k the
    estimate the page leads with: what it costs, on average, to get a task through k
    runs in a row.
    """
    tasks = int(pass_hat_k.size)
    if task_of_run.size and (task_of_run.min() < 0 or task_of_run.max() >= tasks):
        raise EstimateError("every run must belong to one of the tasks")
    for name, values in measures.items():
        if values.shape != task_of_run.shape:
            raise EstimateError(f"{name}: one value a run is needed")
    present, cvs, consistency_of, has_consistency = _per_task_consistency(
        task_of_run, measures, tasks
    )
    cost_sums = cost_counts = np.zeros(tasks)
    if "cost" in measures:
        known = ~np.isnan(measures["cost"])
        owner = task_of_run[known]
        cost_sums = np.bincount(owner, measures["cost"][known], tasks).astype(np.float64)
        cost_counts = np.bincount(owner, minlength=tasks).astype(np.float64)
    columns = np.stack([consistency_of, has_consistency, cost_sums, cost_counts, pass_hat_k], 1)
    replicates = _resampled_sums(columns, resamples, np.random.default_rng(seed))
    with np.errstate(divide="ignore", invalid="ignore"):  # undefined: left out
        consistency_reps = replicates[:, 0] / replicates[:, 1]
        per_run_reps = replicates[:, 2] / replicates[:, 3]
        per_success_reps = k * per_run_reps / (replicates[:, 4] / tasks)
    consistency = None
    with_value = int(has_consistency.sum())
    if with_value:
        value = _interval(
            float(consistency_of.sum() / with_value),
            consistency_reps,
            confidence,
            with_value >= 2,
        )
        consistency = ResourceConsistency(
            resources=present,
            tasks=with_value,
            value=BootstrapMean(
                value.estimate,
                None if value.low is None else min(max(value.low, 0.0), 1.0),
                None if value.high is None else min(max(value.high, 0.0), 1.0),
            ),
            mean_cv=tuple(
                float(np.nanmean(cvs[present.index(name)]))
                if name in present and not np.isnan(cvs[present.index(name)]).all()
                else None
                for name in RESOURCES
            ),
        )
    cost = None
    if cost_counts.sum() > 0:
        per_run = float(cost_sums.sum() / cost_counts.sum())
        reliability = float(np.mean(pass_hat_k))
        cost = CostPerRun(
            runs=int(cost_counts.sum()),
            per_run=_interval(per_run, per_run_reps, confidence, tasks >= 2),
            per_reliable_success=None
            if reliability <= 0
            else _interval(k * per_run / reliability, per_success_reps, confidence, tasks >= 2),
            k=k,
        )
    return ResourceSummary(
        confidence=float(confidence),
        resamples=int(resamples),
        seed=int(seed),
        consistency=consistency,
        cost=cost,
    )
