"""Where the variance comes from: flaky tasks, and the split of the spread of
pass rates across tasks into real differences and run-to-run noise.

Pure, like estimate.py: counts in, numbers out. Two more intervals that
complement the SPEC's suite interval live beside it: `bootstrap.py` (adds the
noise inside each task) and `clustered.py` (tasks in categories).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .estimate import EstimateError, IntArray, validate
from .plain import DEFAULT_CONFIDENCE, counted


def _counts(successes: npt.ArrayLike, runs: npt.ArrayLike) -> tuple[IntArray, IntArray]:
    c = np.asarray(successes, dtype=np.int64)
    n = np.asarray(runs, dtype=np.int64)
    return c, n


# ---------------------------------------------------------------- decomposition


@dataclass(frozen=True)
class VarianceDecomposition:
    """Flaky tasks and the split of the pass-rate variance across tasks.

    total is the sample variance (divisor T - 1) of the per-task pass rates;
    within the mean over tasks of p̂(1 - p̂)/(n - 1), the unbiased estimate of
    each rate's sampling variance; between = max(total - within, 0). They are
    None when undefined (total needs two tasks, within needs n >= 2 for every
    task). within_share = within / (within + between).
    """

    tasks: int
    flaky_tasks: int
    always_passed: int
    never_passed: int
    flaky_share: float
    mean_pass_rate: float
    total: float | None
    within: float | None
    between: float | None
    within_share: float | None
    warnings: tuple[str, ...]


def decompose_variance(successes: npt.ArrayLike, runs: npt.ArrayLike) -> VarianceDecomposition:
    """Share of flaky tasks (0 < c < n) and a method-of-moments variance split.

    Model: task i has a true pass rate p_i, drawn from a population with
    variance σ²_between, and p̂_i = c_i/n_i adds binomial noise with
    conditional variance p_i(1 - p_i)/n_i. The p̂_i are then independent with
    a common mean, so the sample variance of the p̂_i has expectation
    σ²_between + mean_i E[p_i(1 - p_i)]/n_i. Since E[p̂(1 - p̂)] =
    p(1 - p)(n - 1)/n, the term p̂_i(1 - p̂_i)/(n_i - 1) is an unbiased
    estimate of task i's sampling variance, and subtracting the mean of those
    terms leaves an unbiased estimate of σ²_between. This is the one-way
    random-effects ANOVA estimator (MSB - MSW)/n written per task: for binary
    runs p̂(1 - p̂) n/(n - 1) is the within-task sample variance of the run
    outcomes, and dividing by n gives the variance of their mean. Miller
    (2024), "Adding Error Bars to Evals", splits the variance of an eval score
    into the same two parts in its section on resampling.

    Compared with the plain p̂(1 - p̂)/n, the divisor n - 1 removes a
    downward bias of (n - 1)/n; with a single run the term would always be 0,
    which is why within is None when any task has n = 1. The subtraction can
    go negative by chance; between is floored at 0 (the usual truncation of
    the ANOVA estimator).
    """
    c, n = _counts(successes, runs)
    validate(c, n, 1, DEFAULT_CONFIDENCE)
    count = int(c.shape[0])
    if count == 0:
        raise EstimateError("a suite needs at least one task")
    p = c / n
    flaky = int(np.count_nonzero((c > 0) & (c < n)))
    warnings: list[str] = []

    total: float | None = None
    if count >= 2:
        total = float(np.var(p, ddof=1))
    else:
        warnings.append("one task only: the variance across tasks needs two tasks (null)")

    within: float | None = None
    if bool(np.all(n >= 2)):
        # p̂ q̂ / (n - 1) with q̂ = (n - c)/n taken from the integers, not as 1 - p̂.
        within = float(np.mean(p * ((n - c) / n) / (n - 1.0)))
    else:
        singles = int(np.count_nonzero(n < 2))
        warnings.append(
            f"{counted(singles, 'task has', 'tasks have')} a single run, which leaves no "
            "sampling variance to estimate: the within-task and between-task variances are "
            "undefined (null)"
        )

    between = None if total is None or within is None else max(total - within, 0.0)
    within_share: float | None = None
    if within is not None and between is not None and within + between > 0.0:
        within_share = within / (within + between)

    return VarianceDecomposition(
        tasks=count,
        flaky_tasks=flaky,
        always_passed=int(np.count_nonzero(c == n)),
        never_passed=int(np.count_nonzero(c == 0)),
        flaky_share=flaky / count,
        mean_pass_rate=float(np.mean(p)),
        total=total,
        within=within,
        between=between,
        within_share=within_share,
        warnings=tuple(warnings),
    )
