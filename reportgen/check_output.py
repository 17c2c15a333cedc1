"""What `reportgen check` prints: text for a terminal, JSON, a Markdown table for a
pull-request comment, or GitHub workflow annotations.

Task ids and result-set names come from input files. In Markdown they go into
code spans (no emphasis, links, HTML or @-mentions); in annotations they are
escaped by GitHub's workflow-command rules, so no id can end a command early or
inject a second one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .check import TaskGate, Verdict
from .numbers import p_value, signed
from .stats.plain import counted
from .stats.task_tests import IMPROVED, MOVED_DOWN, MOVED_UP, REGRESSED, TaskChange
from .terminal import table
from .views import task_tests_json

#: Rows of tasks that merely moved in the Markdown table and in text; the rest are counted.
MARKDOWN_MOVED_ROWS = 10
TEXT_MOVED_ROWS = 20

NOT_IN_FAMILY = "– : these counts cannot reach the level, so the task is not in the family"

TEST_NAMES = {"fisher": "Fisher's exact test", "boschloo": "Boschloo's exact test"}
CONTROL_NAMES = {
    "holm": "Holm's family-wise control",
    "bh": "Benjamini-Hochberg false discovery rate control",
}
VERDICT_WORDS = {
    REGRESSED: "regressed",
    IMPROVED: "improved",
    MOVED_DOWN: "moved down",
    MOVED_UP: "moved up",
}


@dataclass(frozen=True)
class CheckResult:
    """Everything one `reportgen check` found, for any output format."""

    baseline: str | None
    suite: Verdict
    tasks: TaskGate | None
    #: What the check could not do but was allowed to pass without (--allow-unmatched):
    #: said in every format.
    warnings: tuple[str, ...] = ()
    #: What makes the check fail besides a set or a task, such as a baseline that shares
    #: nothing with the report: a gate that compared nothing is no gate.
    errors: tuple[str, ...] = ()

    @property
    def regressed(self) -> tuple[TaskChange, ...]:
        return () if self.tasks is None else self.tasks.tests.regressed

    @property
    def failed(self) -> bool:
        return bool(self.errors or self.suite.failures or self.regressed)


def _of(tasks: tuple[TaskChange, ...], *verdicts: str) -> list[TaskChange]:
    return [t for t in tasks if t.verdict in verdicts]


def _counts(pair: tuple[int, int]) -> str:
    return f"{pair[0]}/{pair[1]}"


def _method(gate: TaskGate) -> str:
    tests = gate.tests
    shared = len(tests.tasks)
    family = (
        f"over the {tests.family_lower} of {shared} shared tasks whose counts could show a fall "
        "(the others cannot reach the level)"
        if tests.screened and tests.family_lower < shared
        else f"over all {counted(shared, 'shared task', 'shared tasks')}"
    )
    return (
        f"one-sided {TEST_NAMES[tests.test]} on each task's pass rate; "
        f"{CONTROL_NAMES[tests.control]} at level {tests.level:g} {family}"
        + (f"; a regression must also fall by {tests.min_drop:g} or more" if tests.min_drop else "")
    )


def _not_tested(groups: dict[str, tuple[str, ...]], several: bool) -> str:
    items = [
        f"{name} / {task}" if several else task for name, tasks in groups.items() for task in tasks
    ]
    return ", ".join(items) or "none"


# ---------------------------------------------------------------- text


def _task_table(gate: TaskGate, rows: list[TaskChange]) -> str:
    cells = [
        [
            gate.name(t.id),
            _counts(t.baseline),
            _counts(t.candidate),
            signed(t.change),
            p_value(t.p),
            p_value(t.adjusted),
        ]
        for t in rows
    ]
    text = table(
        ["task", "baseline", "now", "change", "p", "adjusted p"],
        cells,
        [False, True, True, True, True, True],
    )
    return "\n".join("  " + line for line in text.splitlines())


def check_text(result: CheckResult) -> str:
    lines = []
    if result.baseline is not None:
        lines.append(f"baseline: {result.baseline}")
    lines += [f"ok    {line}" for line in result.suite.passes]
    gate = result.tasks
    if gate is not None:
        tests = gate.tests
        several = len(gate.shared_sets) > 1
        lines.append(f"per task: {_method(gate)}")
        # Each group with its clearest changes first (TaskTests.calls_first), so that
        # the rows cut from a long group are its least clear.
        shown = tests.calls_first
        dashes = False
        for label, rows in (
            ("regressed beyond noise", _of(shown, REGRESSED)),
            ("improved beyond noise", _of(shown, IMPROVED)),
            ("moved within noise", _of(shown, MOVED_DOWN, MOVED_UP)),
        ):
            lines.append(f"{label} ({len(rows)}){':' if rows else ': none'}")
            if rows:
                lines.append(_task_table(gate, rows[:TEXT_MOVED_ROWS]))
                dashes = dashes or any(t.adjusted is None for t in rows[:TEXT_MOVED_ROWS])
            if len(rows) > TEXT_MOVED_ROWS:
                lines.append(f"  ... {len(rows) - TEXT_MOVED_ROWS} more (--format json lists all)")
        if dashes:
            lines.append(NOT_IN_FAMILY)
        lines.append(f"new since the baseline, not tested: {_not_tested(gate.new, several)}")
        lines.append(f"gone since the baseline, not tested: {_not_tested(gate.gone, several)}")
        if gate.unmatched:
            lines.append(f"not in the baseline, not tested: {', '.join(gate.unmatched)}")
        for t in tests.regressed:
            lines.append(
                f"FAIL  {gate.name(t.id)}: pass rate fell beyond noise, "
                f"{_counts(t.baseline)} -> {_counts(t.candidate)} "
                f"(adjusted p {p_value(t.adjusted_lower)} <= {tests.level:g})"
            )
    lines += [f"FAIL  {line}" for line in (*result.errors, *result.suite.failures)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- JSON


def check_json(result: CheckResult) -> dict[str, Any]:
    gate = result.tasks
    per_task = None
    if gate is not None:

        def names(key: str) -> dict[str, Any]:
            set_name, task = gate.keys[key]
            return {"result_set": set_name, "task": task}

        per_task = {
            **task_tests_json(gate.tests, names),
            "only_in_candidate": {k: list(v) for k, v in gate.new.items()},
            "only_in_baseline": {k: list(v) for k, v in gate.gone.items()},
            "not_in_baseline": list(gate.unmatched),
        }
    return {
        "passed": not result.failed,
        "errors": list(result.errors),
        "warnings": list(result.warnings),
        "baseline": result.baseline,
        "suite": {
            "failures": result.suite.failures,
            "passes": result.suite.passes,
            "result_sets": result.suite.figures,
        },
        "per_task": per_task,
    }


# ---------------------------------------------------------------- Markdown


def code(text: str, in_table: bool = False) -> str:
    """`text` as a Markdown code span; `in_table`, one that survives a table cell (where
    a | ends the cell; outside a table its escape would show as a backslash)."""
    text = re.sub(r"[\r\n]+", " ", text)
    if in_table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _headline(result: CheckResult) -> str:
    regressed = len(result.regressed)
    failures = len(result.suite.failures)
    parts = []
    if result.errors:
        parts.append("nothing was compared with the baseline")
    if regressed:
        parts.append(f"{regressed} task{'s' if regressed != 1 else ''} regressed beyond noise")
    if failures:
        parts.append(f"{failures} suite check{'s' if failures != 1 else ''} failed")
    if parts:
        return "; ".join(parts)
    return "passed, with warnings" if result.warnings else "passed"


def check_markdown(result: CheckResult) -> str:
    """A compact summary for a pull-request comment or the job summary."""
    lines = [f"### reportgen check: {_headline(result)}", ""]
    lines += [f"**Failed:** {_plain_text(e)}" for e in result.errors]
    lines += [f"**Warning:** {_plain_text(w)}" for w in result.warnings]
    if result.errors or result.warnings:
        lines.append("")
    if result.baseline is not None:
        lines += [f"Baseline: {code(result.baseline)}", ""]
    gate = result.tasks
    if gate is not None:
        tests = gate.tests
        lines += [f"Per task: {_method(gate)}.", ""]
        shown = tests.calls_first
        moved = _of(shown, MOVED_DOWN, MOVED_UP)
        rows = [*_of(shown, REGRESSED, IMPROVED), *moved[:MARKDOWN_MOVED_ROWS]]
        if rows:
            lines += [
                "| verdict | task | baseline | now | change | p | adjusted p |",
                "|:--|:--|--:|--:|--:|--:|--:|",
            ]
            for t in rows:
                word = VERDICT_WORDS[t.verdict]
                lines.append(
                    f"| {'**' + word + '**' if t.verdict == REGRESSED else word} "
                    f"| {code(gate.name(t.id), in_table=True)} "
                    f"| {_counts(t.baseline)} | {_counts(t.candidate)} "
                    f"| {signed(t.change)} "
                    f"| {p_value(t.p)} "
                    f"| {p_value(t.adjusted)} |"
                )
            lines.append("")
            # The note explains the "–" of the adjusted column: the adjusted p shown.
            if any(t.adjusted is None for t in rows):
                lines += [NOT_IN_FAMILY + ".", ""]
        elif gate.keys:
            lines += ["No shared task's pass rate changed.", ""]
        elif gate.shared_sets:
            lines += ["No task was tested: the matched result sets share no task.", ""]
        else:
            lines += ["No task was tested: no result set is in the baseline.", ""]
        if len(moved) > MARKDOWN_MOVED_ROWS:
            more = len(moved) - MARKDOWN_MOVED_ROWS
            lines += [f"{counted(more, 'more task', 'more tasks')} moved within noise.", ""]
        several = len(gate.shared_sets) > 1
        for label, groups in (("New", gate.new), ("Gone", gate.gone)):
            names = [
                code(f"{name} / {task}" if several else task)
                for name, tasks in groups.items()
                for task in tasks
            ]
            if names:
                lines += [f"{label} since the baseline, not tested: {', '.join(names)}.", ""]
        if gate.unmatched:
            unmatched = ", ".join(code(name) for name in gate.unmatched)
            lines += [f"Not in the baseline, not tested: {unmatched}.", ""]
    suite_lines = [f"- **fail** {line}" for line in result.suite.failures]
    suite_lines += [f"- ok {line}" for line in result.suite.passes]
    if suite_lines:
        lines += ["Suite:", "", *(_plain(line) for line in suite_lines), ""]
    return "\n".join(lines)


def _plain_text(text: str) -> str:
    """Text with Markdown's active characters escaped."""
    return re.sub(r"([\\`*_\[\]<>|~&@#])", r"\\\1", text)


def _plain(line: str) -> str:
    """A suite line (it names result sets) with Markdown's active characters escaped."""
    head, _, rest = line.partition(" ")
    first, _, tail = rest.partition(" ")
    return f"{head} {first} {_plain_text(tail)}"


# ---------------------------------------------------------------- GitHub annotations


def escape_data(text: str) -> str:
    """A workflow command's message: %, CR and LF would end or corrupt it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: also ':' and ',', which delimit properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(level: str, title: str, message: str) -> str:
    return f"::{level} title={escape_property(title)}::{escape_data(message)}"


def check_github(result: CheckResult) -> str:
    """One annotation per regressed task (error), improved task (notice), failed suite
    check or error (error) and warning (warning)."""
    lines = []
    gate = result.tasks
    if gate is not None:
        tests = gate.tests
        control = "Holm" if tests.control == "holm" else "BH"
        for level, called, rows in (
            ("error", "Regressed", tests.regressed),
            ("notice", "Improved", tests.improved),
        ):
            for t in rows:  # t.p and t.adjusted are of the change's own direction
                lines.append(
                    _annotation(
                        level,
                        f"{called} beyond noise: {gate.name(t.id)}",
                        f"pass rate {_counts(t.baseline)} -> {_counts(t.candidate)} "
                        f"({signed(t.change)}); p = {p_value(t.p)}, {control}-adjusted "
                        f"{p_value(t.adjusted)} <= {tests.level:g}",
                    )
                )
    for line in (*result.errors, *result.suite.failures):
        lines.append(_annotation("error", "reportgen check", line))
    for warning in result.warnings:
        lines.append(_annotation("warning", "reportgen check", warning))
    lines.append(f"reportgen check: {_headline(result)}")
    return "\n".join(lines) + "\n"
