"""Terminal text: tables, estimate and summary blocks, warnings, and safe printing.

Numbers are written by numbers.py (three decimals, intervals in brackets, the
confidence level named), as on the pages.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .numbers import bracket, fixed, percent, percent1
from .stats.plain import COVERAGE_NAMES, ONE_TASK_WARNING, counted

if TYPE_CHECKING:  # the report model and the statistics (numpy) load only when used
    from .report import Report, SetReport
    from .stats.coverage import CoverageCheck
    from .stats.estimate import SuiteEstimates, SuiteInterval
    from .stats.headline import Headline, Supported

# Characters that change how a terminal or a page shows the text after them: C0 and
# C1 controls (ESC starts the terminal's escape sequences; CR rewrites a line), the
# bidirectional formatting marks, and the Unicode line and paragraph separators.
_UNSAFE_IN_TERMINAL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)
_BIDI_FORMATTING = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ISOLATE_OPEN, _ISOLATE_CLOSE = "\u2066\u2067\u2068", "\u2069"


def terminal_safe(text: str) -> str:
    """Text for a terminal: each control or bidirectional mark spelled out as \\uXXXX.

    Names and ids come from input files; printed raw, an escape sequence in one could
    rewrite the screen or hide lines. Tabs and newlines stay (the output's own). The
    spelled-out form is also valid inside a JSON string, so JSON output stays JSON.
    """
    return _UNSAFE_IN_TERMINAL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def has_bidi_marks(text: str) -> bool:
    return _BIDI_FORMATTING.search(text) is not None


def isolate_bidi(text: str) -> str:
    """`text` unchanged, or, if it holds bidirectional formatting marks, wrapped in a
    first-strong isolate (FSI ... PDI) so they cannot reorder the text around it.

    A PDI closes every embedding and override opened after its isolate began
    (Unicode UAX #9, rule X6a); a stray PDI inside the text, which would close the
    wrapper early, is dropped, and isolates the text leaves open are closed.
    """
    if not has_bidi_marks(text):
        return text
    kept = []
    depth = 0
    for ch in text:
        if ch in _ISOLATE_OPEN:
            depth += 1
        elif ch == _ISOLATE_CLOSE:
            if depth == 0:
                continue
            depth -= 1
        kept.append(ch)
    return "\u2068" + "".join(kept) + _ISOLATE_CLOSE * (depth + 1)


#: A text column is padded to at most this width: a longer cell (a task id of
#: thousands of characters) gets a line of its own, above its row, instead of
#: widening every row of the table.
TEXT_COLUMN_WIDTH = 48


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """Columns padded to their widest cell; numbers right-aligned."""
    widths = [
        max(
            len(row[i])
            for row in [header, *rows]
            if right[i] or len(row[i]) <= TEXT_COLUMN_WIDTH or row is header
        )
        for i in range(len(header))
    ]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.rjust(w) if r else cell.ljust(w)
            for cell, w, r in zip(cells, widths, right, strict=True)
        ]
        return "  ".join(padded).rstrip()

    def lines(cells: Sequence[str]) -> list[str]:
        long = [i for i, cell in enumerate(cells) if len(cell) > widths[i]]
        if not long:
            return [line(cells)]
        # Each overlong text cell on a line of its own, then the row without them.
        rest = ["" if i in long else cell for i, cell in enumerate(cells)]
        return [*(cells[i] for i in long), line(rest)]

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(text for row in rows for text in lines(row))]) + "\n"


def suite_line(name: str, interval: SuiteInterval) -> str:
    return f"{name} {fixed(interval.estimate)} {bracket(interval.low, interval.high)}"


def task_rows(suite: SuiteEstimates, labels: Sequence[str]) -> list[list[str]]:
    t = suite.tasks
    return [
        [
            labels[i],
            f"{int(t.successes[i])}/{int(t.runs[i])}",
            f"{fixed(t.pass_rate[i])} {bracket(t.pass_rate_low[i], t.pass_rate_high[i])}",
            f"{fixed(t.plugin[i])} {bracket(t.plugin_low[i], t.plugin_high[i])}",
            fixed(t.unbiased[i]),
            fixed(t.pass_at_k[i]),
        ]
        for i in range(len(t))
    ]


def task_header(suite: SuiteEstimates, first: str) -> list[str]:
    k, level = suite.k, percent(suite.confidence)
    return [
        first,
        "c/n",
        f"pass rate [{level}]",
        f"pass^{k} plug-in [{level}]",
        f"pass^{k} unbiased",
        f"pass@{k}",
    ]


def reliability_text(suite: SuiteEstimates, headline: Headline | None = None) -> str:
    k, level = suite.k, percent(suite.confidence)
    partial = suite.unbiased_partial
    mark = {"plugin": "", "unbiased": "", "partial": ""}
    if headline is not None:
        lead = "partial" if headline.estimator == "unbiased" and partial else headline.estimator
        mark[lead] = "  (headline)"
    lines = [
        f"reliability@{k} ({counted(len(suite.tasks), 'task', 'tasks')}, {level} Student-t "
        "interval across tasks)",
        "  " + suite_line("plug-in: ", suite.plugin) + mark["plugin"],
        "  " + suite_line("unbiased:", suite.unbiased) + mark["unbiased"],
    ]
    if partial is not None:
        covered = f"unbiased over the {partial.df + 1} tasks with {k} or more runs:"
        lines.append("  " + suite_line(covered, partial) + mark["partial"])
    p = suite.plugin
    if p.sd is not None and p.t is not None:
        lines.append(f"  sd {fixed(p.sd)} (plug-in), t = {fixed(p.t)} with {p.df} df")
    return "\n".join(lines) + "\n"


def coverage_text(check: CoverageCheck, headline: Headline, suite: SuiteEstimates) -> str:
    """Each interval's measured coverage, and why the headline leads."""
    rows = [
        [f"  {COVERAGE_NAMES[i.name]}", f"{percent1(i.coverage)} ± {percent1(i.monte_carlo_error)}"]
        + ([f"({i.replicates} suites)"] if i.replicates != check.replicates else [""])
        for i in check.intervals
        if i.coverage is not None
    ]
    return (
        f"coverage of each {percent(check.confidence)} interval in {check.replicates} simulated "
        f"suites of this shape (seed {check.seed}):\n"
        + "\n".join(
            "  ".join([name.ljust(36), value.rjust(14), note]).rstrip()
            for name, value, note in rows
        )
        + "\n"
        + headline_text(headline, suite)
    )


def headline_text(headline: Headline, suite: SuiteEstimates) -> str:
    """Which estimate leads, and why."""
    lead = "plug-in"
    if headline.estimator == "unbiased":
        partial = suite.unbiased_partial
        lead = "unbiased" if partial is None else f"unbiased over {partial.df + 1} tasks"
    return (
        textwrap.fill(f"headline: {lead}, because {headline.reason}", 88, subsequent_indent="  ")
        + "\n"
    )


#: Where the core's warnings mark a value that is null in JSON: after "undefined", or
#: closing a sentence about too few tasks or categories. Only there: a task's name
#: quoted in a warning may hold " (null)" too.
_NULL_MARK = re.compile(r"(?<=undefined) \(null\)|(?:(?<=tasks)|(?<=categories)) \(null\)$")


def plain_warning(warning: str) -> str:
    """A warning as a person reads it: without the "(null)" that tells readers of
    the JSON which value is null (the terminal's tables say n/a, pages say nothing)."""
    return _NULL_MARK.sub("", warning)


def warnings_text(warnings: Sequence[str]) -> str:
    """One line per warning, unwrapped: a CI log is searched for "warning:"."""
    return "".join(f"warning: {plain_warning(w)}\n" for w in warnings)


def uncalibrated_warning(
    check: CoverageCheck, name: str, own: float, few_runs: bool = False
) -> str:
    """Said wherever a headline interval is shown whose own measured coverage falls short:
    its figure, and the interval of the check that came closest to the level if that is
    another one. `few_runs`: some task has fewer than k runs, where the plug-in's bias,
    not the number of tasks, is what keeps its interval off the truth."""
    level = percent(check.confidence)
    text = (
        f"the headline interval ({COVERAGE_NAMES[name]}) covered the true value in only "
        f"{percent1(own)} of simulated suites of this shape, against its claimed {level}: "
        "read it as uncalibrated"
    )
    others = [i for i in check.intervals if i.coverage is not None and i.name != name]
    best = min(others, key=lambda i: abs(float(i.coverage or 0) - check.confidence), default=None)
    if best is not None and best.coverage is not None and best.reaches(check.confidence):
        text += f"; the {COVERAGE_NAMES[best.name]} interval covered {percent1(best.coverage)}"
    else:
        top = max([own, *(float(i.coverage or 0) for i in others)])
        text += f"; no interval here reaches its level (the best covered {percent1(top)})"
        text += (
            f"; {check.k} or more runs of every task help most (more tasks alone do not)"
            if few_runs
            else "; more tasks help most"
        )
    return text


def supported_text(supported: Supported | None) -> str:
    """Added to the uncalibrated warning where the headline interval is unfit to lead
    (stats.headline.Supported): what the pages lead with instead."""
    if supported is None:
        return ""
    what = "the pass rate" if supported.k == 1 else f"reliability@{supported.k} (unbiased)"
    measured = (
        f", whose interval covered {percent1(supported.coverage)}"
        if supported.coverage is not None
        else ""
    )
    return (
        "; so it is given without an interval, and what the runs support leads instead: "
        f"{what} {suite_line('', supported.value).strip()}{measured}"
    )


def estimate_warnings(
    suite: SuiteEstimates,
    headline: Headline | None,
    check: CoverageCheck | None,
    supported: Supported | None = None,
) -> list[str]:
    """`estimate`'s warnings, in text and in JSON: the suite's own, and the headline
    interval's shortfall in the coverage check."""
    warnings = list(suite.warnings)
    if check is not None and headline is not None:
        from .stats.headline import uncalibrated

        own = uncalibrated(check, headline.interval)
        if own is not None:
            few_runs = suite.unbiased.estimate is None
            text = uncalibrated_warning(check, headline.interval, own, few_runs)
            warnings.append(text + supported_text(supported))
    return warnings


def skipped_warnings(skipped: Sequence[tuple[str, str]]) -> list[str]:
    """A warning for each file --skip-unreadable left out, as every command says it."""
    return [f"skipped {path}: {why}" for path, why in skipped]


def set_warnings(s: SetReport) -> list[str]:
    """A result set's warnings, and one when its headline interval (or every suite
    interval) falls short of its level in the coverage check, as its page says."""
    warnings = list(s.warnings)
    own = s.uncalibrated
    if own is not None and s.coverage is not None:
        few_runs = s.estimates.unbiased.estimate is None
        name = s.headline_interval_name
        text = uncalibrated_warning(s.coverage, name, own, few_runs)
        warnings.append(text + supported_text(s.supported))
        return warnings
    best = s.coverage_shortfall
    if best is not None and s.coverage is not None:
        warnings.append(
            f"no suite interval here reaches its claimed {percent(s.coverage.confidence)}: "
            f"in simulated suites of this shape the best covered the true value "
            f"{percent1(best)} of the time; more tasks help most"
        )
    return warnings


def estimate_text(
    suite: SuiteEstimates,
    headline: Headline | None = None,
    check: CoverageCheck | None = None,
    as_suite: bool = False,
    supported: Supported | None = None,
) -> str:
    """The `reportgen estimate` table for one or several tasks; `as_suite` (--suite) adds
    the suite block even for one task, as summary and the calculator show it."""
    labels = [str(i + 1) for i in range(len(suite.tasks))]
    header = task_header(suite, "task")
    body = table(header, task_rows(suite, labels), [False] + [True] * 5)
    intro = (
        f"k = {suite.k}; intervals at {percent(suite.confidence)} "
        "(Wilson for the pass rate, mapped through x^k for pass^k)\n\n"
    )
    text = intro + body
    warnings = estimate_warnings(suite, headline, check, supported)
    if len(suite.tasks) > 1 or as_suite:
        text += "\n" + reliability_text(suite, headline)
        if check is not None and headline is not None:
            text += coverage_text(check, headline, suite)
        elif headline is not None:
            text += headline_text(headline, suite)  # and why, when there was no check to say it
    else:
        warnings.remove(ONE_TASK_WARNING)  # one task asked about: no suite block to qualify
    if warnings:
        text += "\n" + warnings_text(warnings)
    return text


def summary_text(report: Report) -> str:
    """`reportgen summary`: one block per result set, least reliable tasks first."""
    blocks = []
    for s in report.sets:
        rs = s.result_set
        tasks, runs = counted(len(s.tasks), "task", "tasks"), counted(rs.runs, "run", "runs")
        title = f"{rs.name}  ({rs.format}; {tasks}, {runs}"
        title += f", {rs.excluded_runs} excluded)" if rs.excluded_runs else ")"
        order = s.order_least_reliable()
        rows = task_rows(s.estimates, [s.tasks[i].id for i in range(len(s.tasks))])
        rows = [rows[i] for i in order]
        header = task_header(s.estimates, "task")
        block = title + "\n" + table(header, rows, [False] + [True] * 5)
        block += reliability_text(s.estimates, s.headline)
        if s.coverage is not None:
            block += coverage_text(s.coverage, s.headline, s.estimates)
        elif len(s.tasks) > 1:
            block += headline_text(s.headline, s.estimates)
        block += warnings_text(set_warnings(s))
        blocks.append(block)
    intro = f"k = {report.k}; intervals at {percent(report.confidence)}\n\n"
    return intro + "\n".join(blocks)
