"""Which reliability@k leads the pages: the one the coverage check found better calibrated."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .coverage import NEAR_NOMINAL, CoverageCheck
from .plain import decimals

# ---------------------------------------------------------------- the headline


@dataclass(frozen=True)
class Headline:
    """Which reliability@k estimate leads the page, and why, in one sentence."""

    estimator: str  # "unbiased" or "plugin"
    reason: str


def _share(value: float) -> str:
    """0.8125 -> '81.3%', as the coverage tables beside the reason write it."""
    return f"{decimals(value * 100, 1)}%"


def uncalibrated(
    check: CoverageCheck | None, estimator: str, interval_name: str | None = None
) -> float | None:
    """The headline interval's own measured coverage when it falls short of its claimed
    level by more than max(NEAR_NOMINAL, two Monte-Carlo standard errors): what every
    output must then say beside it. None when it does not, or was not measured.

    The headline interval is the estimator's Student-t interval unless `interval_name`
    names another of the check's ("bootstrap", where the t interval has zero width)."""
    if check is None:
        return None
    interval = check.get(interval_name or f"{estimator}_t")
    if interval.coverage is None or interval.monte_carlo_error is None:
        return None
    margin = max(NEAR_NOMINAL, 2.0 * interval.monte_carlo_error)
    return interval.coverage if interval.coverage < check.confidence - margin else None


def choose_headline(
    check: CoverageCheck | None, unbiased_defined: bool, every_run: str | None = None
) -> Headline:
    """The estimate whose t interval is better calibrated in the coverage check.

    Calibration error is |coverage - level|. The unbiased estimate wins ties
    within Monte-Carlo noise (two standard errors of the difference): it is
    unbiased by construction, so with no evidence either way it is the safer
    claim. Without the unbiased value (a task with fewer than k runs) the
    plug-in leads by necessity. `every_run` ("passed" or "failed") says why
    there is no check: every run of every task did so.
    """
    if not unbiased_defined:
        reason = "the unbiased estimate is undefined: it needs k runs of every task"
        if every_run is not None:
            reason += (
                f"; and every run of every task {every_run}, so simulated suites cannot "
                "test the intervals"
            )
        return Headline("plugin", reason)
    if every_run is not None:
        return Headline(
            "unbiased",
            f"every run of every task {every_run}, so simulated suites cannot test the "
            "intervals, and the unbiased estimate has no bias by construction",
        )
    if check is None:
        return Headline("unbiased", "it has no bias by construction")
    plugin, unbiased = check.get("plugin_t"), check.get("unbiased_t")
    if (
        plugin.coverage is None
        or unbiased.coverage is None
        or plugin.monte_carlo_error is None
        or unbiased.monte_carlo_error is None
    ):
        return Headline("unbiased", "the unbiased estimate has no bias to correct")
    gamma = check.confidence
    error_plugin = abs(plugin.coverage - gamma)
    error_unbiased = abs(unbiased.coverage - gamma)
    noise = 2.0 * math.hypot(plugin.monte_carlo_error, unbiased.monte_carlo_error)
    shares = _share(plugin.coverage), _share(unbiased.coverage)
    claimed = f"claimed {gamma * 100:.10g}%"
    if error_plugin + noise < error_unbiased:
        return Headline(
            "plugin",
            f"its interval covered the true value in {shares[0]} of simulated suites "
            f"against the unbiased one's {shares[1]} ({claimed})",
        )
    if error_unbiased + noise < error_plugin:
        return Headline(
            "unbiased",
            f"its interval covered the true value in {shares[1]} of simulated "
            f"suites against the plug-in one's {shares[0]} ({claimed})",
        )
    return Headline(
        "unbiased",
        f"both intervals covered about as often as each other in simulated suites "
        f"({shares[1]} and {shares[0]}, {claimed}), "
        "and the unbiased estimate has no bias by construction",
    )
