"""The statistics core against worked examples, published references and exact arithmetic."""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.stats.estimate import (
    EstimateError,
    curve_over_k,
    estimate_suite,
    estimate_tasks,
    mean_with_t_interval,
    normal_quantile,
    t_quantile,
)

from .conftest import examples

TOL = 1e-12
mpmath.mp.dps = 60


# ------------------------------------------------------------ exact references


def exact_unbiased(c: int, n: int, k: int) -> Fraction:
    return Fraction(math.comb(c, k), math.comb(n, k))


def exact_pass_at_k(c: int, n: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def precise_wilson(c: int, n: int, confidence: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The Wilson bounds in 60-digit arithmetic, textbook form."""
    z = mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf(confidence))
    p = mpmath.mpf(c) / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * mpmath.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


# ------------------------------------------------------------ SPEC worked examples


def test_spec_single_task_example_to_three_decimals() -> None:
    t = estimate_tasks([16], [20], 3)
    assert f"{t.pass_rate[0]:.3f}" == "0.800"
    assert (f"{t.pass_rate_low[0]:.3f}", f"{t.pass_rate_high[0]:.3f}") == ("0.584", "0.919")
    assert f"{t.plugin[0]:.3f}" == "0.512"
    assert (f"{t.plugin_low[0]:.3f}", f"{t.plugin_high[0]:.3f}") == ("0.199", "0.777")
    assert f"{t.unbiased[0]:.3f}" == "0.491"
    assert f"{t.pass_at_k[0]:.3f}" == "0.996"


def test_spec_single_task_example_to_full_precision() -> None:
    t = estimate_tasks([16], [20], 3)
    low, high = precise_wilson(16, 20, 0.95)
    assert t.pass_rate_low[0] == pytest.approx(float(low), abs=TOL)
    assert t.pass_rate_high[0] == pytest.approx(float(high), abs=TOL)
    assert t.plugin_low[0] == pytest.approx(float(low**3), abs=TOL)
    assert t.plugin_high[0] == pytest.approx(float(high**3), abs=TOL)
    assert t.unbiased[0] == pytest.approx(float(Fraction(3360, 6840)), abs=TOL)
    assert t.pass_at_k[0] == pytest.approx(float(1 - Fraction(24, 6840)), abs=TOL)
    # The figures quoted in the JSON example, ten decimals.
    assert round(t.pass_rate_low[0], 10) == 0.5839825677
    assert round(t.pass_rate_high[0], 10) == 0.9193423374
    assert round(t.plugin_low[0], 10) == 0.1991588684
    assert round(t.plugin_high[0], 10) == 0.7770192566


def test_spec_suite_example() -> None:
    suite = estimate_suite([16, 18, 20, 12], [20] * 4, 3)
    assert [f"{v:.3f}" for v in suite.tasks.plugin] == ["0.512", "0.729", "1.000", "0.216"]
    p = suite.plugin
    assert (f"{p.estimate:.3f}", f"{p.sd:.3f}", f"{p.t:.3f}") == ("0.614", "0.332", "3.182")
    assert (f"{p.low:.3f}", f"{p.high:.3f}") == ("0.086", "1.000")
    raw_high = p.estimate + p.t * p.sd / 2  # sqrt(4) = 2
    assert f"{raw_high:.3f}" == "1.143"
    assert p.df == 3
    # Exact mean of the plug-in values: (0.512 + 0.729 + 1 + 0.216) / 4.
    assert p.estimate == pytest.approx(0.61425, abs=TOL)
    u = suite.unbiased
    exact_mean = sum(exact_unbiased(c, 20, 3) for c in (16, 18, 20, 12)) / 4
    assert u.estimate == pytest.approx(float(exact_mean), abs=TOL)
    assert (round(u.low, 10), u.high) == (0.0557940701, 1.0)
    assert round(u.sd, 10) == 0.3420047836
    assert suite.warnings == ()


# ------------------------------------------------------------ published references


@pytest.mark.parametrize(
    ("c", "n", "low", "high"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857-872, Table II, method 3
        # (score interval without continuity correction), four decimals.
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_newcombe_1998(c: int, n: int, low: float, high: float) -> None:
    t = estimate_tasks([c], [n], 1)
    assert round(t.pass_rate_low[0], 4) == low
    assert round(t.pass_rate_high[0], 4) == high


@pytest.mark.parametrize(
    ("confidence", "df", "expected"),
    [
        # Standard two-sided t tables (e.g. NIST/SEMATECH e-Handbook, Table 1.3.6.7.2).
        (0.95, 3, 3.182),
        (0.95, 10, 2.228),
        (0.99, 5, 4.032),
        (0.90, 1, 6.314),
    ],
)
def test_t_quantile_matches_tables(confidence: float, df: int, expected: float) -> None:
    assert round(t_quantile(confidence, df), 3) == expected


def test_normal_quantile_at_95_percent() -> None:
    # 1.959963984540054 to double precision (Abramowitz and Stegun 26.2).
    assert normal_quantile(0.95) == pytest.approx(1.959963984540054, abs=1e-15)


@pytest.mark.parametrize(
    ("c", "n", "k", "expected"),
    [
        # τ-bench (Yao et al. 2024) defines pass^k as C(c,k)/C(n,k); Chen et al.
        # (2021) define pass@k as 1 - C(n-c,k)/C(n,k). Values by hand:
        (3, 4, 2, ("unbiased", Fraction(3, 6))),
        (2, 4, 2, ("unbiased", Fraction(1, 6))),
        (1, 4, 2, ("unbiased", Fraction(0))),
        (1, 10, 1, ("pass_at_k", Fraction(1, 10))),
        (1, 10, 5, ("pass_at_k", Fraction(1, 2))),
        (5, 10, 6, ("pass_at_k", Fraction(1))),
    ],
)
def test_hand_computed_ratios(c: int, n: int, k: int, expected: tuple[str, Fraction]) -> None:
    field, value = expected
    t = estimate_tasks([c], [n], k)
    assert getattr(t, field)[0] == pytest.approx(float(value), abs=TOL)


# ------------------------------------------------------------ edge cases


def test_zero_successes() -> None:
    t = estimate_tasks([0], [7], 3)
    assert t.pass_rate_low[0] == 0.0 and t.plugin[0] == 0.0 and t.plugin_low[0] == 0.0
    assert t.unbiased[0] == 0.0 and t.pass_at_k[0] == 0.0
    assert t.pass_rate_high[0] > 0


def test_all_successes() -> None:
    t = estimate_tasks([7], [7], 3)
    assert t.pass_rate_high[0] == 1.0 and t.plugin[0] == 1.0 and t.plugin_high[0] == 1.0
    assert t.unbiased[0] == 1.0 and t.pass_at_k[0] == 1.0
    assert t.pass_rate_low[0] < 1


def test_one_run() -> None:
    t = estimate_tasks([1, 0], [1, 1], 1)
    assert list(t.unbiased) == [1.0, 0.0]
    assert list(t.pass_at_k) == [1.0, 0.0]


def test_k_equals_n() -> None:
    t = estimate_tasks([5, 4], [5, 5], 5)
    assert list(t.unbiased) == [1.0, 0.0]
    assert list(t.pass_at_k) == [1.0, 1.0]


def test_k_greater_than_n_is_undefined_and_named() -> None:
    suite = estimate_suite([2, 3], [2, 5], 3, labels=["alpha", "beta"])
    assert math.isnan(suite.tasks.unbiased[0]) and math.isnan(suite.tasks.pass_at_k[0])
    assert not math.isnan(suite.tasks.plugin[0])
    assert suite.unbiased.estimate is None
    assert suite.plugin.estimate is not None
    assert any("alpha" in w and "fewer than k = 3" in w for w in suite.warnings)
    assert not any("beta" in w for w in suite.warnings)


@pytest.mark.parametrize("short", [1, 3, 4, 40, 45])
def test_tasks_short_of_k_runs_are_warned_of_one_by_one_only_when_few(short: int) -> None:
    names = [f"t{i}" for i in range(45)]
    runs = [2] * short + [10] * (45 - short)
    passed = [min(i % 11, n) for i, n in enumerate(runs)]
    suite = estimate_suite(passed, runs, 5, labels=names)
    each = [w for w in suite.warnings if "fewer than k = 5:" in w]
    assert [w.split()[0] for w in each] == (names[:short] if short <= 3 else [])
    partial = [w for w in suite.warnings if w.startswith("over the ")]
    (summary,) = [w for w in suite.warnings if w not in each and w not in partial]
    # The unbiased value over the tasks that have 5 runs, where some (not all) do.
    assert len(partial) == (short < 45)
    assert suite.left_out == short
    if short < 45:
        assert suite.unbiased_partial is not None
        kept = [i for i in range(45) if runs[i] >= 5]
        exact = sum(Fraction(math.comb(passed[i], 5), math.comb(runs[i], 5)) for i in kept)
        assert exact > 0
        assert suite.unbiased_partial.estimate == pytest.approx(float(exact / len(kept)), abs=1e-15)
        assert suite.unbiased_partial.df == len(kept) - 1
        assert partial[0].startswith(f"over the {45 - short} tasks with 5 or more runs")
    else:
        assert suite.unbiased_partial is None
    if short == 45:
        assert summary == (
            "every task has fewer than k = 5 runs, so unbiased pass^5, pass@5 and "
            "reliability@5 are undefined (null); the plug-in estimates stand; -k 2, the "
            "most runs every task has, gives every task its unbiased values"
        )
        return
    tasks = f"{short} task{'s have' if short > 1 else ' has'} fewer than 5 runs"
    assert summary.startswith(f"unbiased reliability@5 is undefined (null) because {tasks}")
    own = ", which leaves their own unbiased pass^5 and pass@5 undefined too: t0"
    assert (own in summary) == (short > 3)
    # Most tasks short (40 of 45): the k every task has runs for is suggested.
    assert summary.endswith(
        "-k 2, the most runs every task has, gives every task its unbiased values"
    ) == (short > 22)
    assert ("more" in summary) == (short > 10)


def test_one_task_has_no_interval() -> None:
    suite = estimate_suite([16], [20], 3)
    assert suite.plugin.estimate == pytest.approx(0.512, abs=TOL)
    assert (suite.plugin.low, suite.plugin.high, suite.plugin.sd, suite.plugin.t) == (None,) * 4
    assert suite.plugin.df == 0
    assert any("one task" in w for w in suite.warnings)


def test_all_tasks_equal_gives_zero_width() -> None:
    suite = estimate_suite([3, 3, 3], [4, 4, 4], 2)
    p = suite.plugin
    assert p.sd == 0.0
    assert p.low == p.high == p.estimate
    # ... and says what that width does not mean, quoting one task's own interval.
    low, high = suite.tasks.plugin_low[0], suite.tasks.plugin_high[0]
    (warning,) = [w for w in suite.warnings if "zero width" in w]
    unbiased = 3 * 2 / (4 * 3)  # C(3, 2) / C(4, 2)
    assert warning.startswith(
        # (3/4)^2 = 0.5625 exactly: a tie, written 0.563 as on the pages and by hand.
        f"all 3 tasks have the same pass^2 (plug-in 0.563, unbiased {unbiased:.3f}), "
        "so both intervals across tasks have zero width"
    )
    assert warning.endswith(f"(3/4 runs) is [{low:.3f}, {high:.3f}]")


def test_every_task_passing_names_the_zero_width() -> None:
    suite = estimate_suite([10] * 5, [10] * 5, 3)
    assert (suite.unbiased.low, suite.unbiased.high) == (1.0, 1.0)
    (warning,) = [w for w in suite.warnings if "zero width" in w]
    assert "all 5 tasks have the same pass^3 (plug-in 1.000, unbiased 1.000)" in warning
    assert warning.endswith("(10/10 runs) is [0.377, 1.000]")  # Wilson's low bound, cubed


def test_interval_clamped_to_unit_range() -> None:
    interval = mean_with_t_interval(np.array([0.0, 0.0, 0.0, 0.9]))
    assert interval.low == 0.0 and interval.estimate is not None and interval.high is not None
    assert interval.high < 1.0


@pytest.mark.parametrize(
    ("c", "n", "k", "confidence", "message"),
    [
        ([5], [3], 1, 0.95, "task 1: successes must lie between 0 and runs"),
        ([-1], [3], 1, 0.95, "task 1: successes must lie between 0 and runs"),
        ([1, 1], [3, 0], 1, 0.95, "task 2: runs must be at least 1"),
        ([1], [3], 0, 0.95, "k must be a whole number of at least 1"),
        ([1], [3], 1, 1.0, "confidence must lie strictly between 0 and 1"),
        ([1], [3], 1, 0.0, "confidence must lie strictly between 0 and 1"),
    ],
)
def test_invalid_input_is_refused(
    c: list[int], n: list[int], k: int, confidence: float, message: str
) -> None:
    with pytest.raises(EstimateError, match=message):
        estimate_tasks(c, n, k, confidence)


def test_empty_suite_is_refused() -> None:
    with pytest.raises(EstimateError, match="at least one task"):
        estimate_suite([], [], 3)


# ------------------------------------------------------------ large n, large k


@pytest.mark.parametrize(
    ("c", "n", "k"),
    [
        (999_999, 1_000_000, 1_000_000),
        (999_999, 1_000_000, 500_000),
        (999_998, 1_000_000, 999_000),
        (1_000_000, 1_000_000, 1_000_000),
        (0, 1_000_000, 1_000_000),
        (1, 1_000_000, 999_999),
        (999_000, 1_000_000, 700),
        (500_000, 1_000_000, 3),
    ],
)
def test_huge_counts_stay_exact(c: int, n: int, k: int) -> None:
    t = estimate_tasks([c], [n], k)
    values = [t.pass_rate, t.pass_rate_low, t.pass_rate_high, t.plugin, t.plugin_low]
    values += [t.plugin_high, t.unbiased, t.pass_at_k]
    assert all(np.isfinite(v[0]) for v in values)
    mp_c, mp_n = mpmath.mpf(c), mpmath.mpf(n)
    unbiased = mpmath.binomial(mp_c, k) / mpmath.binomial(mp_n, k) if c >= k else 0
    at_k = 1 - (mpmath.binomial(mp_n - c, k) / mpmath.binomial(mp_n, k) if n - c >= k else 0)
    low, high = precise_wilson(c, n, 0.95)
    assert t.unbiased[0] == pytest.approx(float(unbiased), abs=TOL)
    assert t.pass_at_k[0] == pytest.approx(float(at_k), abs=TOL)
    assert t.plugin[0] == pytest.approx(float((mp_c / mp_n) ** k), abs=TOL)
    assert t.plugin_low[0] == pytest.approx(float(low**k), abs=TOL)
    assert t.plugin_high[0] == pytest.approx(float(high**k), abs=TOL)


def test_closed_forms_at_a_million_runs() -> None:
    # c = n - 1: C(c,k)/C(n,k) = (n-k)/n exactly; c = n - 2: (n-k)(n-k-1)/(n(n-1)).
    n = 1_000_000
    ks = [1, 2, 1000, 654_321, n - 1]
    for k in ks:
        t = estimate_tasks([n - 1, n - 2], [n, n], k)
        assert t.unbiased[0] == pytest.approx(float(Fraction(n - k, n)), abs=TOL)
        assert t.unbiased[1] == pytest.approx(
            float(Fraction((n - k) * (n - k - 1), n * (n - 1))), abs=TOL
        )


# ------------------------------------------------------------ properties

counts = st.integers(min_value=1, max_value=400).flatmap(
    lambda n: st.tuples(st.integers(0, n), st.just(n))
)
ks = st.integers(min_value=1, max_value=60)
levels = st.floats(min_value=0.5, max_value=0.999)


@given(counts, ks, levels)
@settings(max_examples=examples(300), deadline=None)
def test_bounds_in_unit_interval_and_contain_estimates(
    cn: tuple[int, int], k: int, confidence: float
) -> None:
    c, n = cn
    t = estimate_tasks([c], [n], k, confidence)
    assert 0 <= t.pass_rate_low[0] <= t.pass_rate[0] <= t.pass_rate_high[0] <= 1
    assert 0 <= t.plugin_low[0] <= t.plugin[0] <= t.plugin_high[0] <= 1


@given(counts, ks)
@settings(max_examples=examples(300), deadline=None)
def test_ordering_of_estimates(cn: tuple[int, int], k: int) -> None:
    c, n = cn
    t = estimate_tasks([c], [n], k)
    p = t.pass_rate[0]
    assert t.plugin[0] <= p + TOL
    if k <= n:
        assert t.unbiased[0] <= p + TOL
        assert p <= t.pass_at_k[0] + TOL
        # Drawing without replacement can only make "all k pass" less likely.
        assert t.unbiased[0] <= t.plugin[0] + TOL
    else:
        assert math.isnan(t.unbiased[0]) and math.isnan(t.pass_at_k[0])


@given(
    st.integers(1, 50).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(2, 20),
    ks,
)
@settings(max_examples=examples(200), deadline=None)
def test_intervals_shrink_as_runs_grow(cn: tuple[int, int], factor: int, k: int) -> None:
    c, n = cn
    small = estimate_tasks([c], [n], k)
    large = estimate_tasks([c * factor], [n * factor], k)  # same p-hat, more runs
    assert large.pass_rate_high[0] - large.pass_rate_low[0] < (
        small.pass_rate_high[0] - small.pass_rate_low[0]
    )
    assert large.plugin_high[0] - large.plugin_low[0] <= small.plugin_high[0] - small.plugin_low[0]


@given(
    st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 2000),
)
@settings(max_examples=examples(300), deadline=None)
def test_exact_agreement_with_rational_arithmetic(cn: tuple[int, int], k: int) -> None:
    c, n = cn
    t = estimate_tasks([c], [n], k)
    assert t.pass_rate[0] == float(Fraction(c, n))
    # Fraction powers get slow past a few hundred; 60-digit floats stand in there.
    power = Fraction(c, n) ** k if k <= 200 else (mpmath.mpf(c) / n) ** k
    assert t.plugin[0] == pytest.approx(float(power), abs=TOL)
    if k <= n:
        assert t.unbiased[0] == pytest.approx(float(exact_unbiased(c, n, k)), abs=TOL)
        assert t.pass_at_k[0] == pytest.approx(float(exact_pass_at_k(c, n, k)), abs=TOL)
    low, high = precise_wilson(c, n, 0.95)
    assert t.pass_rate_low[0] == pytest.approx(float(low), abs=TOL)
    assert t.pass_rate_high[0] == pytest.approx(float(high), abs=TOL)


@given(st.lists(counts, min_size=1, max_size=40), ks)
@settings(max_examples=examples(200), deadline=None)
def test_vectorized_equals_one_at_a_time(pairs: list[tuple[int, int]], k: int) -> None:
    cs, ns = [c for c, _ in pairs], [n for _, n in pairs]
    together = estimate_tasks(cs, ns, k)
    for i, (c, n) in enumerate(pairs):
        alone = estimate_tasks([c], [n], k)
        for field in ("plugin", "plugin_low", "plugin_high", "unbiased", "pass_at_k"):
            a, b = getattr(together, field)[i], getattr(alone, field)[0]
            assert (math.isnan(a) and math.isnan(b)) or a == b


@given(st.lists(counts, min_size=2, max_size=30), ks)
@settings(max_examples=examples(200), deadline=None)
def test_suite_mean_and_sd_match_exact_arithmetic(pairs: list[tuple[int, int]], k: int) -> None:
    cs, ns = [c for c, _ in pairs], [n for _, n in pairs]
    suite = estimate_suite(cs, ns, k)
    values = [Fraction(c, n) ** k for c, n in pairs] if k <= 12 else None
    p = suite.plugin
    assert p.estimate is not None and p.low is not None and p.high is not None
    assert 0 <= p.low <= p.estimate <= p.high <= 1
    if values is not None:
        mean = sum(values) / len(values)
        variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
        assert p.estimate == pytest.approx(float(mean), abs=TOL)
        assert p.sd == pytest.approx(math.sqrt(float(variance)), abs=TOL)


# ------------------------------------------------------------ curves over k


@given(st.lists(counts, min_size=1, max_size=25))
@settings(max_examples=examples(100), deadline=None)
def test_curve_agrees_with_suite_estimates_at_every_k(pairs: list[tuple[int, int]]) -> None:
    cs, ns = [c for c, _ in pairs], [n for _, n in pairs]
    points = curve_over_k(cs, ns, max_k=30)
    assert [p.k for p in points] == list(range(1, min(min(ns), 30) + 1))
    for point in points:
        suite = estimate_suite(cs, ns, point.k)
        assert point.plugin == suite.plugin
        assert point.unbiased.estimate == pytest.approx(suite.unbiased.estimate, abs=TOL)
        mean_at_k = float(np.mean(suite.tasks.pass_at_k))
        assert point.pass_at_k.estimate == pytest.approx(mean_at_k, abs=TOL)


# Few distinct counts, some of them the same rate (1/2 and 2/4), so that suites of
# equal values come up often.
few_counts = st.sampled_from([(0, 5), (5, 5), (10, 10), (3, 4), (6, 8), (1, 2), (2, 4), (0, 3)])


@given(st.lists(st.one_of(few_counts, counts), min_size=2, max_size=12), ks)
@settings(max_examples=examples(200), deadline=None)
def test_zero_width_warning_exactly_when_all_tasks_share_a_value(
    pairs: list[tuple[int, int]], k: int
) -> None:
    suite = estimate_suite([c for c, _ in pairs], [n for _, n in pairs], k)
    flat = [
        s
        for s, values in (
            (suite.plugin, suite.tasks.plugin),
            (suite.unbiased, suite.tasks.unbiased),
        )
        if not np.isnan(values).any() and max(values) - min(values) < 1e-12
    ]
    warned = [w for w in suite.warnings if "zero width" in w]
    assert len(warned) == (1 if flat else 0)
    for s in flat:
        assert s.low is not None and s.high is not None and s.high - s.low < 1e-9
    if flat:
        widest = max(
            zip(suite.tasks.plugin_low, suite.tasks.plugin_high, strict=True),
            key=lambda b: b[1] - b[0],
        )
        assert warned[0].endswith(f"[{widest[0]:.3f}, {widest[1]:.3f}]")


@given(
    st.integers(65, 10_000).flatmap(
        lambda n: st.tuples(st.integers(0, n), st.just(n), st.integers(65, n))
    )
)
@settings(max_examples=examples(200))
def test_simulations_unbiased_pass_hat_k_is_close_to_the_exact_ratio(
    case: tuple[int, int, int],
) -> None:
    # The simulations take the factors past the loop's 64 from log-gamma values;
    # the pages' own per-task values are exact products. Both against 60 digits.
    from reportgen.stats.estimate import unbiased_pass_hat_k

    c, n, k = case
    reference = mpmath.binomial(c, k) / mpmath.binomial(n, k)
    arrays = np.array([c]), np.array([n])
    for exact, tolerance in ((True, 1e-12), (False, 1e-9)):
        value = float(unbiased_pass_hat_k(*arrays, k, exact=exact)[0])
        assert abs(value - reference) <= tolerance * reference + 1e-300, (exact, value)


def test_simulations_unbiased_pass_hat_k_at_a_billion_runs() -> None:
    from reportgen.stats.estimate import unbiased_pass_hat_k

    c, n, k = np.array([999_999_000, 500_000_000]), np.array([10**9, 10**9]), 1_000_000
    values = unbiased_pass_hat_k(c, n, k, exact=False)
    for value, successes in zip(values, c, strict=True):
        reference = mpmath.binomial(int(successes), k) / mpmath.binomial(10**9, k)
        assert abs(value - reference) <= 1e-4 * reference + 1e-300


@given(
    st.integers(1_000, 1_000_000_000),
    st.floats(1e-6, 0.5),
    st.floats(-800.0, -600.0),
)
@settings(max_examples=examples(200), deadline=None)
def test_values_near_the_smallest_double_keep_their_digits(
    n: int, gap: float, target_log: float
) -> None:
    # k chosen so that pass^k lies around e**-746, where a double runs out: the
    # shortcut that skips products known to round to 0 must not touch the rest.
    c = max(n - max(int(gap * n), 1), 0)
    k = int(min(max(target_log / math.log1p(-(n - c) / n), 1), n))
    t = estimate_tasks([c], [n], k)
    mp_c, mp_n = mpmath.mpf(c), mpmath.mpf(n)
    references = {
        "unbiased": mpmath.binomial(mp_c, k) / mpmath.binomial(mp_n, k),
        "plugin": (mp_c / mp_n) ** k,
    }
    for name, reference in references.items():
        value = float(getattr(t, name)[0])
        if reference > sys.float_info.min:
            assert value == pytest.approx(float(reference), rel=1e-9), name
        else:  # subnormal or less: few digits are left, and a product loses some
            assert abs(value - float(reference)) <= 1e-316, name
            assert value > 0.0 or reference < mpmath.mpf(2) ** -1060, name


def test_work_for_a_huge_k_is_bounded_by_the_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # A product of factors of at most 1 - gap is below e**-746, so exactly 0 as a
    # double, once it has 746 / gap factors: a value that is not 0 needs at most
    # sqrt(746 n) of them, whatever k is. 200 tasks of a billion runs at k = 10^6
    # used to multiply 10^6 factors each.
    multiplied = []
    real_prod = np.prod

    def counting_prod(values: np.ndarray, *args: object, **kwargs: object) -> object:
        multiplied.append(np.size(values))
        return real_prod(values, *args, **kwargs)

    monkeypatch.setattr(np, "prod", counting_prod)
    n = 1_000_000_000
    failures = np.geomspace(1, n // 2, 200).astype(np.int64)
    t = estimate_tasks(n - failures, np.full(failures.shape, n), 1_000_000)
    assert sum(multiplied) <= len(failures) * math.sqrt(746 * n)
    assert np.all(t.unbiased[failures > 800_000] == 0.0)
    assert np.all(t.unbiased[failures < 700] > 0.0)
