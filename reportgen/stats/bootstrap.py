"""A second interval for reliability@k: the seeded two-stage bootstrap.

Pure, like estimate.py. It resamples tasks, then runs inside each drawn task,
so its interval includes the sampling noise inside each task that the SPEC's
t interval (built from the spread across tasks) leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from . import elementary
from .estimate import (
    EstimateError,
    FloatArray,
    IntArray,
    estimate_tasks,
    plugin_pass_hat_k,
    unbiased_pass_hat_k,
    validate,
)
from .plain import DEFAULT_CONFIDENCE, decimals
from .special import special

DEFAULT_REPLICATES = 2000
DEFAULT_SEED = 20240101

# Memory budget for the bootstrap, in array elements per working array. The
# direct method keeps about six int64/float64 arrays of this size alive
# (indices, n, c, draws, values, mask) plus the temporaries of the power:
# 5e5 elements each stays near 50 MB in all.
_DIRECT_ELEMENTS = 500_000
# The multinomial method holds one (replicates x support) int64 count matrix.
_MULTINOMIAL_ELEMENTS = 6_000_000
# Rows of binomial pmf evaluated at once when building the support.
_PMF_ELEMENTS = 1_000_000


def _counts(successes: npt.ArrayLike, runs: npt.ArrayLike) -> tuple[IntArray, IntArray]:
    c = np.asarray(successes, dtype=np.int64)
    n = np.asarray(runs, dtype=np.int64)
    return c, n


@dataclass(frozen=True)
class BootstrapInterval:
    """A point estimate with a bootstrap interval.

    estimate is the value on the observed data; replicate_mean the mean of
    the bootstrap replicates (their gap shows the bootstrap's bias, see
    two_stage_bootstrap). All four are None when the statistic is undefined.
    """

    estimate: float | None
    low: float | None
    high: float | None
    replicate_mean: float | None
    replicates: int
    seed: int
    confidence: float


@dataclass(frozen=True)
class TwoStageBootstrap:
    """reliability@k intervals that include the sampling noise inside each task.

    method says which of two equivalent samplers ran ("multinomial" or
    "direct"), interval which interval was formed ("percentile" or "basic"),
    see two_stage_bootstrap. The result depends only on the counts, k,
    confidence, replicates, seed and interval.
    """

    k: int
    confidence: float
    replicates: int
    seed: int
    method: str
    interval: str
    plugin: BootstrapInterval
    unbiased: BootstrapInterval
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class _Support:
    """The distinct (n, c*) outcomes of one two-stage draw and their probabilities."""

    runs: IntArray
    successes: IntArray
    probability: FloatArray


def _distinct_pairs(n: IntArray, c: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Distinct (n, c) pairs sorted by n then c, and how many tasks have each.

    Sorting one combined integer key is several times faster than
    np.unique(..., axis=1), which matters when the coverage check runs the
    bootstrap hundreds of times.
    """
    top = int(n.max(initial=0)) + 1
    if top > 2**31:  # the key would overflow int64
        pairs, weights = np.unique(np.stack([n, c]), axis=1, return_counts=True)
        return pairs[0], pairs[1], weights
    keys, weights = np.unique(n * top + c, return_counts=True)
    return keys // top, keys % top, weights


def _support_size(c: IntArray, n: IntArray) -> int:
    """Number of (n, c*) slots the multinomial sampler needs (an upper bound)."""
    flaky = (c > 0) & (c < n)
    flaky_runs = np.unique(n[flaky])
    fixed = _distinct_pairs(n[~flaky], c[~flaky])[0].shape[0]
    return int(np.sum(flaky_runs + 1)) + int(fixed)


def _support(c: IntArray, n: IntArray) -> _Support:
    """Distribution of (n_J, c*) with J uniform over tasks and c* ~ Binomial(n_J, c_J/n_J).

    A task with 0 < c < n contributes weight/T · pmf over 0..n; a task with
    c = 0 or c = n is a point mass (its binomial draw is certain).
    """
    count = c.shape[0]
    pair_n, pair_c, weights = _distinct_pairs(n, c)
    flaky = (pair_c > 0) & (pair_c < pair_n)
    out_n: list[IntArray] = []
    out_c: list[IntArray] = []
    out_p: list[FloatArray] = []
    blocks: set[int] = set()
    for m in np.unique(pair_n[flaky]).tolist():
        grid = np.arange(m + 1, dtype=np.int64)
        sel = np.flatnonzero(flaky & (pair_n == m))
        acc = np.zeros(m + 1, dtype=np.float64)
        rows = max(1, _PMF_ELEMENTS // (m + 1))
        for start in range(0, sel.size, rows):
            part = sel[start : start + rows]
            pmf = _binomial_pmf(grid[None, :], m, (pair_c[part] / m)[:, None])
            acc += np.sum((weights[part] / count)[:, None] * pmf, axis=0)
        # Point masses at the same n fall into this block's slots.
        fixed = np.flatnonzero(~flaky & (pair_n == m))
        np.add.at(acc, pair_c[fixed], weights[fixed] / count)
        out_n.append(np.full(m + 1, m, dtype=np.int64))
        out_c.append(grid)
        out_p.append(acc)
        blocks.add(m)
    rest = np.flatnonzero(~flaky & ~np.isin(pair_n, list(blocks)))
    out_n.append(pair_n[rest])
    out_c.append(pair_c[rest])
    out_p.append(weights[rest] / count)
    probability = np.concatenate(out_p)
    return _Support(
        runs=np.concatenate(out_n),
        successes=np.concatenate(out_c),
        # Renormalise away the pmf's rounding so numpy accepts it as pvals.
        probability=probability / probability.sum(),
    )


def _replicates_multinomial(
    c: IntArray, n: IntArray, k: int, replicates: int, rng: np.random.Generator, unbiased: bool
) -> tuple[FloatArray, FloatArray | None]:
    count = int(c.shape[0])
    support = _support(c, n)
    plugin_values = plugin_pass_hat_k(support.successes, support.runs, k)
    unbiased_values = unbiased_pass_hat_k(support.successes, support.runs, k) if unbiased else None
    size = int(support.probability.shape[0])
    plugin_out = np.empty(replicates, dtype=np.float64)
    unbiased_out = np.empty(replicates, dtype=np.float64) if unbiased else None
    rows = max(1, _MULTINOMIAL_ELEMENTS // size)
    for start in range(0, replicates, rows):
        stop = min(start + rows, replicates)
        # How many of the T resampled tasks land on each outcome (n, c*).
        hits = rng.multinomial(count, support.probability, size=stop - start)
        plugin_out[start:stop] = elementary.dot(hits, plugin_values) / count
        if unbiased_out is not None and unbiased_values is not None:
            unbiased_out[start:stop] = elementary.dot(hits, unbiased_values) / count
    return plugin_out, unbiased_out


def _replicates_direct(
    c: IntArray, n: IntArray, k: int, replicates: int, rng: np.random.Generator, unbiased: bool
) -> tuple[FloatArray, FloatArray | None]:
    count = int(c.shape[0])
    plugin_out = np.empty(replicates, dtype=np.float64)
    unbiased_out = np.empty(replicates, dtype=np.float64) if unbiased else None
    rows = max(1, _DIRECT_ELEMENTS // count)
    for start in range(0, replicates, rows):
        stop = min(start + rows, replicates)
        # Stage 1: resample tasks with replacement, one row per replicate.
        idx = rng.integers(0, count, size=(stop - start, count))
        nn = n[idx]
        cc = c[idx]
        # Stage 2: resample runs inside each drawn task. Tasks with c = 0 or
        # c = n would draw their own c with certainty; skipping them saves
        # most of the binomial calls on suites with few flaky tasks.
        flaky = (cc > 0) & (cc < nn)
        cc[flaky] = rng.binomial(nn[flaky], cc[flaky] / nn[flaky])
        plugin_out[start:stop] = plugin_pass_hat_k(cc, nn, k).mean(axis=1)
        if unbiased_out is not None:
            flat = unbiased_pass_hat_k(cc.ravel(), nn.ravel(), k, exact=False)
            unbiased_out[start:stop] = flat.reshape(cc.shape).mean(axis=1)
    return plugin_out, unbiased_out


def _binomial_pmf(x: IntArray, n: int, p: FloatArray) -> FloatArray:
    """P(X = x) for X ~ Binomial(n, p), in log space (0 < p < 1 here: flaky tasks).

    Written with scipy.special rather than scipy.stats.binom, which would cost
    every build the second it takes to import scipy.stats.
    """
    log_pmf = (
        special.gammaln(n + 1)
        - special.gammaln(x + 1)
        - special.gammaln(n - x + 1)
        + special.xlogy(x, p)
        + special.xlog1py(n - x, -p)
    )
    return elementary.exp(log_pmf)


def two_stage_bootstrap(
    successes: npt.ArrayLike,
    runs: npt.ArrayLike,
    k: int,
    confidence: float = DEFAULT_CONFIDENCE,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = DEFAULT_SEED,
    method: Literal["auto", "multinomial", "direct"] = "auto",
    interval: Literal["percentile", "basic", "bias-corrected"] = "percentile",
) -> TwoStageBootstrap:
    """Seeded two-stage bootstrap of reliability@k, plug-in and unbiased.

    Each replicate resamples T tasks with replacement, then, inside each
    drawn task, its n runs with replacement, i.e. c* ~ Binomial(n, c/n), and
    takes the mean over the T drawn tasks of (c*/n)^k (and of
    C(c*, k)/C(n, k)). This is the two-stage bootstrap for hierarchical data
    (Davison and Hinkley 1997, "Bootstrap Methods and their Application",
    section 3.8) with resampling at both stages. Unlike the SPEC's t interval
    it includes the sampling noise inside each task. Resampling at both
    stages counts that noise about twice (the spread of the observed rates
    already contains it once), so the interval errs on the wide side; D&H
    discuss the same effect.

    interval="percentile" (the default) takes the (1-γ)/2 and 1-(1-γ)/2
    quantiles of the replicates (numpy's linear interpolation).

    Caution, and the reason for interval="basic": both statistics drift
    upward in the bootstrap. In the bootstrap world task i's true rate is
    p̂_i, so the true reliability is P = mean_i p̂_i^k, the plug-in estimate.
    By Jensen's inequality E[(c*/n)^k] >= p̂^k (strictly for k >= 2 and a
    flaky task: the plug-in overstates, as the SPEC notes), and
    E[C(c*, k)/C(n, k)] = p̂^k >= the unbiased estimate U. With many tasks
    the replicates pack tightly around this shifted centre and a percentile
    interval can miss the estimate altogether (a warning then says so).
    interval="basic" is the basic bootstrap interval of Davison and Hinkley
    (1997), section 2.4, which treats θ̂* - P as a pivot: with q the
    replicate quantiles, [θ̂ - (q_high - P), θ̂ - (q_low - P)], where θ̂ is P
    for the plug-in and U for the unbiased statistic; it is clamped to
    [0, 1]. It removes the shift to first order, so for the plug-in it is
    centred near P minus the plug-in's own bias, i.e. near U: on a large
    suite, where that bias exceeds the sampling error, the basic interval
    rightly excludes the (biased) plug-in estimate, and a warning says so.

    interval="bias-corrected" keeps the shape of the percentile interval but
    moves it: the replicates are shifted so that their mean falls on the
    estimate less the bootstrap's estimate of its bias, θ̂ - (mean* - P)
    (Efron and Tibshirani 1993, section 10.6, for the bias estimate). For the
    unbiased statistic mean* is P up to Monte-Carlo noise, so the interval is
    the percentile interval moved by U - P; for the plug-in it is moved by
    twice the estimated bias. In the coverage check (coverage.py) it stays
    closer to its level than "basic" with few tasks (the basic interval
    mirrors the replicates' skew), which is why pages show it.

    Two samplers give the same distribution of replicates:

    * "direct" follows the description literally with rng.integers and
      rng.binomial, in chunks that bound memory to about 50 MB;
    * "multinomial" uses that the T draws of one replicate are independent
      and identically distributed: J uniform over tasks, then c* given J.
      That distribution has a small support, the distinct pairs (n, c*), with
      known probabilities, so the number of draws landing on each pair is
      Multinomial(T, probabilities) and a replicate is a weighted sum. The
      cost is replicates x support size instead of replicates x T.

    "auto" takes the multinomial sampler when its support is no larger than
    T (typical: a few distinct n; 10,000 tasks take milliseconds), else the
    direct one (seconds for 10,000 tasks). The seed makes the output
    identical run to run for a given numpy version.

    The unbiased interval needs k <= n for every task (as the suite value
    does); otherwise its fields are None.
    """
    c, n = _counts(successes, runs)
    validate(c, n, k, confidence)
    count = int(c.shape[0])
    if count == 0:
        raise EstimateError("a suite needs at least one task")
    if isinstance(replicates, bool) or not isinstance(replicates, int | np.integer):
        raise EstimateError(f"replicates must be a whole number, got {replicates!r}")
    if replicates < 2:
        raise EstimateError(f"replicates must be at least 2, got {replicates}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise EstimateError(f"seed must be a whole number of at least 0, got {seed!r}")
    if method not in ("auto", "multinomial", "direct"):
        raise EstimateError(f"method must be 'auto', 'multinomial' or 'direct', got {method!r}")
    if interval not in ("percentile", "basic", "bias-corrected"):
        raise EstimateError(
            f"interval must be 'percentile', 'basic' or 'bias-corrected', got {interval!r}"
        )
    k = int(k)
    replicates = int(replicates)
    seed = int(seed)
    gamma = float(confidence)

    if method == "auto":
        method = "multinomial" if _support_size(c, n) <= count else "direct"
    unbiased_defined = bool(np.all(k <= n))
    rng = np.random.default_rng(seed)
    sampler = _replicates_multinomial if method == "multinomial" else _replicates_direct
    plugin_reps, unbiased_reps = sampler(c, n, k, replicates, rng, unbiased_defined)

    tasks = estimate_tasks(c, n, k, gamma)
    # The bootstrap world's true reliability@k: the plug-in estimate itself.
    world = float(np.mean(tasks.plugin))
    levels = [(1.0 - gamma) / 2.0, 1.0 - (1.0 - gamma) / 2.0]
    warnings: list[str] = []

    def summarise(name: str, estimate: float | None, reps: FloatArray | None) -> BootstrapInterval:
        if estimate is None or reps is None:
            return BootstrapInterval(None, None, None, None, replicates, seed, gamma)
        q_low, q_high = (float(q) for q in np.quantile(reps, levels))
        replicate_mean = float(np.mean(reps))
        if interval == "basic":
            q_low, q_high = estimate - (q_high - world), estimate - (q_low - world)
        elif interval == "bias-corrected":
            shift = estimate - (replicate_mean - world) - replicate_mean
            q_low, q_high = q_low + shift, q_high + shift
        if not q_low <= estimate <= q_high:
            why = (
                f"redrawing runs pushes pass^{k} upward in the bootstrap (replicate mean "
                f"{decimals(replicate_mean, 3)}); the basic interval corrects for "
                "that shift"
                if interval == "percentile"
                else f"the interval removes the bootstrap's estimate of the {name} value's "
                f"bias ({decimals(replicate_mean - world, 3, plus=True)}), which "
                "here exceeds its sampling error"
            )
            warnings.append(
                f"the {name} {interval} interval [{decimals(q_low, 3)}, "
                f"{decimals(q_high, 3)}] does not contain "
                f"the estimate {decimals(estimate, 3)}: {why}"
            )
        # Percentile bounds already lie in [0, 1]; moved ones need the clamp.
        return BootstrapInterval(
            estimate,
            min(max(q_low, 0.0), 1.0),
            min(max(q_high, 0.0), 1.0),
            replicate_mean,
            replicates,
            seed,
            gamma,
        )

    return TwoStageBootstrap(
        k=k,
        confidence=gamma,
        replicates=replicates,
        seed=seed,
        method=method,
        interval=interval,
        plugin=summarise("plug-in", world, plugin_reps),
        unbiased=summarise(
            "unbiased", float(np.mean(tasks.unbiased)) if unbiased_defined else None, unbiased_reps
        ),
        warnings=tuple(warnings),
    )


#: The interval pages show: it removes the upward drift of the replicates (see
#: two_stage_bootstrap) instead of centring on it.
SHOWN_INTERVAL: Literal["bias-corrected"] = "bias-corrected"


def shown_bootstrap_interval(result: TwoStageBootstrap) -> tuple[float | None, float | None]:
    """The bootstrap interval a page shows beside the t intervals.

    The unbiased statistic's interval when it exists: its replicates have
    mean exactly the plug-in value P in the bootstrap world (E[C(c*, k)/C(n, k)]
    = (c/n)^k), so with interval="basic" the interval is centred on the
    unbiased estimate itself and not on the biased plug-in. When some task has
    fewer than k runs, the plug-in statistic's interval of the same kind,
    which removes the bootstrap's estimate of the plug-in's bias.
    """
    chosen = result.unbiased if result.unbiased.low is not None else result.plugin
    return chosen.low, chosen.high
