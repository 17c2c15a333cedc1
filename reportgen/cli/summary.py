"""`reportgen summary`: the report's numbers in a terminal or CI log."""

from __future__ import annotations

import argparse
from typing import TextIO

from ..json_stream import write_json
from .inputs import add_input_options, config_for, say_skipped
from .options import EXIT_OK, Commands, add_text_or_json


def add_command(commands: Commands, help_line: str) -> None:
    """`reportgen summary` and its arguments."""
    parser = commands.add_parser(
        "summary",
        help=help_line,
        description="Read result files (or the config) and print, per result set, the per-task "
        "counts and estimates and reliability@k: the report in a terminal or CI log.",
    )
    add_input_options(parser)
    add_text_or_json(parser)
    parser.add_argument(
        "--no-coverage",
        action="store_true",
        help="skip the simulation that checks each suite interval's coverage (about a "
        "second for 10,000 tasks); the unbiased estimate then leads wherever it is defined",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..readers import load_sources
    from ..report import build_report
    from ..terminal import summary_text
    from ..views import summary_json

    config = config_for(args)
    loaded = load_sources(config.result_sets)
    report = build_report(
        loaded.result_sets,
        config.title,
        config.description,
        config.k,
        config.confidence,
        coverage_check=not args.no_coverage,
        skipped=loaded.skipped,
    )
    say_skipped(loaded.skipped)
    if args.format == "json":
        write_json(summary_json(report, stream=True), out)
        out.write("\n")
    else:
        out.write(summary_text(report))
    return EXIT_OK
