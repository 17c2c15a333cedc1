"""The two tiers (tests/conftest.py): `make test` leaves out the tests marked slow or
spark and says how many, with pytest-xdist as without it."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from .conftest import ROOT

FILE = "tests/test_hardening.py"  # slow tests beside fast ones that take a moment


def pytest_output(*args: str) -> str:
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_the_fast_tier_names_the_slow_tests_it_left_out(workers: list[str]) -> None:
    collected = pytest_output("--collect-only", "-m", "slow", FILE)
    slow = int(re.search(r"(\d+)/\d+ tests collected", collected).group(1))  # type: ignore[union-attr]
    assert slow >= 4
    # Run only the quick ones: a slow test left out by -k is not run either, and counted.
    out = pytest_output(*workers, "-m", "not slow and not spark", "-k", "confidence", FILE)
    assert re.search(r"\d+ passed", out)
    assert f"{slow} slow tests not run; `make test-all` runs them" in out
