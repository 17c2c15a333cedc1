"""The statistics give the same bits whichever code numpy picks for this CPU."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.stats import elementary

from .conftest import ROOT

#: Figures from every part of the core that takes an exp or a log, printed in full.
_FIGURES = """
import json
import numpy as np
from numpy._core import _multiarray_umath as umath
from reportgen.stats.bootstrap import two_stage_bootstrap
from reportgen.stats.clustered import clustered_mean_interval
from reportgen.stats.coverage import check_coverage
from reportgen.stats.estimate import curve_over_k, estimate_suite
from reportgen.stats.population import fit_population

rng = np.random.default_rng(7)
runs = rng.integers(3, 60, 300)
successes = rng.binomial(runs, rng.beta(0.6, 0.4, 300))
suite = estimate_suite(successes, runs, 3)
figures = [*suite.tasks.plugin, *suite.tasks.plugin_low, *suite.tasks.plugin_high]
figures += [suite.plugin.estimate, suite.plugin.low, suite.plugin.high]
figures += [p.plugin.estimate for p in curve_over_k(successes, runs)]
boot = two_stage_bootstrap(successes[:40], runs[:40], 3, replicates=300)
figures += [boot.plugin.low, boot.plugin.high, boot.unbiased.low, boot.unbiased.high]
clusters = [f"g{i % 17}" for i in range(300)]
clustered = clustered_mean_interval(suite.tasks.plugin, clusters)
figures += [clustered.low, clustered.high]
population = fit_population(successes, runs)
figures += [population.mean_pass_hat_k(3)]
check = check_coverage(runs[:30], 3, population, replicates=200, bootstrap_replicates=0)
figures += [i.coverage for i in check.intervals if i.coverage is not None]
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


def test_figures_do_not_depend_on_the_cpu_features_numpy_uses() -> None:
    # On a machine with AVX-512, numpy's own exp and log gave other last bits than
    # the C library's, which numpy uses when those features are switched off.
    env = {k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"}
    dispatched, everything = _figures(env)
    features = " ".join(json.loads(dispatched))
    if features:
        fewer, baseline_only = _figures({**env, "NPY_DISABLE_CPU_FEATURES": features})
        assert fewer == "[]"
        assert baseline_only == everything


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 5_000),
)
def test_power_is_within_an_ulp_or_two_of_the_exact_power(cn: tuple[int, int], k: int) -> None:
    c, n = cn
    (got,) = elementary.power(np.array([c / n]), np.array([(n - c) / n]), k)
    exact = (
        math.exp(k * (math.log1p(-(n - c) / n) if 2 * c >= n else math.log(c / n))) if c else 0.0
    )
    # Against the exact rational power where it is a normal number.
    reference = float((c / n) ** k) if c else 0.0
    assert got == exact
    if reference > 1e-300:
        assert abs(got - reference) <= 1e-13 * k * reference


def test_power_and_exp_keep_shapes_zeros_and_nan() -> None:
    p = np.array([[0.0, 1.0, 0.5], [np.nan, 0.25, 0.5]])
    got = elementary.power(p, 1.0 - p, 2)
    assert got.shape == (2, 3)
    assert got[0].tolist() == [0.0, 1.0, 0.25] and math.isnan(got[1, 0])
    assert got[1, 1:].tolist() == [0.0625, 0.25]
    assert elementary.exp(np.array([0.0, -math.inf, 1000.0])).tolist() == [1.0, 0.0, math.inf]
    assert elementary.exp(np.zeros((0, 3))).shape == (0, 3)
