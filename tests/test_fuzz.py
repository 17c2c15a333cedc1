"""The fuzzer (tests/fuzz.py), bounded: a few hundred hostile cases for every
reader and command, each held to the bad-input contract (200 in `make test-all`,
100 in `make test`). `make fuzz` runs 10,000 and more."""

from __future__ import annotations

import os

import pytest

from . import fuzz
from .conftest import examples

#: Cases per run: enough to touch every family and to run one case as a child process
#: (every SUBPROCESS_EVERY-th) in the fast tier, more in `make test-all` and `make fuzz`.
CASES = 2000 if os.environ.get("REPORTGEN_FUZZ") else max(fuzz.SUBPROCESS_EVERY, examples(200))


@pytest.mark.parametrize("seed", [12])
def test_hostile_inputs_keep_the_contract(seed: int) -> None:
    outcome = fuzz.run_cases(seed, CASES)
    assert outcome.cases == CASES
    assert len(outcome.kinds) >= 10, outcome.kinds  # every family was reached
    assert outcome.children >= 1  # the slice with time and memory measured ran
    assert not outcome.violations, "\n".join(outcome.violations)
