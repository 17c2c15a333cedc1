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

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

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


def _weights(tasks: int, resamples: int, rng: np.random.Generator) -> Iterator[FloatArray]:
    """Bootstrap resamples of the tasks as weights (how often each task was drawn), a
    chunk of rows at a time."""
    rows = max(1, _CHUNK // tasks)
    for start in range(0, resamples, rows):
        size = min(rows, resamples - start)
        yield rng.multinomial(tasks, np.full(tasks, 1.0 / tasks), size=size).astype(np.float64)


def _interval(
    estimate: float,
    statistic: Callable[[FloatArray], FloatArray],
    tasks: int,
    confidence: float,
    resamples: int,
    rng: np.random.Generator,
) -> BootstrapMean:
    """The percentile interval of `statistic` (of a weights matrix, one value a row)."""
    if tasks < 2:
        return BootstrapMean(estimate, None, None)
    with np.errstate(divide="ignore", invalid="ignore"):  # a resample with no cost, or
        # never a reliable success, gives inf or NaN: left out below
        replicates = np.concatenate([statistic(w) for w in _weights(tasks, resamples, rng)])
    replicates = replicates[np.isfinite(replicates)]
    if replicates.size < resamples // 2:
        return BootstrapMean(estimate, None, None)
    levels = [(1.0 - confidence) / 2.0, 1.0 - (1.0 - confidence) / 2.0]
    low, high = np.quantile(replicates, levels)
    return BootstrapMean(estimate, float(low), float(high))


def resource_consistency(
    task_of_run: IntArray,
    measures: Mapping[str, FloatArray],
    tasks: int,
    confidence: float,
    resamples: int,
    rng: np.random.Generator,
) -> ResourceConsistency | None:
    """HAL's C_res with its bootstrap interval; None where no task has a value."""
    present = [name for name in RESOURCES if name in measures]
    cvs = [task_cv(task_of_run, measures[name], tasks) for name in present]
    if not cvs:
        return None
    stacked = np.stack(cvs)
    has = ~np.isnan(stacked)
    counted = has.sum(axis=0)
    mean_cv = np.where(has, stacked, 0.0).sum(axis=0) / np.maximum(counted, 1)
    per_task = np.exp(-mean_cv)[counted > 0]
    if per_task.size == 0:
        return None
    value = _interval(
        float(np.mean(per_task)),
        lambda w: (w @ per_task) / per_task.size,
        per_task.size,
        confidence,
        resamples,
        rng,
    )
    clamped = BootstrapMean(
        value.estimate,
        None if value.low is None else min(max(value.low, 0.0), 1.0),
        None if value.high is None else min(max(value.high, 0.0), 1.0),
    )
    by_resource = {
        name: float(np.nanmean(cv)) if np.any(~np.isnan(cv)) else None
        for name, cv in zip(present, cvs, strict=True)
    }
    return ResourceConsistency(
        resources=tuple(present),
        tasks=int(per_task.size),
        value=clamped,
        mean_cv=tuple(by_resource.get(name) for name in RESOURCES),
    )


def cost_per_run(
    task_of_run: IntArray,
    cost: FloatArray,
    pass_hat_k: FloatArray,
    k: int,
    confidence: float,
    resamples: int,
    rng: np.random.Generator,
) -> CostPerRun | None:
    """Mean cost per run and per reliable success, with bootstrap intervals over tasks.

    `pass_hat_k` holds each task's pass^k (the estimate the page leads with); the cost
    of a reliable success is k x cost per run / mean pass^k: what it costs, on
    average, to get one task through k runs in a row.
    """
    tasks = pass_hat_k.size
    known = ~np.isnan(cost)
    if not np.any(known):
        return None
    sums = np.bincount(task_of_run[known], weights=cost[known], minlength=tasks)
    counts = np.bincount(task_of_run[known], minlength=tasks).astype(np.float64)
    per_run_value = float(sums.sum() / counts.sum())
    per_run = _interval(
        per_run_value, lambda w: (w @ sums) / (w @ counts), tasks, confidence, resamples, rng
    )
    reliability = float(np.mean(pass_hat_k))
    per_success = None
    if reliability > 0:
        per_success = _interval(
            k * per_run_value / reliability,
            lambda w: k * ((w @ sums) / (w @ counts)) / ((w @ pass_hat_k) / tasks),
            tasks,
            confidence,
            resamples,
            rng,
        )
    return CostPerRun(int(counts.sum()), per_run, per_success, k)


def summarise_resources(
    task_of_run: IntArray,
    measures: Mapping[str, FloatArray],
    pass_hat_k: FloatArray,
    k: int,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = RESOURCE_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> ResourceSummary:
    """A set's resource consistency and costs. `task_of_run` gives each run's task (an
    index into pass_hat_k); each measure holds one value a run, NaN where missing."""
    tasks = int(pass_hat_k.size)
    if task_of_run.size and (task_of_run.min() < 0 or task_of_run.max() >= tasks):
        raise EstimateError("every run must belong to one of the tasks")
    for name, values in measures.items():
        if values.shape != task_of_run.shape:
            raise EstimateError(f"{name}: one value a run is needed")
    consistency_stream, cost_stream = np.random.SeedSequence(seed).spawn(2)
    return ResourceSummary(
        confidence=float(confidence),
        resamples=int(resamples),
        seed=int(seed),
        consistency=resource_consistency(
            task_of_run,
            measures,
            tasks,
            confidence,
            resamples,
            np.random.default_rng(consistency_stream),
        ),
        cost=None
        if "cost" not in measures
        else cost_per_run(
            task_of_run,
            measures["cost"],
            pass_hat_k,
            k,
            confidence,
            resamples,
            np.random.default_rng(cost_stream),
        ),
    )
