"""Predictability: does the agent know when it will pass? From runs that record the
agent's own confidence c in [0, 1] beside their outcome y (1 passed, 0 failed).

As the Holistic Agent Leaderboard's reliability study computes them (Rabanser et
al., arXiv 2602.16666; princeton-pli/hal-harness, reliability_eval/metrics/
predictability.py), over every evaluated run with a confidence, pooled:

* calibration error (ECE): runs fall in 10 equal-width bins of confidence, [0, 0.1),
  [0.1, 0.2), ..., [0.9, 1.0]; ECE = sum over bins of (runs in it / all runs) x
  |share passed - mean confidence|. HAL reports 1 - ECE.
* discrimination (AUROC): the chance that a passed run had a higher confidence than
  a failed one, ties counting half (Mann-Whitney); undefined when every run passed
  or every run failed.
* Brier score: mean of (c - y)^2. HAL reports 1 - Brier.

Each has a seeded percentile bootstrap interval over tasks (a task's runs are
resampled with it); its coverage is not checked. Pure: arrays in, numbers out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from . import elementary
from .bootstrap import DEFAULT_SEED
from .consistency import BootstrapMean
from .estimate import EstimateError, FloatArray, IntArray
from .plain import DEFAULT_CONFIDENCE

#: Equal-width bins of confidence for the calibration error, as HAL's code has them.
BINS = 10
#: Resamples of each interval at most: every one costs passes over the runs, so fewer
#: than for the per-task statistics (HAL uses 200 for its standard errors), and fewer
#: still, down to MIN_RESAMPLES, where runs are so many that they would cost more
#: than RUN_BUDGET run-passes.
PREDICTABILITY_RESAMPLES = 400
MIN_RESAMPLES = 100
RUN_BUDGET = 40_000_000


@dataclass(frozen=True)
class CalibrationBin:
    """One bin of the reliability diagram: its runs, mean confidence, share passed."""

    low: float
    high: float
    runs: int
    confidence: float | None
    passed: float | None


@dataclass(frozen=True)
class Predictability:
    runs: int
    tasks: int
    resamples: int
    seed: int
    confidence: float
    calibration_error: BootstrapMean
    auroc: BootstrapMean
    brier: BootstrapMean
    bins: tuple[CalibrationBin, ...]


#: The bins' edges exactly as HAL's code makes them (np.linspace(0, 1, 11)): in floating
#: point 0.3 is below the third edge (0.30000000000000004), so a stated 0.3 falls in
#: [0.2, 0.3), as it does there.
EDGES = np.linspace(0.0, 1.0, BINS + 1)


def _bin_of(confidence: FloatArray) -> IntArray:
    """Each run's bin: [edge j, edge j + 1), the last one closed at 1."""
    return np.clip(np.searchsorted(EDGES, confidence, side="right") - 1, 0, BINS - 1)


def _ece(runs: FloatArray, confidence_sums: FloatArray, passed_sums: FloatArray) -> FloatArray:
    """ECE from per-bin sums (last axis the bins): sum |passed - confidence| / runs."""
    total = runs.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.abs(passed_sums - confidence_sums).sum(axis=-1) / total, np.float64)


def _auroc(group: IntArray, groups: int, y: FloatArray, weights: FloatArray) -> float:
    """Weighted Mann-Whitney AUROC (ties count half) of runs whose scores fall in
    `groups` distinct values, group 0 the lowest; NaN where one class has no weight."""
    positive = np.bincount(group, weights=weights * y, minlength=groups)
    negative = np.bincount(group, weights=weights * (1.0 - y), minlength=groups)
    total_pos, total_neg = float(positive.sum()), float(negative.sum())
    if total_pos <= 0 or total_neg <= 0:
        return float("nan")
    below = np.cumsum(negative) - negative  # negatives with a lower score
    wins = float(elementary.dot(positive, below + 0.5 * negative))
    return wins / (total_pos * total_neg)


def predictability(
    task_of_run: IntArray,
    passed: npt.NDArray[np.bool_],
    confidence: FloatArray,
    tasks: int,
    level: float = DEFAULT_CONFIDENCE,
    resamples: int = PREDICTABILITY_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Predictability | None:
    """The three measures over the evaluated runs that recorded a confidence (NaN
    confidences are left out); None where no run did."""
    if not (task_of_run.shape == passed.shape == confidence.shape):
        raise EstimateError("one task, outcome and confidence a run are needed")
    known = ~np.isnan(confidence)
    owner, y, c = task_of_run[known], passed[known].astype(np.float64), confidence[known]
    if c.size == 0:
        return None
    distinct, group = np.unique(c, return_inverse=True)
    bins = _bin_of(c)
    # Per task and bin: runs, confidence sum, passed sum (for ECE); per task: squared
    # errors (for Brier) and runs.
    cells = owner * BINS + bins
    size = tasks * BINS
    per_bin = [
        np.bincount(cells, weights=w, minlength=size).reshape(tasks, BINS)
        for w in (np.ones_like(c), c, y)
    ]
    squared = np.bincount(owner, weights=(c - y) ** 2, minlength=tasks)
    counted = np.bincount(owner, minlength=tasks).astype(np.float64)
    ece = float(_ece(*(part.sum(axis=0) for part in per_bin)))
    brier = float(squared.sum() / counted.sum())
    auroc = _auroc(group, distinct.size, y, np.ones_like(c))

    rng = np.random.default_rng(seed)
    resamples = min(resamples, max(MIN_RESAMPLES, RUN_BUDGET // c.size))
    reps = np.empty((resamples, 3))
    for r in range(resamples):
        weight = np.bincount(rng.integers(0, tasks, size=tasks), minlength=tasks).astype(np.float64)
        sums = [elementary.dot(part.T, weight) for part in per_bin]
        reps[r, 0] = _ece(*sums)
        with np.errstate(invalid="ignore", divide="ignore"):  # no run drawn: NaN, left out
            reps[r, 1] = elementary.dot(squared, weight) / elementary.dot(counted, weight)
        reps[r, 2] = _auroc(group, distinct.size, y, weight[owner])
    levels = [(1.0 - level) / 2.0, 1.0 - (1.0 - level) / 2.0]

    def interval(estimate: float, column: int) -> BootstrapMean:
        if np.isnan(estimate):
            return BootstrapMean(None, None, None)
        defined = reps[:, column][np.isfinite(reps[:, column])]
        if tasks < 2 or defined.size < resamples // 2:
            return BootstrapMean(estimate, None, None)
        low, high = np.quantile(defined, levels)
        return BootstrapMean(estimate, float(low), float(high))

    totals = [part.sum(axis=0) for part in per_bin]
    diagram = tuple(
        CalibrationBin(
            low=float(EDGES[j]),
            high=float(EDGES[j + 1]),
            runs=int(totals[0][j]),
            confidence=float(totals[1][j] / totals[0][j]) if totals[0][j] else None,
            passed=float(totals[2][j] / totals[0][j]) if totals[0][j] else None,
        )
        for j in range(BINS)
    )
    return Predictability(
        runs=int(c.size),
        tasks=int(np.count_nonzero(counted)),
        resamples=int(resamples),
        seed=int(seed),
        confidence=float(level),
        calibration_error=interval(ece, 0),
        auroc=interval(auroc, 2),
        brier=interval(brier, 1),
        bins=diagram,
    )
