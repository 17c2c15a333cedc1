"""Plain-JSON views of the core's results, shared by `estimate`, `summary` and report.json.

Full precision throughout; an undefined value (NaN in the core) becomes null.
"""

from __future__ import annotations

import math
from typing import Any

from .estimate import SuiteEstimates, SuiteInterval, TaskEstimates

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


def reliability_json(suite: SuiteEstimates) -> Json:
    return {
        "tasks": len(suite.tasks),
        "plugin": interval_json(suite.plugin),
        "unbiased": interval_json(suite.unbiased),
    }


def estimate_json(suite: SuiteEstimates) -> Json:
    """The whole `reportgen estimate --format json` document."""
    return {
        "k": suite.k,
        "confidence": suite.confidence,
        "tasks": [task_json(suite.tasks, i) for i in range(len(suite.tasks))],
        "reliability_at_k": reliability_json(suite),
        "warnings": list(suite.warnings),
    }
