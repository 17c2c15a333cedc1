"""The population of tasks the coverage check draws suites from.

The world the check simulates. Each task's true pass rate p is drawn from a
Beta distribution fitted to the observed rates by the method of moments, and
its c successes from Binomial(n, p) with the task's own n. Why a Beta:

* it is the usual population model for per-item rates (the beta-binomial),
  and its two parameters are fixed by the two moments we can estimate: the
  mean rate and the spread of true rates *between* tasks, which is the spread
  of the observed rates less the binomial noise inside each task;
* its mean pass^k is known exactly, E[p^k] = prod_{j<k} (a + j)/(a + b + j),
  so coverage is measured against the true value, not another estimate;
* the number of successes of a task with n runs then follows a beta-binomial
  distribution whose probabilities are known in closed form, so the draws of
  a whole replicate can be made at once (see _replicate_sums).

Smoothing each observed rate instead would keep the tasks fixed and redraw
only runs; but the suite interval is an interval across tasks (tasks are
treated as a sample from a population of tasks), so the check redraws tasks
too. When the observed rates spread no more than binomial noise explains, or
every run passed (or failed), the population is a point mass at the mean
rate. Categories, when present, stay attached to task positions; tasks are
drawn independently, so the clustered interval is checked in a world without
shared difficulty inside a category (its harder case is not simulated).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from . import elementary
from .estimate import FloatArray, IntArray
from .special import special

#: The smallest Beta concentration a + b fitted; below it the Beta is so
#: U-shaped that tasks are all but certain to always pass or always fail.
MIN_CONCENTRATION = 0.05


@dataclass(frozen=True)
class Population:
    """True pass rates ~ Beta(mean * concentration, (1 - mean) * concentration).

    concentration None is a point mass at `mean` (every task has rate `mean`).
    """

    mean: float
    concentration: float | None

    @property
    def every_run(self) -> str | None:
        """Says "passed" or "failed" when every task always does so (a point mass at 1 or
        0): every suite simulated from it is then the same, its intervals of zero
        width contain the truth trivially, and a coverage check measures nothing."""
        if self.concentration is not None or self.mean not in (0.0, 1.0):
            return None
        return "passed" if self.mean == 1.0 else "failed"

    @property
    def alpha(self) -> float | None:
        return None if self.concentration is None else self.mean * self.concentration

    @property
    def beta(self) -> float | None:
        return None if self.concentration is None else (1.0 - self.mean) * self.concentration

    def mean_pass_hat_k(self, k: int) -> float:
        """E[p^k]: the suite's true reliability@k in this population."""
        if self.concentration is None:
            return float(self.mean**k)
        a, nu = self.mean * self.concentration, self.concentration
        # prod_{j<k} (a + j)/(nu + j) = Gamma(a + k) Gamma(nu) / (Gamma(a) Gamma(nu + k))
        log = special.gammaln(a + k) - special.gammaln(a) - special.gammaln(nu + k)
        return elementary.exp(log + special.gammaln(nu)).item()


def fit_population(successes: npt.ArrayLike, runs: npt.ArrayLike) -> Population:
    """Beta population fitted by moments to observed rates, net of binomial noise.

    mean = mean of c/n; between-task variance = sample variance of c/n less
    the mean of p̂(1 - p̂)/(n - 1) (each rate's unbiased sampling variance;
    a task with one run counts as pure noise, mean(1 - mean)). Then
    a + b = mean(1 - mean)/between - 1, at least MIN_CONCENTRATION.
    """
    c = np.asarray(successes, dtype=np.int64)
    n = np.asarray(runs, dtype=np.int64)
    p = c / n
    mean = float(np.mean(p))
    if c.size < 2 or mean <= 0.0 or mean >= 1.0:
        return Population(min(max(mean, 0.0), 1.0), None)
    noise = np.where(n > 1, p * (1.0 - p) / np.maximum(n - 1, 1), mean * (1.0 - mean))
    between = float(np.var(p, ddof=1)) - float(np.mean(noise))
    if between <= 1e-12:
        return Population(mean, None)
    concentration = max(mean * (1.0 - mean) / between - 1.0, MIN_CONCENTRATION)
    return Population(mean, concentration)


def outcome_probabilities(population: Population, n: int) -> FloatArray:
    """P(c = 0..n) for one task with n runs: beta-binomial, or binomial for a point mass."""
    c = np.arange(n + 1, dtype=np.float64)
    log_choose = special.gammaln(n + 1) - special.gammaln(c + 1) - special.gammaln(n - c + 1)
    if population.concentration is None:
        p = population.mean
        if p <= 0.0 or p >= 1.0:
            out = np.zeros(n + 1)
            out[n if p >= 1.0 else 0] = 1.0
            return out
        log = log_choose + special.xlogy(c, p) + special.xlog1py(n - c, -p)
    else:
        a, b = population.alpha, population.beta
        assert a is not None and b is not None
        log = log_choose + special.betaln(c + a, n - c + b) - special.betaln(a, b)
    probabilities = elementary.exp(log)
    return probabilities / float(probabilities.sum())


def draw_counts(
    population: Population, runs: IntArray, size: int, rng: np.random.Generator
) -> IntArray:
    """size x T successes: p ~ population per task, c ~ Binomial(n, p)."""
    shape = (size, runs.shape[0])
    if population.concentration is None:
        p: FloatArray | float = population.mean
    else:
        a, b = population.alpha, population.beta
        assert a is not None and b is not None
        p = rng.beta(a, b, size=shape)
    return rng.binomial(np.broadcast_to(runs, shape), p).astype(np.int64)
