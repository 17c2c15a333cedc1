"""The planner against closed forms, brute-force searches, exact power and its laws."""

from __future__ import annotations

import json
import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from reportgen.stats.estimate import EstimateError, estimate_tasks, normal_quantile
from reportgen.stats.planner import (
    SEARCH_CAP,
    detectable_difference,
    plan,
    runs_needed,
    suite_halfwidth,
    tasks_needed,
    wilson_halfwidth,
)
from reportgen.views import plan_json

from .conftest import examples

TOL = 1e-12
mpmath.mp.dps = 50


def closed_form_runs(h: float, p: float, confidence: float) -> int:
    """Smallest n with the SPEC's Wilson half-width at most h, from the quadratic in n.

    z/(n + z²) · sqrt(p(1-p) n + z²/4) <= h  <=>  h²n² + (2h²z² - z²p(1-p)) n
    + h²z⁴ - z⁴/4 >= 0; the half-width decreases in n, so the answer is the
    ceiling of the larger root (at least 1). Solved in 50-digit arithmetic.
    """
    z = mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf(confidence))
    h_, p_ = mpmath.mpf(h), mpmath.mpf(p)
    a = h_**2
    b = 2 * h_**2 * z**2 - z**2 * p_ * (1 - p_)
    c = h_**2 * z**4 - z**4 / 4
    disc = b * b - 4 * a * c
    root = (-b + mpmath.sqrt(disc)) / (2 * a)
    return max(1, int(mpmath.ceil(root)))


# ------------------------------------------------------------ runs per task


@pytest.mark.parametrize(
    ("h", "p", "expected"),
    [
        # Worked by hand from the quadratic above (z = 1.959964, z² = 3.841459):
        (0.05, 0.5, 381),
        (0.10, 0.5, 93),
        (0.05, 0.8, 245),
        # p = 0: half-width z²/(2(n + z²)) <= h <=> n >= z²(1/(2h) - 1) = 15.37.
        (0.10, 0.0, 16),
        (0.10, 1.0, 16),
    ],
)
def test_runs_needed_reference_values(h: float, p: float, expected: int) -> None:
    assert runs_needed(h, p) == expected
    assert closed_form_runs(h, p, 0.95) == expected


def test_wilson_halfwidth_matches_the_core_interval() -> None:
    # With c = n/2 the observed rate is 0.5 and the Wilson interval has the same half-width.
    for n in (2, 10, 380, 382, 10_000):
        t = estimate_tasks([n // 2], [n], 1)
        half = (t.pass_rate_high[0] - t.pass_rate_low[0]) / 2
        assert wilson_halfwidth(n, 0.5) == pytest.approx(half, abs=TOL)
    t = estimate_tasks([16], [20], 1)
    assert wilson_halfwidth(20, 0.8) == pytest.approx(
        (t.pass_rate_high[0] - t.pass_rate_low[0]) / 2, abs=TOL
    )


def test_wilson_halfwidth_below_one_half() -> None:
    # It tends to 1/2 as n -> 0, so any target of 1/2 or more needs one run.
    assert wilson_halfwidth(1, 0.5) == pytest.approx(
        normal_quantile(0.95) / (2 * math.sqrt(1 + normal_quantile(0.95) ** 2)), abs=TOL
    )
    assert runs_needed(0.5) == 1 and runs_needed(0.9999, 0.3) == 1


def test_runaway_search_is_refused() -> None:
    with pytest.raises(EstimateError, match="would exceed 1,000,000,000"):
        runs_needed(1e-6)
    with pytest.raises(EstimateError, match="would exceed"):
        tasks_needed(1e-6, 0.5)
    # Just under the cap still works: n is about 0.9604 / h².
    assert runs_needed(4e-5) == closed_form_runs(4e-5, 0.5, 0.95)
    assert runs_needed(4e-5) < SEARCH_CAP


halfwidths = st.floats(min_value=0.002, max_value=0.6)
rates = st.floats(min_value=0.0, max_value=1.0)
levels = st.floats(min_value=0.5, max_value=0.999)


@given(halfwidths, rates, levels)
@settings(max_examples=examples(200), deadline=None)
def test_runs_needed_is_the_smallest_n(h: float, p: float, confidence: float) -> None:
    n = runs_needed(h, p, confidence)
    assert wilson_halfwidth(n, p, confidence) <= h
    assert n == 1 or wilson_halfwidth(n - 1, p, confidence) > h


@given(halfwidths, halfwidths, rates)
@settings(max_examples=examples(100), deadline=None)
def test_runs_needed_monotone_in_h(h1: float, h2: float, p: float) -> None:
    small, large = sorted((h1, h2))
    assert runs_needed(small, p) >= runs_needed(large, p)


@given(halfwidths, rates)
@settings(max_examples=examples(100), deadline=None)
def test_half_is_the_worst_case_and_p_is_symmetric(h: float, p: float) -> None:
    assert runs_needed(h, p) <= runs_needed(h, 0.5)
    assert runs_needed(h, p) == runs_needed(h, 1.0 - p)


@given(halfwidths, st.sampled_from([0.0, 0.1, 0.5, 0.8]), st.sampled_from([0.9, 0.95, 0.99]))
@settings(max_examples=examples(60), deadline=None)
def test_runs_needed_matches_the_closed_form(h: float, p: float, confidence: float) -> None:
    assert runs_needed(h, p, confidence) == closed_form_runs(h, p, confidence)


# ------------------------------------------------------------ tasks


def brute_force_tasks(h: float, s: float, confidence: float) -> int:
    t = 2
    while stats.t.ppf(1 - (1 - confidence) / 2, t - 1) * s / math.sqrt(t) > h:
        t += 1
    return t


@pytest.mark.parametrize(
    ("h", "s", "confidence"),
    [(0.05, 0.3, 0.95), (0.1, 0.3, 0.95), (0.05, 0.5, 0.95), (0.2, 0.1, 0.9), (0.1, 0.45, 0.99)],
)
def test_tasks_needed_matches_brute_force(h: float, s: float, confidence: float) -> None:
    assert tasks_needed(h, s, confidence) == brute_force_tasks(h, s, confidence)


def test_tasks_needed_reference_values() -> None:
    # Normal approximation (1.96 · 0.3 / 0.05)² = 138.3; the t quantile adds a few tasks.
    assert tasks_needed(0.05, 0.3) == 141
    # T = 2: t(0.975; 1) = 12.706, half-width 12.706 · 0.01 / sqrt(2) = 0.0898.
    assert tasks_needed(0.09, 0.01) == 2
    assert tasks_needed(0.089, 0.01) == 3
    assert tasks_needed(0.05, 0.0) == 2  # no spread across tasks


sds = st.floats(min_value=0.0, max_value=0.6)


@given(st.floats(min_value=0.01, max_value=0.6), sds, levels)
@settings(max_examples=examples(150), deadline=None)
def test_tasks_needed_is_the_smallest_t(h: float, s: float, confidence: float) -> None:
    t = tasks_needed(h, s, confidence)
    assert t >= 2
    assert suite_halfwidth(t, s, confidence) <= h
    assert t == 2 or suite_halfwidth(t - 1, s, confidence) > h


@given(st.floats(min_value=0.01, max_value=0.6), sds, sds)
@settings(max_examples=examples(100), deadline=None)
def test_tasks_needed_monotone_in_sd(h: float, s1: float, s2: float) -> None:
    small, large = sorted((s1, s2))
    assert tasks_needed(h, small) <= tasks_needed(h, large)


# ------------------------------------------------------------ detectable difference


def test_detectable_difference_by_hand() -> None:
    # T = 10, S = 0.3, rho = 0.5: sd_d = 0.3 · sqrt(2 · 0.5) = 0.3.
    # t tables (df = 9): t_0.975 = 2.262, t_0.80 = 0.883.
    d = detectable_difference(10, 0.3, 0.5)
    assert d.sd_difference == pytest.approx(0.3, abs=TOL)
    assert d.value == pytest.approx((2.262 + 0.883) * 0.3 / math.sqrt(10), abs=2e-4)
    exact = (stats.t.ppf(0.975, 9) + stats.t.ppf(0.8, 9)) * 0.3 / math.sqrt(10)  # full precision
    assert d.value == pytest.approx(exact, abs=TOL)
    assert (d.tasks, d.power, d.confidence, d.correlation) == (10, 0.8, 0.95, 0.5)


def test_detectable_difference_extreme_correlations() -> None:
    assert detectable_difference(20, 0.3, 1.0).value == 0.0
    # rho = -1: sd_d = 2S; rho = 0: sd_d = S sqrt(2).
    assert detectable_difference(20, 0.3, -1.0).sd_difference == pytest.approx(0.6, abs=TOL)
    assert detectable_difference(20, 0.3, 0.0).sd_difference == pytest.approx(
        0.3 * math.sqrt(2), abs=TOL
    )


@pytest.mark.parametrize("tasks", [10, 20, 50, 200, 1000])
@pytest.mark.parametrize("rho", [0.0, 0.6])
def test_approximation_gives_about_80_percent_power(tasks: int, rho: float) -> None:
    """Exact power of the two-sided paired t-test at the reported difference.

    Under the alternative, mean(d) / (s_d / sqrt(T)) follows a noncentral t
    with T - 1 df and noncentrality δ sqrt(T) / sd_d.
    """
    d = detectable_difference(tasks, 0.25, rho)
    ncp = d.value * math.sqrt(tasks) / d.sd_difference
    crit = stats.t.ppf(0.975, tasks - 1)
    power = stats.nct.sf(crit, tasks - 1, ncp) + stats.nct.cdf(-crit, tasks - 1, ncp)
    assert power == pytest.approx(0.8, abs=0.002)


@given(
    st.integers(2, 5000),
    st.floats(min_value=0.01, max_value=0.6),
    st.floats(min_value=-1.0, max_value=0.99),
    st.floats(min_value=-1.0, max_value=0.99),
)
@settings(max_examples=examples(100), deadline=None)
def test_detectable_difference_shrinks_with_correlation_and_tasks(
    tasks: int, s: float, r1: float, r2: float
) -> None:
    low, high = sorted((r1, r2))
    assert detectable_difference(tasks, s, high).value <= detectable_difference(tasks, s, low).value
    assert (
        detectable_difference(tasks + 1, s, low).value < detectable_difference(tasks, s, low).value
    )


# ------------------------------------------------------------ the plan and its JSON


def test_plan_and_json() -> None:
    result = plan(0.05, task_sd=0.3, correlation=0.5)
    assert (result.runs_per_task, result.tasks) == (381, 141)
    assert result.detectable_difference.tasks == 141
    out = plan_json(result)
    assert out == {
        "target_halfwidth": 0.05,
        "confidence": 0.95,
        "pass_rate": 0.5,
        "task_sd": 0.3,
        "runs_per_task": 381,
        "tasks": 141,
        "detectable_difference": {
            "power": 0.8,
            "correlation": 0.5,
            "tasks": 141,
            "sd_difference": pytest.approx(0.3, abs=TOL),
            "value": detectable_difference(141, 0.3, 0.5).value,
        },
    }
    json.dumps(out, allow_nan=False)


def test_plan_uses_given_task_count_for_the_detectable_difference() -> None:
    result = plan(0.05, task_sd=0.3, tasks=40)
    assert result.tasks == 141
    assert result.detectable_difference.tasks == 40


def test_plan_defaults_are_worst_cases() -> None:
    result = plan(0.05)
    assert (result.pass_rate, result.task_sd) == (0.5, 0.5)
    assert result.tasks == tasks_needed(0.05, 0.5) == brute_force_tasks(0.05, 0.5, 0.95)
    assert result.detectable_difference.correlation == 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: runs_needed(0.0), r"target half-width must lie in \(0, 1\)"),
        (lambda: runs_needed(1.0), r"target half-width must lie in \(0, 1\)"),
        (lambda: runs_needed(float("nan")), "target half-width must lie"),
        (lambda: runs_needed(0.1, 1.1), r"pass rate must lie in \[0, 1\]"),
        (lambda: runs_needed(0.1, -0.1), r"pass rate must lie in \[0, 1\]"),
        (lambda: runs_needed(0.1, 0.5, 1.0), r"confidence must lie in \(0, 1\)"),
        (
            lambda: runs_needed("0.1"),  # type: ignore[arg-type]
            "target half-width must be a number",
        ),
        (lambda: tasks_needed(0.1, -0.1), "task_sd must be a finite number of at least 0"),
        (lambda: tasks_needed(0.1, float("inf")), "task_sd must be a finite number"),
        (lambda: tasks_needed(0.1, True), "task_sd must be a number"),
        (lambda: detectable_difference(1, 0.3), "tasks must be a whole number of at least 2"),
        (
            lambda: detectable_difference(2.5, 0.3),  # type: ignore[arg-type]
            "tasks must be a whole number",
        ),
        (lambda: detectable_difference(10, 0.3, 1.5), r"correlation must lie in \[-1, 1\]"),
        (lambda: detectable_difference(10, 0.3, 0.0, 0.95, 1.0), r"power must lie in \(0, 1\)"),
        (lambda: plan(0.05, tasks=1), "tasks must be a whole number of at least 2"),
    ],
)
def test_invalid_input_is_refused(call: object, message: str) -> None:
    with pytest.raises(EstimateError, match=message):
        call()  # type: ignore[operator]
