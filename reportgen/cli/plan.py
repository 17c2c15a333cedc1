"""`reportgen plan`: how many runs per task and how many tasks a target precision needs."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from ..errors import UserError
from .options import (
    EXIT_OK,
    Commands,
    add_level_and_format,
    parse_confidence,
    parse_fraction,
    parse_number,
    parse_whole,
)


def add_command(commands: Commands, help_line: str) -> None:
    """`reportgen plan` and its arguments."""
    parser = commands.add_parser(
        "plan",
        help=help_line,
        description="Answer 'how many runs per task, and how many tasks, do I need' for a target "
        "interval half-width, and the smallest difference a paired comparison would detect.",
        epilog="examples:\n  reportgen plan --target-halfwidth 0.05\n"
        "  reportgen plan --target-halfwidth 0.05 --report site#agent-alpha-support-desk",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--target-halfwidth", required=True, metavar="H", help="wanted half-width, e.g. 0.05"
    )
    parser.add_argument(
        "--pass-rate",
        metavar="P",
        help="assumed pass rate, between 0 and 1 (default 0.5, which needs the most runs)",
    )
    parser.add_argument(
        "--task-sd",
        metavar="S",
        help="sd of pass^k across tasks, between 0 and 1 (default: the report's, else 0.5)",
    )
    parser.add_argument(
        "--correlation",
        metavar="R",
        help="correlation of two models' per-task values, between -1 and 1 (default 0)",
    )
    parser.add_argument(
        "--tasks",
        metavar="T",
        help="shared tasks of two models, for the smallest difference they can detect "
        "(default: the report's, else the tasks needed)",
    )
    parser.add_argument("--report", metavar="SITE[#ID]", help="take S and T from a report")
    add_level_and_format(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..lookup import plan_text
    from ..stats.estimate import EstimateError
    from ..stats.planner import plan
    from ..views import plan_json

    confidence = parse_confidence(args.confidence)
    target = parse_fraction("--target-halfwidth", args.target_halfwidth)
    pass_rate = parse_fraction("--pass-rate", args.pass_rate)
    task_sd = parse_fraction("--task-sd", args.task_sd)
    correlation = None
    if args.correlation is not None:
        correlation = parse_number("--correlation", args.correlation)
        if not -1.0 <= correlation <= 1.0:
            raise UserError(f"--correlation: must lie between -1 and 1, got {args.correlation}")
    tasks = None if args.tasks is None else parse_whole("--tasks", args.tasks, 2)
    if args.report is not None:
        task_sd, tasks = _from_report(args.report, task_sd, tasks)
    options: dict[str, float | int] = {}
    for name, value in (
        ("pass_rate", pass_rate),
        ("task_sd", task_sd),
        ("correlation", correlation),
    ):
        if value is not None:
            options[name] = value
    if tasks is not None:
        options["tasks"] = tasks
    assert target is not None  # the flag is required
    if not 0 < target < 1:
        raise UserError(f"--target-halfwidth: must lie strictly between 0 and 1, got {target}")
    try:
        result = plan(target, confidence, **options)  # type: ignore[arg-type]
    except EstimateError as error:
        # Every other flag is checked above: what is left is a target too small to reach.
        raise UserError(f"--target-halfwidth: {error}") from None
    if args.format == "json":
        out.write(json.dumps(plan_json(result), indent=2) + "\n")
    else:
        out.write(plan_text(result))
    return EXIT_OK


def _from_report(
    spec: str, task_sd: float | None, tasks: int | None
) -> tuple[float | None, int | None]:
    """(S, T) with what --report gives for those not given: its result set's spread of
    pass^k across tasks, and its number of tasks."""
    from ..lookup import find_result_set, is_report, split_spec

    report_path = split_spec(spec)[0]
    if not is_report(report_path):
        # A result file has no headline estimate whose spread the plan could use:
        # taking T from it with the default S gave a plan unlike its site's.
        raise UserError(
            f"--report: {report_path} is not a built site or its report.json; build it "
            "first (reportgen build), or give --task-sd and --tasks yourself"
        )
    observed = find_result_set(spec, "--report")
    if task_sd is None and observed.task_sd is not None:
        task_sd = observed.task_sd
    if tasks is None:
        tasks = max(len(observed.counts), 2)
    return task_sd, tasks
