"""Which reliability@k leads the pages: the one the coverage check found better calibrated."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .coverage import NEAR_NOMINAL, CoverageCheck, IntervalCoverage, check_coverage
from .estimate import IntArray, SuiteInterval, estimate_suite
from .plain import decimals
from .population import Population, fit_population

# ---------------------------------------------------------------- the headline

#: Below this measured coverage the headline interval is not published as the headline
#: (pages lead with what the data supports instead, see supported_k) and `check` does
#: not gate on it without --accept-uncalibrated: a bar checked against it would pass or
#: fail on noise.
UNFIT_COVERAGE = 0.80


@dataclass(frozen=True)
class Headline:
    """Which reliability@k estimate leads the page, with which interval, and why."""

    estimator: str  # "unbiased" or "plugin"
    reason: str
    #: The coverage check's name for the interval shown with it: "unbiased_t",
    #: "plugin_t", "bootstrap", "clustered_unbiased" or "clustered_plugin".
    interval: str


#: What kind of interval each is, as the reason names it ("its ... interval").
INTERVAL_KINDS = {
    "plugin_t": "Student-t",
    "unbiased_t": "Student-t",
    "bootstrap": "two-stage bootstrap",
    "clustered_plugin": "cluster-robust",
    "clustered_unbiased": "cluster-robust",
}
#: Which interval leads when several are as close to their level as Monte-Carlo
#: noise can tell: the unbiased estimate first (no bias by construction), then the
#: SPEC's Student-t interval before the ones that take more explaining.
PREFERENCE = ("unbiased_t", "clustered_unbiased", "plugin_t", "clustered_plugin", "bootstrap")


def _share(value: float) -> str:
    """0.8125 -> '81.3%', as the coverage tables beside the reason write it."""
    return f"{decimals(value * 100, 1)}%"


def uncalibrated(check: CoverageCheck | None, interval_name: str) -> float | None:
    """The headline interval's own measured coverage when it falls short of its claimed
    level by more than max(NEAR_NOMINAL, two Monte-Carlo standard errors): what every
    output must then say beside it. None when it does not, or was not measured.

    `interval_name` is the check's name for the interval the headline shows."""
    if check is None:
        return None
    interval = check.get(interval_name)
    if interval.coverage is None or interval.monte_carlo_error is None:
        return None
    margin = max(NEAR_NOMINAL, 2.0 * interval.monte_carlo_error)
    return interval.coverage if interval.coverage < check.confidence - margin else None


def choose_headline(
    check: CoverageCheck | None, unbiased_defined: bool, every_run: str | None = None
) -> Headline:
    """The estimate and interval the coverage check found best calibrated.

    Every interval the check measured is a candidate; calibration error is
    |coverage - level|. Those within Monte-Carlo noise of the best (two standard
    errors of the difference) are as good as it, and of them the first in
    PREFERENCE leads. `unbiased_defined` says whether every task has k runs: the
    bootstrap's interval is then the unbiased estimate's, else the plug-in's (where
    only some tasks have k runs the check's unbiased interval is the one over them).
    Without a check the unbiased estimate leads when defined, else the plug-in by
    necessity. `every_run` ("passed" or "failed") says why there is no check: every
    run of every task did so.
    """
    if every_run is not None or check is None:
        return _unchecked(unbiased_defined, every_run)
    by_name = {i.name: i for i in check.intervals if i.coverage is not None}
    measured = [by_name[name] for name in PREFERENCE if name in by_name]
    if not measured:
        return _unchecked(unbiased_defined, None)
    gamma = check.confidence

    def error(interval: IntervalCoverage) -> float:
        return abs(float(interval.coverage or 0.0) - gamma)

    def noise(a: IntervalCoverage, b: IntervalCoverage) -> float:
        return 2.0 * math.hypot(a.monte_carlo_error or 0.0, b.monte_carlo_error or 0.0)

    best = min(measured, key=error)
    chosen = next(i for i in measured if error(i) <= error(best) + noise(i, best))
    estimator = (
        "plugin"
        if chosen.name in ("plugin_t", "clustered_plugin")
        or (chosen.name == "bootstrap" and not unbiased_defined)
        else "unbiased"
    )
    claimed = f"claimed {gamma * 100:.10g}%"
    others = ", ".join(
        f"{SHORT_NAMES[i.name]} {_share(float(i.coverage or 0.0))}"
        for i in measured
        if i is not chosen
    )
    others = f" (the others: {others})" if others else ""
    own = (
        f"its {INTERVAL_KINDS[chosen.name]} interval covered the true value in "
        f"{_share(float(chosen.coverage or 0.0))} of simulated suites"
    )
    if chosen is best:
        return Headline(estimator, f"{own}, the closest to the {claimed}{others}", chosen.name)
    why = (
        "the unbiased estimate has no bias by construction"
        if estimator == "unbiased"
        else "the methodology prefers it on ties"
    )
    return Headline(
        estimator,
        f"{own}, within Monte-Carlo noise of the closest to the {claimed}{others}, and {why}",
        chosen.name,
    )


#: Short names for the intervals, in lists (the reason's, the methodology's table).
SHORT_NAMES = {
    "plugin_t": "plug-in t",
    "unbiased_t": "unbiased t",
    "bootstrap": "bootstrap",
    "clustered_plugin": "plug-in clustered",
    "clustered_unbiased": "unbiased clustered",
}


def _unchecked(unbiased_defined: bool, every_run: str | None) -> Headline:
    """The headline where the check measured nothing."""
    if not unbiased_defined:
        reason = "the unbiased estimate is undefined: it needs k runs of every task"
        if every_run is not None:
            reason += (
                f"; and every run of every task {every_run}, so simulated suites cannot "
                "test the intervals"
            )
        return Headline("plugin", reason, "plugin_t")
    if every_run is not None:
        return Headline(
            "unbiased",
            f"every run of every task {every_run}, so simulated suites cannot test the "
            "intervals, and the unbiased estimate has no bias by construction",
            "unbiased_t",
        )
    return Headline("unbiased", "it has no bias by construction", "unbiased_t")


def supported_k(runs: Sequence[int] | IntArray, k: int) -> int:
    """What a page leads with where no interval for reliability@k reaches UNFIT_COVERAGE:
    reliability at the largest k every task has runs for (its unbiased value is then
    defined for every task), or, where every task has k runs already, the pass rate (1)."""
    fewest = int(np.min(runs))
    return fewest if fewest < k else 1


@dataclass(frozen=True)
class Supported:
    """What a result set leads with where its headline interval covered less than
    UNFIT_COVERAGE: the unbiased reliability at supported_k, with its Student-t interval
    and that interval's own measured coverage (None where there was nothing to simulate:
    every run of every task passed, or every one failed)."""

    k: int
    value: SuiteInterval
    coverage: float | None


def supported(
    successes: IntArray,
    runs: IntArray,
    k: int,
    confidence: float,
    check: Callable[[IntArray, int, Population], CoverageCheck] | None = None,
) -> Supported:
    """The Supported value for a suite whose reliability@k interval is unfit to lead,
    checked as the headline was; `check` runs the coverage check (default
    coverage.check_coverage at `confidence`), so a build can cache it."""
    at = supported_k(runs, k)
    value = estimate_suite(successes, runs, at, confidence).unbiased
    population = fit_population(successes, runs)
    if population.every_run is not None:
        return Supported(at, value, None)
    measured = (
        check(runs, at, population)
        if check is not None
        else check_coverage(runs, at, population, confidence)
    )
    return Supported(at, value, measured.get("unbiased_t").coverage)
