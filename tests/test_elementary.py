"""The statistics give the same bits whichever code numpy picks for this CPU."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal, localcontext

import mpmath
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.stats import elementary
from reportgen.stats.plain import decimals

from .conftest import ROOT, examples

#: Figures from every part of the core that takes an exp, a log or a sum of products,
#: printed in full, with the CPU features numpy dispatches to.
_FIGURES = """
import json
import numpy as np
try:
    from numpy._core import _multiarray_umath as umath
except ImportError:  # numpy 1
    from numpy.core import _multiarray_umath as umath
from reportgen.stats.bootstrap import two_stage_bootstrap
from reportgen.stats.clustered import clustered_mean_interval
from reportgen.stats.coverage import check_coverage
from reportgen.stats.estimate import curve_over_k, estimate_suite
from reportgen.stats.population import fit_population

rng = np.random.default_rng(7)
runs = rng.integers(3, 60, 3000)
successes = rng.binomial(runs, rng.beta(0.6, 0.4, 3000))
suite = estimate_suite(successes[:300], runs[:300], 3)
figures = [*suite.tasks.plugin, *suite.tasks.plugin_low, *suite.tasks.plugin_high]
figures += [suite.plugin.estimate, suite.plugin.low, suite.plugin.high]
figures += [p.plugin.estimate for p in curve_over_k(successes, runs)]
# Both samplers: the direct one for few tasks, the multinomial one for many.
for tasks in (40, 3000):
    boot = two_stage_bootstrap(successes[:tasks], runs[:tasks], 3, replicates=300)
    figures += [b.replicate_mean for b in (boot.plugin, boot.unbiased)]
    figures += [boot.plugin.low, boot.plugin.high, boot.unbiased.low, boot.unbiased.high]
clusters = [f"g{i % 17}" for i in range(300)]
clustered = clustered_mean_interval(suite.tasks.plugin, clusters)
figures += [clustered.low, clustered.high]
population = fit_population(successes, runs)
figures += [population.mean_pass_hat_k(3)]
check = check_coverage(
    runs[:30], 3, population, categories=[f"g{i % 3}" for i in range(30)],
    replicates=200, bootstrap_replicates=40, bootstrap_resamples=100,
)
figures += [i.coverage for i in check.intervals if i.coverage is not None]
figures += [check.plugin_bias]
# The bootstrap check's lattice sampler: FFT convolutions, powers below and above 100.
from reportgen.stats.coverage import _sum_distributions
chances = rng.dirichlet(np.ones(5), size=4)
sums = _sum_distributions(chances, np.array([0, 1, 4, 10, 20]), [3, 150])
figures += [*sums[3].ravel(), *sums[150][:, ::37].ravel()]
on_lattice = check_coverage([4] * 300, 3, population, replicates=200,
                            bootstrap_replicates=60, bootstrap_resamples=100)
figures += [on_lattice.get("bootstrap").coverage]
# The paired comparison's correlation between two models' per-task values.
from reportgen.stats.compare import _pearson
other = rng.binomial(runs, rng.beta(0.6, 0.4, 3000)) / runs
figures += [_pearson(successes / runs, other), _pearson(successes[:77] / runs[:77], other[:77])]
dispatched = [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]
print(json.dumps(dispatched))
print([float(x).hex() for x in figures])
"""


def _figures(env: dict[str, str]) -> tuple[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", _FIGURES],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env,
    )
    dispatched, figures = done.stdout.splitlines()
    return dispatched, figures


def test_figures_do_not_depend_on_the_cpu_features_numpy_or_blas_use() -> None:
    # On a machine with AVX-512, numpy's own exp and log gave other last bits than
    # the C library's, which numpy uses when those features are switched off; and
    # OpenBLAS sums a matrix product in an order of its CPU's choosing.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")
    }
    dispatched, everything = _figures(env)
    features = " ".join(json.loads(dispatched))
    if features:
        fewer, baseline_only = _figures({**env, "NPY_DISABLE_CPU_FEATURES": features})
        assert fewer == "[]"
        assert baseline_only == everything
    if platform.machine() in ("x86_64", "AMD64"):
        # OpenBLAS's kernels for the oldest x86-64 CPUs it knows (SSE3 only).
        _, oldest_blas = _figures({**env, "OPENBLAS_CORETYPE": "Prescott"})
        assert oldest_blas == everything


@settings(max_examples=examples(300), deadline=None)
@given(
    st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 5_000),
)
def test_power_is_as_close_to_the_exact_power_as_its_log_allows(
    cn: tuple[int, int], k: int
) -> None:
    c, n = cn
    (got,) = elementary.power(np.array([c / n]), np.array([(n - c) / n]), k)
    with mpmath.workdps(40):
        exact = mpmath.power(mpmath.mpf(c) / n, k)
    if exact < mpmath.mpf("1e-300"):
        assert got < 1e-299
        return
    # exp(x) with x = k log p: x is off by an ulp or so of itself (log p's own
    # rounding times k, then the product's), and e**x by that much relatively.
    ulps = 4 + 2 * k * abs(math.log(c / n))
    with mpmath.workdps(40):
        assert abs(mpmath.mpf(got) / exact - 1) <= ulps * 2.0**-52


def test_exp_is_within_an_ulp_of_the_c_library_s() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [rng.uniform(-1, 1, 20_000), rng.uniform(-745, 709, 20_000), rng.uniform(-745, -708, 5_000)]
    )
    got = elementary.exp(x)
    reference = np.array([math.exp(v) for v in x.tolist()])
    assert np.all(np.abs(got - reference) <= np.spacing(reference))
    special = [0.0, -0.0, -math.inf, math.inf, 709.8, -746.0, 1e-300]
    assert elementary.exp(np.array(special)).tolist() == [
        1.0,
        1.0,
        0.0,
        math.inf,
        math.inf,
        0.0,
        1.0,
    ]
    assert math.isnan(elementary.exp(math.nan)) and elementary.exp(1.0).shape == ()


def test_products_sum_as_the_matrix_product_does() -> None:
    rng = np.random.default_rng(1)
    a, b, v = rng.random((7, 5)), rng.random((5, 3)), rng.random(5)
    np.testing.assert_allclose(elementary.matmul(a, b), a @ b, rtol=1e-14)
    np.testing.assert_allclose(elementary.dot(a, v), a @ v, rtol=1e-14)
    stacked = rng.integers(0, 9, (2, 4, 5))
    np.testing.assert_allclose(elementary.dot(stacked, v), stacked @ v, rtol=1e-14)


def test_power_and_exp_keep_shapes_zeros_and_nan() -> None:
    p = np.array([[0.0, 1.0, 0.5], [np.nan, 0.25, 0.5]])
    got = elementary.power(p, 1.0 - p, 2)
    assert got.shape == (2, 3)
    assert got[0].tolist() == [0.0, 1.0, 0.25] and math.isnan(got[1, 0])
    assert got[1, 1:].tolist() == [0.0625, 0.25]
    assert elementary.exp(np.array([0.0, -math.inf, 1000.0])).tolist() == [1.0, 0.0, math.inf]
    assert elementary.exp(np.zeros((0, 3))).shape == (0, 3)


# ------------------------------------------------------------ decimals


def _half_up(value: float, places: int, plus: bool) -> str:
    """The exact binary value rounded to `places`, a tie away from zero, by the decimal module."""
    with localcontext(prec=400):  # every float's digits, up to 1.8e308
        rounded = Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{rounded:+f}" if plus else f"{rounded:f}"


@settings(max_examples=examples(400))
@given(
    st.one_of(
        st.floats(-1e6, 1e6, allow_nan=False),
        st.floats(allow_nan=False, allow_infinity=False),
        # Exact ties at three decimals are the odd multiples of 1/16; at one, of 1/4...
        st.builds(lambda j, e: j / 2**e, st.integers(-(10**6), 10**6), st.integers(0, 12)),
        # ... also where the product with 2 x 10^places passes 2**53.
        st.builds(lambda j, e: j / 2**e, st.integers(-(2**52), 2**52), st.integers(0, 12)),
    ),
    st.integers(0, 6),
    st.booleans(),
)
def test_decimals_round_the_exact_value_with_ties_away_from_zero(
    value: float, places: int, plus: bool
) -> None:
    assert decimals(value, places, plus) == _half_up(value, places, plus)


def test_decimals_differs_from_format_only_at_exact_ties() -> None:
    assert decimals(0.0625, 3) == "0.063"  # (1/2)^4; format gives 0.062
    assert decimals(-0.0625, 3, plus=True) == "-0.063"
    assert decimals(0.5625, 3, plus=True) == "+0.563"
    assert decimals(0.125, 2) == "0.13"
    assert decimals(2.5, 0) == "3"
    # Not ties in binary: as format rounds them.
    assert decimals(1.0005, 3) == f"{1.0005:.3f}" == "1.000"
    assert decimals(0.0005, 3) == f"{0.0005:.3f}" == "0.001"
    assert decimals(math.inf, 3) == "inf"
    assert decimals(np.float64(-math.inf), 3) == "-inf"  # no warning either
    assert decimals(np.float32(0.0625), 3) == "0.063"
    assert decimals(2**48 + 1 / 16, 3) == "281474976710656.063"
