"""Variance decomposition, two-stage bootstrap and clustered interval against exact references."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.stats.bootstrap import (
    DEFAULT_SEED,
    _replicates_direct,
    _replicates_multinomial,
    _support,
    two_stage_bootstrap,
)
from reportgen.stats.clustered import clustered_mean_interval, clustered_reliability
from reportgen.stats.estimate import EstimateError, estimate_tasks, mean_with_t_interval
from reportgen.stats.variance import decompose_variance
from reportgen.views import bootstrap_json, clustered_json, decomposition_json

from .conftest import examples

TOL = 1e-12

SPEC_C = [16, 18, 20, 12]
SPEC_N = [20, 20, 20, 20]


def binomial_pmf(n: int, p: Fraction) -> list[Fraction]:
    return [math.comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)]


# ------------------------------------------------------------ decomposition


def test_decomposition_of_the_spec_suite_by_hand() -> None:
    d = decompose_variance(SPEC_C, SPEC_N)
    rates = [Fraction(c, 20) for c in SPEC_C]  # 0.8, 0.9, 1.0, 0.6
    mean = sum(rates) / 4  # 0.825
    total = sum((r - mean) ** 2 for r in rates) / 3  # 0.0875 / 3
    # c(n - c) / (n²(n - 1)): (64 + 36 + 0 + 96) / (400 · 19), averaged over 4 tasks.
    within = Fraction(64 + 36 + 0 + 96, 400 * 19) / 4
    assert total == Fraction(7, 240) and within == Fraction(49, 7600)
    assert d.total == pytest.approx(float(total), abs=TOL)
    assert d.within == pytest.approx(float(within), abs=TOL)
    assert d.between == pytest.approx(float(total - within), abs=TOL)
    assert d.within_share == pytest.approx(float(within / total), abs=TOL)
    assert d.mean_pass_rate == pytest.approx(0.825, abs=TOL)
    assert (d.tasks, d.flaky_tasks, d.always_passed, d.never_passed) == (4, 3, 1, 0)
    assert d.flaky_share == 0.75
    assert d.warnings == ()


@pytest.mark.parametrize(
    ("n", "p"), [(2, Fraction(1, 2)), (5, Fraction(1, 3)), (20, Fraction(4, 5))]
)
def test_within_term_is_unbiased_for_the_sampling_variance(n: int, p: Fraction) -> None:
    # E[p̂(1 - p̂)/(n - 1)] = p(1 - p)/n exactly, summed over the binomial distribution.
    pmf = binomial_pmf(n, p)
    expected = sum(
        float(w) * (decompose_variance([c], [n]).within or 0.0) for c, w in enumerate(pmf)
    )
    assert expected == pytest.approx(float(p * (1 - p) / n), abs=TOL)


def test_between_is_floored_at_zero() -> None:
    # Identical rates: no spread across tasks, all of it sampling noise.
    d = decompose_variance([5, 5, 5], [10, 10, 10])
    assert d.total == 0.0 and d.between == 0.0
    assert d.within == pytest.approx(25 / (100 * 9), abs=TOL)
    assert d.within_share == 1.0


def test_decomposition_undefined_parts() -> None:
    one = decompose_variance([3], [4])
    assert one.total is None and one.between is None and one.within is not None
    assert any("one task" in w for w in one.warnings)
    single_runs = decompose_variance([1, 0, 3], [1, 1, 4])
    assert single_runs.within is None and single_runs.between is None
    assert single_runs.total is not None
    assert any("2 tasks have a single run" in w for w in single_runs.warnings)
    # Nothing flaky, nothing varies: shares stay defined where they can.
    solid = decompose_variance([4, 4], [4, 4])
    assert (solid.flaky_share, solid.total, solid.within, solid.within_share) == (
        0.0,
        0.0,
        0.0,
        None,
    )


def test_decomposition_json() -> None:
    out = decomposition_json(decompose_variance(SPEC_C, SPEC_N))
    assert out["flaky_share"] == 0.75 and out["tasks"] == 4
    assert set(out["variance"]) == {"total", "within", "between", "within_share"}
    json.dumps(out, allow_nan=False)
    out = decomposition_json(decompose_variance([1], [1]))
    assert out["variance"] == {"total": None, "within": None, "between": None, "within_share": None}


# ------------------------------------------------------------ two-stage bootstrap


def exact_draw_distribution(
    pairs: list[tuple[int, int]],
) -> dict[tuple[int, int], Fraction]:
    """P(n_J = n, c* = c) with J uniform over tasks and c* ~ Binomial(n_J, c_J/n_J)."""
    out: dict[tuple[int, int], Fraction] = {}
    for c, n in pairs:
        for star, w in enumerate(binomial_pmf(n, Fraction(c, n))):
            if w:
                out[(n, star)] = out.get((n, star), Fraction(0)) + w / len(pairs)
    return out


MIXED = [(1, 3), (2, 3), (3, 3), (0, 2), (1, 2), (5, 7)]


def test_support_is_the_exact_draw_distribution() -> None:
    c = np.array([x for x, _ in MIXED])
    n = np.array([y for _, y in MIXED])
    support = _support(c, n)
    got: dict[tuple[int, int], float] = {}
    for m, star, p in zip(support.runs, support.successes, support.probability, strict=True):
        got[(int(m), int(star))] = got.get((int(m), int(star)), 0.0) + float(p)
    want = exact_draw_distribution(MIXED)
    assert set(want) <= set(got)
    for key, p in got.items():
        assert p == pytest.approx(float(want.get(key, 0)), abs=TOL)


@pytest.mark.parametrize("sampler", [_replicates_multinomial, _replicates_direct])
def test_samplers_reproduce_the_exact_mean_and_variance(sampler: object) -> None:
    """A replicate is the mean of T iid draws V, so E = E[V] and Var = Var(V)/T exactly."""
    k, replicates = 2, 20_000
    dist = exact_draw_distribution(MIXED)

    def plugin_value(n: int, s: int) -> Fraction:
        return Fraction(s, n) ** k

    def unbiased_value(n: int, s: int) -> Fraction:
        return Fraction(math.comb(s, k), math.comb(n, k))

    for field, value in (("plugin", plugin_value), ("unbiased", unbiased_value)):
        ev = sum((p * value(n, s) for (n, s), p in dist.items()), Fraction(0))
        ev2 = sum((p * value(n, s) ** 2 for (n, s), p in dist.items()), Fraction(0))
        var = (ev2 - ev**2) / len(MIXED)
        c = np.array([x for x, _ in MIXED])
        n = np.array([y for _, y in MIXED])
        rng = np.random.default_rng(7)
        plugin, unbiased = sampler(c, n, k, replicates, rng, True)  # type: ignore[operator]
        reps = plugin if field == "plugin" else unbiased
        # Five standard errors of a mean of 20,000 replicates.
        assert abs(float(np.mean(reps)) - float(ev)) < 5 * math.sqrt(float(var) / replicates)
        assert float(np.var(reps, ddof=1)) == pytest.approx(float(var), rel=0.06)


def test_spec_suite_bootstrap() -> None:
    result = two_stage_bootstrap(SPEC_C, SPEC_N, 3)
    assert (result.replicates, result.seed, result.confidence) == (2000, DEFAULT_SEED, 0.95)
    # Four tasks, 22 support slots: the direct sampler.
    assert result.method == "direct" and result.interval == "percentile"
    p = result.plugin
    assert p.estimate == pytest.approx(0.61425, abs=TOL)  # the SPEC's reliability@3
    assert p.low is not None and p.high is not None and p.replicate_mean is not None
    assert p.estimate is not None and 0.0 <= p.low < p.estimate < p.high <= 1.0
    # E[(c*/n)^3] >= p̂^3 for each task, so the replicates centre at or above the estimate.
    exact = sum(
        sum(w * Fraction(s, 20) ** 3 for s, w in enumerate(binomial_pmf(20, Fraction(c, 20))))
        for c in SPEC_C
    ) / len(SPEC_C)
    assert float(exact) > 0.61425
    assert p.replicate_mean == pytest.approx(float(exact), abs=0.01)
    u = result.unbiased
    assert u.estimate == pytest.approx(estimate_tasks(SPEC_C, SPEC_N, 3).unbiased.mean(), abs=TOL)


def test_bootstrap_is_deterministic_and_seeded() -> None:
    first = bootstrap_json(two_stage_bootstrap(SPEC_C, SPEC_N, 3))
    second = bootstrap_json(two_stage_bootstrap(SPEC_C, SPEC_N, 3))
    assert json.dumps(first, allow_nan=False) == json.dumps(second, allow_nan=False)
    other = two_stage_bootstrap(SPEC_C, SPEC_N, 3, seed=1)
    assert (other.plugin.low, other.plugin.high) != (
        first["plugin"]["low"],
        first["plugin"]["high"],
    )


def test_both_samplers_agree_on_a_larger_suite() -> None:
    rng = np.random.default_rng(3)
    n = np.full(300, 10)
    c = rng.binomial(n, rng.uniform(0, 1, 300))
    multi = two_stage_bootstrap(c, n, 2, method="multinomial", replicates=4000)
    direct = two_stage_bootstrap(c, n, 2, method="direct", replicates=4000)
    assert multi.method == "multinomial" and direct.method == "direct"
    for a, b in ((multi.plugin, direct.plugin), (multi.unbiased, direct.unbiased)):
        assert a.low == pytest.approx(b.low, abs=0.01)
        assert a.high == pytest.approx(b.high, abs=0.01)
        assert a.replicate_mean == pytest.approx(b.replicate_mean, abs=0.003)


def test_auto_picks_the_cheaper_sampler() -> None:
    # Support of 11 slots for 300 tasks: multinomial.
    assert two_stage_bootstrap([5] * 300, [10] * 300, 2, replicates=10).method == "multinomial"
    # Three tasks with 50 runs: support 51 > 3, direct.
    assert two_stage_bootstrap([10, 20, 30], [50] * 3, 2, replicates=10).method == "direct"


def test_suites_without_flaky_tasks() -> None:
    # Only the task resampling varies: a replicate is the share of solved tasks drawn.
    result = two_stage_bootstrap([4, 0, 4, 4, 0], [4] * 5, 3, replicates=500)
    assert result.plugin.estimate == pytest.approx(0.6, abs=TOL)
    assert (result.plugin.low, result.plugin.high) == (result.unbiased.low, result.unbiased.high)
    solved = two_stage_bootstrap([3, 3], [3, 3], 2)
    assert (solved.plugin.estimate, solved.plugin.low, solved.plugin.high) == (1.0, 1.0, 1.0)
    failed = two_stage_bootstrap([0, 0], [3, 3], 2, method="direct")
    assert (failed.plugin.estimate, failed.plugin.low, failed.plugin.high) == (0.0, 0.0, 0.0)


def test_unbiased_bootstrap_undefined_when_k_exceeds_runs() -> None:
    result = two_stage_bootstrap([2, 3], [2, 5], 3)
    assert result.plugin.estimate is not None and result.plugin.low is not None
    u = result.unbiased
    assert (u.estimate, u.low, u.high, u.replicate_mean) == (None, None, None, None)
    out = bootstrap_json(result)
    assert out["unbiased"] == {"estimate": None, "low": None, "high": None, "replicate_mean": None}
    json.dumps(out, allow_nan=False)


def test_single_task_has_a_bootstrap_interval() -> None:
    # With one task only the within-task noise remains; the t interval is null here.
    result = two_stage_bootstrap([16], [20], 3)
    assert result.plugin.low is not None and result.plugin.high is not None
    assert result.plugin.low < 0.512 < result.plugin.high


def test_percentile_shift_on_a_large_suite_and_the_basic_interval() -> None:
    rng = np.random.default_rng(11)
    n = np.full(10_000, 20)
    c = rng.binomial(n, rng.beta(0.5, 0.5, 10_000))
    percentile = two_stage_bootstrap(c, n, 3)
    basic = two_stage_bootstrap(c, n, 3, interval="basic")
    assert percentile.method == "multinomial"
    p = percentile.plugin
    assert p.low is not None and p.high is not None and p.estimate is not None
    # The replicates sit above the plug-in estimate and the interval misses it.
    assert p.estimate < p.low
    assert any("plug-in percentile interval" in w for w in percentile.warnings)
    b = basic.plugin
    assert b.low is not None and b.high is not None and b.replicate_mean is not None
    # Same seed, same replicates: the basic interval reflects the percentile one about P.
    assert b.low == pytest.approx(2 * p.estimate - p.high, abs=TOL)
    assert b.high == pytest.approx(2 * p.estimate - p.low, abs=TOL)
    # It sits at P minus the plug-in's bias, close to the unbiased estimate, and
    # with 10,000 tasks that bias exceeds the sampling error: P is excluded.
    u_hat = float(estimate_tasks(c, n, 3).unbiased.mean())
    assert b.low < u_hat < b.high < p.estimate
    assert any("plug-in basic interval" in w and "bias" in w for w in basic.warnings)
    # The unbiased statistic's basic interval is centred on U and contains it.
    u, pu = basic.unbiased, percentile.unbiased
    assert u.estimate == pytest.approx(u_hat, abs=TOL)
    assert pu.low is not None and pu.high is not None
    assert u.low == pytest.approx(u_hat - (pu.high - p.estimate), abs=TOL)
    assert u.low is not None and u.high is not None and u.low < u_hat < u.high
    assert not any("unbiased basic" in w for w in basic.warnings)
    assert any("unbiased percentile" in w for w in percentile.warnings)


counts = st.integers(1, 12).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@given(
    st.lists(counts, min_size=1, max_size=30),
    st.integers(1, 6),
    st.sampled_from(["percentile", "basic"]),
)
@settings(max_examples=examples(60), deadline=None)
def test_bootstrap_bounds_in_unit_interval(
    pairs: list[tuple[int, int]], k: int, interval: str
) -> None:
    c, n = [x for x, _ in pairs], [y for _, y in pairs]
    result = two_stage_bootstrap(c, n, k, replicates=200, interval=interval)  # type: ignore[arg-type]
    again = two_stage_bootstrap(c, n, k, replicates=200, interval=interval)  # type: ignore[arg-type]
    assert result == again
    for b in (result.plugin, result.unbiased):
        if b.estimate is None:
            continue
        assert b.low is not None and b.high is not None
        assert 0.0 <= b.low <= b.high <= 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"replicates": 1}, "replicates must be at least 2"),
        ({"replicates": 10.0}, "replicates must be a whole number"),
        ({"seed": -1}, "seed must be a whole number of at least 0"),
        ({"method": "fast"}, "method must be"),
        ({"interval": "bca"}, "interval must be"),
        ({"confidence": 1.0}, "confidence must lie strictly"),
        ({"k": 0}, "k must be a whole number"),
    ],
)
def test_bootstrap_invalid_input(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"successes": SPEC_C, "runs": SPEC_N, "k": 3, **kwargs}
    with pytest.raises(EstimateError, match=message):
        two_stage_bootstrap(**args)  # type: ignore[arg-type]
    with pytest.raises(EstimateError, match="at least one task"):
        two_stage_bootstrap([], [], 3)


# ------------------------------------------------------------ clustered interval

# Seven tasks in four categories; k = 1 keeps every value rational.
CL_C = [1, 2, 0, 1, 3, 4, 2]
CL_N = [2, 2, 2, 4, 4, 4, 4]
CL_G = ["a", "a", "b", "b", "c", "c", "d"]


def exact_cr1_variance(values: list[Fraction], groups: list[str]) -> Fraction:
    """G/(G-1) · Σ_g (Σ_{i in g} (x_i - x̄))² / T², exactly."""
    mean = sum(values, Fraction(0)) / len(values)
    sums: dict[str, Fraction] = {}
    for v, g in zip(values, groups, strict=True):
        sums[g] = sums.get(g, Fraction(0)) + (v - mean)
    big_g = len(sums)
    squares = sum((s * s for s in sums.values()), Fraction(0))
    return Fraction(big_g, big_g - 1) * squares / len(values) ** 2


def test_clustered_interval_by_hand_and_statsmodels() -> None:
    # Values 1/2, 1, 0, 1/4, 3/4, 1, 1/2 with mean 4/7; cluster residual sums
    # 5/14, -25/28, 17/28, -1/14, so SE² = 4/3 · (1018/784) / 49 = 509/14406.
    values = [Fraction(c, n) for c, n in zip(CL_C, CL_N, strict=True)]
    assert exact_cr1_variance(values, CL_G) == Fraction(509, 14406)
    result = clustered_reliability(CL_C, CL_N, 1, CL_G, confidence=0.8)
    p = result.plugin
    assert p.estimate == pytest.approx(4 / 7, abs=TOL)
    assert p.se == pytest.approx(math.sqrt(509 / 14406), abs=TOL)
    assert (p.df, p.clusters, p.tasks) == (3, 4, 7)
    # statsmodels 0.15.0: OLS(x, ones).fit(cov_type="cluster", use_t=True), which
    # applies the same G/(G-1) factor and G - 1 df: bse 0.18796941332854553,
    # conf_int(0.2) = [0.263582726082157, 0.8792744167749857].
    assert p.se == pytest.approx(0.18796941332854553, abs=TOL)
    assert p.low == pytest.approx(0.263582726082157, abs=1e-10)
    assert p.high == pytest.approx(0.8792744167749857, abs=1e-10)
    assert any("only 4 categories" in w for w in result.warnings)


def test_per_category_values() -> None:
    result = clustered_reliability(CL_C, CL_N, 2, CL_G)
    plugin = estimate_tasks(CL_C, CL_N, 2).plugin
    assert [cat.category for cat in result.categories] == ["a", "b", "c", "d"]
    assert [cat.tasks for cat in result.categories] == [2, 2, 2, 1]
    for cat in result.categories:
        members = plugin[[i for i, g in enumerate(CL_G) if g == cat.category]]
        assert cat.plugin == mean_with_t_interval(members)
    # (1/2)^2 and 1^2 for "a"; a single task ("d") has no interval.
    assert result.categories[0].plugin.estimate == pytest.approx(0.625, abs=TOL)
    assert result.categories[3].plugin.low is None
    out = clustered_json(result)
    assert out["clusters"] == 4 and out["tasks"] == 7
    assert [c["category"] for c in out["categories"]] == ["a", "b", "c", "d"]
    assert set(out["plugin"]) == {"estimate", "low", "high", "se", "t", "df"}
    json.dumps(out, allow_nan=False)


def test_one_cluster_has_no_interval_and_many_clusters_no_warning() -> None:
    one = clustered_reliability([1, 2, 3], [4, 4, 4], 1, ["x", "x", "x"])
    assert one.plugin.estimate == pytest.approx(0.5, abs=TOL)
    assert (one.plugin.low, one.plugin.high, one.plugin.se, one.plugin.t) == (None,) * 4
    assert one.plugin.df == 0 and one.plugin.clusters == 1
    assert any("one category only" in w for w in one.warnings)
    many = clustered_reliability(list(range(12)), [12] * 12, 1, [f"g{i % 10}" for i in range(12)])
    assert many.plugin.clusters == 10 and many.warnings == ()


def test_clustered_interval_clamped_and_undefined_values() -> None:
    clamped = clustered_mean_interval([0.0, 0.0, 0.0, 0.9], ["a", "b", "c", "d"])
    assert clamped.low == 0.0
    nan = clustered_mean_interval([0.5, float("nan")], ["a", "b"])
    assert (nan.estimate, nan.low, nan.se) == (None, None, None)
    wide = clustered_mean_interval([-0.5, 0.5, 0.2], ["a", "b", "c"], clamp=(-1.0, 1.0))
    assert wide.low is not None and wide.low < 0.0


@pytest.mark.parametrize(
    ("categories", "message"),
    [
        (["a", "b"], "need one category per task: got 2 categories for 3 tasks"),
        (["a", "", "b"], "task 2: category must be a non-empty string"),
        (["a", None, "b"], "task 2: category must be a non-empty string"),
    ],
)
def test_clustered_invalid_categories(categories: list[str], message: str) -> None:
    with pytest.raises(EstimateError, match=message):
        clustered_reliability([1, 2, 3], [4, 4, 4], 1, categories)


values_st = st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=2, max_size=40)


@given(values_st, st.floats(min_value=0.5, max_value=0.99))
@settings(max_examples=examples(150), deadline=None)
def test_one_task_per_cluster_is_the_ordinary_t_interval(
    values: list[float], confidence: float
) -> None:
    # G = T: SE² = T/(T-1) · Σ(x - x̄)²/T² = s²/T, i.e. the ordinary SE, which
    # is also "ordinary SE · sqrt(G/(G-1)) · sqrt((T-1)/T)" with G = T.
    x = np.array(values)
    t_count = len(values)
    clustered = clustered_mean_interval(x, [f"t{i}" for i in range(t_count)], confidence)
    plain = mean_with_t_interval(x, confidence)
    assert plain.sd is not None and clustered.se is not None
    ordinary_se = plain.sd / math.sqrt(t_count)
    assert clustered.se == pytest.approx(ordinary_se, abs=TOL)
    g = t_count
    assert clustered.se == pytest.approx(
        ordinary_se * math.sqrt(g / (g - 1)) * math.sqrt((t_count - 1) / t_count), abs=TOL
    )
    assert clustered.df == plain.df and clustered.t == plain.t
    assert clustered.low == pytest.approx(plain.low, abs=TOL)
    assert clustered.high == pytest.approx(plain.high, abs=TOL)


@given(
    st.lists(
        st.tuples(st.floats(min_value=0.0, max_value=1.0), st.sampled_from("abcdefg")),
        min_size=2,
        max_size=40,
    ),
    st.randoms(use_true_random=False),
)
@settings(max_examples=examples(150), deadline=None)
def test_clustered_se_matches_pairwise_form_and_ignores_order(
    rows: list[tuple[float, str]], random: object
) -> None:
    x = [v for v, _ in rows]
    g = [label for _, label in rows]
    result = clustered_mean_interval(x, g)
    groups = len(set(g))
    if groups < 2:
        assert result.se is None
        return
    # Miller's (2024) form: Σ_i r_i² plus the cross products within each cluster.
    mean = sum(x) / len(x)
    r = [v - mean for v in x]
    pairwise = (
        sum(r[i] * r[j] for i in range(len(x)) for j in range(len(x)) if g[i] == g[j]) / len(x) ** 2
    )
    assert result.se == pytest.approx(math.sqrt(groups / (groups - 1) * pairwise), abs=1e-9)
    order = list(range(len(rows)))
    random.shuffle(order)  # type: ignore[attr-defined]
    relabel = {label: f"z{label}" for label in set(g)}
    shuffled = clustered_mean_interval([x[i] for i in order], [relabel[g[i]] for i in order])
    assert shuffled.se == pytest.approx(result.se, abs=1e-12)
    assert shuffled.estimate == pytest.approx(result.estimate, abs=1e-12)


def test_a_two_task_page_never_calls_noise_larger_than_the_whole_a_share_of_it(
    tmp_path: Path,
) -> None:
    """2/5 and 3/5: the pass rates vary by 0.020, less than the 0.060 their runs' noise
    alone would make. The page said "about 0.060 (100.0%)" of the 0.020."""
    from reportgen.cli import main

    suite = tmp_path / "two.yaml"
    suite.write_text(
        "suite: two\ntasks:\n"
        "  - {id: a, successes: 2, runs: 5}\n"
        "  - {id: b, successes: 3, runs: 5}\n"
    )
    site = tmp_path / "site"
    assert main(["build", str(suite), "-o", str(site)]) == 0
    (page,) = (site / "sets").glob("*/index.html")
    text = " ".join(page.read_text().split())
    v = decompose_variance([2, 3], [5, 5])
    assert v.within is not None and v.total is not None and v.within > v.total
    assert (
        f"The variance of the pass rate across tasks ({v.total:.3f}) is no larger than the "
        f"sampling noise each task's finite runs would make by themselves (about {v.within:.3f})"
    ) in text
    assert "(100.0%) is the sampling noise" not in text


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.integers(2, 8).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
        min_size=2,
        max_size=4,
    )
)
def test_the_split_the_page_states_adds_up_over_small_suites(pairs: list[tuple[int, int]]) -> None:
    """The page states "about within (share) is noise and between is difference" only
    when within < total; then the two parts add up to the whole and the share is theirs."""
    v = decompose_variance([c for c, _ in pairs], [n for _, n in pairs])
    assert v.total is not None and v.within is not None and v.between is not None
    if v.within_share is None or v.within >= v.total:
        assert v.between == 0.0 or v.within_share is None
        return
    assert v.between == pytest.approx(v.total - v.within)
    assert 0.0 <= v.within_share <= 1.0
    assert v.within_share == pytest.approx(v.within / v.total)
