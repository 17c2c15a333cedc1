"""Predictability (stats/predictability.py) against HAL's definitions, written here
over plain lists of (confidence, outcome) pairs (princeton-pli/hal-harness,
reliability_eval/metrics/predictability.py): ECE over 10 equal-width bins, the last
closed at 1; AUROC by counting pairs, ties half; Brier the mean squared error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reportgen.stats.predictability import predictability


def hal_ece(pairs: list[tuple[float, int]]) -> float:
    edges = np.linspace(0, 1, 11)  # as HAL's code has them: 0.3 lies below edges[3]
    total = 0.0
    for j in range(10):
        low, high = edges[j], edges[j + 1]
        inside = [(c, y) for c, y in pairs if low <= c < high or (j == 9 and c == 1.0)]
        if inside:
            gap = abs(
                sum(y for _, y in inside) / len(inside) - sum(c for c, _ in inside) / len(inside)
            )
            total += len(inside) / len(pairs) * gap
    return total


def hal_auroc(pairs: list[tuple[float, int]]) -> float | None:
    pos = [c for c, y in pairs if y]
    neg = [c for c, y in pairs if not y]
    if not pos or not neg:
        return None
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def hal_brier(pairs: list[tuple[float, int]]) -> float:
    return sum((c - y) ** 2 for c, y in pairs) / len(pairs)


confidences = st.one_of(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]), st.floats(0, 1))
runs = st.lists(st.tuples(st.integers(0, 5), confidences, st.booleans()), min_size=1, max_size=40)


@given(runs)
def test_the_three_measures_are_hal_s(records):
    owner = np.array([t for t, _, _ in records], dtype=np.int64)
    conf = np.array([c for _, c, _ in records])
    passed = np.array([y for _, _, y in records])
    result = predictability(owner, passed, conf, 6, resamples=20)
    assert result is not None
    pairs = [(c, int(y)) for _, c, y in records]
    assert result.calibration_error.estimate == pytest.approx(hal_ece(pairs), abs=1e-12)
    assert result.brier.estimate == pytest.approx(hal_brier(pairs), abs=1e-12)
    want = hal_auroc(pairs)
    if want is None:
        assert result.auroc.estimate is None
    else:
        assert result.auroc.estimate == pytest.approx(want, abs=1e-12)
    assert sum(b.runs for b in result.bins) == len(records)


def test_a_confidence_on_an_edge_falls_where_hal_puts_it():
    """0.3 and 0.7 in floating point lie just below HAL's third and eighth edges."""
    result = predictability(np.arange(3), np.ones(3, bool), np.array([0.3, 0.7, 0.2]), 3)
    assert result is not None
    assert [b.runs for b in result.bins] == [0, 0, 2, 0, 0, 0, 1, 0, 0, 0]


def test_edge_cases():
    owner = np.array([0, 0, 1, 1])
    # Every run passed: no AUROC; confidence 1 throughout is perfectly calibrated.
    sure = predictability(owner, np.ones(4, bool), np.ones(4), 2)
    assert sure is not None
    assert sure.auroc.estimate is None and sure.calibration_error.estimate == 0.0
    assert sure.brier.estimate == 0.0
    # Runs without a confidence are left out; none at all gives nothing.
    assert predictability(owner, np.ones(4, bool), np.full(4, math.nan), 2) is None
    part = predictability(
        owner, np.array([1, 0, 1, 0], bool), np.array([0.9, math.nan, 0.2, 0.1]), 2
    )
    assert part is not None and part.runs == 3
    # Perfect ranking.
    ranked = predictability(owner, np.array([1, 0, 1, 0], bool), np.array([0.9, 0.1, 0.8, 0.2]), 2)
    assert ranked is not None and ranked.auroc.estimate == 1.0


def test_intervals_are_seeded_and_hold_the_estimate():
    rng = np.random.default_rng(3)
    owner = np.repeat(np.arange(80), 5)
    p = rng.uniform(size=80)[owner]
    passed = rng.random(owner.size) < p
    conf = np.clip(p + rng.normal(0, 0.2, owner.size), 0, 1)
    first = predictability(owner, passed, conf, 80)
    assert first == predictability(owner, passed, conf, 80)
    assert first is not None
    for v in (first.calibration_error, first.auroc, first.brier):
        assert v.low is not None and v.high is not None and v.low < v.estimate < v.high
