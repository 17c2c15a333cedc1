"""Plain-JSON views of the core's results, shared by `estimate`, `summary` and report.json.

Full precision throughout; an undefined value (NaN in the core) becomes null.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .stats.estimate import SuiteEstimates, SuiteInterval, TaskEstimates

if TYPE_CHECKING:  # coverage imports variance, which imports this module
    from .stats.coverage import CoverageCheck, Headline

Json = dict[str, Any]


def number(value: float | None) -> float | None:
    """A float for JSON: NaN and None become null."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def task_json(tasks: TaskEstimates, i: int) -> Json:
    """The object for task i, as `reportgen estimate --format json` prints it."""
    return {
        "successes": int(tasks.successes[i]),
        "runs": int(tasks.runs[i]),
        "pass_rate": {
            "estimate": number(tasks.pass_rate[i]),
            "low": number(tasks.pass_rate_low[i]),
            "high": number(tasks.pass_rate_high[i]),
        },
        "pass_hat_k": {
            "plugin": {
                "estimate": number(tasks.plugin[i]),
                "low": number(tasks.plugin_low[i]),
                "high": number(tasks.plugin_high[i]),
            },
            "unbiased": number(tasks.unbiased[i]),
        },
        "pass_at_k": number(tasks.pass_at_k[i]),
    }


def interval_json(interval: SuiteInterval) -> Json:
    return {
        "estimate": number(interval.estimate),
        "low": number(interval.low),
        "high": number(interval.high),
        "sd": number(interval.sd),
        "t": number(interval.t),
        "df": interval.df,
    }


def reliability_json(suite: SuiteEstimates, headline: Headline | None = None) -> Json:
    """Both reliability@k estimates; with `headline`, which one leads and why."""
    body: Json = {"tasks": len(suite.tasks)}
    if headline is not None:
        body["headline"] = headline.estimator
        body["headline_reason"] = headline.reason
    body["plugin"] = interval_json(suite.plugin)
    body["unbiased"] = interval_json(suite.unbiased)
    return body


def coverage_json(check: CoverageCheck) -> Json:
    """The coverage check: its simulated world and each interval's measured coverage."""
    population = check.population
    return {
        "confidence": check.confidence,
        "k": check.k,
        "tasks": check.tasks,
        "population": {
            "model": "point mass" if population.concentration is None else "beta",
            "mean": population.mean,
            "alpha": population.alpha,
            "beta": population.beta,
        },
        "true_value": check.true_value,
        "plugin_bias": check.plugin_bias,
        "seed": check.seed,
        "replicates": check.replicates,
        "bootstrap_replicates": check.bootstrap_replicates,
        "bootstrap_resamples": check.bootstrap_resamples,
        "intervals": [
            {
                "interval": i.name,
                "coverage": number(i.coverage),
                "monte_carlo_error": number(i.monte_carlo_error),
                "replicates": i.replicates,
            }
            for i in check.intervals
        ],
    }


def estimate_json(
    suite: SuiteEstimates, headline: Headline | None = None, check: CoverageCheck | None = None
) -> Json:
    """The whole `reportgen estimate --format json` document."""
    return {
        "k": suite.k,
        "confidence": suite.confidence,
        "tasks": [task_json(suite.tasks, i) for i in range(len(suite.tasks))],
        "reliability_at_k": reliability_json(suite, headline),
        "coverage": None if check is None else coverage_json(check),
        "warnings": list(suite.warnings),
    }
