"""How many runs per task and how many tasks an eval needs.

Pure, like estimate.py: parameters in, integers out. Three questions:

* runs per task: the smallest n for which a task's Wilson interval is at most
  +-H wide when the observed pass rate is P (P = 0.5 is the worst case);
* tasks: the smallest T >= 2 for which the suite's Student-t interval is at
  most +-H wide when per-task values spread with standard deviation S;
* detectable difference: the smallest gap between two models that a paired
  comparison on T tasks detects with 80% power.

Both searches are exact on the integers: an expanding bracket finds a size
that passes, bisection narrows it, and by construction size - 1 fails. A cap
of 10^9 stops searches that would never end in practice (H tiny) with an
error instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .estimate import EstimateError, normal_quantile, t_quantile
from .plain import DEFAULT_CONFIDENCE
from .special import special

Json = dict[str, Any]

DEFAULT_PASS_RATE = 0.5
# Values in [0, 1] have a population standard deviation of at most 1/2 (half
# the tasks at 0, half at 1), so 0.5 is the worst case, like P = 0.5 above.
DEFAULT_TASK_SD = 0.5
DEFAULT_CORRELATION = 0.0
DEFAULT_POWER = 0.8
SEARCH_CAP = 10**9


# ---------------------------------------------------------------- validation


def _check_fraction(name: str, value: float, low_open: bool, high_open: bool) -> float:
    """value as a float inside [0, 1] with the requested open ends, else EstimateError."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise EstimateError(f"{name} must be a number, got {value!r}")
    x = float(value)
    low_ok = x > 0.0 if low_open else x >= 0.0
    high_ok = x < 1.0 if high_open else x <= 1.0
    if not (math.isfinite(x) and low_ok and high_ok):
        interval = ("(" if low_open else "[") + "0, 1" + (")" if high_open else "]")
        raise EstimateError(f"{name} must lie in {interval}, got {value!r}")
    return x


def _check_sd(task_sd: float) -> float:
    if isinstance(task_sd, bool) or not isinstance(task_sd, int | float | np.integer | np.floating):
        raise EstimateError(f"task_sd must be a number, got {task_sd!r}")
    x = float(task_sd)
    if not (math.isfinite(x) and x >= 0.0):
        raise EstimateError(f"task_sd must be a finite number of at least 0, got {task_sd!r}")
    return x


def _check_tasks(tasks: int) -> int:
    if isinstance(tasks, bool) or not isinstance(tasks, int | np.integer) or tasks < 2:
        raise EstimateError(f"tasks must be a whole number of at least 2, got {tasks!r}")
    return int(tasks)


def _smallest(passes: Callable[[int], bool], start: int, what: str) -> int:
    """The smallest integer m >= start with passes(m), for a monotone predicate.

    Doubling brackets the answer in O(log m) calls; bisection then keeps the
    invariant passes(hi) and not passes(lo), so hi - 1 fails when it returns.
    """
    if passes(start):
        return start
    lo, hi = start, start
    while not passes(hi):
        if hi >= SEARCH_CAP:
            raise EstimateError(
                f"{what} would exceed {SEARCH_CAP:,}; the target half-width is too small"
            )
        lo, hi = hi, min(2 * hi, SEARCH_CAP)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------- runs per task


def wilson_halfwidth(runs: int, pass_rate: float, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The SPEC's Wilson half-width z/(1 + z²/n) · sqrt(P(1-P)/n + z²/(4n²)) with p̂ held at P.

    Wilson (1927); the half-width formula is the one in SPEC.md. Written as
    z/(n + z²) · sqrt(P(1-P) n + z²/4) (numerator and denominator times n), it
    is strictly decreasing in n for every P: the derivative of its square has
    the sign of P(1-P)(z² - n) - z²/2, negative because P(1-P) <= 1/4. That
    monotonicity is what makes the integer search below exact.
    """
    n = float(runs)
    z = normal_quantile(confidence)
    return z / (n + z * z) * math.sqrt(pass_rate * (1.0 - pass_rate) * n + z * z / 4.0)


def runs_needed(
    target_halfwidth: float,
    pass_rate: float = DEFAULT_PASS_RATE,
    confidence: float = DEFAULT_CONFIDENCE,
) -> int:
    """Smallest n >= 1 with wilson_halfwidth(n, P) <= H.

    Any H >= 1/2 gives n = 1: the half-width tends to 1/2 as n -> 0 and is
    below it for every n >= 1.
    """
    h = _check_fraction("target half-width", target_halfwidth, low_open=True, high_open=True)
    p = _check_fraction("pass rate", pass_rate, low_open=False, high_open=False)
    gamma = _check_fraction("confidence", confidence, low_open=True, high_open=True)
    return _smallest(lambda n: wilson_halfwidth(n, p, gamma) <= h, 1, "the number of runs per task")


# ---------------------------------------------------------------- tasks


def suite_halfwidth(tasks: int, task_sd: float, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """t(1 - (1-γ)/2; T-1) · S / sqrt(T): the SPEC's suite interval half-width.

    Decreasing in T (both factors are), so the integer search is exact.
    """
    return t_quantile(confidence, tasks - 1) * task_sd / math.sqrt(tasks)


def tasks_needed(
    target_halfwidth: float,
    task_sd: float = DEFAULT_TASK_SD,
    confidence: float = DEFAULT_CONFIDENCE,
) -> int:
    """Smallest T >= 2 with suite_halfwidth(T, S) <= H; 2 when S == 0."""
    h = _check_fraction("target half-width", target_halfwidth, low_open=True, high_open=True)
    s = _check_sd(task_sd)
    gamma = _check_fraction("confidence", confidence, low_open=True, high_open=True)
    return _smallest(lambda t: suite_halfwidth(t, s, gamma) <= h, 2, "the number of tasks")


# ---------------------------------------------------------------- detectable difference


@dataclass(frozen=True)
class DetectableDifference:
    """Smallest mean difference a paired comparison detects at the given power.

    value = (t_{1-α/2, T-1} + t_{power, T-1}) · sd_difference / sqrt(T), with
    α = 1 - confidence and sd_difference = S · sqrt(2(1 - ρ)). The value is
    not capped: above 1 it says no difference of pass^k values is detectable.
    """

    tasks: int
    task_sd: float
    correlation: float
    confidence: float
    power: float
    sd_difference: float
    value: float


def detectable_difference(
    tasks: int,
    task_sd: float = DEFAULT_TASK_SD,
    correlation: float = DEFAULT_CORRELATION,
    confidence: float = DEFAULT_CONFIDENCE,
    power: float = DEFAULT_POWER,
) -> DetectableDifference:
    """Minimum detectable difference of a paired design on T shared tasks.

    Framing after Miller (2024), "Adding Error Bars to Evals", sections on
    paired differences and power analysis: when both models run the same
    tasks, the comparison rests on the per-task differences, whose variance
    is Var(A) + Var(B) - 2 Cov(A, B) = 2 S² (1 - ρ) if both models spread
    with the same S and correlate with ρ across tasks.

    Approximation: the exact power of the two-sided paired t-test involves
    the noncentral t distribution. Here the rejection in the far tail is
    ignored and the noncentral t is replaced by a central t shifted by
    δ sqrt(T) / sd_d, which gives the closed form above (the usual
    normal-theory formula with t quantiles in place of z). It is close to
    exact from about ten tasks on, and the equal-S assumption is part of the
    approximation too. The default ρ = 0 ignores the pairing's gain (a
    positive ρ lowers the value), so it is conservative.
    """
    t_count = _check_tasks(tasks)
    s = _check_sd(task_sd)
    if isinstance(correlation, bool) or not isinstance(
        correlation, int | float | np.integer | np.floating
    ):
        raise EstimateError(f"correlation must be a number, got {correlation!r}")
    rho = float(correlation)
    if not (math.isfinite(rho) and -1.0 <= rho <= 1.0):
        raise EstimateError(f"correlation must lie in [-1, 1], got {correlation!r}")
    gamma = _check_fraction("confidence", confidence, low_open=True, high_open=True)
    beta = _check_fraction("power", power, low_open=True, high_open=True)
    sd_d = s * math.sqrt(2.0 * (1.0 - rho))
    df = t_count - 1
    multiplier = t_quantile(gamma, df) + float(special.stdtrit(df, beta))
    return DetectableDifference(
        tasks=t_count,
        task_sd=s,
        correlation=rho,
        confidence=gamma,
        power=beta,
        sd_difference=sd_d,
        value=multiplier * sd_d / math.sqrt(t_count),
    )


# ---------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Plan:
    """The answers for one target half-width, with the inputs used."""

    target_halfwidth: float
    confidence: float
    pass_rate: float
    task_sd: float
    runs_per_task: int
    tasks: int
    detectable_difference: DetectableDifference


def plan(
    target_halfwidth: float,
    confidence: float = DEFAULT_CONFIDENCE,
    pass_rate: float = DEFAULT_PASS_RATE,
    task_sd: float = DEFAULT_TASK_SD,
    correlation: float = DEFAULT_CORRELATION,
    tasks: int | None = None,
    power: float = DEFAULT_POWER,
) -> Plan:
    """runs_needed, tasks_needed and detectable_difference for one target.

    The detectable difference is computed for `tasks` if given (e.g. the size
    of an existing suite), else for the planned number of tasks.
    """
    needed_tasks = tasks_needed(target_halfwidth, task_sd, confidence)
    mde = detectable_difference(
        needed_tasks if tasks is None else tasks, task_sd, correlation, confidence, power
    )
    return Plan(
        target_halfwidth=float(target_halfwidth),
        confidence=float(confidence),
        pass_rate=float(pass_rate),
        task_sd=float(task_sd),
        runs_per_task=runs_needed(target_halfwidth, pass_rate, confidence),
        tasks=needed_tasks,
        detectable_difference=mde,
    )
