"""Tasks in categories: a cluster-robust interval for reliability@k, and its value per category.

Pure, like estimate.py. Categories that share difficulty make tasks of one
category succeed or fail together; the ordinary t interval then comes out too
narrow, the cluster-robust one does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .estimate import (
    EstimateError,
    FloatArray,
    IntArray,
    SuiteInterval,
    estimate_tasks,
    mean_with_t_interval,
    t_quantile,
    validate,
)
from .plain import DEFAULT_CONFIDENCE

# Cluster-robust standard errors come out too small when clusters are few
# (Cameron and Miller 2015, section VI, "few clusters"); the G - 1 degrees of
# freedom only partly make up for it. Below this many the report says so.
FEW_CLUSTERS = 10


def _counts(successes: npt.ArrayLike, runs: npt.ArrayLike) -> tuple[IntArray, IntArray]:
    c = np.asarray(successes, dtype=np.int64)
    n = np.asarray(runs, dtype=np.int64)
    return c, n


@dataclass(frozen=True)
class ClusteredInterval:
    """Mean of per-task values with a cluster-robust (CR1) t interval.

    low, high, se and t are None with fewer than two clusters (df is then 0);
    everything but the counts is None when a value is undefined (NaN).
    """

    estimate: float | None
    low: float | None
    high: float | None
    se: float | None
    t: float | None
    df: int
    clusters: int
    tasks: int


def _cluster_codes(clusters: Sequence[str], count: int) -> tuple[list[str], IntArray]:
    """Validate labels and return (sorted distinct labels, code of each task)."""
    labels = list(clusters)
    if len(labels) != count:
        raise EstimateError(
            f"need one category per task: got {len(labels)} categories for {count} tasks"
        )
    for i, label in enumerate(labels):
        if not isinstance(label, str) or not label:
            raise EstimateError(
                f"task {i + 1}: category must be a non-empty string, got {label!r} "
                "(give uncategorised tasks an explicit label of their own)"
            )
    names, codes = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
    return [str(x) for x in names], codes.astype(np.int64)


def _clustered(
    values: FloatArray, codes: IntArray, groups: int, confidence: float, clamp: tuple[float, float]
) -> ClusteredInterval:
    count = int(values.shape[0])
    if count == 0 or bool(np.isnan(values).any()):
        return ClusteredInterval(None, None, None, None, None, 0, groups, count)
    mean = float(np.mean(values))
    if groups < 2:
        return ClusteredInterval(mean, None, None, None, None, 0, groups, count)
    # Sum of residuals inside each cluster: the "meat" of the sandwich for a mean.
    scores = np.bincount(codes, weights=values - mean, minlength=groups)
    # np.sum, not np.dot: BLAS picks its summation order by the CPU (see elementary.py).
    variance = groups / (groups - 1.0) * float(np.sum(scores * scores)) / (count * count)
    se = float(np.sqrt(variance))
    t = t_quantile(confidence, groups - 1)
    low = float(min(max(mean - t * se, clamp[0]), clamp[1]))
    high = float(min(max(mean + t * se, clamp[0]), clamp[1]))
    return ClusteredInterval(mean, low, high, se, t, groups - 1, groups, count)


def clustered_mean_interval(
    values: npt.ArrayLike,
    clusters: Sequence[str],
    confidence: float = DEFAULT_CONFIDENCE,
    clamp: tuple[float, float] = (0.0, 1.0),
) -> ClusteredInterval:
    """Mean of `values` with a cluster-robust t interval, clusters given by label.

    SE² = G/(G - 1) · Σ_g (Σ_{i in g} (x_i - x̄))² / T², the CR1 sandwich
    variance of a sample mean (a regression on a constant), and the interval
    is x̄ ± t(1 - (1-γ)/2; G - 1) · SE, clamped to `clamp`. Miller (2024),
    "Adding Error Bars to Evals", section on clustered standard errors,
    recommends clustering when eval questions come in related groups; the
    G/(G - 1) correction and the G - 1 degrees of freedom follow Cameron and
    Miller (2015), "A Practitioner's Guide to Cluster-Robust Inference".

    With one task per cluster (G = T) this reduces exactly to the ordinary
    standard error: Σ (x_i - x̄)² = (T - 1) s², so SE² = T/(T - 1) · (T - 1)
    s² / T² = s²/T, and the interval equals the SPEC's t interval.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise EstimateError("values must be a one-dimensional array")
    gamma = float(confidence)
    if not 0.0 < gamma < 1.0:
        raise EstimateError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    names, codes = _cluster_codes(clusters, int(x.shape[0]))
    return _clustered(x, codes, len(names), gamma, clamp)


@dataclass(frozen=True)
class CategoryReliability:
    """reliability@k inside one category, with the SPEC's t interval."""

    category: str
    tasks: int
    plugin: SuiteInterval
    unbiased: SuiteInterval


@dataclass(frozen=True)
class ClusteredReliability:
    """reliability@k with categories as clusters, and per category; plug-in and unbiased.

    categories are sorted by name. The unbiased fields are undefined (None)
    when some task has fewer than k runs.
    """

    k: int
    confidence: float
    plugin: ClusteredInterval
    unbiased: ClusteredInterval
    categories: tuple[CategoryReliability, ...]
    warnings: tuple[str, ...]


def clustered_reliability(
    successes: npt.ArrayLike,
    runs: npt.ArrayLike,
    k: int,
    categories: Sequence[str],
    confidence: float = DEFAULT_CONFIDENCE,
) -> ClusteredReliability:
    """Cluster-robust interval for reliability@k and its value per category.

    See clustered_mean_interval for the formula. Every task needs a
    category (a non-empty string); map uncategorised tasks to a label of
    their own before calling.
    """
    c, n = _counts(successes, runs)
    validate(c, n, k, confidence)
    count = int(c.shape[0])
    if count == 0:
        raise EstimateError("a suite needs at least one task")
    names, codes = _cluster_codes(categories, count)
    tasks = estimate_tasks(c, n, k, confidence)
    groups = len(names)
    warnings: list[str] = []
    if groups < 2:
        warnings.append(
            "one category only: a clustered interval needs at least two categories (null)"
        )
    elif groups < FEW_CLUSTERS:
        warnings.append(
            f"only {groups} categories: cluster-robust intervals are unreliable with fewer "
            f"than about {FEW_CLUSTERS} clusters; read this interval as a rough guide"
        )
    per_category = []
    for g, name in enumerate(names):
        members = codes == g
        per_category.append(
            CategoryReliability(
                category=name,
                tasks=int(np.count_nonzero(members)),
                plugin=mean_with_t_interval(tasks.plugin[members], confidence),
                unbiased=mean_with_t_interval(tasks.unbiased[members], confidence),
            )
        )
    return ClusteredReliability(
        k=int(k),
        confidence=float(confidence),
        plugin=_clustered(tasks.plugin, codes, groups, float(confidence), (0.0, 1.0)),
        unbiased=_clustered(tasks.unbiased, codes, groups, float(confidence), (0.0, 1.0)),
        categories=tuple(per_category),
        warnings=tuple(warnings),
    )
