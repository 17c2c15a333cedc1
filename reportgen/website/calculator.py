"""The calculator page: its script, and the worked examples it shows without JavaScript.

The script shipped as assets/calculator.js is put together from committed files
only (jStat's minified build, vendored under templates/vendor/jstat with its
licence, then our own templates/calculator/calculator.js), so a build never needs
npm or the network. package-lock.json pins the same jStat version, and a test
checks that the vendored copy is byte-identical to that package's file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from ..errors import UserError
from ..numbers import percent
from ..report import SetReport
from ..stats.planner import Plan, plan
from .content import SuiteExample, TaskExample, suite_example, task_example

#: The jStat release vendored under templates/vendor/jstat (and pinned in package-lock.json).
JSTAT_VERSION = "1.9.6"
SCRIPT_PATH = "assets/calculator.js"
#: A set page links its whole suite only up to this many tasks: a longer address
#: is unwieldy to share, and some servers refuse it.
SUITE_LINK_LIMIT = 500


def calculator_script(*templates: Path) -> bytes:
    """assets/calculator.js: jStat's licence, jStat unchanged, then the calculator.

    Each of the three files is taken from the first of the template folders that
    holds it, so a theme may override any of them (--templates), as any template.
    """

    def read(relative: str) -> str:
        found = next((f / relative for f in templates if (f / relative).is_file()), None)
        if found is None:
            raise FileNotFoundError(f"{relative} in none of the template folders")
        try:
            return found.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise UserError(f"{found}: not UTF-8 text (byte {error.start + 1})") from None

    licence = read("vendor/jstat/LICENSE").strip()
    header = (
        f"/*! jStat {JSTAT_VERSION} (https://github.com/jstat/jstat), bundled unchanged below.\n"
        + licence.replace("*/", "* /")
        + "\n*/\n"
    )
    jstat = read("vendor/jstat/jstat.min.js")
    ours = read("calculator/calculator.js")
    return (header + jstat.rstrip("\n") + "\n;\n" + ours).encode("utf-8")


def task_link(successes: int, runs: int, k: int, confidence: float) -> str:
    """calculator.html?c=..&n=..&k=..&level=.. (relative to the site root)."""
    query = urlencode({"c": successes, "n": runs, "k": k, "level": repr(confidence)})
    return f"calculator.html?{query}"


def suite_link(s: SetReport, k: int, confidence: float) -> str | None:
    """The calculator prefilled with a set's counts, or None for a very large suite."""
    if len(s.tasks) > SUITE_LINK_LIMIT:
        return None
    suite = " ".join(f"{t.successes}/{t.runs}" for t in s.tasks)
    query = urlencode({"suite": suite, "k": k, "level": repr(confidence)})
    return f"calculator.html?{query}"


@dataclass(frozen=True)
class WorkedExamples:
    """What the page shows before (or without) its script: numbers computed at build time."""

    level: str
    tasks: list[TaskExample]
    suite: SuiteExample
    plan: Plan


def worked_examples(k: int, confidence: float) -> WorkedExamples:
    # Examples that show each case: a flaky task, k above n, and a perfect record.
    tasks = [
        task_example(16, 20, k, confidence),
        task_example(1, max(k - 1, 1), k, confidence),
        task_example(40, 40, k, confidence),
    ]
    return WorkedExamples(
        level=percent(confidence),
        tasks=tasks,
        suite=suite_example(["16/20", "18/20", "20/20", "12/20"], k, confidence),
        plan=plan(0.05, confidence),
    )
