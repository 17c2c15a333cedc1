"""Outcome consistency (stats/consistency.py) against HAL's published definition.

The references here are written from the formulas, over lists of run outcomes, not
from reportgen's code: HAL's C_out per task is (2 p - 1)^2 with p the task's share of
passed runs, for tasks with at least two runs, and the suite's value is the plain
mean over those tasks (princeton-pli/hal-harness, reliability_eval/metrics/
consistency.py, compute_outcome_consistency). The unbiased estimate is
1 - 4 s^2, with s^2 the sample variance (divisor n - 1) of the task's outcomes.
"""

from __future__ import annotations

import statistics
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reportgen.stats.consistency import (
    check_consistency_coverage,
    outcome_consistency,
    unbiased_outcome_consistency,
)
from reportgen.stats.estimate import EstimateError
from reportgen.stats.population import Population, fit_population


def hal_reference(outcomes: list[list[int]]) -> float | None:
    """HAL's agent-level C_out over lists of 0/1 outcomes, one list per task."""
    values = []
    for runs in outcomes:
        if len(runs) < 2:
            continue  # HAL skips tasks with fewer than two runs
        p = sum(runs) / len(runs)
        values.append((2 * p - 1) ** 2)
    return statistics.fmean(values) if values else None


def unbiased_reference(outcomes: list[list[int]]) -> float | None:
    values = [1 - 4 * statistics.variance(runs) for runs in outcomes if len(runs) >= 2]
    return statistics.fmean(values) if values else None


def counts_of(outcomes: list[list[int]]) -> tuple[list[int], list[int]]:
    return [sum(r) for r in outcomes], [len(r) for r in outcomes]


suites = st.lists(st.lists(st.integers(0, 1), min_size=1, max_size=12), min_size=1, max_size=30)


@given(suites)
def test_both_estimates_equal_their_definitions_on_run_outcomes(outcomes):
    successes, runs = counts_of(outcomes)
    result = outcome_consistency(successes, runs, resamples=50)
    assert result.tasks == sum(len(r) >= 2 for r in outcomes)
    assert result.single_run_tasks == sum(len(r) < 2 for r in outcomes)
    for got, want in (
        (result.hal.estimate, hal_reference(outcomes)),
        (result.unbiased.estimate, unbiased_reference(outcomes)),
    ):
        if want is None:
            assert got is None
        else:
            assert got == pytest.approx(want, abs=1e-12)


@given(st.integers(2, 30), st.fractions(0, 1))
def test_the_unbiased_value_is_unbiased_and_hal_overstates_by_4p_1_minus_p_over_n(n, p):
    """Exactly, over the binomial distribution of a task's successes."""
    c = np.arange(n + 1, dtype=np.int64)
    runs = np.full(n + 1, n, dtype=np.int64)
    weights = [comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(n + 1)]
    unbiased = sum(
        w * (1 - Fraction(4 * i * (n - i), n * (n - 1)))
        for w, i in zip(weights, range(n + 1), strict=True)
    )
    hal = sum(w * (2 * Fraction(i, n) - 1) ** 2 for w, i in zip(weights, range(n + 1), strict=True))
    assert unbiased == (2 * p - 1) ** 2
    assert hal - (2 * p - 1) ** 2 == 4 * p * (1 - p) / n
    # And the code's per-task values are these, to rounding.
    computed = unbiased_outcome_consistency(c, runs)
    for i in range(n + 1):
        assert computed[i] == pytest.approx(float(1 - Fraction(4 * i * (n - i), n * (n - 1))))


def test_edge_cases():
    every_pass = outcome_consistency([5, 5, 5], [5, 5, 5])
    assert (every_pass.hal.estimate, every_pass.hal.low, every_pass.hal.high) == (1.0, 1.0, 1.0)
    assert every_pass.unbiased.estimate == 1.0
    every_fail = outcome_consistency([0, 0], [3, 3])
    assert every_fail.unbiased.estimate == 1.0 and every_fail.unbiased.low == 1.0
    # One task: a value, no interval.
    one = outcome_consistency([2], [4])
    assert one.hal.estimate == 0.0 and one.hal.low is None and one.hal.high is None
    # Tasks of one run are left out, as HAL leaves them out.
    mixed = outcome_consistency([1, 0, 3], [1, 1, 4])
    assert mixed.tasks == 1 and mixed.single_run_tasks == 2
    assert mixed.hal.estimate == pytest.approx(0.25)
    # No task with two runs: nothing to say.
    none = outcome_consistency([1, 0], [1, 1])
    assert none.tasks == 0 and none.hal.estimate is None and none.unbiased.estimate is None
    # A single task's unbiased value can be negative (n = 2, c = 1); the interval
    # stays within [0, 1].
    split = outcome_consistency([1, 1], [2, 2])
    assert split.unbiased.estimate == -1.0
    assert split.unbiased.low == 0.0 and split.unbiased.high == 0.0
    with pytest.raises(EstimateError):
        outcome_consistency([3], [2])


def test_the_interval_is_seeded_and_holds_the_estimate():
    rng = np.random.default_rng(1)
    runs = rng.integers(2, 9, size=80)
    successes = rng.binomial(runs, rng.beta(0.5, 0.5, size=80))
    first = outcome_consistency(successes, runs)
    assert first == outcome_consistency(successes, runs)
    assert first != outcome_consistency(successes, runs, seed=7)
    for interval in (first.hal, first.unbiased):
        assert interval.low is not None and interval.high is not None
        assert 0 <= interval.low < interval.estimate < interval.high <= 1


def test_the_true_value_of_a_beta_population():
    """E[(2p - 1)^2] for p ~ Beta(a, b), against numerical integration."""
    population = Population(0.3, 2.5)
    a, b = population.alpha, population.beta
    assert a is not None and b is not None
    grid = np.linspace(0, 1, 400_001)[1:-1]
    density = grid ** (a - 1) * (1 - grid) ** (b - 1)
    expected = np.sum((2 * grid - 1) ** 2 * density) / np.sum(density)
    check = check_consistency_coverage([4, 4], population, suites=1, resamples=10)
    assert check.true_value == pytest.approx(expected, abs=1e-4)
    assert check_consistency_coverage([4, 4], Population(0.3, None), suites=1).true_value == (
        pytest.approx((2 * 0.3 - 1) ** 2)
    )


@pytest.mark.parametrize("tasks", [50, 200])
def test_coverage_of_the_consistency_intervals(tasks):
    """Seeded simulation: 95% bootstrap intervals over tasks, 4 runs a task, true rates
    from a U-shaped Beta (most tasks nearly always pass or fail, as agent suites do).

    The unbiased interval holds the true consistency close to 95% of the time at 50 and
    at 200 tasks; HAL's plug-in value is biased upward by 4 p (1 - p)/n on average, so
    its interval misses more often, and more so as more tasks narrow it.
    """
    population = Population(0.55, 1.2)
    check = check_consistency_coverage(
        np.full(tasks, 4), population, suites=2000, resamples=500, seed=11
    )
    unbiased, unbiased_bias = check.of("unbiased")
    hal, hal_bias = check.of("hal")
    print(
        f"{tasks} tasks: unbiased {unbiased:.3f} (bias {unbiased_bias:+.4f}), "
        f"HAL {hal:.3f} (bias {hal_bias:+.4f})"
    )
    assert abs(unbiased - 0.95) <= 0.025
    assert abs(unbiased_bias) < 0.01  # Monte-Carlo error about 0.002
    assert hal < unbiased - 0.05
    assert hal_bias > 0.02


def test_the_coverage_check_fits_an_observed_suite():
    """As a build uses it: a population fitted to the suite, its own numbers of runs."""
    rng = np.random.default_rng(3)
    runs = rng.integers(2, 6, size=40)
    successes = rng.binomial(runs, rng.beta(0.6, 0.4, size=40))
    check = check_consistency_coverage(runs, fit_population(successes, runs), suites=60)
    assert check.suites == 60 and 0 <= check.true_value <= 1
    assert all(0 <= share <= 1 for share in check.coverage)
    with pytest.raises(EstimateError):
        check_consistency_coverage([4, 1], Population(0.5, None))


def test_a_check_too_costly_to_make_is_not_made():
    """Thousands of distinct numbers of runs make thousands of distinct outcomes: the
    check's budget cannot afford enough suites, so it says nothing rather than little."""
    runs = np.arange(2, 3002)
    assert check_consistency_coverage(runs, Population(0.5, 2.0)) is None
    assert check_consistency_coverage(runs[:40], Population(0.5, 2.0)) is not None
