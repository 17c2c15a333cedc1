"""`reportgen check`: a CI gate on a built report, alone or against a baseline.

Exit 1 names what failed: a result set under --min-reliability or dropped by more
than --max-drop, a task whose pass rate fell beyond noise (--per-task), or a
baseline that shares nothing with the report.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import UserError, os_reason
from ..stats.plain import counted
from .inputs import add_reading_options, reading, say_skipped
from .options import EXIT_CHECK_FAILED, EXIT_OK, Commands, parse_fraction

if TYPE_CHECKING:
    from ..check import TaskGate, Verdict
    from ..check_output import CheckResult


def add_command(commands: Commands, help_line: str) -> None:
    """`reportgen check` and its arguments."""
    parser = commands.add_parser(
        "check",
        help=help_line,
        description="A CI gate: exit 1 naming each result set whose reliability@k is below "
        "--min-reliability or dropped by more than --max-drop against --baseline, and, with "
        "--per-task, each task whose pass rate fell beyond noise (a one-sided exact test per "
        "shared task, Holm's correction across them); else 0. Bad input exits 2.",
        epilog="OLD is an earlier site or report.json, a history.jsonl (its build before "
        "this one), or result files.\nexamples:\n  reportgen check site --min-reliability 0.5\n"
        "  reportgen check site --baseline old/report.json --max-drop 0.05\n"
        "  reportgen check site --baseline site/history.jsonl --per-task\n"
        "  reportgen check site --baseline main-results/ --per-task --format markdown",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("report", type=Path, metavar="SITE_OR_REPORT", help="site or report.json")
    parser.add_argument("--min-reliability", metavar="X", help="lowest acceptable reliability@k")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="OLD",
        help="earlier site or report.json, a history.jsonl (its build before this one), "
        "or result files",
    )
    parser.add_argument("--max-drop", metavar="X", help="largest acceptable drop from the baseline")
    parser.add_argument(
        "--accept-uncalibrated",
        action="store_true",
        help="gate on a headline whose interval covered less than 80%% of simulated suites "
        "of its shape (by default that exits 2: such a bar passes or fails on noise)",
    )
    parser.add_argument(
        "--allow-unmatched",
        action="store_true",
        help="pass, with a warning, when no result set (or, with --per-task, no task) is "
        "shared with the baseline; by default that fails, since nothing was compared",
    )
    add_reading_options(parser, "a --baseline of result files")
    parser.add_argument(
        "--estimator",
        choices=["headline", "plugin", "unbiased"],
        default="headline",
        help="which reliability@k to check (default: each set's headline estimate)",
    )
    _add_per_task_options(parser)
    parser.add_argument(
        "--format",
        choices=["text", "json", "markdown", "github"],
        default="text",
        help="output: text (default), json, markdown (a pull-request comment) or github "
        "(workflow annotations, and the Markdown appended to $GITHUB_STEP_SUMMARY)",
    )
    parser.set_defaults(handler=run)


def _add_per_task_options(parser: argparse.ArgumentParser) -> None:
    tasks = parser.add_argument_group("per-task gate (with --baseline)")
    tasks.add_argument(
        "--per-task",
        action="store_true",
        help="test every task shared with the baseline; fail when one fell beyond noise",
    )
    tasks.add_argument(
        "--level",
        metavar="A",
        help="family-wise error rate (false discovery rate with --fdr), default 0.05",
    )
    tasks.add_argument(
        "--fdr",
        action="store_true",
        help="control the false discovery rate (Benjamini-Hochberg) instead of Holm's "
        "family-wise error rate",
    )
    tasks.add_argument(
        "--test",
        choices=["fisher", "boschloo"],
        help="exact test per task (default fisher; boschloo is more powerful and much slower)",
    )
    tasks.add_argument(
        "--min-task-drop",
        metavar="X",
        help="also require a task's pass rate to fall by at least X (default 0)",
    )
    tasks.add_argument(
        "--all-tasks",
        action="store_true",
        help="keep tasks that cannot reach the level in the family (less power; Fisher only)",
    )


@dataclass(frozen=True)
class _Bars:
    """What the check gates on, from its flags, read and checked together before any
    file is: a mistake in the flags is reported before a long read."""

    minimum: float | None  # --min-reliability
    max_drop: float | None
    level: float  # of the per-task tests
    min_task_drop: float
    reading: dict[str, Any]  # how a --baseline of result files is read
    given: list[str]  # the reading flags given


def _bars(args: argparse.Namespace) -> _Bars:
    minimum = parse_fraction("--min-reliability", args.min_reliability)
    max_drop = parse_fraction("--max-drop", args.max_drop)
    if max_drop is not None and args.baseline is None:
        raise UserError("--max-drop needs --baseline OLD")
    if args.per_task and args.baseline is None:
        raise UserError("--per-task needs --baseline OLD")
    if args.allow_unmatched and args.baseline is None:
        raise UserError("--allow-unmatched needs --baseline OLD")
    fields, given = reading(args)
    if given and args.baseline is None:
        raise UserError(f"{given[0]} needs --baseline OLD: it says how to read result files")
    if args.baseline is not None and max_drop is None and not args.per_task:
        raise UserError("--baseline needs --max-drop X, --per-task, or both")
    if minimum is None and args.baseline is None:
        raise UserError(
            "give --min-reliability X, or --baseline OLD with --max-drop X or --per-task"
        )
    task_flags = {
        "--level": args.level is not None,
        "--fdr": args.fdr,
        "--test": args.test is not None,
        "--min-task-drop": args.min_task_drop is not None,
        "--all-tasks": args.all_tasks,
    }
    stray = [flag for flag, flag_given in task_flags.items() if flag_given]
    if stray and not args.per_task:
        raise UserError(f"{', '.join(stray)}: only with --per-task")
    if args.all_tasks and args.test == "boschloo":
        # Only Fisher's tasks are screened; Boschloo's family always holds every task.
        raise UserError("--all-tasks: only with --test fisher (Boschloo's test screens no task)")
    level = parse_fraction("--level", args.level, strict=True) or 0.05  # None: not given
    min_task_drop = parse_fraction("--min-task-drop", args.min_task_drop) or 0.0
    return _Bars(minimum, max_drop, level, min_task_drop, fields, given)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..check import check_report, check_tasks, load_baseline, read_report
    from ..check_output import CheckResult

    bars = _bars(args)
    report = read_report(args.report, "report", tasks=args.per_task)
    _refuse_uncalibrated(report, args, bars)
    baseline = None
    if args.baseline is not None:
        baseline = load_baseline(args.baseline, report, args.per_task, bars.reading, bars.given)
        say_skipped(baseline.get("skipped", ()))
    verdict = check_report(report, bars.minimum, baseline, bars.max_drop, args.estimator)
    gate = None
    if args.per_task and baseline is not None:
        gate = check_tasks(
            report,
            baseline,
            level=bars.level,
            test=args.test or "fisher",
            control="bh" if args.fdr else "holm",
            screen=not args.all_tasks,
            min_drop=bars.min_task_drop,
        )
    problems = _compared_nothing(report, baseline, bars.max_drop, verdict, gate)
    errors, warnings = ((), problems) if args.allow_unmatched else (problems, ())
    for warning in warnings:
        print(f"reportgen: warning: {warning}", file=sys.stderr)
    baseline_label = None if baseline is None else baseline["label"]
    result = CheckResult(baseline_label, verdict, gate, warnings=warnings, errors=errors)
    _write_result(result, args.format, out)
    if result.failed:
        print(f"reportgen check: {_what_failed(result)}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    return EXIT_OK


def _refuse_uncalibrated(report: dict[str, Any], args: argparse.Namespace, bars: _Bars) -> None:
    """A bar on a headline whose interval is unfit passes or fails on noise: refused
    (exit 2) unless --accept-uncalibrated."""
    from ..check import uncalibrated_sets
    from ..numbers import percent
    from ..stats.headline import UNFIT_COVERAGE

    unfit = uncalibrated_sets(report, args.estimator)
    bar = bars.minimum is not None or bars.max_drop is not None
    if unfit and bar and not args.accept_uncalibrated:
        raise UserError(
            f"{', '.join(unfit)}: the headline interval covered the true value in less than "
            f"{percent(UNFIT_COVERAGE)} of simulated suites of its shape, so a bar on its "
            "reliability@k would pass or fail on noise; fix the data (runs per task, tasks) "
            "or give --accept-uncalibrated to gate on it all the same"
        )


def _compared_nothing(
    report: dict[str, Any],
    baseline: dict[str, Any] | None,
    max_drop: float | None,
    verdict: Verdict,
    gate: TaskGate | None,
) -> tuple[str, ...]:
    """The problem, if any, of a gate that compared nothing with the baseline. It fails
    unless told otherwise: a renamed model or suite would otherwise turn every check
    against the baseline into a green light."""
    from ..check import unmatched_sets

    missed = []
    if baseline is not None and max_drop is not None and verdict.matched == 0:
        missed.append("--max-drop compared nothing")
    if gate is not None and not gate.keys:
        missed.append("--per-task tested no task")
    if not missed:
        return ()
    assert baseline is not None
    return (f"{' and '.join(missed)}: {unmatched_sets(report, baseline)}",)


def _write_result(result: CheckResult, output: str, out: TextIO) -> None:
    from ..check_output import check_github, check_json, check_markdown, check_text

    if output == "json":
        out.write(json.dumps(check_json(result), indent=2, ensure_ascii=False) + "\n")
    elif output == "markdown":
        out.write(check_markdown(result))
    elif output == "github":
        out.write(check_github(result))
        _append_step_summary(check_markdown(result))
    else:
        out.write(check_text(result))


def _what_failed(result: CheckResult) -> str:
    """The failing check's last line on stderr: what failed, counted."""
    parts = []
    if result.errors:
        parts.append("nothing was compared with the baseline")
    if result.suite.failures:
        parts.append(counted(len(result.suite.failures), "result set failed", "result sets failed"))
    if result.regressed:
        parts.append(
            counted(len(result.regressed), "task regressed", "tasks regressed") + " beyond noise"
        )
    return ", ".join(parts)


def _append_step_summary(markdown: str) -> None:
    """Add the Markdown table to the job summary when run inside GitHub Actions."""
    target = os.environ.get("GITHUB_STEP_SUMMARY", "").strip()
    if not target:
        return
    try:
        # Opened without blocking: a FIFO nobody reads would hang the gate for good.
        descriptor = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
        with open(descriptor, "a", encoding="utf-8") as handle:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise OSError(errno.EINVAL, "not a regular file")
            handle.write(markdown + "\n")
    except OSError as error:
        # The gate's verdict still stands; a summary that cannot be written is only noted.
        print(
            f"reportgen: warning: GITHUB_STEP_SUMMARY: cannot write {target} ({os_reason(error)})",
            file=sys.stderr,
        )
