"""Does each suite interval deliver the confidence it claims? A simulation check.

Pure, like estimate.py: counts in, numbers out. Every build runs it on each
result set's own shape (its tasks, each task's number of runs, the report's k
and level) and picks the headline estimate by what it finds.

The simulated world (a Beta population fitted to the observed pass rates) is
described in population.py; the rule that picks the headline from this
check's results is in headline.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from . import elementary
from .bootstrap import DEFAULT_SEED, SHOWN_INTERVAL
from .estimate import (
    EstimateError,
    FloatArray,
    IntArray,
    plugin_pass_hat_k,
    t_quantile,
    unbiased_pass_hat_k,
    validate,
)
from .plain import DEFAULT_CONFIDENCE
from .population import Population, draw_counts, outcome_probabilities
from .special import special

#: Simulated suites for the t and clustered intervals (the issue asks for >= 2,000).
COVERAGE_REPLICATES = 2000
#: The bootstrap is itself a simulation, so checking it costs replicates x
#: resamples; fewer of each keep a build fast. Monte-Carlo error at 95%
#: coverage with 400 suites is about +-0.011.
BOOTSTRAP_CHECK_REPLICATES = 400
BOOTSTRAP_CHECK_RESAMPLES = 300
#: An interval "reaches its level" when its coverage is at most this far below it.
NEAR_NOMINAL = 0.025
#: Draws made by one bootstrap check at most; see _bootstrap_replicates.
_BOOTSTRAP_BUDGET = 6_000_000
_DIRECT_COST = 4
#: Fewer suites than this would leave the bootstrap's coverage too noisy to print.
MIN_BOOTSTRAP_REPLICATES = 50
#: From this k on, _values computes each distinct outcome once (sorting costs less
#: than the k factors of each repeated one).
_DISTINCT_FROM_K = 16
# Array elements per working array in the direct sampler (about 50 MB in all).
_DIRECT_ELEMENTS = 500_000
_MULTINOMIAL_ELEMENTS = 4_000_000
#: The lattice sampler (see _lattice) computes distributions of at most this many
#: values, and draws each resample as the sum of at most _LATTICE_PARTS draws from
#: them; past that the multinomial sampler costs less.
_LATTICE_POINTS = 8192
_LATTICE_PARTS = 4
#: Suites whose lattice distribution is computed together (their arrays stay in cache).
_LATTICE_ROWS = 32

#: The intervals checked, in the order pages list them.
INTERVALS = ("plugin_t", "unbiased_t", "bootstrap", "clustered_plugin", "clustered_unbiased")


@dataclass(frozen=True)
class IntervalCoverage:
    """Share of simulated suites whose interval contained the true reliability@k.

    coverage and monte_carlo_error are None when the interval does not exist
    for this shape (one task, one category, or, for the unbiased ones, fewer than two
    tasks with k runs; the clustered unbiased one needs k runs of every task).
    """

    name: str
    coverage: float | None
    monte_carlo_error: float | None
    replicates: int

    def reaches(self, confidence: float) -> bool:
        return self.coverage is not None and self.coverage >= confidence - NEAR_NOMINAL


@dataclass(frozen=True)
class CoverageCheck:
    """The coverage of every suite interval a page shows, for one suite shape."""

    k: int
    confidence: float
    tasks: int
    population: Population
    true_value: float
    seed: int
    replicates: int
    bootstrap_replicates: int
    bootstrap_resamples: int
    #: Mean over simulated suites of (plug-in mean - true value): the plug-in's bias.
    plugin_bias: float
    intervals: tuple[IntervalCoverage, ...]

    def get(self, name: str) -> IntervalCoverage:
        return next(i for i in self.intervals if i.name == name)


def _coverage(hits: int, total: int, name: str, defined: bool) -> IntervalCoverage:
    if not defined or total == 0:
        return IntervalCoverage(name, None, None, total)
    share = hits / total
    return IntervalCoverage(name, share, math.sqrt(share * (1.0 - share) / total), total)


@dataclass(frozen=True)
class _Shape:
    """The suite's shape, tasks grouped by (category code, runs)."""

    runs: IntArray  # per task
    codes: IntArray  # per task, category code (all 0 without categories)
    groups: int  # number of categories
    group_keys: list[tuple[int, int]]  # distinct (code, n)
    group_sizes: list[int]


def _shape(runs: IntArray, codes: IntArray, groups: int) -> _Shape:
    pairs, sizes = np.unique(np.stack([codes, runs]), axis=1, return_counts=True)
    return _Shape(
        runs=runs,
        codes=codes,
        groups=groups,
        group_keys=[(int(g), int(m)) for g, m in zip(pairs[0], pairs[1], strict=True)],
        group_sizes=[int(x) for x in sizes],
    )


def _values(c: IntArray, n: IntArray, k: int) -> tuple[FloatArray, FloatArray]:
    """Plug-in (c/n)^k and unbiased C(c, k)/C(n, k) for arrays of outcomes."""
    if k >= _DISTINCT_FROM_K and c.size > 1:
        # The unbiased value multiplies up to k factors per outcome, and simulated
        # outcomes repeat (a task of n runs has n + 1): compute each distinct (n, c)
        # once. Each value is computed alone, so the figures do not change.
        width = int(n.max()) + 1  # c <= n < width: (n, c) -> n * width + c is one-to-one
        key = n.astype(np.int64) * width + c
        distinct, where = np.unique(key, return_inverse=True)
        if 2 * distinct.size <= key.size:
            c, n = distinct % width, distinct // width
            plugin = plugin_pass_hat_k(c, n, k)
            unbiased = unbiased_pass_hat_k(c, n, k, exact=False)
            return plugin[where], unbiased[where]
    return plugin_pass_hat_k(c, n, k), unbiased_pass_hat_k(c, n, k, exact=False)


@dataclass
class _Sums:
    """Per replicate: per-category sums of each statistic and overall squared deviations."""

    plugin_by_group: FloatArray  # replicates x categories
    unbiased_by_group: FloatArray
    plugin_sq: FloatArray  # sum over tasks of (value - shift)^2
    unbiased_sq: FloatArray

    @classmethod
    def zeros(cls, replicates: int, groups: int) -> _Sums:
        by_group = (replicates, groups)
        return cls(
            np.zeros(by_group), np.zeros(by_group), np.zeros(replicates), np.zeros(replicates)
        )


def _replicate_sums_multinomial(
    shape: _Shape, population: Population, k: int, reps: int, rng: np.random.Generator, shift: float
) -> _Sums:
    """Draw whole suites through outcome counts: for the m tasks that share
    (category, n), the number landing on each c = 0..n is Multinomial(m, P(c)).
    Cost is replicates x (n + 1) per group instead of replicates x tasks."""
    sums = _Sums.zeros(reps, shape.groups)
    for (code, n), size in zip(shape.group_keys, shape.group_sizes, strict=True):
        outcomes = np.arange(n + 1, dtype=np.int64)
        plugin, unbiased = _values(outcomes, np.full(n + 1, n, dtype=np.int64), k)
        probabilities = outcome_probabilities(population, n)
        rows = max(1, _MULTINOMIAL_ELEMENTS // (n + 1))
        for start in range(0, reps, rows):
            stop = min(start + rows, reps)
            hits = rng.multinomial(size, probabilities, size=stop - start).astype(np.float64)
            sums.plugin_by_group[start:stop, code] += elementary.dot(hits, plugin)
            sums.plugin_sq[start:stop] += elementary.dot(hits, (plugin - shift) ** 2)
            if n >= k:  # the unbiased sums cover the tasks with k runs (see check_coverage)
                sums.unbiased_by_group[start:stop, code] += elementary.dot(hits, unbiased)
                sums.unbiased_sq[start:stop] += elementary.dot(hits, (unbiased - shift) ** 2)
    return sums


def _group_sums(values: FloatArray, codes: IntArray, groups: int) -> FloatArray:
    """Each row's sum over the tasks of each group: (rows, groups). Summed by numpy,
    not as a product with a one-hot matrix, whose BLAS order depends on the CPU."""
    return np.stack([values[:, codes == g].sum(axis=1) for g in range(groups)], axis=1)


def _replicate_sums_direct(
    shape: _Shape, population: Population, k: int, reps: int, rng: np.random.Generator, shift: float
) -> _Sums:
    """Draw every task of every suite: used when there are many distinct n."""
    count = shape.runs.shape[0]
    sums = _Sums.zeros(reps, shape.groups)
    rows = max(1, _DIRECT_ELEMENTS // count)
    for start in range(0, reps, rows):
        stop = min(start + rows, reps)
        c = draw_counts(population, shape.runs, stop - start, rng)
        n = np.broadcast_to(shape.runs, c.shape)
        plugin, unbiased = _values(c.ravel(), n.ravel(), k)
        plugin, unbiased = plugin.reshape(c.shape), unbiased.reshape(c.shape)
        # The unbiased sums cover only the tasks with k runs (see check_coverage); the
        # others' values are NaN.
        kept = shape.runs >= k
        sums.plugin_by_group[start:stop] = _group_sums(plugin, shape.codes, shape.groups)
        sums.unbiased_by_group[start:stop] = _group_sums(
            np.where(kept, unbiased, 0.0), shape.codes, shape.groups
        )
        sums.plugin_sq[start:stop] = ((plugin - shift) ** 2).sum(axis=1)
        sums.unbiased_sq[start:stop] = np.where(kept, (unbiased - shift) ** 2, 0.0).sum(axis=1)
    return sums


def _t_hits(by_group: FloatArray, sq: FloatArray, count: int, truth: float, t: float) -> int:
    """How many replicates' mean +- t s/sqrt(T) contain the truth.

    s comes from sums of squared deviations from the truth (a shift that
    keeps the subtraction from cancelling): sum (x - m)^2 = sum (x - s)^2 - T (m - s)^2.
    """
    mean = by_group.sum(axis=1) / count
    ss = np.maximum(sq - count * (mean - truth) ** 2, 0.0)
    half = t * np.sqrt(ss / (count - 1)) / math.sqrt(count)
    return int(np.count_nonzero(np.abs(mean - truth) <= half + 1e-12))


def _clustered_hits(
    by_group: FloatArray, sizes: FloatArray, count: int, truth: float, t: float
) -> int:
    """The CR1 interval of variance.clustered_mean_interval, replicate by replicate."""
    groups = sizes.shape[0]
    mean = by_group.sum(axis=1) / count
    scores = by_group - mean[:, None] * sizes[None, :]
    se = np.sqrt(groups / (groups - 1.0) * (scores**2).sum(axis=1)) / count
    return int(np.count_nonzero(np.abs(mean - truth) <= t * se + 1e-12))


def _bootstrap_replicates(runs: IntArray, wanted: int, resamples: int) -> int:
    """How many suites the bootstrap check can afford: `wanted`, fewer, or 0 (skip).

    One bootstrap costs about resamples x (the distinct outcomes (n, c*), or
    the tasks resampled directly, whichever is cheaper: see _bootstrap_hits),
    at roughly 100 ns per outcome here: the budget keeps the check near a
    second on any suite.
    """
    # A task resampled directly costs about four multinomial categories.
    unit = min(int(np.sum(np.unique(runs) + 1)), _DIRECT_COST * int(runs.shape[0]))
    affordable = _BOOTSTRAP_BUDGET // max(resamples * unit, 1)
    if affordable < MIN_BOOTSTRAP_REPLICATES:
        return 0
    return int(min(wanted, affordable))


def _interval_bounds(
    q_low: FloatArray,
    q_high: FloatArray,
    estimate: FloatArray,
    world: FloatArray,
    replicate_mean: FloatArray,
    interval: Literal["percentile", "basic", "bias-corrected"],
) -> tuple[FloatArray, FloatArray]:
    """variance.two_stage_bootstrap's three intervals, for many suites at once."""
    if interval == "basic":
        q_low, q_high = estimate - (q_high - world), estimate - (q_low - world)
    elif interval == "bias-corrected":
        shift = estimate - (replicate_mean - world) - replicate_mean
        q_low, q_high = q_low + shift, q_high + shift
    return np.clip(q_low, 0.0, 1.0), np.clip(q_high, 0.0, 1.0)


def _redraw_matrix(n: int) -> FloatArray:
    """Row c: the Binomial(n, c/n) pmf over 0..n, the bootstrap's redraw of a task's runs."""
    outcomes = np.arange(n + 1, dtype=np.float64)
    rates = outcomes / n
    log_choose = special.gammaln(n + 1) - special.gammaln(outcomes + 1)
    log_choose = log_choose - special.gammaln(n - outcomes + 1)
    log_pmf = (
        log_choose[None, :]
        + special.xlogy(outcomes[None, :], rates[:, None])
        + special.xlog1py(n - outcomes[None, :], -rates[:, None])
    )
    return elementary.exp(log_pmf)  # rows 0 and n are point masses


#: One chunk of simulated suites' bootstrap: replicate statistics (suites x
#: resamples), each suite's estimate, and its plug-in value (the bootstrap world's truth).
_Chunk = tuple[FloatArray, FloatArray, FloatArray]


@dataclass(frozen=True)
class _Lattice:
    """Each outcome's statistic as numerators / denominator, and a resample's
    `count` outcomes split into parts whose sums take at most _LATTICE_POINTS values."""

    numerators: IntArray
    denominator: int
    parts: list[int]  # outcomes per part, adding up to the resample's count


def _lattice(
    outcome_c: IntArray, outcome_n: IntArray, k: int, unbiased: bool, count: int
) -> _Lattice | None:
    """The statistic on a lattice, when its resample sums are cheap to draw that way; else None.

    The unbiased C(c, k)/C(n, k) has denominator the lcm of the C(n, k); the
    plug-in (c/n)^k, the lcm of the n^k.
    """
    denominator = 1
    for n in np.unique(outcome_n).tolist():
        if not unbiased and k * math.log2(n) > math.log2(_LATTICE_POINTS):
            return None  # without computing n^k, which for k = 10^6 has millions of digits
        denominator = math.lcm(denominator, math.comb(n, k) if unbiased else n**k)
        if denominator + 1 > _LATTICE_POINTS:
            return None
    most = (_LATTICE_POINTS - 1) // denominator  # outcomes per part
    parts = -(-count // most)
    if parts > _LATTICE_PARTS:
        return None
    size, extra = divmod(count, parts)
    numerators = [
        math.comb(c, k) * (denominator // math.comb(n, k))
        if unbiased
        else c**k * (denominator // n**k)
        for c, n in zip(outcome_c.tolist(), outcome_n.tolist(), strict=True)
    ]
    return _Lattice(
        np.array(numerators, dtype=np.int64),
        denominator,
        [size + 1] * extra + [size] * (parts - extra),
    )


def fft_length(n: int) -> int:
    """The smallest 2^a x 3^b x 5^c at least n: a length the FFT does as fast as a power
    of two, and often much shorter than the next one (6,075 against 8,192 for 6,001)."""
    best = 1 << max(n - 1, 0).bit_length()
    fives = 1
    while fives < best:
        threes = fives
        while threes < best:
            length = threes
            while length < n:
                length *= 2
            best = min(best, length)
            threes *= 3
        fives *= 5
    return best


def _sum_distributions(
    probabilities: FloatArray, numerators: IntArray, counts: Sequence[int]
) -> dict[int, FloatArray]:
    """Row by row, for each count: the distribution of the sum of `count` independent
    outcomes' numerators.

    Row r of `probabilities` gives each outcome's chance; column s of a result
    is P(sum = s), s = 0..max numerator x count: the count-fold convolution of
    one outcome's distribution, by FFT.
    """
    top = int(numerators.max())
    size = fft_length(top * max(counts) + 1)  # no wrap-around: the FFT is long enough
    one = np.zeros((probabilities.shape[0], top + 1))
    for j, numerator in enumerate(numerators.tolist()):
        one[:, numerator] += probabilities[:, j]
    spectrum = np.fft.rfft(one, n=size, axis=1)
    sums = {}
    for count in sorted(set(counts)):
        pmf: FloatArray = np.fft.irfft(spectrum**count, n=size, axis=1)[:, : top * count + 1]
        # Rounding leaves values near 1e-17 where no sum can land (near 1e-13 for the
        # largest parts). Cutting all below 1e-13 keeps draws off nearly all of them
        # and moves less than 8192 x 1e-13 < 1e-9 of probability: the law drawn from is
        # the exact one to within about that.
        pmf[pmf < 1e-13] = 0.0
        sums[count] = pmf
    return sums


def _resample_means_lattice(
    probabilities: FloatArray,
    lattice: _Lattice,
    count: int,
    resamples: int,
    rng: np.random.Generator,
) -> FloatArray:
    """Resample means with the multinomial sampler's law, drawn from exact distributions.

    A resample's mean is (the sum of `count` independent outcomes' numerators) /
    (denominator x count). Its sum is drawn part by part, each part's from that
    part's exact distribution (_sum_distributions) by its cumulative
    distribution: about the lattice's size of work per suite, instead of
    resamples x outcomes.
    """
    means = np.empty((probabilities.shape[0], resamples))
    for start in range(0, probabilities.shape[0], _LATTICE_ROWS):
        chunk = probabilities[start : start + _LATTICE_ROWS]
        distributions = _sum_distributions(chunk, lattice.numerators, lattice.parts)
        cumulative = {part: np.cumsum(pmf, axis=1) for part, pmf in distributions.items()}
        sums = np.zeros((chunk.shape[0], resamples), dtype=np.int64)
        # A draw that rounds up to the total would land past the last possible sum.
        last = {
            part: pmf.shape[1] - 1 - np.argmax(pmf[:, ::-1] > 0, axis=1)
            for part, pmf in distributions.items()
        }
        for part in lattice.parts:
            cdf = cumulative[part]
            draws = rng.random((chunk.shape[0], resamples)) * cdf[:, -1:]
            for row in range(chunk.shape[0]):
                landed = np.searchsorted(cdf[row], draws[row], side="right")
                sums[row] += np.minimum(landed, last[part][row])
        means[start : start + chunk.shape[0]] = sums / (lattice.denominator * count)
    return means


def _bootstrap_chunks_multinomial(
    population: Population,
    runs: IntArray,
    k: int,
    replicates: int,
    resamples: int,
    rng: np.random.Generator,
) -> Iterator[_Chunk]:
    """variance.two_stage_bootstrap's multinomial sampler, for many suites at once.

    The resampled outcomes (n, c*) are the same for every suite, c* = 0..n for
    each distinct n; only their probabilities differ: for the tasks with n
    runs, (their outcome counts / T) @ R_n, where row c of R_n is the
    Binomial(n, c/n) pmf. A resample's mean is then (outcome counts ~
    Multinomial(T, those probabilities)) @ statistic / T; when the statistic
    takes values on a small lattice, the same law is drawn from directly
    (_resample_means_lattice), which costs less.
    """
    count = int(runs.shape[0])
    distinct, sizes = np.unique(runs, return_counts=True)
    outcome_n = np.concatenate([np.full(m + 1, m, dtype=np.int64) for m in distinct.tolist()])
    outcome_c = np.concatenate([np.arange(m + 1, dtype=np.int64) for m in distinct.tolist()])
    plugin, unbiased = _values(outcome_c, outcome_n, k)
    use_unbiased = bool(np.all(k <= runs))
    statistic = unbiased if use_unbiased else plugin
    lattice = _lattice(outcome_c, outcome_n, k, use_unbiased, count)
    # The suites: outcome counts per distinct n, side by side as the support is laid out.
    suites = np.concatenate(
        [
            rng.multinomial(size, outcome_probabilities(population, m), size=replicates)
            for m, size in zip(distinct.tolist(), sizes.tolist(), strict=True)
        ],
        axis=1,
    ).astype(np.float64)
    edges = np.cumsum([0, *(distinct + 1).tolist()])
    redraws = [_redraw_matrix(m) for m in distinct.tolist()]
    rows = max(1, _MULTINOMIAL_ELEMENTS // (resamples * int(edges[-1])))
    for start in range(0, replicates, rows):
        part = suites[start : start + rows]
        probabilities = np.concatenate(
            [
                elementary.matmul(part[:, edges[g] : edges[g + 1]] / count, redraw)
                for g, redraw in enumerate(redraws)
            ],
            axis=1,
        )
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        if lattice is not None:
            means = _resample_means_lattice(probabilities, lattice, count, resamples, rng)
        else:
            draws = rng.multinomial(
                count, probabilities[:, None, :], size=(part.shape[0], resamples)
            )
            means = elementary.dot(draws, statistic) / count
        yield (
            means,
            elementary.dot(part, statistic) / count,
            elementary.dot(part, plugin) / count,
        )


def _bootstrap_chunks_direct(
    population: Population,
    runs: IntArray,
    k: int,
    replicates: int,
    resamples: int,
    rng: np.random.Generator,
) -> Iterator[_Chunk]:
    """variance.two_stage_bootstrap's direct sampler, for many suites at once:
    cheaper than the multinomial one when there are more distinct outcomes than tasks."""
    count = int(runs.shape[0])
    use_unbiased = bool(np.all(k <= runs))
    rows = max(1, _DIRECT_ELEMENTS // (resamples * count))
    for start in range(0, replicates, rows):
        size = min(rows, replicates - start)
        c = draw_counts(population, runs, size, rng)
        plugin, unbiased = _values(c.ravel(), np.broadcast_to(runs, c.shape).ravel(), k)
        estimate = (unbiased if use_unbiased else plugin).reshape(c.shape).mean(axis=1)
        # Resample tasks, then each drawn task's runs: c* ~ Binomial(n, c/n).
        idx = rng.integers(0, count, size=(size, resamples, count))
        nn = runs[idx]
        cc = np.take_along_axis(c[:, None, :], idx, axis=2)
        flaky = (cc > 0) & (cc < nn)
        cc[flaky] = rng.binomial(nn[flaky], cc[flaky] / nn[flaky])
        plugin_star, unbiased_star = _values(cc.ravel(), nn.ravel(), k)
        stats = (unbiased_star if use_unbiased else plugin_star).reshape(cc.shape).mean(axis=2)
        yield stats, estimate, plugin.reshape(c.shape).mean(axis=1)


def _bootstrap_hits(
    population: Population,
    runs: IntArray,
    k: int,
    confidence: float,
    truth: float,
    replicates: int,
    resamples: int,
    rng: np.random.Generator,
    interval: Literal["percentile", "basic", "bias-corrected"],
) -> int:
    """Draw suites and count how often the bootstrap interval a page shows covers.

    The bootstrap runs for every simulated suite at once, instead of one call
    of variance.two_stage_bootstrap per suite (which would spend milliseconds
    setting up arrays for microseconds of work); it forms the interval exactly
    as two_stage_bootstrap does, from the unbiased statistic when every task
    has k runs, else the plug-in.
    """
    support = int(np.sum(np.unique(runs) + 1))
    direct = _DIRECT_COST * int(runs.shape[0]) < support
    sampler = _bootstrap_chunks_direct if direct else _bootstrap_chunks_multinomial
    levels = [(1.0 - confidence) / 2.0, 1.0 - (1.0 - confidence) / 2.0]
    hits = 0
    for stats, estimate, world in sampler(population, runs, k, replicates, resamples, rng):
        q_low, q_high = np.quantile(stats, levels, axis=1)
        low, high = _interval_bounds(
            q_low, q_high, estimate, world, stats.mean(axis=1), interval=interval
        )
        hits += int(np.count_nonzero((low - 1e-12 <= truth) & (truth <= high + 1e-12)))
    return hits


def _t_coverages(
    sums: _Sums, count: int, complete: int, truth: float, confidence: float, replicates: int
) -> dict[str, IntervalCoverage]:
    """The SPEC's t intervals across tasks: the plug-in over all `count` tasks, the
    unbiased over the `complete` ones with k runs (each needs two tasks)."""
    results = {}
    for name, by_group, sq, tasks in (
        ("plugin_t", sums.plugin_by_group, sums.plugin_sq, count),
        ("unbiased_t", sums.unbiased_by_group, sums.unbiased_sq, complete),
    ):
        defined = tasks >= 2
        t = t_quantile(confidence, tasks - 1) if defined else 0.0
        hits = _t_hits(by_group, sq, tasks, truth, t) if defined else 0
        results[name] = _coverage(hits, replicates, name, defined)
    return results


def _clustered_coverages(
    sums: _Sums,
    codes: IntArray,
    groups: int,
    count: int,
    truth: float,
    confidence: float,
    replicates: int,
    unbiased: bool,
) -> dict[str, IntervalCoverage]:
    """The cluster-robust intervals, plug-in and unbiased (none with one category)."""
    sizes = np.bincount(codes, minlength=groups).astype(np.float64)
    defined = groups >= 2
    t = t_quantile(confidence, groups - 1) if defined else 0.0
    results = {}
    for name, by_group, ok in (
        ("clustered_plugin", sums.plugin_by_group, defined),
        ("clustered_unbiased", sums.unbiased_by_group, defined and unbiased),
    ):
        hits = _clustered_hits(by_group, sizes, count, truth, t) if ok else 0
        results[name] = _coverage(hits, replicates, name, ok)
    return results


def check_coverage(
    runs: npt.ArrayLike,
    k: int,
    population: Population,
    confidence: float = DEFAULT_CONFIDENCE,
    categories: Sequence[str] | None = None,
    replicates: int = COVERAGE_REPLICATES,
    bootstrap_replicates: int = BOOTSTRAP_CHECK_REPLICATES,
    bootstrap_resamples: int = BOOTSTRAP_CHECK_RESAMPLES,
    seed: int = DEFAULT_SEED,
    bootstrap_interval: Literal["percentile", "basic", "bias-corrected"] = SHOWN_INTERVAL,
) -> CoverageCheck:
    """Simulate suites of this shape from `population`; measure each interval's coverage.

    `runs` gives each task's n; `categories` (one label per task) adds the
    clustered intervals. bootstrap_replicates = 0 skips the bootstrap, which
    is also skipped when it would cost more than a fixed budget of array work.
    Seeded: the same arguments give the same result.
    """
    n = np.asarray(runs, dtype=np.int64)
    validate(np.zeros_like(n), n, k, confidence)
    count = int(n.shape[0])
    if count == 0:
        raise EstimateError("a suite needs at least one task")
    if replicates < 1:
        raise EstimateError(f"replicates must be at least 1, got {replicates}")
    k, gamma = int(k), float(confidence)
    if categories is not None:
        names, codes = np.unique(np.asarray(list(categories), dtype=object), return_inverse=True)
        groups, codes = len(names), codes.astype(np.int64)
    else:
        groups, codes = 1, np.zeros(count, dtype=np.int64)
    shape = _shape(n, codes, groups)
    truth = population.mean_pass_hat_k(k)
    # Separate streams, so the bootstrap's suites do not depend on how many
    # the t intervals drew, nor the other way round.
    t_stream, bootstrap_stream = np.random.SeedSequence(seed).spawn(2)
    rng = np.random.default_rng(t_stream)
    support = sum(m + 1 for _, m in shape.group_keys)
    sampler = _replicate_sums_multinomial if support <= count else _replicate_sums_direct
    sums = sampler(shape, population, k, replicates, rng, truth)

    # Where some tasks have fewer than k runs, the unbiased interval is the one over the
    # tasks that have k (estimate_suite's unbiased_partial): the simulated suites keep
    # the same tasks short, so this measures that interval as the page shows it.
    complete = int(np.count_nonzero(k <= n))
    unbiased_defined = complete == count
    plugin_means = sums.plugin_by_group.sum(axis=1) / count
    results = _t_coverages(sums, count, complete, truth, gamma, replicates)
    boot_reps = _bootstrap_replicates(n, bootstrap_replicates, bootstrap_resamples)
    boot_hits = (
        _bootstrap_hits(
            population,
            n,
            k,
            gamma,
            truth,
            boot_reps,
            bootstrap_resamples,
            np.random.default_rng(bootstrap_stream),
            bootstrap_interval,
        )
        if boot_reps
        else 0
    )
    results["bootstrap"] = _coverage(boot_hits, boot_reps, "bootstrap", boot_reps > 0)

    if categories is not None:
        results |= _clustered_coverages(
            sums, codes, groups, count, truth, gamma, replicates, unbiased_defined
        )
    return CoverageCheck(
        k=k,
        confidence=gamma,
        tasks=count,
        population=population,
        true_value=truth,
        seed=seed,
        replicates=replicates,
        bootstrap_replicates=boot_reps,
        bootstrap_resamples=bootstrap_resamples,
        plugin_bias=float(np.mean(plugin_means)) - truth,
        intervals=tuple(results[name] for name in INTERVALS if name in results),
    )
