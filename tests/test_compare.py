"""Paired comparison against exact arithmetic, scipy's paired t-test and its laws."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from reportgen.stats.compare import Comparison, compare
from reportgen.stats.estimate import EstimateError, SuiteInterval
from reportgen.views import comparison_json

from .conftest import examples

TOL = 1e-12

# Two models on the SPEC's four-task suite; B solves t1 every time, A solves t3.
A = {"t1": (16, 20), "t2": (18, 20), "t3": (20, 20), "t4": (12, 20)}
B = {"t1": (20, 20), "t2": (18, 20), "t3": (14, 20), "t4": (10, 20)}


def exact_plugin(c: int, n: int, k: int) -> Fraction:
    return Fraction(c, n) ** k


def exact_unbiased(c: int, n: int, k: int) -> Fraction:
    return Fraction(math.comb(c, k), math.comb(n, k))


def exact_mean_sd(values: list[Fraction]) -> tuple[Fraction, Fraction]:
    """Mean and sample variance (divisor T - 1), exactly."""
    mean = sum(values, Fraction(0)) / len(values)
    variance = sum(((v - mean) ** 2 for v in values), Fraction(0)) / (len(values) - 1)
    return mean, variance


# ------------------------------------------------------------ hand-computed example


def test_worked_example_against_exact_arithmetic() -> None:
    cmp = compare(A, B, 3)
    assert cmp.shared == ("t1", "t2", "t3", "t4")
    assert cmp.only_in_a == () and cmp.only_in_b == ()
    ids = ["t1", "t2", "t3", "t4"]
    # (16/20)^3 - 1 = -0.488; 0; 1 - 0.7^3 = 0.657; 0.6^3 - 0.5^3 = 0.091.
    d_plugin = [exact_plugin(*A[i], 3) - exact_plugin(*B[i], 3) for i in ids]
    assert [float(d) for d in d_plugin] == pytest.approx([-0.488, 0.0, 0.657, 0.091], abs=TOL)
    d_unbiased = [exact_unbiased(*A[i], 3) - exact_unbiased(*B[i], 3) for i in ids]
    d_rate = [Fraction(A[i][0], 20) - Fraction(B[i][0], 20) for i in ids]
    for got, want in (
        (cmp.diff_plugin, d_plugin),
        (cmp.diff_unbiased, d_unbiased),
        (cmp.diff_pass_rate, d_rate),
    ):
        assert list(got) == pytest.approx([float(x) for x in want], abs=TOL)
    for interval, diffs in (
        (cmp.plugin, d_plugin),
        (cmp.unbiased, d_unbiased),
        (cmp.pass_rate, d_rate),
    ):
        mean, variance = exact_mean_sd(diffs)
        assert interval.estimate == pytest.approx(float(mean), abs=TOL)
        assert interval.sd == pytest.approx(math.sqrt(variance), abs=TOL)
        assert interval.df == 3
        assert interval.t is not None and round(interval.t, 3) == 3.182  # t tables, df = 3
        half = interval.t * math.sqrt(variance) / 2  # sqrt(4) = 2
        assert interval.low == pytest.approx(max(float(mean) - half, -1.0), abs=TOL)
        assert interval.high == pytest.approx(min(float(mean) + half, 1.0), abs=TOL)
    # Mean plug-in difference: (-0.488 + 0 + 0.657 + 0.091) / 4 = 0.065.
    assert cmp.plugin.estimate == pytest.approx(0.065, abs=TOL)
    assert cmp.a_only_solved == ("t3",) and cmp.b_only_solved == ("t1",)
    # Biggest regression first: t1 (-0.488), t2 (0), t4 (0.091), t3 (0.657).
    assert [cmp.shared[i] for i in cmp.ranked] == ["t1", "t2", "t4", "t3"]
    assert cmp.warnings == ()


def test_correlation_against_exact_arithmetic() -> None:
    cmp = compare(A, B, 3)
    ids = ["t1", "t2", "t3", "t4"]
    x = [exact_plugin(*A[i], 3) for i in ids]
    y = [exact_plugin(*B[i], 3) for i in ids]
    mx, my = sum(x) / 4, sum(y) / 4
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    r_squared = sxy * sxy / (sxx * syy)
    assert cmp.correlation is not None
    assert cmp.correlation == pytest.approx(math.copysign(math.sqrt(r_squared), sxy), abs=TOL)


def test_paired_interval_matches_scipy_ttest_rel() -> None:
    # Unclamped case: scipy's paired t-test gives the same interval.
    a = {f"q{i}": (c, 10) for i, c in enumerate([7, 8, 6, 9, 5, 7, 8, 6])}
    b = {f"q{i}": (c, 10) for i, c in enumerate([6, 8, 5, 7, 5, 6, 9, 4])}
    cmp = compare(a, b, 1)
    rates_a = np.array([c / 10 for c, _ in a.values()])
    rates_b = np.array([c / 10 for c, _ in b.values()])
    ci = stats.ttest_rel(rates_a, rates_b).confidence_interval(0.95)
    assert cmp.pass_rate.low == pytest.approx(ci.low, abs=TOL)
    assert cmp.pass_rate.high == pytest.approx(ci.high, abs=TOL)
    # k = 1: plug-in pass^1 is the pass rate itself.
    assert cmp.plugin.low == pytest.approx(ci.low, abs=TOL)


# ------------------------------------------------------------ set membership and edge cases


def test_tasks_in_one_set_only_are_listed_not_dropped() -> None:
    a = {**A, "extra_a2": (1, 2), "extra_a1": (0, 2)}
    b = {**B, "extra_b": (2, 2)}
    cmp = compare(a, b, 3)
    assert len(cmp.shared) == 4
    assert cmp.only_in_a == ("extra_a1", "extra_a2")
    assert cmp.only_in_b == ("extra_b",)
    assert any("only in A" in w and "'extra_a1', 'extra_a2'" in w for w in cmp.warnings)
    assert any("only in B" in w and "'extra_b'" in w for w in cmp.warnings)
    out = comparison_json(cmp)
    assert out["only_in_a"] == ["extra_a1", "extra_a2"] and out["only_in_b"] == ["extra_b"]
    # The shared result is unchanged by the extra tasks.
    assert cmp.plugin == compare(A, B, 3).plugin


def test_no_shared_task_is_an_error() -> None:
    with pytest.raises(EstimateError, match="share no task"):
        compare({"x": (1, 2)}, {"y": (1, 2)}, 1)


def test_one_shared_task_has_no_interval() -> None:
    cmp = compare({"x": (3, 4), "y": (1, 1)}, {"x": (1, 4)}, 1)
    assert cmp.plugin.estimate == pytest.approx(0.5, abs=TOL)
    assert (cmp.plugin.low, cmp.plugin.high, cmp.plugin.sd, cmp.plugin.t) == (None,) * 4
    assert cmp.plugin.df == 0
    assert cmp.correlation is None
    assert any("one shared task" in w for w in cmp.warnings)
    out = comparison_json(cmp)
    assert out["difference"]["plugin"] == {
        "estimate": 0.5,
        "low": None,
        "high": None,
        "sd": None,
        "t": None,
        "df": 0,
    }


def test_unbiased_difference_undefined_when_k_exceeds_runs_on_either_side() -> None:
    a = {"x": (2, 2), "y": (3, 5), "z": (4, 5)}
    b = {"x": (5, 5), "y": (2, 2), "z": (1, 5)}
    cmp = compare(a, b, 3)
    # x: A has 2 runs; y: B has 2 runs; z: both have 5.
    assert math.isnan(cmp.diff_unbiased[0]) and math.isnan(cmp.diff_unbiased[1])
    z_want = exact_unbiased(4, 5, 3) - exact_unbiased(1, 5, 3)
    assert cmp.diff_unbiased[2] == pytest.approx(float(z_want), abs=TOL)
    assert cmp.unbiased.estimate is None and cmp.unbiased.low is None
    assert cmp.plugin.estimate is not None and cmp.pass_rate.estimate is not None
    assert any("unbiased" in w and "'x', 'y'" in w for w in cmp.warnings)
    out = comparison_json(cmp)
    by_id = {t["id"]: t for t in out["tasks"]}
    assert by_id["x"]["difference"]["unbiased"] is None
    assert by_id["y"]["difference"]["unbiased"] is None
    assert by_id["z"]["difference"]["unbiased"] == pytest.approx(float(z_want), abs=TOL)
    assert out["difference"]["unbiased"]["estimate"] is None
    json.dumps(out, allow_nan=False)


def test_ties_are_ranked_by_task_id() -> None:
    a = {"b": (1, 2), "a": (1, 2), "c": (0, 2), "d": (2, 2)}
    b = {"a": (2, 2), "b": (2, 2), "c": (0, 2), "d": (0, 2)}
    cmp = compare(a, b, 1)
    assert [cmp.shared[i] for i in cmp.ranked] == ["a", "b", "c", "d"]
    assert [t["id"] for t in comparison_json(cmp)["tasks"]] == ["a", "b", "c", "d"]


def test_flipped_lists_both_directions() -> None:
    a = {"p": (5, 5), "q": (5, 5), "r": (4, 5), "s": (0, 5), "u": (5, 5)}
    b = {"p": (4, 5), "q": (5, 5), "r": (5, 5), "s": (5, 5), "u": (0, 5)}
    cmp = compare(a, b, 2)
    # q is solved by both (not flipped); s went from never to always (b only).
    assert cmp.a_only_solved == ("p", "u")
    assert cmp.b_only_solved == ("r", "s")


def test_differences_clamped_to_minus_one_one() -> None:
    a = {"x": (0, 3), "y": (0, 3), "z": (1, 3)}
    b = {"x": (3, 3), "y": (3, 3), "z": (3, 3)}
    cmp = compare(a, b, 1)
    assert cmp.pass_rate.low == -1.0
    assert cmp.pass_rate.high is not None and -1.0 < cmp.pass_rate.high < 0.0


def test_correlation_undefined_cases() -> None:
    # Fewer than three shared tasks.
    assert compare({"x": (1, 2), "y": (2, 2)}, {"x": (0, 2), "y": (2, 2)}, 1).correlation is None
    # One side constant (an average of equal floats may differ by an ulp).
    a = {f"t{i}": (1, 10) for i in range(7)}
    b = {f"t{i}": (i, 10) for i in range(7)}
    cmp = compare(a, b, 3)
    assert cmp.correlation is None
    assert any("correlation" in w and "do not vary" in w for w in cmp.warnings)


def test_json_shape_and_types() -> None:
    out = comparison_json(compare(A, B, 3))
    assert set(out) >= {
        "shared_tasks",
        "only_in_a",
        "only_in_b",
        "difference",
        "correlation",
        "flipped",
        "tasks",
    }
    assert out["shared_tasks"] == 4
    assert set(out["difference"]) == {"plugin", "unbiased", "pass_rate"}
    for interval in out["difference"].values():
        assert set(interval) == {"estimate", "low", "high", "sd", "t", "df"}
    assert out["flipped"] == {"a_only_solved": ["t3"], "b_only_solved": ["t1"]}
    first = out["tasks"][0]
    assert first["id"] == "t1"
    assert first["a"] == {"successes": 16, "runs": 20}
    assert first["b"] == {"successes": 20, "runs": 20}
    assert set(first["difference"]) == {"plugin", "unbiased", "pass_rate"}
    text = json.dumps(out, allow_nan=False)
    assert json.loads(text) == out
    # Byte-identical run to run, and independent of the order of the inputs.
    reordered = comparison_json(compare(dict(reversed(A.items())), dict(reversed(B.items())), 3))
    assert json.dumps(reordered, allow_nan=False) == text


@pytest.mark.parametrize(
    ("a", "b", "k", "confidence", "message"),
    [
        ({"x": (3, 2)}, {"x": (1, 2)}, 1, 0.95, r"set A, task 'x': successes must lie"),
        ({"x": (1, 2)}, {"x": (-1, 2)}, 1, 0.95, r"set B, task 'x': successes must lie"),
        ({"x": (0, 0)}, {"x": (0, 1)}, 1, 0.95, r"set A, task 'x': runs must be at least 1"),
        ({"x": (1.5, 2)}, {"x": (1, 2)}, 1, 0.95, "successes must be a whole number"),
        ({"x": (True, 2)}, {"x": (1, 2)}, 1, 0.95, "successes must be a whole number"),
        ({"x": (1, 2, 3)}, {"x": (1, 2)}, 1, 0.95, r"expected \(successes, runs\)"),
        ({1: (1, 2)}, {"x": (1, 2)}, 1, 0.95, "task ids must be strings"),
        ({"x": (1, 2), 2: (1, 2)}, {"x": (1, 2)}, 1, 0.95, "task ids must be strings"),
        ([("x", (1, 2))], {"x": (1, 2)}, 1, 0.95, "set A must map task ids"),
        ({"x": (1, 2)}, {"x": (1, 2)}, 0, 0.95, "k must be a whole number"),
        ({"x": (1, 2)}, {"x": (1, 2)}, 1, 1.0, "confidence must lie strictly"),
    ],
)
def test_invalid_input_is_refused(
    a: object, b: object, k: int, confidence: float, message: str
) -> None:
    with pytest.raises(EstimateError, match=message):
        compare(a, b, k, confidence)  # type: ignore[arg-type]


# ------------------------------------------------------------ laws

results = st.integers(1, 30).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))
result_sets = st.dictionaries(
    st.text(alphabet="abcdefgh", min_size=1, max_size=3), results, min_size=1, max_size=25
)
ks = st.integers(1, 8)


def _fields(cmp: Comparison) -> list[SuiteInterval]:
    return [cmp.plugin, cmp.unbiased, cmp.pass_rate]


@given(result_sets, ks)
@settings(max_examples=examples(100), deadline=None)
def test_comparing_a_set_with_itself_gives_zero(counts: dict[str, tuple[int, int]], k: int) -> None:
    cmp = compare(counts, counts, k)
    assert not cmp.only_in_a and not cmp.only_in_b
    assert np.all(cmp.diff_plugin == 0) and np.all(cmp.diff_pass_rate == 0)
    assert np.all(np.isnan(cmp.diff_unbiased) | (cmp.diff_unbiased == 0))
    assert cmp.a_only_solved == () and cmp.b_only_solved == ()
    for interval in _fields(cmp):
        if interval is cmp.unbiased and interval.estimate is None:
            continue  # some task has fewer than k runs
        assert interval.estimate == 0.0
        if len(counts) >= 2:
            assert (interval.low, interval.high, interval.sd) == (0.0, 0.0, 0.0)
    if cmp.correlation is not None:
        assert cmp.correlation == pytest.approx(1.0, abs=TOL)


@given(result_sets, result_sets, ks)
@settings(max_examples=examples(100), deadline=None)
def test_swapping_a_and_b_negates(
    a: dict[str, tuple[int, int]], b: dict[str, tuple[int, int]], k: int
) -> None:
    b = {**b, **dict(list(a.items())[:1])} if not set(a) & set(b) else b
    ab, ba = compare(a, b, k), compare(b, a, k)
    assert ab.shared == ba.shared
    assert (ab.only_in_a, ab.only_in_b) == (ba.only_in_b, ba.only_in_a)
    assert (ab.a_only_solved, ab.b_only_solved) == (ba.b_only_solved, ba.a_only_solved)
    assert np.array_equal(ab.diff_plugin, -ba.diff_plugin)
    assert np.array_equal(ab.diff_unbiased, -ba.diff_unbiased, equal_nan=True)
    for x, y in zip(_fields(ab), _fields(ba), strict=True):
        # Negation is exact in floating point and both sides sum in id order.
        assert x.estimate == (None if y.estimate is None else -y.estimate)
        assert x.low == (None if y.high is None else -y.high)
        assert x.high == (None if y.low is None else -y.low)
        assert (x.sd, x.t, x.df) == (y.sd, y.t, y.df)
    if ab.correlation is None:
        assert ba.correlation is None
    else:
        assert ba.correlation == pytest.approx(ab.correlation, abs=TOL)


@given(result_sets, result_sets, ks)
@settings(max_examples=examples(100), deadline=None)
def test_general_invariants(
    a: dict[str, tuple[int, int]], b: dict[str, tuple[int, int]], k: int
) -> None:
    b = {**b, **dict(list(a.items())[:1])} if not set(a) & set(b) else b
    cmp = compare(a, b, k)
    assert set(cmp.shared) | set(cmp.only_in_a) == set(a)
    assert set(cmp.shared) | set(cmp.only_in_b) == set(b)
    assert len(cmp.shared) + len(cmp.only_in_a) == len(a)
    for interval in _fields(cmp):
        if interval.low is not None:
            assert interval.estimate is not None and interval.high is not None
            assert -1.0 <= interval.low <= interval.estimate <= interval.high <= 1.0
    # Ranked by the headline difference, ties by task id.
    d = cmp.diff_lead[cmp.ranked]
    assert np.all(np.diff(d) >= 0)
    ids = [cmp.shared[i] for i in cmp.ranked]
    assert all(ids[i] < ids[i + 1] for i in range(len(ids) - 1) if d[i] == d[i + 1])
    if cmp.correlation is not None:
        assert -1.0 <= cmp.correlation <= 1.0
        assert cmp.correlation == pytest.approx(
            float(np.corrcoef(cmp.a.plugin, cmp.b.plugin)[0, 1]), abs=1e-9
        )
    json.dumps(comparison_json(cmp), allow_nan=False)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (4.98e-05, "0.00005"),
        (-4.98e-05, "-0.00005"),
        (0.0005, "0.001"),  # rounds away from 0.000 at three decimals already
        (0.00049, "0.0005"),
        (-3.2e-09, "-3e-09"),
        (0.0, "0.000"),
        (-0.0, "0.000"),
        (-0.157, "-0.157"),
        (float("nan"), "n/a"),
    ],
)
def test_a_difference_bound_never_prints_as_zero_unless_it_is(value: float, shown: str) -> None:
    from reportgen.numbers import signed_bound

    assert signed_bound(value) == shown
    if value != 0 and shown != "n/a":
        assert float(shown) != 0 and (float(shown) > 0) == (value > 0)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.0291, "+0.029"),
        (-0.0844, "-0.084"),
        (0.0004, "0.000"),  # no sign on a difference that prints as nothing
        (-0.0004, "0.000"),
        (-0.0, "0.000"),
        (1.0, "+1.000"),
        (None, "n/a"),
        (float("nan"), "n/a"),
    ],
)
def test_a_difference_prints_with_its_sign(value: float | None, shown: str) -> None:
    from reportgen.numbers import signed

    assert signed(value) == shown


def test_compare_ranks_tasks_by_the_difference_it_leads_with() -> None:
    # x: 3/4 against 4/4, y: 7/10 against 10/10. Unbiased pass^3 differences -0.750
    # and -0.708 put x first; plug-in ones, -0.578 and -0.657, would put y first.
    a = {"x": (3, 4), "y": (7, 10), "z": (4, 4)}
    b = {"x": (4, 4), "y": (10, 10), "z": (4, 4)}
    cmp = compare(a, b, 3)
    assert cmp.headline == "unbiased"
    assert [cmp.shared[i] for i in cmp.ranked] == ["x", "y", "z"]
    assert list(cmp.diff_lead[cmp.ranked]) == sorted(cmp.diff_unbiased)
    assert [cmp.shared[i] for i in np.argsort(cmp.diff_plugin)] == ["y", "x", "z"]
    # With a task below k runs the unbiased difference is undefined: plug-in ranks.
    short = compare({**a, "w": (1, 2)}, {**b, "w": (2, 2)}, 3)
    assert short.headline == "plugin"
    assert list(short.diff_lead[short.ranked]) == sorted(short.diff_plugin)
