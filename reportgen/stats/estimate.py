"""The statistics core: per-task counts in, estimates and intervals out.

Pure by design: no files, no YAML, no templates. Every function takes whole
arrays of counts (one entry per task) and is vectorized with numpy, because a
suite can have tens of thousands of tasks. Public functions validate their
arguments once; the private helpers assume valid input.

Numerical care, since every value must agree with exact rational arithmetic to
1e-12 even for n = 1,000,000 and k = n:

* Binomial ratios are products of at most min(k, n - c) or min(k, c) factors in
  (0, 1], never huge binomials (the approach of Chen et al. 2021 for pass@k).
* Powers x**k are taken as exp(k * log x), where log x comes from log1p of the
  *complement* 1 - x whenever x >= 1/2. The complement is computed directly from
  the counts, so a value like (1 - 1e-6)**1e6 keeps its full precision.
* The Wilson bounds use forms without cancellation, so the lower bound is
  exactly 0 when c = 0 and the upper bound exactly 1 when c = n.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from . import elementary
from .plain import (
    DEFAULT_CONFIDENCE,
    ONE_TASK_WARNING,
    counted,
    decimals,
)
from .special import special

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Tasks whose ratio needs more factors than this are finished one at a time with
# a vectorized product over the factors instead of one numpy pass per factor.
_LOOP_LIMIT = 64
#: log of a value that rounds to 0 as a double: below half of 2**-1074 (5e-324).
_UNDERFLOW_LOG = -746.0


class EstimateError(ValueError):
    """Raised for counts or parameters outside the domain of the estimators."""


def validate(successes: IntArray, runs: IntArray, k: int, confidence: float) -> None:
    """Check counts and parameters; raise EstimateError naming the first bad task (1-based)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise EstimateError(f"k must be a whole number of at least 1, got {k!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise EstimateError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    if successes.shape != runs.shape or successes.ndim != 1:
        raise EstimateError("successes and runs must be one-dimensional arrays of equal length")
    bad = np.flatnonzero(runs < 1)
    if bad.size:
        i = int(bad[0])
        raise EstimateError(f"task {i + 1}: runs must be at least 1, got {int(runs[i])}")
    bad = np.flatnonzero((successes < 0) | (successes > runs))
    if bad.size:
        i = int(bad[0])
        raise EstimateError(
            f"task {i + 1}: successes must lie between 0 and runs ({int(runs[i])}), "
            f"got {int(successes[i])}"
        )


def normal_quantile(confidence: float) -> float:
    """z such that a standard normal falls in [-z, z] with the given probability."""
    return float(special.ndtri(1.0 - (1.0 - confidence) / 2.0))


def t_quantile(confidence: float, df: int) -> float:
    """Two-sided Student-t critical value with df degrees of freedom."""
    # stdtrit is the inverse Student-t CDF that scipy.stats.t.ppf calls; using it
    # directly spares every command the second it takes to import scipy.stats.
    return float(special.stdtrit(df, 1.0 - (1.0 - confidence) / 2.0))


# ---------------------------------------------------------------- per task


@dataclass(frozen=True)
class _Wilson:
    """Wilson score bounds, each with its complement computed directly."""

    low: FloatArray
    high: FloatArray
    one_minus_low: FloatArray
    one_minus_high: FloatArray


def _wilson(successes: IntArray, runs: IntArray, z: float) -> _Wilson:
    """Wilson (1927) score interval for c/n.

    With p = c/n, q = 1 - p, a = z^2/(2n) and s = sqrt(pq/n + z^2/(4n^2)) the
    textbook bounds are (p + a -/+ z s) / (1 + 2a). Multiplying the lower one
    by its conjugate gives p^2 / (p + a + z s): no subtraction, and exactly 0
    when c = 0. By the symmetry p <-> q the same holds for 1 - high.
    """
    n = runs.astype(np.float64)
    p = successes / n
    q = (runs - successes) / n  # computed from integers, not as 1 - p
    a = z * z / (2.0 * n)
    zs = z * np.sqrt(p * q / n + a / (2.0 * n))
    scale = 1.0 + 2.0 * a
    return _Wilson(
        low=p * p / (p + a + zs),
        high=1.0 - q * q / (q + a + zs),
        one_minus_low=(q + a + zs) / scale,
        one_minus_high=q * q / (q + a + zs),
    )


def plugin_pass_hat_k(successes: IntArray, runs: IntArray, k: int) -> FloatArray:
    """(c/n)^k. The complement (n - c)/n is computed from integers, so a rate within
    1e-6 of 1 keeps full precision however large k is (see elementary.power)."""
    return elementary.power(successes / runs, (runs - successes) / runs, k)


def _falling_ratio(
    top: IntArray, bottom: IntArray, factors: IntArray, exact: bool = True
) -> FloatArray:
    """prod_{i < factors} (top - i) / (bottom - i), elementwise.

    Each factor lies in [0, 1], so the product never overflows, and its
    relative error grows only linearly with the number of factors. Without
    `exact`, the factors past _LOOP_LIMIT come from log-gamma differences
    instead, for simulations, which would otherwise spend up to k multiplications
    on each of millions of draws: the relative error grows with the log-gamma
    values, about 1e-10 at 10,000 runs and 1e-5 at a billion, far inside any
    simulation's own noise.
    """
    out = np.ones(top.shape, dtype=np.float64)
    top_f = top.astype(np.float64)
    bottom_f = bottom.astype(np.float64)
    # Every factor is at most top/bottom, so the product is at most
    # (top/bottom)**factors. Where that bound is below half the smallest double,
    # the product rounds to exactly 0: no factor needs multiplying. This bounds
    # the work by the values that can be told from 0 (factors * gap / bottom
    # under about 746), not by k: -k 1000000 on runs of 10^9 costs no more than
    # k = 1,000.
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.where(bottom_f > 0, (bottom_f - top_f) / bottom_f, 0.0)
        bound = factors * np.log1p(-gap)
    underflow = bound < _UNDERFLOW_LOG
    out[underflow] = 0.0
    factors = np.where(underflow, 0, factors)
    steps = int(min(int(factors.max(initial=0)), _LOOP_LIMIT))
    for i in range(steps):
        active = factors > i
        out[active] *= (top_f[active] - i) / (bottom_f[active] - i)
    long = np.flatnonzero(factors > _LOOP_LIMIT)
    if not exact and long.size:
        # prod_{L <= i < f} (t - i)/(b - i) = G(t-L+1) G(b-f+1) / (G(t-f+1) G(b-L+1)),
        # with t >= f (never a factor of 0 in the tail) and b >= t.
        t, b = top_f[long], bottom_f[long]
        f = factors[long].astype(np.float64)
        log = special.gammaln(t - _LOOP_LIMIT + 1) - special.gammaln(t - f + 1)
        log -= special.gammaln(b - _LOOP_LIMIT + 1) - special.gammaln(b - f + 1)
        out[long] *= elementary.exp(log)
        return out
    for j in long:
        rest = np.arange(_LOOP_LIMIT, int(factors[j]), dtype=np.float64)
        out[j] *= np.prod((top_f[j] - rest) / (bottom_f[j] - rest))
    return out


def unbiased_pass_hat_k(
    successes: IntArray, runs: IntArray, k: int, exact: bool = True
) -> FloatArray:
    """C(c, k) / C(n, k): the chance that k runs drawn without replacement all pass.

    Uses the identity C(c, k)/C(n, k) = C(n-k, n-c)/C(n, n-c) to multiply only
    min(k, n - c) factors. NaN where k > n (undefined), 0 where c < k. exact=False
    is for simulated draws (see _falling_ratio).
    """
    defined = k <= runs
    failures = runs - successes
    use_k = k <= failures
    # Either prod_{i<k} (c-i)/(n-i), or prod_{i<n-c} (n-k-i)/(n-i).
    top = np.where(use_k, successes, runs - k)
    factors = np.where(use_k, k, failures)
    factors = np.where(defined & (successes >= k), factors, 0)
    ratio = _falling_ratio(top, runs, factors, exact)
    ratio = np.where(successes >= k, ratio, 0.0)
    return np.where(defined, ratio, np.nan)


def pass_at_k(successes: IntArray, runs: IntArray, k: int) -> FloatArray:
    """1 - C(n-c, k) / C(n, k) (Chen et al. 2021): at least one of k runs passes.

    The ratio is C(n-c, k)/C(n, k) = C(n-k, c)/C(n, c), a product of
    min(k, c) factors. 1 where n - c < k, NaN where k > n.
    """
    defined = k <= runs
    failures = runs - successes
    use_k = k <= successes
    top = np.where(use_k, failures, runs - k)
    factors = np.where(use_k, k, successes)
    factors = np.where(defined & (failures >= k), factors, 0)
    all_fail = _falling_ratio(top, runs, factors)
    all_fail = np.where(failures >= k, all_fail, 0.0)
    return np.where(defined, 1.0 - all_fail, np.nan)


@dataclass(frozen=True)
class TaskEstimates:
    """Per-task estimates, one array entry per task. NaN marks an undefined value."""

    successes: IntArray
    runs: IntArray
    k: int
    confidence: float
    pass_rate: FloatArray
    pass_rate_low: FloatArray
    pass_rate_high: FloatArray
    plugin: FloatArray
    plugin_low: FloatArray
    plugin_high: FloatArray
    unbiased: FloatArray
    pass_at_k: FloatArray

    def __len__(self) -> int:
        return int(self.successes.shape[0])


def estimate_tasks(
    successes: npt.ArrayLike,
    runs: npt.ArrayLike,
    k: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> TaskEstimates:
    """Every per-task estimate of the SPEC for arrays of (c, n) at once."""
    c = np.asarray(successes, dtype=np.int64)
    n = np.asarray(runs, dtype=np.int64)
    validate(c, n, k, confidence)
    k = int(k)
    wilson = _wilson(c, n, normal_quantile(confidence))
    return TaskEstimates(
        successes=c,
        runs=n,
        k=k,
        confidence=float(confidence),
        pass_rate=c / n,
        pass_rate_low=wilson.low,
        pass_rate_high=wilson.high,
        plugin=plugin_pass_hat_k(c, n, k),
        # The Wilson bounds come with complements of their own, as accurate as they.
        plugin_low=elementary.power(wilson.low, wilson.one_minus_low, k),
        plugin_high=elementary.power(wilson.high, wilson.one_minus_high, k),
        unbiased=unbiased_pass_hat_k(c, n, k),
        pass_at_k=pass_at_k(c, n, k),
    )


# ---------------------------------------------------------------- suite


@dataclass(frozen=True)
class SuiteInterval:
    """Mean over tasks with a Student-t interval clamped to [0, 1].

    estimate is None when the mean is undefined; low, high, sd and t are None
    when there are fewer than two tasks (df is then 0).
    """

    estimate: float | None
    low: float | None
    high: float | None
    sd: float | None
    t: float | None
    df: int


def mean_with_t_interval(
    values: FloatArray, confidence: float = DEFAULT_CONFIDENCE, clamp: tuple[float, float] = (0, 1)
) -> SuiteInterval:
    """mean +- t(1 - (1-confidence)/2; T-1) * s / sqrt(T), clamped to `clamp`.

    s is the sample standard deviation (divisor T - 1). Any NaN among the
    values makes the whole result undefined.
    """
    count = int(values.shape[0])
    if count == 0 or bool(np.isnan(values).any()):
        return SuiteInterval(None, None, None, None, None, max(count - 1, 0))
    mean = float(np.mean(values))
    if count < 2:
        return SuiteInterval(mean, None, None, None, None, 0)
    sd = float(np.std(values, ddof=1))
    t = t_quantile(confidence, count - 1)
    half = t * sd / np.sqrt(count)
    low = float(min(max(mean - half, clamp[0]), clamp[1]))
    high = float(min(max(mean + half, clamp[0]), clamp[1]))
    return SuiteInterval(mean, low, high, sd, t, count - 1)


@dataclass(frozen=True)
class SuiteEstimates:
    """Per-task estimates plus reliability@k (mean pass^k over tasks) and warnings."""

    tasks: TaskEstimates
    plugin: SuiteInterval
    unbiased: SuiteInterval
    warnings: tuple[str, ...]
    #: Where some tasks, but not all, have fewer than k runs (`unbiased` is then null):
    #: the unbiased reliability@k over the tasks that have k or more, with its t
    #: interval; None otherwise. Its df + 1 tasks are the ones it covers.
    unbiased_partial: SuiteInterval | None = None

    @property
    def k(self) -> int:
        return self.tasks.k

    def on(self, estimator: str) -> SuiteInterval:
        """reliability@k on one estimator ("plugin" or "unbiased"); where some tasks
        have fewer than k runs, the unbiased one is over the others (unbiased_partial)."""
        if estimator != "unbiased":
            return self.plugin
        return self.unbiased_partial or self.unbiased

    @property
    def left_out(self) -> int:
        """How many tasks unbiased_partial leaves out (fewer than k runs)."""
        return int(np.count_nonzero(self.tasks.runs < self.tasks.k))

    @property
    def confidence(self) -> float:
        return self.tasks.confidence


#: Up to this many tasks with fewer than k runs get a warning each.
_SHORT_TASKS_ONE_BY_ONE = 3


def _name_list(names: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def estimate_suite(
    successes: npt.ArrayLike,
    runs: npt.ArrayLike,
    k: int,
    confidence: float = DEFAULT_CONFIDENCE,
    labels: Sequence[str] | None = None,
) -> SuiteEstimates:
    """Per-task estimates and reliability@k, plug-in and unbiased.

    `labels` name the tasks in warnings (default: "task 1", "task 2", ...).
    """
    tasks = estimate_tasks(successes, runs, k, confidence)
    if len(tasks) == 0:
        raise EstimateError("a suite needs at least one task")
    names = list(labels) if labels is not None else [f"task {i + 1}" for i in range(len(tasks))]
    warnings: list[str] = []
    short = np.flatnonzero(tasks.runs < tasks.k)
    k = tasks.k
    if len(short) <= _SHORT_TASKS_ONE_BY_ONE:
        for i in short:
            warnings.append(
                f"{names[i]} has {counted(int(tasks.runs[i]), 'run', 'runs')}, fewer than k = {k}: "
                f"its unbiased pass^{k} and pass@{k} are undefined (null)"
            )
    # The SPEC leaves the suite's unbiased value null when a task is short of k runs;
    # the tasks that have k runs still give an unbiased mean over themselves, which the
    # coverage check simulates by the same rule (a few retried or crashed runs left
    # the whole suite without an unbiased value, and the biased plug-in led).
    complete = tasks.runs >= k
    partial = (
        mean_with_t_interval(tasks.unbiased[complete], tasks.confidence)
        if 0 < len(short) < len(tasks)
        else None
    )
    # Where most tasks are short of k runs, the k the data supports: the most runs
    # every task has (2 runs a task and the default k = 3 left every unbiased value n/a).
    fewest = int(tasks.runs.min())
    supported = (
        f"; -k {fewest}, the most runs every task has, gives every task its unbiased values"
        if 2 * len(short) > len(tasks) and 1 <= fewest < k
        else ""
    )
    if len(short) == len(tasks) > 1:
        warnings.append(
            f"every task has fewer than k = {k} runs, so unbiased pass^{k}, pass@{k} and "
            f"reliability@{k} are undefined (null); the plug-in estimates stand{supported}"
        )
    elif len(short):
        # Past a few tasks this one line also says what the lines per task said
        # (40 of them, with k above every task's runs, buried the point).
        also = (
            f", which leaves their own unbiased pass^{k} and pass@{k} undefined too"
            if len(short) > _SHORT_TASKS_ONE_BY_ONE
            else ""
        )
        warnings.append(
            f"unbiased reliability@{k} is undefined (null) because "
            f"{counted(len(short), 'task has', 'tasks have')} fewer than {k} runs{also}: "
            f"{_name_list([names[i] for i in short])}{supported}"
        )
        if partial is not None and partial.estimate is not None:
            warnings.append(
                f"over the {counted(len(tasks) - len(short), 'task', 'tasks')} with {k} or "
                f"more runs the unbiased reliability@{k} is {decimals(partial.estimate, 3)}; "
                "it stands for the whole suite only if the tasks left out are like the rest"
            )
    if len(tasks) < 2:
        warnings.append(ONE_TASK_WARNING)
    plugin = mean_with_t_interval(tasks.plugin, tasks.confidence)
    unbiased = mean_with_t_interval(tasks.unbiased, tasks.confidence)
    # Every task passed every run (or failed every run, or all share one rate): an
    # interval of zero width would read as a certainty that the runs cannot give.
    # (Equal values computed by different products may differ in their last bits.)
    flat = [
        (name, decimals(s.estimate, 3))
        for name, s, values in (
            ("plug-in", plugin, tasks.plugin),
            ("unbiased", unbiased, tasks.unbiased),
        )
        if s.sd is not None and s.estimate is not None and float(np.ptp(values)) < 1e-12
    ]
    if flat:
        k = tasks.k
        if len(flat) == 2:
            same = f"pass^{k} (plug-in {flat[0][1]}, unbiased {flat[1][1]})"
            zero = "both intervals across tasks have zero width"
        else:
            ((name, value),) = flat
            same = f"{name} pass^{k} ({value})"
            zero = "its interval across tasks has zero width"
        widest = int(np.argmax(tasks.plugin_high - tasks.plugin_low))
        c, n = int(tasks.successes[widest]), int(tasks.runs[widest])
        low, high = (decimals(float(b[widest]), 3) for b in (tasks.plugin_low, tasks.plugin_high))
        warnings.append(
            f"{'both' if len(tasks) == 2 else f'all {len(tasks)}'} tasks have the same {same}, "
            f"so {zero}: that says the tasks' estimates coincide, not that reliability@{k} is "
            f"known exactly; one task's own plug-in interval ({c}/{n} runs) is "
            f"[{low}, {high}]"
        )
    return SuiteEstimates(
        tasks=tasks,
        plugin=plugin,
        unbiased=unbiased,
        warnings=tuple(warnings),
        unbiased_partial=partial,
    )


# ---------------------------------------------------------------- curves over k

#: Curves stop here even when every task has more runs: beyond a few hundred the
#: points add nothing a reader can see, and each costs a pass over all tasks.
MAX_CURVE_K = 200


@dataclass(frozen=True)
class CurvePoint:
    """reliability@k (plug-in and unbiased) and mean pass@k at one k."""

    k: int
    plugin: SuiteInterval
    unbiased: SuiteInterval
    pass_at_k: SuiteInterval


def curve_over_k(
    successes: npt.ArrayLike,
    runs: npt.ArrayLike,
    confidence: float = DEFAULT_CONFIDENCE,
    max_k: int = MAX_CURVE_K,
) -> list[CurvePoint]:
    """The suite estimates for k = 1 ... min(min n, max_k), in one sweep.

    Each step multiplies the previous ratio by one more factor, (c - k + 1)/(n - k + 1)
    for pass^k and (n - c - k + 1)/(n - k + 1) for pass@k's complement, so the
    whole curve costs O(tasks x k) rather than a fresh product at every k.
    """
    c = np.asarray(successes, dtype=np.int64)
    n = np.asarray(runs, dtype=np.int64)
    validate(c, n, 1, confidence)
    if c.size == 0:
        return []
    last = int(min(int(n.min()), max_k))
    plugin_power = elementary.Powers(c / n, (n - c) / n)
    c_f, n_f, fail_f = c.astype(np.float64), n.astype(np.float64), (n - c).astype(np.float64)
    all_pass = np.ones(c.shape)
    all_fail = np.ones(c.shape)
    points = []
    for k in range(1, last + 1):
        step = k - 1
        all_pass *= np.maximum(c_f - step, 0.0) / (n_f - step)
        all_fail *= np.maximum(fail_f - step, 0.0) / (n_f - step)
        points.append(
            CurvePoint(
                k=k,
                plugin=mean_with_t_interval(plugin_power(k), confidence),
                unbiased=mean_with_t_interval(all_pass, confidence),
                pass_at_k=mean_with_t_interval(1.0 - all_fail, confidence),
            )
        )
    return points
