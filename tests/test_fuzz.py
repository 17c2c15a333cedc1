"""The fuzzer (tests/fuzz.py), bounded: a few hundred hostile cases for every
reader and command, each held to the bad-input contract. `make fuzz` runs
10,000 and more."""

from __future__ import annotations

import os

import pytest

from . import fuzz

#: Cases per run: enough to touch every family in `make test`, more under `make fuzz`.
CASES = 2000 if os.environ.get("REPORTGEN_FUZZ") else 200


@pytest.mark.parametrize("seed", [12])
def test_hostile_inputs_keep_the_contract(seed: int) -> None:
    outcome = fuzz.run_cases(seed, CASES)
    assert outcome.cases == CASES
    assert len(outcome.kinds) >= 10, outcome.kinds  # every family was reached
    assert outcome.children >= 1  # the slice with time and memory measured ran
    assert not outcome.violations, "\n".join(outcome.violations)
