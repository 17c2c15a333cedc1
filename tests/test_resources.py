"""Cost per run and resource consistency (stats/resources.py) against their definitions.

The references are written from HAL's published definition over each task's list of
run values (princeton-pli/hal-harness, reliability_eval/metrics/consistency.py,
compute_resource_consistency): drop values of 0 or below (and missing ones), CV =
stdev / mean over at least two remaining values, C_res = exp(-mean of the task's
CVs), the suite's value the mean over tasks that have one.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reportgen.stats.resources import RESOURCES, summarise_resources, task_cv


def hal_c_res(tasks: list[dict[str, list[float]]]) -> float | None:
    values = []
    for task in tasks:
        cvs = []
        for name in RESOURCES:
            kept = [v for v in task.get(name, []) if not math.isnan(v) and v > 0]
            if len(kept) >= 2 and statistics.fmean(kept) > 0:
                cvs.append(statistics.stdev(kept) / statistics.fmean(kept))
        if cvs:
            values.append(math.exp(-statistics.fmean(cvs)))
    return statistics.fmean(values) if values else None


def flatten(tasks: list[dict[str, list[float]]], runs: list[int]):
    """Per-run arrays: each run's task, and each measure (NaN where a task lacks it)."""
    owner = np.repeat(np.arange(len(runs)), runs)
    measures = {}
    for name in RESOURCES:
        if any(name in t for t in tasks):
            measures[name] = np.concatenate(
                [
                    np.array(t.get(name, [math.nan] * n), dtype=float)
                    for t, n in zip(tasks, runs, strict=True)
                ]
            )
    return owner, measures


values = st.one_of(st.just(math.nan), st.just(0.0), st.floats(0.001, 1000))


@st.composite
def suites(draw):
    runs = draw(st.lists(st.integers(1, 6), min_size=1, max_size=12))
    names = draw(st.sets(st.sampled_from(RESOURCES), min_size=1))
    tasks = [{name: draw(st.lists(values, min_size=n, max_size=n)) for name in names} for n in runs]
    return tasks, runs


@given(suites())
def test_resource_consistency_is_hal_s_c_res(suite):
    tasks, runs = suite
    owner, measures = flatten(tasks, runs)
    summary = summarise_resources(owner, measures, np.full(len(runs), 0.5), 2, resamples=50)
    want = hal_c_res(tasks)
    if want is None:
        assert summary.consistency is None
    else:
        assert summary.consistency is not None
        assert summary.consistency.value.estimate == pytest.approx(want, rel=1e-9)


@given(suites())
def test_cost_per_run_is_total_cost_over_runs_that_recorded_one(suite):
    tasks, runs = suite
    owner, measures = flatten(tasks, runs)
    pass_hat_k = np.linspace(0, 1, len(runs))
    summary = summarise_resources(owner, measures, pass_hat_k, 3, resamples=50)
    costs = [v for t in tasks for v in t.get("cost", []) if not math.isnan(v)]
    if not costs:
        assert summary.cost is None
        return
    assert summary.cost is not None
    assert summary.cost.runs == len(costs)
    per_run = sum(costs) / len(costs)
    assert summary.cost.per_run.estimate == pytest.approx(per_run, rel=1e-9)
    reliability = float(np.mean(pass_hat_k))
    if reliability == 0:
        assert summary.cost.per_reliable_success is None
    else:
        assert summary.cost.per_reliable_success is not None
        assert summary.cost.per_reliable_success.estimate == pytest.approx(
            3 * per_run / reliability, rel=1e-9
        )


def test_edge_cases():
    owner = np.array([0, 0, 1, 1])
    same = {"cost": np.array([2.0, 2.0, 0.5, 0.5])}
    summary = summarise_resources(owner, same, np.array([1.0, 1.0]), 1)
    assert summary.consistency is not None
    # Zero variance: every run cost the same, so C_res is 1, interval [1, 1].
    assert summary.consistency.value == type(summary.consistency.value)(1.0, 1.0, 1.0)
    assert summary.consistency.mean_cv == (0.0, None, None)
    # One run a task: no CV anywhere, so no consistency; the cost is still known.
    single = summarise_resources(np.array([0, 1]), {"cost": np.array([1.0, 3.0])}, np.ones(2), 1)
    assert single.consistency is None and single.cost is not None
    assert single.cost.per_run.estimate == 2.0
    # No measure at all: nothing to say.
    none = summarise_resources(owner, {}, np.ones(2), 1)
    assert none.consistency is None and none.cost is None
    # Never a reliable success: no cost per one.
    never = summarise_resources(owner, same, np.zeros(2), 3)
    assert never.cost is not None and never.cost.per_reliable_success is None


def test_task_cv_matches_statistics():
    owner = np.array([0, 0, 0, 1, 1, 2])
    values = np.array([1.0, 2.0, 4.0, 5.0, math.nan, 3.0])
    cv = task_cv(owner, values, 3)
    assert cv[0] == pytest.approx(statistics.stdev([1, 2, 4]) / statistics.fmean([1, 2, 4]))
    assert math.isnan(cv[1]) and math.isnan(cv[2])


def test_intervals_are_seeded_and_hold_the_estimate():
    rng = np.random.default_rng(5)
    runs = rng.integers(2, 8, size=60)
    owner = np.repeat(np.arange(60), runs)
    cost = rng.gamma(2.0, 0.05, size=owner.size) * rng.uniform(0.5, 2.0, size=60)[owner]
    duration = rng.gamma(5.0, 10.0, size=owner.size)
    pass_hat_k = rng.uniform(0, 1, size=60)
    measures = {"cost": cost, "duration": duration}
    first = summarise_resources(owner, measures, pass_hat_k, 3)
    assert first == summarise_resources(owner, measures, pass_hat_k, 3)
    assert first.consistency is not None and first.cost is not None
    assert first.cost.per_reliable_success is not None
    for value in (first.consistency.value, first.cost.per_run, first.cost.per_reliable_success):
        assert value.low is not None and value.high is not None
        assert value.low < value.estimate < value.high
