"""Shared fixtures and the two tiers of the suite.

`make test` is the fast tier: `-m "not slow and not spark"` and the `dev`
Hypothesis profile, which runs a fifth of each property's examples. `make
test-all` runs every test with the `ci` profile, at full budget. A property asks
for `examples(full)` and gets the number its tier allows; the end of a fast run
says how many tests it left to `make test-all`.
"""

from __future__ import annotations

import shutil
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from reportgen.build import build
from reportgen.config import load_config

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example" / "reportgen.yaml"
FIXTURES = ROOT / "tests" / "fixtures"

#: Hypothesis' own default budget, which the `ci` profile keeps: the full one.
FULL_EXAMPLES = 100
# `make test-all` passes --hypothesis-profile=ci: Hypothesis' own profile for CI, which
# it also loads by itself where CI is set (derandomized, no deadline, full budget).
# `make test` passes --hypothesis-profile=dev. It has no deadline either: under
# pytest-xdist two workers share two cores, and a slow moment is not a failure.
settings.register_profile("dev", max_examples=FULL_EXAMPLES // 5, deadline=None)


def examples(full: int) -> int:
    """`full` examples (or cases) at full budget; in the dev profile a fifth, but at least 5.

    Read when a test module is imported, which is after pytest has loaded the profile.
    """
    share = settings.default.max_examples / FULL_EXAMPLES
    return max(min(full, 5), round(full * share))


def first_fast(cases: Sequence[Any]) -> list[Any]:
    """The cases of a parametrized test that builds a site for each: the first runs in
    `make test`, the others are marked slow and run in `make test-all`."""
    first, *rest = cases
    slow = [
        pytest.param(*(c if isinstance(c, tuple) else (c,)), marks=pytest.mark.slow) for c in rest
    ]
    return [first, *slow]


def build_example(output: Path, **changes: object) -> Path:
    config = load_config(EXAMPLE)
    config.output = output
    for key, value in changes.items():
        setattr(config, key, value)
    build(config)
    return output


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example report, built once; tests must not modify it."""
    return build_example(tmp_path_factory.mktemp("example") / "site")


@pytest.fixture
def example_copy(tmp_path: Path) -> Path:
    """A copy of the example project's folder that a test may change."""
    target = tmp_path / "example"
    shutil.copytree(ROOT / "example", target)
    return target


# ---------------------------------------------------------------- what the fast tier left out

#: Tests that `-m` deselected and `make test-all` runs, by marker.
LEFT_OUT = pytest.StashKey[dict[str, int]]()
TIER_MARKERS = ("slow", "spark")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[LEFT_OUT] = {}
    # A shell starts background jobs (`make test &`, nohup, some CI runners) with Ctrl-C
    # ignored, and Python then never turns SIGINT into KeyboardInterrupt, in the tests or
    # in the processes they start: the tests of what Ctrl-C does need it as a terminal
    # delivers it.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_deselected(items: list[pytest.Item]) -> None:
    for item in items:
        for marker in TIER_MARKERS:
            if item.get_closest_marker(marker):
                left_out = item.config.stash[LEFT_OUT]
                left_out[marker] = left_out.get(marker, 0) + 1
                break


def pytest_sessionfinish(session: pytest.Session) -> None:
    # A pytest-xdist worker hands its counts to the controller, which prints them.
    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["left_out"] = session.config.stash[LEFT_OUT]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    # Every worker collects the whole suite, so each reports the same counts.
    left_out = getattr(node, "workeroutput", {}).get("left_out")
    if left_out:
        node.config.stash[LEFT_OUT] = left_out


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left_out = config.stash.get(LEFT_OUT, {})
    if left_out:
        counts = " and ".join(f"{n} {marker}" for marker, n in sorted(left_out.items()))
        total = sum(left_out.values())
        terminalreporter.write_line(
            f"{counts} test{'s' if total != 1 else ''} not run; `make test-all` runs them",
            yellow=True,
            bold=True,
        )
