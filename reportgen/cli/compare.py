"""`reportgen compare`: a paired comparison of two result sets on their shared tasks."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from ..stats.plain import MAX_K
from .inputs import add_reading_options, reading, say_skipped
from .options import EXIT_OK, Commands, add_estimate_options, parse_confidence, parse_whole


def add_command(commands: Commands, help_line: str) -> None:
    """`reportgen compare` and its arguments."""
    parser = commands.add_parser(
        "compare",
        help=help_line,
        description="Compare result set A with B on the tasks both ran: per-task differences "
        "A - B, their mean with a paired Student-t interval, the correlation, flipped tasks, "
        "and tasks only one side ran.",
        epilog="A and B are result files or built sites/report.json; add #ID to pick one "
        "result set of several.\nexamples:\n  reportgen compare new.jsonl old.jsonl -k 3\n"
        "  reportgen compare site#agent-beta-support-desk site#agent-alpha-support-desk",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("a", metavar="A", help="result file or report, optionally #ID")
    parser.add_argument("b", metavar="B", help="result file or report, optionally #ID")
    # A report was built with a k and a level: compared as built unless told otherwise.
    add_estimate_options(parser, from_reports=True)
    add_reading_options(parser, "A and B where they are result files")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..lookup import comparison_text, run_compare
    from ..views import comparison_json

    # Unless given, those the reports compared were built with (else 3 and 0.95).
    k = None if args.k is None else parse_whole("-k", args.k, 1, MAX_K)
    confidence = None if args.confidence is None else parse_confidence(args.confidence)
    fields, given = reading(args)
    a, b, cmp = run_compare(args.a, args.b, k, confidence, fields, given)
    say_skipped([*a.skipped, *b.skipped])
    if args.format == "json":
        doc = {"a": a.name, "b": b.name, **comparison_json(cmp)}
        out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(comparison_text(a, b, cmp))
    return EXIT_OK
