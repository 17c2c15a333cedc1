"""Small hostile inputs must not cost gigabytes or minutes (issue 12, items 6 to 8).

Each bomb runs the real command in a child process, through a small wrapper that
reports the child's peak memory (ru_maxrss of its own children, so earlier
children of the test process do not count), and must end within seconds with
exit status 2 and one located message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from reportgen.errors import UserError
from reportgen.limits import (
    MAX_ALIAS_NODES,
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    MAX_MEMBER_BYTES,
    load_yaml,
)
from reportgen.load import Source, load_sources

#: The issue's bar for every bomb: the command's peak resident memory.
PEAK_LIMIT_MB = 300

# Runs argv as a child and prints its exit status and peak RSS in MB. Linux reports
# ru_maxrss in kilobytes; the largest of the child and its own children counts.
_MEASURE = """
import resource, subprocess, sys
status = subprocess.run(sys.argv[1:]).returncode
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{status} {peak:.1f}", file=sys.stderr)
"""


@dataclass(frozen=True)
class Measured:
    status: int
    peak_mb: float
    seconds: float
    errors: list[str]


def measure(args: list[str], cwd: Path) -> Measured:
    """`reportgen ARGS` in a child: its status, peak memory, time and error lines."""
    reportgen = [sys.executable, "-m", "reportgen", *args]
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *reportgen],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    seconds = time.monotonic() - start
    *lines, last = done.stderr.strip().splitlines()
    status, peak = last.split()
    return Measured(int(status), float(peak), seconds, lines)


def assert_refused(result: Measured, *needles: str) -> None:
    """Exit 2, one located line naming the problem, no traceback, within the limits."""
    assert result.status == 2, result.errors
    assert len(result.errors) == 1, result.errors
    assert "Traceback" not in result.errors[0]
    for needle in needles:
        assert needle in result.errors[0]
    assert result.peak_mb < PEAK_LIMIT_MB, result
    assert result.seconds < 30, result
    print(f"peak {result.peak_mb:.0f} MB in {result.seconds:.1f} s: {result.errors[0]}")


# ---------------------------------------------------------------- item 6: YAML


def alias_bomb(levels: int = 9) -> str:
    """The billion laughs in YAML: each anchor a list of nine aliases of the one before."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        items = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{items}]")
    return "\n".join(lines) + "\n"


def test_yaml_alias_bomb_in_config_is_refused_quickly(tmp_path: Path) -> None:
    bomb = alias_bomb() + f"confidence: *a{8}\nresult_sets: [r.jsonl]\n"
    (tmp_path / "reportgen.yaml").write_text(bomb)
    result = measure(["build"], tmp_path)
    assert_refused(result, "reportgen.yaml:", "aliases expand to more than")


def test_yaml_alias_bomb_in_suite_file_is_refused_quickly(tmp_path: Path) -> None:
    bomb = "suite: s\ntasks:\n" + "".join(f"  - {{id: t{i}, outcomes: *a8}}\n" for i in range(3))
    (tmp_path / "suite.yaml").write_text(alias_bomb().replace("a0:", "x0:", 1) + bomb)
    result = measure(["summary", "suite.yaml"], tmp_path)
    assert_refused(result, "suite.yaml:", "aliases expand")


def test_yaml_aliases_within_the_budget_still_load() -> None:
    # PyYAML's own dump writes an alias for an object that appears twice.
    outcomes = [True, False, True]
    text = yaml.safe_dump(
        {"tasks": [{"id": "a", "outcomes": outcomes}, {"id": "b", "outcomes": outcomes}]}
    )
    assert "*id001" in text
    assert load_yaml(text) == {
        "tasks": [{"id": "a", "outcomes": outcomes}, {"id": "b", "outcomes": outcomes}]
    }
    shared = "base: &b [" + ", ".join(["1"] * 1000) + "]\n"
    uses = "".join(f"u{i}: *b\n" for i in range(MAX_ALIAS_NODES // 1001))
    assert len(load_yaml(shared + uses)) == 1 + MAX_ALIAS_NODES // 1001


def test_yaml_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(yaml.YAMLError, match="inside its own anchor"):
        load_yaml("a: &a [1, *a]\n")


def test_yaml_nesting_is_limited(tmp_path: Path) -> None:
    deep = "x: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"
    with pytest.raises(yaml.YAMLError, match=f"deeper than {MAX_DEPTH}"):
        load_yaml(deep)
    # Also when only the aliases make it deep.
    chain = "a0: &a0 " + "[" * 60 + "]" * 60 + "\n" + "a1: &a1 " + "[" * 50 + "*a0" + "]" * 50
    with pytest.raises(yaml.YAMLError, match=f"deeper than {MAX_DEPTH}"):
        load_yaml(chain + "\n")
    path = tmp_path / "deep.yaml"
    path.write_text(deep)
    with pytest.raises(UserError, match=r"deep.yaml:1: not valid YAML: nested deeper"):
        load_sources([Source(path)])
