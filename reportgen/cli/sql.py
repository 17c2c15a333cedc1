"""`reportgen sql`: the query that turns a warehouse table of runs into per-task counts."""

from __future__ import annotations

import argparse
from typing import TextIO

from ..errors import UserError
from .inputs import parse_columns
from .options import EXIT_OK, Commands


def add_command(commands: Commands, help_line: str) -> None:
    """`reportgen sql` and its arguments."""
    from ..sql import DIALECTS

    parser = commands.add_parser(
        "sql",
        help=help_line,
        description="Print one GROUP BY query that turns a table of runs (one row per run) "
        "into the per-task counts `reportgen build` reads: task, successes, runs, excluded, "
        "and suite, model, condition, category when mapped. Run it where the data lives, save the "
        "result as Parquet or CSV, and build from that file. A passed value of true or 1 "
        "passes, false or 0 fails, null is an excluded run; any other value is counted in "
        "the column 'unreadable', which the build refuses when not zero.",
        epilog="examples:\n  reportgen sql --dialect bigquery --table proj.evals.runs "
        "--columns task=task_id,passed=resolved,model=model\n"
        "  reportgen sql --dialect duckdb --table runs.parquet > counts.sql\n"
        "  duckdb -c \"COPY ($(cat counts.sql)) TO 'counts.parquet'\"\n"
        "  reportgen build counts.parquet",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dialect", required=True, choices=DIALECTS, help="SQL dialect")
    parser.add_argument(
        "--table",
        required=True,
        metavar="T",
        help="the table of runs (dots separate schema or project parts); for duckdb, "
        "also a file such as runs.parquet",
    )
    parser.add_argument(
        "--columns",
        metavar="FIELD=COLUMN,...",
        help="which column holds what, as for build: task and passed (default: columns of "
        "those names), suite, model, condition and category (left out unless given); run "
        "and url are accepted and not needed",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..sql import counts_query

    columns = dict(parse_columns(args.columns)) if args.columns is not None else {}
    for field in ("successes", "runs", "excluded"):
        if field in columns:
            raise UserError(
                f"--columns: {field} is what the query writes; map the runs table's "
                "task, passed, suite, model, condition and category"
            )
    out.write(counts_query(args.dialect, args.table, columns))
    return EXIT_OK
