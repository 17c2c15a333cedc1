"""The worked examples of the reliability profile, for the methodology's pages:
outcome consistency task by task, the check of its intervals, costs,
predictability, and robustness with the check of its interval.

content.py hands these functions to the content pages (profile_functions); each
computes with the same code as a build.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..stats import elementary
from ..stats.consistency import (
    ConsistencyCoverage,
    OutcomeConsistency,
    check_consistency_coverage,
    hal_outcome_consistency,
    outcome_consistency,
    unbiased_outcome_consistency,
)
from ..stats.estimate import unbiased_pass_hat_k
from ..stats.population import Population
from ..stats.predictability import Predictability, predictability
from ..stats.resources import ResourceSummary, summarise_resources, task_cv
from ..stats.robustness import (
    RatioCoverage,
    RatioInterval,
    check_ratio_coverage,
    hal_robustness,
    paired_ratio,
)


@dataclass(frozen=True)
class ConsistencyTask:
    successes: int
    runs: int
    unbiased: float
    hal: float


@dataclass(frozen=True)
class ConsistencyExample:
    """A made-up suite's outcome consistency, task by task and over the suite."""

    tasks: list[ConsistencyTask]
    suite: OutcomeConsistency


def consistency_example(
    successes: list[int], runs: list[int], confidence: float
) -> ConsistencyExample:
    c, n = np.array(successes, dtype=np.int64), np.array(runs, dtype=np.int64)
    unbiased, hal = unbiased_outcome_consistency(c, n), hal_outcome_consistency(c, n)
    return ConsistencyExample(
        [
            ConsistencyTask(int(c[i]), int(n[i]), float(unbiased[i]), float(hal[i]))
            for i in range(c.size)
        ],
        outcome_consistency(c, n, confidence),
    )


@functools.cache
def consistency_coverage_example(
    alpha: float, beta: float, tasks: int, runs: int, confidence: float
) -> ConsistencyCoverage | None:
    """The check of the consistency intervals for a made-up suite (cached, like
    coverage_example): `tasks` tasks of `runs` runs, rates from Beta(alpha, beta)."""
    population = Population(alpha / (alpha + beta), alpha + beta)
    return check_consistency_coverage([runs] * tasks, population, confidence)


@dataclass(frozen=True)
class ResourceTask:
    successes: int
    runs: int
    costs: list[float]
    cv: float
    consistency: float
    pass_hat_k: float


@dataclass(frozen=True)
class ResourceExample:
    """A made-up suite's costs, task by task, and its resource summary."""

    tasks: list[ResourceTask]
    summary: ResourceSummary
    reliability: float


def resource_example(
    successes: list[int], runs: list[int], costs: list[list[float]], k: int, confidence: float
) -> ResourceExample:
    """Each task's counts and its runs' costs; pass^k is the unbiased one."""
    c, n = np.array(successes, dtype=np.int64), np.array(runs, dtype=np.int64)
    owner = np.repeat(np.arange(len(costs)), [len(run) for run in costs])
    cost = np.array([x for run in costs for x in run], dtype=np.float64)
    cvs = task_cv(owner, cost, len(costs))
    per_task = unbiased_pass_hat_k(c, n, k)
    summary = summarise_resources(owner, {"cost": cost}, per_task, k, confidence)
    tasks = [
        ResourceTask(
            int(c[i]),
            int(n[i]),
            costs[i],
            float(cvs[i]),
            float(elementary.exp(-cvs[i : i + 1])[0]),
            float(per_task[i]),
        )
        for i in range(len(costs))
    ]
    return ResourceExample(tasks, summary, float(np.mean(per_task)))


def predictability_example(
    pairs: list[tuple[float, bool]], confidence: float
) -> Predictability | None:
    """(stated confidence, passed) of each run, each run a task of its own."""
    stated = np.array([c for c, _ in pairs], dtype=np.float64)
    passed = np.array([y for _, y in pairs])
    owner = np.arange(len(pairs), dtype=np.int64)
    return predictability(owner, passed, stated, len(pairs), confidence)


@dataclass(frozen=True)
class RobustnessTask:
    baseline: tuple[int, int]
    perturbed: tuple[int, int]
    #: Unbiased pass^k at baseline (y) and under the perturbation (x).
    y: float
    x: float


@dataclass(frozen=True)
class RobustnessExample:
    """A made-up suite run at baseline and under a perturbation, task by task."""

    tasks: list[RobustnessTask]
    reliability: RatioInterval
    pass_rate: RatioInterval
    hal: float


def robustness_example(
    baseline: tuple[list[int], list[int]],
    perturbed: tuple[list[int], list[int]],
    k: int,
    confidence: float,
) -> RobustnessExample:
    """The same tasks' (successes, runs) in each condition, in the same order."""
    base_c, base_n = (np.array(v, dtype=np.int64) for v in baseline)
    c, n = (np.array(v, dtype=np.int64) for v in perturbed)
    y, x = unbiased_pass_hat_k(base_c, base_n, k), unbiased_pass_hat_k(c, n, k)
    tasks = [
        RobustnessTask(
            (int(base_c[i]), int(base_n[i])), (int(c[i]), int(n[i])), float(y[i]), float(x[i])
        )
        for i in range(c.size)
    ]
    return RobustnessExample(
        tasks,
        paired_ratio(base_c, base_n, c, n, k, confidence),
        paired_ratio(base_c, base_n, c, n, 1, confidence),
        hal_robustness(base_c, base_n, c, n),
    )


#: Task pairs drawn for the made-up population of robustness_coverage_example, and
#: the suites simulated for each of its rows (half a build's: the methodology page
#: renders six of them on every clean build).
_POPULATION_PAIRS = 20_000
_EXAMPLE_SUITES = 1000


@functools.cache
def robustness_coverage_example(
    alpha: float,
    beta: float,
    unaffected: float,
    runs: int,
    tasks: int,
    k: int,
    confidence: float,
) -> RatioCoverage | None:
    """The check of the ratio's interval in a made-up population: baseline rates p from
    Beta(alpha, beta); a share `unaffected` of tasks keeps p under the perturbation, the
    rest fall to p times a uniform draw, so the true ratio is
    unaffected + (1 - unaffected) / (k + 1). Seeded; cached like coverage_example."""
    rng = np.random.default_rng(2026)
    p = rng.beta(alpha, beta, _POPULATION_PAIRS)
    q = np.where(rng.random(p.size) < unaffected, p, p * rng.random(p.size))
    n = np.full(p.size, runs)
    return check_ratio_coverage(p, q, n, n, tasks, k, confidence, suites=_EXAMPLE_SUITES)


def profile_functions(
    k: int, confidence: float, counts: Callable[[Sequence[Any]], tuple[list[int], list[int]]]
) -> dict[str, Any]:
    """The profile's example functions a content page calls, at the site's k and level;
    `counts` reads a page's tasks as written ("c/n" or pairs) into (successes, runs)."""

    def consistency(items: Sequence[Any]) -> ConsistencyExample:
        return consistency_example(*counts(items), confidence)

    def consistency_coverage(
        alpha: float, beta: float, tasks: int, runs: int
    ) -> ConsistencyCoverage | None:
        return consistency_coverage_example(
            float(alpha), float(beta), int(tasks), int(runs), confidence
        )

    def resources(items: Sequence[Any], k: int = k) -> ResourceExample:
        successes, runs = counts([item["runs"] for item in items])
        costs = [[float(x) for x in item["cost"]] for item in items]
        return resource_example(successes, runs, costs, int(k), confidence)

    def predictability_of(pairs: Sequence[Sequence[Any]]) -> Predictability | None:
        return predictability_example([(float(c), bool(y)) for c, y in pairs], confidence)

    def robustness(
        baseline: Sequence[Any], perturbed: Sequence[Any], k: int = k
    ) -> RobustnessExample:
        return robustness_example(counts(baseline), counts(perturbed), int(k), confidence)

    def robustness_coverage(
        alpha: float, beta: float, unaffected: float, runs: int, tasks: int, k: int = k
    ) -> RatioCoverage | None:
        return robustness_coverage_example(
            float(alpha), float(beta), float(unaffected), int(runs), int(tasks), int(k), confidence
        )

    return {
        "consistency": consistency,
        "consistency_coverage": consistency_coverage,
        "resources": resources,
        "predictability": predictability_of,
        "robustness": robustness,
        "robustness_coverage": robustness_coverage,
    }
