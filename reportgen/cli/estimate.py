"""`reportgen estimate`: the estimates for counts typed at the terminal.

Needs the statistics (numpy and scipy.special) and no readers, config or report
model: it runs in about the time those take to import (tests/test_imports.py).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from ..counts import MAX_COUNT, whole_number
from ..errors import UserError
from ..json_stream import write_json
from ..stats.plain import MAX_K
from ..terminal import estimate_text
from .options import EXIT_OK, Commands, add_estimate_options, parse_confidence, parse_whole


def add_command(commands: Commands, help_line: str) -> None:
    """`reportgen estimate` and its arguments."""
    parser = commands.add_parser(
        "estimate",
        help=help_line,
        description="Compute pass rate, pass^k (plug-in and unbiased), pass@k and, for several "
        "tasks, reliability@k, from counts given on the command line.",
        epilog="examples:\n  reportgen estimate --successes 16 --runs 20 -k 3\n"
        "  reportgen estimate --suite 16/20 18/20 20/20 12/20 -k 3 --format json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--successes", metavar="C", help="passed runs of one task")
    parser.add_argument("--runs", metavar="N", help="evaluated runs of that task")
    parser.add_argument(
        "--suite",
        nargs="+",
        action="extend",  # --suite given twice adds tasks, as one --suite with both lists
        metavar="C/N",
        help="several tasks, each as SUCCESSES/RUNS",
    )
    add_estimate_options(parser)
    parser.add_argument(
        "--no-coverage",
        action="store_true",
        help="skip the simulation that checks each suite interval's coverage (about a "
        "second for 10,000 tasks)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..stats.coverage import check_coverage
    from ..stats.estimate import EstimateError, estimate_suite
    from ..stats.headline import UNFIT_COVERAGE, choose_headline, supported, uncalibrated
    from ..stats.population import fit_population
    from ..views import estimate_json

    k = parse_whole("-k", args.k, 1, MAX_K)
    confidence = parse_confidence(args.confidence)
    pairs = _counts(args)
    passed, runs_per_task = [c for c, _ in pairs], [n for _, n in pairs]
    try:
        suite = estimate_suite(passed, runs_per_task, k, confidence)
    except EstimateError as error:  # pragma: no cover - the checks above come first
        raise UserError(str(error)) from None
    check, every_run = None, None
    if len(pairs) >= 2 and not args.no_coverage:
        population = fit_population(passed, runs_per_task)
        every_run = population.every_run
        if every_run is None:
            check = check_coverage(runs_per_task, k, population, confidence)
    headline = choose_headline(check, suite.unbiased.estimate is not None, every_run)
    own = uncalibrated(check, headline.interval)
    instead = (
        supported(suite.tasks.successes, suite.tasks.runs, k, confidence)
        if own is not None and own < UNFIT_COVERAGE
        else None
    )
    if args.format == "json":
        write_json(estimate_json(suite, headline, check, instead, stream=True), out)
        out.write("\n")
    else:
        out.write(
            estimate_text(suite, headline, check, as_suite=bool(args.suite), supported=instead)
        )
    return EXIT_OK


def _counts(args: argparse.Namespace) -> list[tuple[int, int]]:
    """(successes, runs) of each task asked about: --suite's, or the one task's."""
    if args.suite:
        if args.successes is not None or args.runs is not None:
            raise UserError("give either --suite or --successes/--runs, not both")
        return [_suite_item(i + 1, item) for i, item in enumerate(args.suite)]
    if args.successes is None or args.runs is None:
        raise UserError("give --successes and --runs for one task, or --suite C/N ...")
    runs = parse_whole("--runs", args.runs, 1)
    successes = parse_whole("--successes", args.successes, 0)
    if successes > runs:
        raise UserError(f"--successes ({successes}) cannot exceed --runs ({runs})")
    return [(successes, runs)]


def _suite_item(position: int, text: str) -> tuple[int, int]:
    where = f"--suite item {position}"
    parts = text.split("/")
    numbers = [whole_number(p.strip()) for p in parts]
    if len(numbers) != 2 or numbers[0] is None or numbers[1] is None:
        raise UserError(f"{where}: {text!r} is not SUCCESSES/RUNS (for example 16/20)")
    successes, runs = numbers[0], numbers[1]
    if runs > MAX_COUNT:
        raise UserError(f"{where}: {text!r} has more than {MAX_COUNT:,} runs")
    if runs < 1:
        raise UserError(f"{where}: {text!r} has no runs; RUNS must be at least 1")
    if successes > runs:
        raise UserError(f"{where}: {text!r} has more successes than runs")
    return successes, runs
