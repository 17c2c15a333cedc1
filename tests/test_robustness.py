"""Robustness (stats/robustness.py, profile.robustness) against HAL's definition, and
the paired ratio with its interval against Fieller's defining equation.

The references are written from the formulas over lists of run outcomes, not from
reportgen's code. HAL's robustness ratio (princeton-pli/hal-harness,
reliability_eval/metrics/robustness.py, compute_robustness_ratio and
compute_accuracy) is min(Acc_perturbed / Acc_baseline, 1), each accuracy the mean
outcome over every (task, run) of its condition, NaN where the baseline's accuracy is
below 1e-8. The paired ratio is mean over shared tasks of C(c, k)/C(n, k) under the
perturbation over the same mean at baseline; a bound θ of Fieller's interval is where
the one-sample t statistic of the differences x_i - θ y_i equals the t quantile.
"""

from __future__ import annotations

import math
import statistics
from math import comb

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from reportgen.counts import TaskCounts
from reportgen.profile import robustness
from reportgen.results import Results
from reportgen.stats.estimate import EstimateError
from reportgen.stats.robustness import (
    check_ratio_coverage,
    hal_robustness,
    paired_ratio,
    ratio_interval,
)


def hal_reference(baseline: list[list[int]], perturbed: list[list[int]]) -> float:
    """HAL's R from the outcome lists of each condition's tasks."""
    base_runs = [o for runs in baseline for o in runs]
    runs = [o for runs in perturbed for o in runs]
    if not base_runs or not runs:
        return math.nan
    base = sum(base_runs) / len(base_runs)
    if base < 1e-8:
        return math.nan
    return min((sum(runs) / len(runs)) / base, 1.0)


def counts(outcomes: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.array([sum(r) for r in outcomes], dtype=np.int64),
        np.array([len(r) for r in outcomes], dtype=np.int64),
    )


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12)


outcomes = st.lists(st.integers(0, 1), min_size=1, max_size=10)


@given(st.lists(st.tuples(outcomes, outcomes), min_size=1, max_size=25))
def test_hal_ratio_equals_its_definition(pairs):
    baseline, perturbed = [b for b, _ in pairs], [p for _, p in pairs]
    got = hal_robustness(*counts(baseline), *counts(perturbed))
    assert same(got, hal_reference(baseline, perturbed))


def test_hal_ratio_edge_cases():
    # Every run passes in both: 1. A better perturbed accuracy is capped at 1.
    assert hal_robustness(*counts([[1, 1]]), *counts([[1, 1]])) == 1.0
    assert hal_robustness(*counts([[1, 0, 0, 0]]), *counts([[1, 1]])) == 1.0
    # A baseline that never passed leaves it undefined, as in HAL's code (also 0 / 0).
    assert math.isnan(hal_robustness(*counts([[0, 0]]), *counts([[1, 0]])))
    assert math.isnan(hal_robustness(*counts([[0]]), *counts([[0]])))
    # One run a condition.
    assert hal_robustness(*counts([[1]]), *counts([[0]])) == 0.0
    # HAL pools: tasks with more runs weigh more, paired or not.
    assert hal_robustness(*counts([[1] * 8, [0, 0]]), *counts([[1, 0], [0]])) == (
        pytest.approx((1 / 3) / 0.8)
    )


def fieller_t(x: list[float], y: list[float], theta: float) -> float:
    """The one-sample t statistic of x_i - theta y_i (Fieller's pivot)."""
    d = [a - theta * b for a, b in zip(x, y, strict=True)]
    return statistics.fmean(d) / (statistics.stdev(d) / math.sqrt(len(d)))


@given(
    st.lists(st.tuples(outcomes, outcomes), min_size=2, max_size=20),
    st.integers(1, 4),
    st.sampled_from([0.8, 0.95]),
)
def test_the_paired_ratio_and_its_bounds_meet_their_definitions(pairs, k, confidence):
    baseline, perturbed = [b for b, _ in pairs], [p for _, p in pairs]
    shared = [(b, p) for b, p in pairs if len(b) >= k and len(p) >= k]
    got = paired_ratio(*counts(baseline), *counts(perturbed), k, confidence)
    assert got.tasks == len(shared)
    x = [comb(sum(p), k) / comb(len(p), k) for _, p in shared]
    y = [comb(sum(b), k) / comb(len(b), k) for b, _ in shared]
    if not shared or sum(y) == 0:
        assert got.estimate is None and got.low is None
        return
    assert got.estimate == pytest.approx(sum(x) / sum(y), rel=1e-9)
    assert (got.mean, got.baseline_mean) == (
        pytest.approx(statistics.fmean(x)),
        pytest.approx(statistics.fmean(y)),
    )
    if len(shared) < 2:
        assert got.low is None and not got.unbounded
        return
    assume(statistics.stdev([a - got.estimate * b for a, b in zip(x, y, strict=True)]) > 1e-9)
    quantile = scipy_stats.t.ppf(1 - (1 - confidence) / 2, len(shared) - 1)
    if got.unbounded:
        # The baseline's own t statistic does not clear the quantile.
        assert fieller_t([0.0] * len(y), [-v for v in y], 1.0) <= quantile + 1e-9
        return
    assert got.low is not None and got.high is not None
    assert got.low <= got.estimate <= got.high
    assert fieller_t(x, y, got.high) == pytest.approx(-quantile, rel=1e-6)
    if got.low > 0:
        assert fieller_t(x, y, got.low) == pytest.approx(quantile, rel=1e-6)


def test_ratio_edge_cases():
    # Every task passes every run in both: ratio 1, an interval of zero width.
    same_runs = counts([[1, 1, 1]] * 5)
    r = paired_ratio(*same_runs, *same_runs, 3)
    assert (r.estimate, r.low, r.high, r.tasks) == (1.0, 1.0, 1.0, 5)
    # One shared task: a ratio without an interval.
    one = paired_ratio(*counts([[1, 1]]), *counts([[1, 0]]), 1)
    assert (one.estimate, one.low, one.high, one.unbounded) == (0.5, None, None, False)
    # k above every task's runs: no task counts, nothing is defined.
    short = paired_ratio(*counts([[1, 1]] * 3), *counts([[1, 1]] * 3), 3)
    assert (short.tasks, short.estimate, short.low) == (0, None, None)
    # A baseline that never passed k in a row: undefined.
    never = paired_ratio(*counts([[0, 1]] * 4), *counts([[1, 1]] * 4), 2)
    assert never.estimate is None
    # A baseline barely clear of 0, one task of many: unbounded above.
    rare = paired_ratio(*counts([[1, 1]] + [[0, 0]] * 9), *counts([[1, 1]] * 10), 1)
    assert rare.estimate == 10.0 and rare.unbounded and rare.high is None
    with pytest.raises(EstimateError):
        ratio_interval([0.5, 0.5], [0.5], 1)


def test_the_ratio_is_paired_by_task_not_pooled():
    """A perturbation that fails the hard tasks a harness happened to run more often
    moves HAL's pooled ratio; the paired ratio compares like with like."""
    baseline = [[1] * 10, [0, 1]]
    perturbed = [[1, 1], [0] * 10]
    ratio = paired_ratio(*counts(baseline), *counts(perturbed), 1)
    assert ratio.estimate == pytest.approx((1.0 + 0.0) / (1.0 + 0.5))
    assert hal_robustness(*counts(baseline), *counts(perturbed)) == pytest.approx(
        (2 / 12) / (11 / 12)
    )


def population(size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Baseline pass rates from a U-shaped Beta; the perturbation leaves 60% of tasks
    alone and scales the rest by a uniform draw: E[q^k] / E[p^k] = 0.6 + 0.4 / (k + 1)."""
    rng = np.random.default_rng(seed)
    p = rng.beta(0.8, 0.6, size)
    q = np.where(rng.random(size) < 0.6, p, p * rng.random(size))
    return p, q


@pytest.mark.parametrize("tasks", [50, 200])
@pytest.mark.parametrize("k", [1, 3])
def test_coverage_of_the_robustness_ratio_interval(tasks, k):
    """Seeded simulation: 95% Fieller intervals, 4 runs a task in each condition, paired
    task rates from the population above (200,000 pairs, so its ratio is within 0.002
    of the closed form)."""
    p, q = population(200_000, seed=7)
    check = check_ratio_coverage(p, q, np.full(p.size, 4), np.full(p.size, 4), tasks, k, seed=11)
    assert check is not None and check.suites == 2000
    assert check.true_value == pytest.approx(0.6 + 0.4 / (k + 1), abs=0.003)
    print(
        f"k={k}, {tasks} tasks: coverage {check.coverage:.3f} "
        f"(+-{check.monte_carlo_error:.3f}), bias {check.bias:+.4f}"
    )
    assert abs(check.coverage - 0.95) <= 0.015
    assert abs(check.bias) < 0.03


def test_a_coverage_check_too_costly_is_not_made():
    p, q = population(100, seed=1)
    assert check_ratio_coverage(p, q, np.full(100, 4), np.full(100, 4), 50_000, 1) is None
    with pytest.raises(EstimateError):
        check_ratio_coverage(p, q, np.full(100, 2), np.full(100, 2), 50, 3)


def task(task_id: str, runs: list[int]) -> TaskCounts:
    return TaskCounts(task_id, successes=sum(runs), runs=len(runs), codes=bytes(runs))


def test_robustness_pairs_tasks_by_id_and_counts_the_rest():
    baseline = [task("a", [1, 1, 1]), task("b", [1, 0, 1]), task("c", [0, 0, 1])]
    perturbed = [task("c", [0, 0, 0]), task("a", [1, 0, 1]), task("d", [1, 1, 1])]
    result = robustness(perturbed, baseline, "base", 2, 0.95, Results(keep=False))
    assert (result.baseline, result.shared, result.only_perturbed, result.only_baseline) == (
        "base",
        2,
        1,
        1,
    )
    # a: 1/3 against 1; c: 0 against 0.
    assert result.reliability.estimate == pytest.approx((1 / 3 + 0) / (1 + 0))
    assert result.pass_rate.estimate == pytest.approx((2 / 3 + 0) / (1 + 1 / 3))
    # HAL's pools every run, shared or not.
    assert result.hal == pytest.approx((5 / 9) / (6 / 9))
    assert result.coverage is not None and result.coverage.tasks == 2
