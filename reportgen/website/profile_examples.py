"""The worked examples of the reliability profile, for the methodology's pages:
outcome consistency task by task, the check of its intervals, and costs.

content.py hands these functions to the content pages; each computes with the same
code as a build.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

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
