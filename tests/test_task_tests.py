"""Per-task change tests (stats/task_tests.py) against scipy and statsmodels.

References: scipy.stats.fisher_exact and boschloo_exact (one-sided), an exact
rational hypergeometric sum, and statsmodels' multipletests ("holm", "fdr_bh").
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from bench.bench_task_tests import simulate, with_drops
from reportgen.stats import task_tests as task_tests_module
from reportgen.stats.estimate import EstimateError
from reportgen.stats.task_tests import (
    IMPROVED,
    MOVED_DOWN,
    MOVED_UP,
    REGRESSED,
    UNCHANGED,
    benjamini_hochberg,
    boschloo_p_values,
    fisher_p_lower,
    fisher_p_values,
    fisher_smallest_p_values,
    holm,
    shared_task_tests,
    smallest_p_lower,
    task_tests,
)

from .conftest import examples

TABLES = [  # (baseline c, n, candidate c, n)
    (10, 10, 9, 10),
    (19, 20, 10, 20),
    (20, 20, 10, 20),
    (3, 10, 8, 10),
    (0, 5, 0, 7),
    (5, 5, 7, 7),
    (7, 12, 2, 3),
    (1, 1, 0, 1),
    (40, 50, 25, 45),
]


@pytest.mark.parametrize(("cb", "nb", "cc", "nc"), TABLES)
def test_fisher_matches_scipy_one_sided(cb: int, nb: int, cc: int, nc: int) -> None:
    # Rows are the samples, candidate first: "less" is the candidate's odds (rate) lower.
    table = [[cc, nc - cc], [cb, nb - cb]]
    lower, higher = fisher_p_values([cb], [nb], [cc], [nc])
    assert lower[0] == pytest.approx(stats.fisher_exact(table, alternative="less").pvalue, 1e-12)
    assert higher[0] == pytest.approx(
        stats.fisher_exact(table, alternative="greater").pvalue, 1e-12
    )


@pytest.mark.parametrize(("cb", "nb", "cc", "nc"), TABLES)
def test_boschloo_matches_scipy_one_sided(cb: int, nb: int, cc: int, nc: int) -> None:
    # scipy's columns are the samples; here the baseline comes first, so the
    # alternatives swap: "greater" (baseline higher) is the candidate lower.
    table = np.array([[cb, cc], [nb - cb, nc - cc]])
    lower, higher = boschloo_p_values([cb], [nb], [cc], [nc])
    if cb + cc in (0, nb + nc):
        assert lower[0] == higher[0] == 1.0
        return
    assert lower[0] == pytest.approx(stats.boschloo_exact(table, "greater").pvalue, 1e-9)
    assert higher[0] == pytest.approx(stats.boschloo_exact(table, "less").pvalue, 1e-9)


def _exact_lower(cb: int, nb: int, cc: int, nc: int) -> Fraction:
    """P(X <= cc) for X hypergeometric, in rational arithmetic."""
    total, passed = nb + nc, cb + cc
    return sum(
        (
            Fraction(math.comb(passed, x) * math.comb(total - passed, nc - x), math.comb(total, nc))
            for x in range(max(0, passed - nb), cc + 1)
        ),
        Fraction(0),
    )


counts = st.integers(1, 25).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@settings(max_examples=examples(100), deadline=None)
@given(counts, counts)
def test_fisher_equals_exact_rational_tail(
    baseline: tuple[int, int], candidate: tuple[int, int]
) -> None:
    (cb, nb), (cc, nc) = baseline, candidate
    lower, higher = fisher_p_values([cb], [nb], [cc], [nc])
    assert lower[0] == pytest.approx(float(_exact_lower(cb, nb, cc, nc)), rel=1e-9, abs=1e-15)
    # Swapping the sides turns "lower" into "higher" for the other side's rate.
    mirrored = fisher_p_values([nb - cb], [nb], [nc - cc], [nc])[0][0]
    assert higher[0] == pytest.approx(mirrored, rel=1e-9, abs=1e-15)
    assert 0 < lower[0] <= 1 and 0 < higher[0] <= 1
    assert lower[0] + higher[0] >= 1 - 1e-12  # the two tails share the observed table


def _exact_higher(cb: int, nb: int, cc: int, nc: int) -> Fraction:
    """P(X >= cc), in rational arithmetic: one minus the lower tail below cc."""
    return 1 - _exact_lower(cb + 1, nb, cc - 1, nc) if cc > 0 else Fraction(1)


small_counts = st.integers(1, 6).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(small_counts, small_counts), min_size=1, max_size=80))
def test_many_tasks_sharing_margins_get_each_its_own_exact_tails(
    tables: list[tuple[tuple[int, int], tuple[int, int]]],
) -> None:
    # Tasks with the same margins share their summed terms: each task's tails must
    # still be its own, and the correctly rounded exact value (float of a Fraction).
    cb, nb, cc, nc = (
        [t[0][0] for t in tables],
        [t[0][1] for t in tables],
        [t[1][0] for t in tables],
        [t[1][1] for t in tables],
    )
    lower, higher = fisher_p_values(cb, nb, cc, nc)
    for i, row in enumerate(zip(cb, nb, cc, nc, strict=True)):
        assert lower[i] == float(_exact_lower(*row)), row
        assert higher[i] == float(_exact_higher(*row)), row


@settings(max_examples=examples(100), deadline=None)
@given(counts, counts)
def test_smallest_p_is_the_least_over_every_table_with_these_margins(
    baseline: tuple[int, int], candidate: tuple[int, int]
) -> None:
    (cb, nb), (cc, nc) = baseline, candidate
    passed = cb + cc
    support = range(max(0, passed - nb), min(passed, nc) + 1)
    lowers = [float(_exact_lower(passed - x, nb, x, nc)) for x in support]
    smallest_lower, smallest_higher = fisher_smallest_p_values([cb], [nb], [cc], [nc])
    assert smallest_lower[0] == pytest.approx(min(lowers), rel=1e-9)
    highers = [fisher_p_values([passed - x], [nb], [x], [nc])[1][0] for x in support]
    assert smallest_higher[0] == pytest.approx(min(highers), rel=1e-9)


def test_exact_tails_and_scipy_tails_agree_around_the_size_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Small tables are summed in whole numbers, large ones by scipy.stats.hypergeom:
    # the two must give the same p-values, also for tables near EXACT_MAX_POOLED.
    rng = np.random.default_rng(17)
    nb = rng.integers(1, 1000, size=60)
    nc = rng.integers(1, 1000, size=60)
    nb[:3], nc[:3] = (1, 999, 1000), (1, 1000, 1000)  # pooled 2, 1999 and 2000 runs
    cb = rng.integers(0, nb + 1)
    cc = rng.integers(0, nc + 1)
    cb[3], cc[3] = nb[3], 0  # the most extreme fall: a tiny p-value
    exact = fisher_p_values(cb, nb, cc, nc) + fisher_smallest_p_values(cb, nb, cc, nc)
    monkeypatch.setattr(task_tests_module, "EXACT_MAX_POOLED", 0)
    by_scipy = fisher_p_values(cb, nb, cc, nc) + fisher_smallest_p_values(cb, nb, cc, nc)
    for ours, theirs in zip(exact, by_scipy, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-300)
    # And scipy's own one-sided Fisher test on a few of them.
    for i in range(5):
        table = [[cc[i], nc[i] - cc[i]], [cb[i], nb[i] - cb[i]]]
        reference = stats.fisher_exact(table, alternative="less").pvalue
        assert exact[0][i] == pytest.approx(reference, rel=1e-9)


def test_tables_beyond_the_size_limit_go_to_scipy() -> None:
    # 3,000 pooled runs: above EXACT_MAX_POOLED, still the hypergeometric tail.
    lower, higher = fisher_p_values([1400], [1500], [1300], [1500])
    table = [[1300, 200], [1400, 100]]
    assert lower[0] == pytest.approx(stats.fisher_exact(table, alternative="less").pvalue, 1e-9)
    assert higher[0] == pytest.approx(stats.fisher_exact(table, alternative="greater").pvalue, 1e-9)


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(1, 8), st.integers(1, 8), st.data())
def test_boschloo_is_never_less_powerful_than_fisher(nb: int, nc: int, data: st.DataObject) -> None:
    cb, cc = data.draw(st.integers(0, nb)), data.draw(st.integers(0, nc))
    fisher = np.concatenate(fisher_p_values([cb], [nb], [cc], [nc]))
    boschloo = np.concatenate(boschloo_p_values([cb], [nb], [cc], [nc]))
    assert (boschloo <= fisher + 1e-9).all()


p_lists = st.lists(
    st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.01, 0.05, 0.5, 1.0])),
    min_size=1,
    max_size=25,
)


# statsmodels' Holm takes a noticeable fraction of a second per call: few examples.
@settings(max_examples=examples(40), deadline=None)
@given(p_lists)
@example([0.0, 0.0, 0.7795596740024748])  # BH's 3 p / 3 rounds just below p
def test_holm_and_bh_match_statsmodels(p: list[float]) -> None:
    for ours, method in ((holm(p), "holm"), (benjamini_hochberg(p), "fdr_bh")):
        reference = multipletests(p, alpha=0.05, method=method)[1]
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-15)
        order = np.argsort(p, kind="stable")
        assert (np.diff(ours[order]) >= 0).all()  # monotone in the raw p-values
        # Adjusting never lowers a p-value (up to rounding: m * p / m need not be p exactly).
        assert (ours >= np.asarray(p) * (1 - 1e-12)).all() and (ours <= 1).all()


def test_holm_and_bh_hand_worked() -> None:
    # Holm: sorted 0.01, 0.02, 0.03, 0.5 -> 4 * 0.01, max(0.04, 3 * 0.02), max(., 2 * 0.03), 0.5.
    np.testing.assert_allclose(holm([0.03, 0.01, 0.5, 0.02]), [0.06, 0.04, 0.5, 0.06])
    # BH: 4/1 * 0.01 = 0.04, 4/2 * 0.02 = 0.04, 4/3 * 0.03 = 0.04, 4/4 * 0.5.
    np.testing.assert_allclose(benjamini_hochberg([0.03, 0.01, 0.5, 0.02]), [0.04, 0.04, 0.5, 0.04])


def test_one_drop_from_ten_of_ten_to_nine_is_not_a_regression() -> None:
    # P(X <= 9) with 19 passes among 20 pooled runs, 10 drawn: 1 - C(19, 10) / C(20, 10) = 1/2.
    assert fisher_p_lower((10, 10), (9, 10)) == pytest.approx(0.5)
    # Even the worst table with these margins (0/10 impossible: 19 passed) cannot go below 1/2.
    assert smallest_p_lower((10, 10), (9, 10)) == pytest.approx(0.5)
    result = shared_task_tests({"a": (10, 10)}, {"a": (9, 10)})
    assert [t.verdict for t in result.tasks] == [MOVED_DOWN]
    assert result.family_lower == 0 and result.tasks[0].adjusted_lower is None


def test_verdicts_lists_and_order() -> None:
    baseline = {
        "drop": (20, 20),
        "rise": (2, 20),
        "wobble": (15, 20),
        "same": (8, 10),
        "nudge": (10, 20),
        "gone": (1, 2),
    }
    candidate = {
        "drop": (4, 20),
        "rise": (19, 20),
        "wobble": (13, 20),
        "same": (16, 20),
        "nudge": (12, 20),
        "new": (3, 3),
    }
    result = shared_task_tests(baseline, candidate)
    verdicts = {t.id: t.verdict for t in result.tasks}
    assert verdicts == {
        "drop": REGRESSED,
        "rise": IMPROVED,
        "wobble": MOVED_DOWN,
        "same": UNCHANGED,  # equal pass rates at unequal run counts
        "nudge": MOVED_UP,
    }
    assert result.tasks[0].id == "drop" and result.tasks[-1].id == "rise"
    assert result.only_in_candidate == ("new",) and result.only_in_baseline == ("gone",)
    assert [t.id for t in result.changed] == ["drop", "wobble", "nudge", "rise"]
    # Holm over the testable tasks, by hand: each side's family and its adjusted values.
    family = [t for t in result.tasks if t.adjusted_lower is not None]
    assert len(family) == result.family_lower
    raw = [t.p_lower for t in family]
    np.testing.assert_allclose([t.adjusted_lower for t in family], holm(raw))


def test_min_drop_keeps_small_falls_from_counting() -> None:
    baseline, candidate = {"t": (50, 50)}, {"t": (40, 50)}
    assert shared_task_tests(baseline, candidate).tasks[0].verdict == REGRESSED
    strict = shared_task_tests(baseline, candidate, min_drop=0.25)
    assert strict.tasks[0].verdict == MOVED_DOWN


def test_screening_only_removes_tasks_that_could_never_count() -> None:
    rng = np.random.default_rng(5)
    n = np.full(60, 10)
    before, after = rng.binomial(10, 0.9, 60), rng.binomial(10, 0.9, 60)
    before[:3], after[:3] = 10, 0
    ids = [f"t{i}" for i in range(60)]
    screened = task_tests(ids, (before, n), (after, n))
    everything = task_tests(ids, (before, n), (after, n), screen=False)
    assert everything.family_lower == 60 > screened.family_lower
    called = {t.id for t in everything.regressed}
    assert called <= {t.id for t in screened.regressed}  # screening only adds power
    assert {"t0", "t1", "t2"} <= {t.id for t in screened.regressed}
    # Boschloo is unconditional: no screening, every shared task is in its family.
    assert not task_tests(
        ids[:3], (before[:3], n[:3]), (after[:3], n[:3]), test="boschloo"
    ).screened


def test_bh_calls_at_least_what_holm_calls() -> None:
    rng = np.random.default_rng(9)
    n = np.full(40, 20)
    before, after = rng.binomial(20, 0.8, 40), rng.binomial(20, np.linspace(0.2, 0.8, 40))
    ids = [f"t{i}" for i in range(40)]
    by_holm = {t.id for t in task_tests(ids, (before, n), (after, n)).regressed}
    by_bh = {t.id for t in task_tests(ids, (before, n), (after, n), control="bh").regressed}
    assert by_holm <= by_bh and by_holm


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"level": 0.0}, "level"),
        ({"level": 1.0}, "level"),
        ({"test": "t"}, "test must be"),
        ({"control": "bonferroni"}, "control must be"),
        ({"min_drop": 2.0}, "min_drop"),
    ],
)
def test_bad_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(EstimateError, match=message):
        task_tests(["a"], ([1], [2]), ([1], [2]), **options)  # type: ignore[arg-type]


def test_bad_counts_are_refused() -> None:
    with pytest.raises(EstimateError, match="successes <= runs"):
        task_tests(["a"], ([3], [2]), ([1], [2]))
    with pytest.raises(EstimateError, match="both sides"):
        task_tests(["a", "b"], ([1], [2]), ([1], [2]))


def test_no_shared_tasks_is_an_empty_family() -> None:
    result = shared_task_tests({"a": (1, 2)}, {"b": (1, 2)})
    assert result.tasks == () and result.family_lower == 0
    assert result.only_in_candidate == ("b",) and result.only_in_baseline == ("a",)


# ---------------------------------------------------------------- simulation

# The bench (bench/bench_task_tests.py, 2,000 replicates, bench/TASK_TESTS.md) measures
# the rates this test checks with fewer replicates. With R replicates a rate of 5% has a
# binomial sd of sqrt(0.05 * 0.95 / R); the bounds below sit three sds from the target.
REPLICATES = 300
SD = math.sqrt(0.05 * 0.95 / REPLICATES)


def test_gate_keeps_its_family_wise_error_rate_when_nothing_changed() -> None:
    rates = np.linspace(0.05, 0.95, 200)  # every task testable: the hardest case for the level
    null = simulate(rates, rates, REPLICATES, seed=11)
    assert null.gate_fails <= 0.05 + 3 * SD


def test_gate_finds_five_real_drops_among_two_hundred_tasks() -> None:
    before, after = with_drops(np.full(200, 0.95))
    found = simulate(before, after, REPLICATES, seed=12)
    # Measured over 2,000 replicates: the gate fails in about 99% and names about
    # two thirds of the five; "most replicates" with a margin of three binomial sds.
    assert found.gate_fails >= 0.9
    assert found.found_share > 0.5 + 3 * math.sqrt(0.25 / (5 * REPLICATES))
    assert found.false_calls <= 0.05 + 3 * SD


@given(st.lists(st.tuples(small_counts, small_counts), min_size=1, max_size=60))
def test_calls_first_lists_the_calls_then_the_noise_each_by_its_own_p(
    tables: list[tuple[tuple[int, int], tuple[int, int]]],
) -> None:
    ids = [f"t{i}" for i in range(len(tables))]
    result = task_tests(
        ids,
        ([t[0][0] for t in tables], [t[0][1] for t in tables]),
        ([t[1][0] for t in tables], [t[1][1] for t in tables]),
        level=0.2,  # calls in both directions are common at these sizes
    )
    shown = result.calls_first
    assert sorted(t.id for t in shown) == sorted(t.id for t in result.changed)
    groups = [REGRESSED, IMPROVED, MOVED_DOWN, MOVED_UP]
    ranks = [groups.index(t.verdict) for t in shown]
    assert ranks == sorted(ranks)
    for group in groups:
        members = [t for t in shown if t.verdict == group]
        p = [t.p_higher if t.change > 0 else t.p_lower for t in members]
        assert p == sorted(p), group
