"""The JSON shapes of the reliability profile beyond reliability@k, as report.json
gives them per set: outcome consistency, resources, predictability and robustness,
and a coverage check's simulated population. Full precision; undefined as null.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .numbers import number
from .stats.consistency import ESTIMATORS, ConsistencyCoverage, OutcomeConsistency
from .stats.population import Population
from .stats.predictability import Predictability
from .stats.resources import RESOURCES, ResourceSummary
from .stats.robustness import RatioCoverage, RatioInterval

if TYPE_CHECKING:
    from .profile import Robustness

Json = dict[str, Any]


def population_json(population: Population) -> Json:
    """The simulated world of a coverage check: a Beta population or a point mass."""
    return {
        "model": "point mass" if population.concentration is None else "beta",
        "mean": population.mean,
        "alpha": population.alpha,
        "beta": population.beta,
    }


def mean_json(value: Any) -> Json | None:
    if value is None:
        return None
    return {
        "estimate": number(value.estimate),
        "low": number(value.low),
        "high": number(value.high),
    }


def consistency_json(result: OutcomeConsistency, check: ConsistencyCoverage | None) -> Json:
    """A set's outcome consistency, both estimators, and the check of their intervals."""
    body: Json = {
        "tasks": result.tasks,
        "single_run_tasks": result.single_run_tasks,
        "confidence": result.confidence,
        "resamples": result.resamples,
        "seed": result.seed,
    }
    for name in ESTIMATORS:
        body[name] = mean_json(result.on(name))
    body["coverage"] = None
    if check is not None:
        body["coverage"] = {
            "suites": check.suites,
            "resamples": check.resamples,
            "seed": check.seed,
            "population": population_json(check.population),
            "true_value": check.true_value,
            **{
                name: {
                    "coverage": check.of(name)[0],
                    "monte_carlo_error": check.monte_carlo_error(name),
                    "bias": check.of(name)[1],
                }
                for name in ESTIMATORS
            },
        }
    return body


def resources_json(summary: ResourceSummary | None) -> Json | None:
    """A set's costs and resource consistency; None where no run recorded any."""
    if summary is None:
        return None
    consistency, cost = summary.consistency, summary.cost
    return {
        "confidence": summary.confidence,
        "resamples": summary.resamples,
        "seed": summary.seed,
        "resource_consistency": None
        if consistency is None
        else {
            "resources": list(consistency.resources),
            "tasks": consistency.tasks,
            **mean_json(consistency.value),  # type: ignore[dict-item]
            "mean_cv": dict(zip(RESOURCES, map(number, consistency.mean_cv), strict=True)),
        },
        "cost": None
        if cost is None
        else {
            "runs": cost.runs,
            "per_run": mean_json(cost.per_run),
            "per_reliable_success": mean_json(cost.per_reliable_success),
            "k": cost.k,
        },
    }


def _ratio_json(ratio: RatioInterval, check: RatioCoverage | None) -> Json:
    return {
        "k": ratio.k,
        "tasks": ratio.tasks,
        "perturbed": number(ratio.mean),
        "baseline": number(ratio.baseline_mean),
        "estimate": number(ratio.estimate),
        "low": number(ratio.low),
        "high": number(ratio.high),
        "unbounded": ratio.unbounded,
        "coverage": None
        if check is None
        else {
            "suites": check.suites,
            "seed": check.seed,
            "true_value": check.true_value,
            "coverage": check.coverage,
            "monte_carlo_error": check.monte_carlo_error,
            "bias": check.bias,
            "unbounded": check.unbounded,
        },
    }


def robustness_json(result: Robustness | None) -> Json | None:
    """A perturbed set against its baseline; None at baseline or with no baseline read."""
    if result is None:
        return None
    return {
        "baseline": result.baseline,
        "shared_tasks": result.shared,
        "only_perturbed": result.only_perturbed,
        "only_baseline": result.only_baseline,
        "confidence": result.reliability.confidence,
        "reliability_ratio": _ratio_json(result.reliability, result.coverage),
        "pass_rate_ratio": _ratio_json(result.pass_rate, result.pass_rate_coverage),
        "hal": number(result.hal),
    }


def predictability_json(result: Predictability | None) -> Json | None:
    """Calibration, discrimination and Brier score; None where no run stated a confidence."""
    if result is None:
        return None
    return {
        "runs": result.runs,
        "tasks": result.tasks,
        "confidence": result.confidence,
        "resamples": result.resamples,
        "seed": result.seed,
        "calibration_error": mean_json(result.calibration_error),
        "auroc": mean_json(result.auroc),
        "brier": mean_json(result.brier),
        "bins": [
            {
                "low": b.low,
                "high": b.high,
                "runs": b.runs,
                "confidence": number(b.confidence),
                "passed": number(b.passed),
            }
            for b in result.bins
        ],
    }
