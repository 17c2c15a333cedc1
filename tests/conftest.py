"""Shared fixtures: the example project built once per test session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reportgen.build import build
from reportgen.config import load_config

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example" / "reportgen.yaml"
FIXTURES = ROOT / "tests" / "fixtures"


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
