"""The command line: parse arguments, call one function, map errors to exit codes.

Exit status: 0 success, 1 a check failed (`reportgen check`), 2 the user's
input or arguments were wrong (one located line per problem, no traceback).
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import io
import json
import math
import os
import re
import signal
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

from . import __version__
from .counts import MAX_COUNT, whole_number
from .errors import Problems, UserError, os_reason
from .json_stream import write_json
from .stats.plain import DEFAULT_CONFIDENCE, MAX_K, confidence_extreme, counted
from .terminal import estimate_text, skipped_warnings, terminal_safe, warnings_text

if TYPE_CHECKING:
    from .config import Config
    from .readers import Source

# The readers, the config, the report model, the history and the statistics (numpy)
# are imported where they are used: `estimate` and `plan` need no readers, a build
# that renders only an edited overview from its record needs no statistics, and
# only the chosen command's arguments are set up (see build_parser).

#: argparse's sub-parser collection; its class is private to argparse.
Commands = Any

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USER_ERROR = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage mistake as one line instead of exiting itself."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see {self.prog} --help)")


#: What the number flags take: ASCII digits, a sign, a point and an exponent. int() and
#: float() also take "3_0" (as 30) and other scripts' digits ("٣").
_WHOLE = re.compile(r"\s*[-+]?[0-9]+\s*")
_DECIMAL = re.compile(r"\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*")


def _whole_number(flag: str, text: str, minimum: int, maximum: int = MAX_COUNT) -> int:
    try:
        if not _WHOLE.fullmatch(text):
            raise ValueError(text)
        value = int(text, 10)
    except ValueError:
        raise UserError(f"{flag}: {text!r} is not a whole number") from None
    if value < minimum:
        raise UserError(f"{flag}: must be at least {minimum}, got {value}")
    if value > maximum:
        # Beyond 64-bit integers numpy raised OverflowError with a traceback.
        raise UserError(f"{flag}: must be at most {maximum:,}, got {value}")
    return value


def _number(flag: str, text: str) -> float:
    if not _DECIMAL.fullmatch(text):
        raise UserError(f"{flag}: {text!r} is not a number")
    return float(text)


def _confidence(text: str) -> float:
    value = _number("--confidence", text)
    if not 0.0 < value < 1.0:
        raise UserError(f"--confidence: must lie strictly between 0 and 1, got {text}")
    extreme = confidence_extreme(value)
    if extreme is not None:
        raise UserError(f"--confidence: {extreme}")
    return value


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


def _add_estimate_options(parser: argparse.ArgumentParser, from_reports: bool = False) -> None:
    """-k, --confidence and --format; `from_reports`: -k and --confidence default to
    those of the reports given (None here), else to 3 and 0.95."""
    parser.add_argument(
        "-k",
        default=None if from_reports else "3",
        metavar="K",
        help="runs that must all pass ("
        + ("default: the k the reports were built with, else 3)" if from_reports else "default 3)"),
    )
    _add_level_and_format(parser, from_reports)


def _add_level_and_format(parser: argparse.ArgumentParser, from_reports: bool = False) -> None:
    parser.add_argument(
        "--confidence",
        default=None if from_reports else str(DEFAULT_CONFIDENCE),
        metavar="LEVEL",
        help="confidence level of every interval, in (0, 1) ("
        + ("default: the reports' level, else 0.95)" if from_reports else "default 0.95)"),
    )
    parser.add_argument(
        "--format", choices=["text", "json"], default="text", help="output format (default text)"
    )


def _run_estimate(args: argparse.Namespace, out: TextIO) -> int:
    from .stats.coverage import check_coverage
    from .stats.estimate import EstimateError, estimate_suite
    from .stats.headline import UNFIT_COVERAGE, choose_headline, supported, uncalibrated
    from .stats.population import fit_population
    from .views import estimate_json

    k = _whole_number("-k", args.k, 1, MAX_K)
    confidence = _confidence(args.confidence)
    if args.suite:
        if args.successes is not None or args.runs is not None:
            raise UserError("give either --suite or --successes/--runs, not both")
        pairs = [_suite_item(i + 1, item) for i, item in enumerate(args.suite)]
    else:
        if args.successes is None or args.runs is None:
            raise UserError("give --successes and --runs for one task, or --suite C/N ...")
        runs = _whole_number("--runs", args.runs, 1)
        successes = _whole_number("--successes", args.successes, 0)
        if successes > runs:
            raise UserError(f"--successes ({successes}) cannot exceed --runs ({runs})")
        pairs = [(successes, runs)]
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


def _input_options(parser: argparse.ArgumentParser) -> None:
    from .config import CONFIG_NAME

    parser.add_argument(
        "files",
        nargs="*",
        type=Path,
        metavar="FILE",
        help=f"result files, or folders of them (one format each; see reportgen formats); "
        f"without any, the result sets listed in ./{CONFIG_NAME}",
    )
    parser.add_argument(
        "--config", type=Path, metavar="PATH", help=f"project config (default ./{CONFIG_NAME})"
    )
    _add_reading_options(parser, "the FILEs")
    # Defaults of None: a flag overrides the config only when it is given.
    parser.add_argument("-k", default=None, metavar="K", help="runs that must all pass (default 3)")
    parser.add_argument(
        "--confidence", default=None, metavar="LEVEL", help="confidence level (default 0.95)"
    )


def _add_reading_options(parser: argparse.ArgumentParser, files: str) -> None:
    """How result files are read: for build's and summary's FILEs, and for result files
    given to compare (A, B) or check (--baseline)."""
    from .readers import FORMATS
    from .readers.base import ERROR_CHOICES

    parser.add_argument(
        "--input-format",
        choices=FORMATS,
        metavar="FORMAT",
        help=f"format of {files} when detection is not wanted: {', '.join(FORMATS)}",
    )
    parser.add_argument(
        "--scorer",
        help="Inspect logs with several scorers, Harbor trials with several rewards: the one "
        "to count",
    )
    parser.add_argument(
        "--errors",
        choices=ERROR_CHOICES,
        help="runs that ended in an error (Harbor exceptions, JUnit <error>, SWE-bench error "
        "ids, ungraded Terminal-Bench trials, promptfoo errors, Inspect samples that "
        "errored, τ²-bench infrastructure errors): left out and counted as excluded "
        "(default), or counted as failures",
    )
    parser.add_argument(
        "--columns",
        metavar="FIELD=COLUMN,...",
        help="tables (CSV, TSV, Parquet): which column holds what, e.g. "
        "task=instance_id,run=trial,passed=resolved",
    )
    parser.add_argument(
        "--skip-unreadable",
        action="store_true",
        default=None,  # None: not given (see _reading)
        help=f"leave out any of {files} that cannot be read, list them with the reason, "
        "and go on (default: stop, exit 2)",
    )
    parser.add_argument(
        "--suite",
        metavar="NAME",
        help=f"the suite of {files}, instead of the one their metadata names (or, failing "
        "that, their folder's or file's name)",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help=f"the model (or agent) of {files}, instead of the one their metadata names",
    )
    parser.add_argument(
        "--threshold",
        metavar="SCORE",
        help="the score a run needs to pass, for formats with scores (Harbor's reward, "
        "Inspect's numeric scores, a table's score column; default 1 for Harbor)",
    )


#: The reading flags, as named in messages.
_READING_FLAGS = {
    "input_format": "--input-format",
    "scorer": "--scorer",
    "errors": "--errors",
    "columns": "--columns",
    "threshold": "--threshold",
    "suite": "--suite",
    "model": "--model",
    "skip_unreadable": "--skip-unreadable",
}


def _reading(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """The reading flags as Source fields (Source(path, **fields)), and those given."""
    if args.scorer is not None and not args.scorer.strip():
        raise UserError("--scorer: empty; leave it out to read the only score, or name one")
    columns = _columns_flag(args.columns) if args.columns is not None else ()
    threshold = _threshold_flag(args.threshold) if args.threshold is not None else None
    for flag, value in (("--suite", args.suite), ("--model", args.model)):
        if value is not None:
            _check_name(flag, value)
    fields = {
        "format": args.input_format,
        "scorer": args.scorer,
        "scorer_from_flag": args.scorer is not None,
        "errors": args.errors,
        "columns": columns,
        "threshold": threshold,
        "threshold_from_flag": threshold is not None,
        "suite": args.suite,
        "model": args.model,
        "named_in": ("the command line", "the command line"),
        "skip_unreadable": bool(args.skip_unreadable),
    }
    given = [flag for name, flag in _READING_FLAGS.items() if getattr(args, name) is not None]
    return fields, given


def _check_name(flag: str, value: str) -> None:
    from .readers.base import unprintable

    if not value.strip():
        raise UserError(f"{flag}: empty; leave it out to take the name from the files")
    problem = unprintable(value)
    if problem is not None:
        raise UserError(f"{flag}: {value!r} {problem}")


def _named_in(source: Source, args: argparse.Namespace) -> tuple[str, str]:
    """Where a config input's suite and model come from once the flags apply to it."""
    suite_in, model_in = source.named_in
    return (
        "the command line" if not source.suite and args.suite else suite_in,
        "the command line" if not source.model and args.model else model_in,
    )


def _config_for(args: argparse.Namespace) -> Config:
    """The config file (if any), then the files and flags given on the command line."""
    from .config import CONFIG_NAME, NAMING_KEYS, Config, check_task_pages, load_config
    from .readers import Source
    from .readers.base import unprintable

    if args.files and args.config is None:
        config = Config()
    else:
        config = load_config(args.config or Path(CONFIG_NAME))
    reading, _ = _reading(args)
    columns, threshold = reading["columns"], reading["threshold"]
    if args.files:
        config.result_sets = [Source(path=path, **reading) for path in args.files]
    else:
        # Given with a config: they apply to every result set that does not set its own.
        config.result_sets = [
            dataclasses.replace(
                s,
                format=s.format or args.input_format,
                scorer=s.scorer if s.scorer is not None else args.scorer,
                scorer_from_flag=s.scorer is None and args.scorer is not None,
                errors=s.errors or args.errors,
                columns=s.columns or columns,
                threshold=s.threshold if s.threshold is not None else threshold,
                threshold_from_flag=s.threshold is None and threshold is not None,
                # A suite or model the config names for this input stays.
                suite=s.suite or args.suite,
                model=s.model or args.model,
                named_in=_named_in(s, args),
                skip_unreadable=bool(args.skip_unreadable),
            )
            for s in config.result_sets
        ]
    if args.k is not None:
        config.k = _whole_number("-k", args.k, 1, MAX_K)
    if args.confidence is not None:
        config.confidence = _confidence(args.confidence)
    if getattr(args, "task_pages", None) is not None:
        problems = Problems()
        pages = check_task_pages("--task-pages", args.task_pages, problems)
        problems.raise_if_any()
        assert pages is not None
        config.task_pages = pages
    flags = ("title", "description", "base_url", "base_path", "label")
    for flag in (*flags, "output", "templates", "content", "history"):
        value = getattr(args, flag, None)
        if value is not None:
            problem = unprintable(value) if flag in flags else None
            if problem is not None:
                raise UserError(f"--{flag.replace('_', '-')}: {value!r} {problem}")
            if flag in NAMING_KEYS and not value.strip():
                # Often an unset CI variable ("--title $TITLE"): an empty page title
                # or build label would be written without a word.
                raise UserError(f"--{flag}: empty; leave it out for the default")
            setattr(config, flag, value)
            config.from_file.discard(flag)  # messages now name the flag
    return config


def _columns_flag(text: str) -> tuple[tuple[str, str], ...]:
    """--columns task=instance_id,passed=resolved -> (("task", "instance_id"), ...)."""
    from .readers.base import did_you_mean, unprintable
    from .readers.table import FIELDS as COLUMN_FIELDS

    pairs: list[tuple[str, str]] = []
    for item in text.split(","):
        field, sep, column = (part.strip() for part in item.partition("="))
        if not sep or not field or not column:
            raise UserError(
                f"--columns: {item.strip()!r} is not FIELD=COLUMN "
                "(for example task=instance_id,passed=resolved)"
            )
        if field not in COLUMN_FIELDS:
            raise UserError(
                f"--columns: unknown field {field!r}{did_you_mean(field, COLUMN_FIELDS)}; "
                f"known: {', '.join(COLUMN_FIELDS)}"
            )
        problem = unprintable(column)
        if problem is not None:
            raise UserError(f"--columns: {column!r} {problem}")
        earlier = next((c for f, c in pairs if f == field), None)
        if earlier is not None:
            raise UserError(f"--columns: {field} is given twice ({earlier!r} and {column!r})")
        taken = next((f for f, c in pairs if c == column), None)
        if taken is not None:
            # task=passed,passed=passed read one column as both the task and its outcome.
            raise UserError(
                f"--columns: column {column!r} is given for both {taken} and {field}; each "
                "field needs a column of its own"
            )
        pairs.append((field, column))
    return tuple(pairs)


def _threshold_flag(text: str) -> float:
    value = _number("--threshold", text)
    if not math.isfinite(value):  # 1e400
        raise UserError(f"--threshold: expected a finite number, got {text}")
    return value


def _run_formats(args: argparse.Namespace, out: TextIO) -> int:
    from .readers import formats_text

    out.write(formats_text())
    return EXIT_OK


def _formats_command(commands: Commands) -> None:
    parser = commands.add_parser(
        "formats",
        help=_HELP["formats"],
        description="List the input formats reportgen reads, in the order it tries them "
        "when detecting a file's format. A folder given as input is read as files of one "
        "of these formats.",
    )
    parser.set_defaults(handler=_run_formats)


def _run_summary(args: argparse.Namespace, out: TextIO) -> int:
    from .readers import load_sources
    from .report import build_report
    from .terminal import summary_text
    from .views import summary_json

    config = _config_for(args)
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
    _say_skipped(loaded.skipped)
    if args.format == "json":
        write_json(summary_json(report, stream=True), out)
        out.write("\n")
    else:
        out.write(summary_text(report))
    return EXIT_OK


def _say_skipped(skipped: Sequence[tuple[str, str]]) -> None:
    """The files --skip-unreadable left out, one warning each, as build prints them."""
    sys.stderr.write(terminal_safe(warnings_text(skipped_warnings(skipped))))


def _run_build(args: argparse.Namespace, out: TextIO) -> int:
    from .website.chart_engine import started
    from .website.write import StoppedAfterSwap

    # The chart engine's process starts first (when run as a command, before this
    # module was imported), so that its start-up overlaps the imports: only for a
    # build, as the site stack (Jinja, Altair) costs more to import than
    # `estimate` or `check` takes to run.
    converter = started()
    retired: list[Path] = []  # the previous site, once the new one has replaced it
    try:
        from .build import build

        config = _config_for(args)
        result = build(
            config,
            force=args.force,
            use_cache=not args.no_cache,
            converter=converter,
            retired=retired,
        )
    except StoppedAfterSwap as stop:
        # Too late to stop the build: it was done. Its site is what the status says.
        _remove_now(retired)
        sys.stderr.write(
            f"reportgen: {stop.signal_name} came as the new site was swapped in; it is "
            f"complete and in place: {terminal_safe(str(config.output))}/\n"
        )
        return EXIT_OK
    except BaseException:
        _remove_now(retired)  # swapped out before the failure: nobody else removes it
        raise
    finally:
        converter.close()
    summary = (
        f"built {result.pages} pages for {result.result_sets} result set"
        f"{'s' if result.result_sets != 1 else ''} ({result.files} files, "
        f"{result.bytes / 1e6:.1f} MB) in {result.seconds:.1f} s: {result.output}/"
        + (f"; {result.reused}" if result.reused else "")
    )
    # As `summary` prints them, so that a CI log shows what the pages' notes say.
    sys.stderr.write(terminal_safe(warnings_text(result.warnings)))
    print(terminal_safe(summary), file=sys.stderr)
    from .website.write import BACKGROUND_REMOVAL_FILES, abandoned_sites, remove_in_background

    # A large previous site goes in a process of its own: the new one is complete.
    if result.previous_files < BACKGROUND_REMOVAL_FILES:
        _remove_now(retired)
        retired = []
    remove_in_background(retired + abandoned_sites(result.output))
    return EXIT_OK


def _remove_now(folders: list[Path]) -> None:
    from .website.write import remove_tree

    for folder in folders:
        remove_tree(folder)


def _run_serve(args: argparse.Namespace, out: TextIO) -> int:
    from .serve import serve

    port = _whole_number("--port", args.port, 0)
    if port > 65535:
        raise UserError(f"--port: {port} is not a port number (0 to 65535)")

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # as Ctrl-C: a rebuild under way cleans up after itself

    # A closed terminal (SIGHUP) or `kill` (SIGTERM) would otherwise end the process
    # at once, leaving a half-staged site beside the output.
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, stop)
    serve(lambda: _config_for(args), port, sys.stderr, force=args.force)
    return EXIT_OK  # pragma: no cover - serve runs until interrupted


def _fraction(flag: str, text: str | None, strict: bool = False) -> float | None:
    """A number from 0 to 1 (`strict`: strictly between them), as given for `flag`."""
    if text is None:
        return None
    value = _number(flag, text)
    if strict and not 0.0 < value < 1.0:
        raise UserError(f"{flag}: must lie strictly between 0 and 1, got {text}")
    if not 0.0 <= value <= 1.0:
        raise UserError(f"{flag}: must lie between 0 and 1, got {text}")
    return value


def _run_check(args: argparse.Namespace, out: TextIO) -> int:
    from .check import (
        check_report,
        check_tasks,
        load_baseline,
        read_report,
        uncalibrated_sets,
        unmatched_sets,
    )
    from .check_output import CheckResult, check_github, check_json, check_markdown, check_text
    from .numbers import percent
    from .stats.headline import UNFIT_COVERAGE

    minimum = _fraction("--min-reliability", args.min_reliability)
    max_drop = _fraction("--max-drop", args.max_drop)
    if max_drop is not None and args.baseline is None:
        raise UserError("--max-drop needs --baseline OLD")
    if args.per_task and args.baseline is None:
        raise UserError("--per-task needs --baseline OLD")
    if args.allow_unmatched and args.baseline is None:
        raise UserError("--allow-unmatched needs --baseline OLD")
    reading, given = _reading(args)
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
    stray = [flag for flag, given in task_flags.items() if given]
    if stray and not args.per_task:
        raise UserError(f"{', '.join(stray)}: only with --per-task")
    if args.all_tasks and args.test == "boschloo":
        # Only Fisher's tasks are screened; Boschloo's family always holds every task.
        raise UserError("--all-tasks: only with --test fisher (Boschloo's test screens no task)")
    level = _fraction("--level", args.level, strict=True) or 0.05  # None: not given
    min_task_drop = _fraction("--min-task-drop", args.min_task_drop) or 0.0
    report = read_report(args.report, "report", tasks=args.per_task)
    unfit = uncalibrated_sets(report, args.estimator)
    if unfit and (minimum is not None or max_drop is not None) and not args.accept_uncalibrated:
        raise UserError(
            f"{', '.join(unfit)}: the headline interval covered the true value in less than "
            f"{percent(UNFIT_COVERAGE)} of simulated suites of its shape, so a bar on its "
            "reliability@k would pass or fail on noise; fix the data (runs per task, tasks) "
            "or give --accept-uncalibrated to gate on it all the same"
        )
    baseline = None
    if args.baseline is not None:
        baseline = load_baseline(args.baseline, report, args.per_task, reading, given)
        _say_skipped(baseline.get("skipped", ()))
    verdict = check_report(report, minimum, baseline, max_drop, args.estimator)
    gate = None
    if args.per_task and baseline is not None:
        gate = check_tasks(
            report,
            baseline,
            level=level,
            test=args.test or "fisher",
            control="bh" if args.fdr else "holm",
            screen=not args.all_tasks,
            min_drop=min_task_drop,
        )
    # A gate that compared nothing fails unless told otherwise: a renamed model or suite
    # would otherwise turn every check against the baseline into a green light.
    missed = []
    if baseline is not None and max_drop is not None and verdict.matched == 0:
        missed.append("--max-drop compared nothing")
    if gate is not None and not gate.keys:
        missed.append("--per-task tested no task")
    problems: tuple[str, ...] = ()
    if missed:
        assert baseline is not None
        problems = (f"{' and '.join(missed)}: {unmatched_sets(report, baseline)}",)
    errors, warnings = ((), problems) if args.allow_unmatched else (problems, ())
    for warning in warnings:
        print(f"reportgen: warning: {warning}", file=sys.stderr)
    result = CheckResult(
        None if baseline is None else baseline["label"],
        verdict,
        gate,
        warnings=warnings,
        errors=errors,
    )
    if args.format == "json":
        out.write(json.dumps(check_json(result), indent=2, ensure_ascii=False) + "\n")
    elif args.format == "markdown":
        out.write(check_markdown(result))
    elif args.format == "github":
        out.write(check_github(result))
        _append_step_summary(check_markdown(result))
    else:
        out.write(check_text(result))
    if result.failed:
        parts = []
        if errors:
            parts.append("nothing was compared with the baseline")
        if verdict.failures:
            parts.append(counted(len(verdict.failures), "result set failed", "result sets failed"))
        if result.regressed:
            parts.append(
                counted(len(result.regressed), "task regressed", "tasks regressed")
                + " beyond noise"
            )
        print(f"reportgen check: {', '.join(parts)}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    return EXIT_OK


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


def _run_compare(args: argparse.Namespace, out: TextIO) -> int:
    from .lookup import comparison_text, run_compare
    from .views import comparison_json

    # Unless given, those the reports compared were built with (else 3 and 0.95).
    k = None if args.k is None else _whole_number("-k", args.k, 1, MAX_K)
    confidence = None if args.confidence is None else _confidence(args.confidence)
    reading, given = _reading(args)
    a, b, cmp = run_compare(args.a, args.b, k, confidence, reading, given)
    _say_skipped([*a.skipped, *b.skipped])
    if args.format == "json":
        doc = {"a": a.name, "b": b.name, **comparison_json(cmp)}
        out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(comparison_text(a, b, cmp))
    return EXIT_OK


def _run_plan(args: argparse.Namespace, out: TextIO) -> int:
    from .lookup import find_result_set, is_report, plan_text, split_spec
    from .stats.estimate import EstimateError
    from .stats.planner import plan
    from .views import plan_json

    confidence = _confidence(args.confidence)
    target = _fraction("--target-halfwidth", args.target_halfwidth)
    pass_rate = _fraction("--pass-rate", args.pass_rate)
    task_sd = _fraction("--task-sd", args.task_sd)
    correlation = None
    if args.correlation is not None:
        correlation = _number("--correlation", args.correlation)
        if not -1.0 <= correlation <= 1.0:
            raise UserError(f"--correlation: must lie between -1 and 1, got {args.correlation}")
    tasks = None if args.tasks is None else _whole_number("--tasks", args.tasks, 2)
    if args.report is not None:
        report_path = split_spec(args.report)[0]
        if not is_report(report_path):
            # A result file has no headline estimate whose spread the plan could use:
            # taking T from it with the default S gave a plan unlike its site's.
            raise UserError(
                f"--report: {report_path} is not a built site or its report.json; build it "
                "first (reportgen build), or give --task-sd and --tasks yourself"
            )
        observed = find_result_set(args.report, "--report")
        if task_sd is None and observed.task_sd is not None:
            task_sd = observed.task_sd
        if tasks is None:
            tasks = max(len(observed.counts), 2)
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


def _run_sql(args: argparse.Namespace, out: TextIO) -> int:
    from .sql import counts_query

    columns = dict(_columns_flag(args.columns)) if args.columns is not None else {}
    for field in ("successes", "runs", "excluded"):
        if field in columns:
            raise UserError(
                f"--columns: {field} is what the query writes; map the runs table's "
                "task, passed, suite, model and category"
            )
    out.write(counts_query(args.dialect, args.table, columns))
    return EXIT_OK


def _sql_command(commands: Commands) -> None:
    """`reportgen sql` and its arguments."""
    from .sql import DIALECTS

    parser = commands.add_parser(
        "sql",
        help=_HELP["sql"],
        description="Print one GROUP BY query that turns a table of runs (one row per run) "
        "into the per-task counts `reportgen build` reads: task, successes, runs, excluded, "
        "and suite, model, category when mapped. Run it where the data lives, save the "
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
        "those names), suite, model and category (left out unless given); run and url are "
        "accepted and not needed",
    )
    parser.set_defaults(handler=_run_sql)


def _estimate_command(commands: Commands) -> None:
    """`reportgen estimate` and its arguments."""
    parser = commands.add_parser(
        "estimate",
        help=_HELP["estimate"],
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
    _add_estimate_options(parser)
    parser.add_argument(
        "--no-coverage",
        action="store_true",
        help="skip the simulation that checks each suite interval's coverage (about a "
        "second for 10,000 tasks)",
    )
    parser.set_defaults(handler=_run_estimate)


def _summary_command(commands: Commands) -> None:
    """`reportgen summary` and its arguments."""
    parser = commands.add_parser(
        "summary",
        help=_HELP["summary"],
        description="Read result files (or the config) and print, per result set, the per-task "
        "counts and estimates and reliability@k: the report in a terminal or CI log.",
    )
    _input_options(parser)
    parser.add_argument(
        "--format", choices=["text", "json"], default="text", help="output format (default text)"
    )
    parser.add_argument(
        "--no-coverage",
        action="store_true",
        help="skip the simulation that checks each suite interval's coverage (about a "
        "second for 10,000 tasks); the unbiased estimate then leads wherever it is defined",
    )
    parser.set_defaults(handler=_run_summary)


def _build_command(commands: Commands) -> None:
    """`reportgen build` and its arguments."""
    from .config import CONFIG_NAME

    parser = commands.add_parser(
        "build",
        help=_HELP["build"],
        description=f"Build the report site. Without FILEs, reads ./{CONFIG_NAME}; flags "
        "override its values only when given.",
        epilog="examples:\n  reportgen build\n  reportgen build results.jsonl --output site\n"
        "  reportgen build --config example/reportgen.yaml --force",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _input_options(parser)
    parser.add_argument(
        "--output", "-o", type=Path, metavar="DIR", help="output folder (default site)"
    )
    parser.add_argument("--title", help="report title")
    parser.add_argument("--description", help="one paragraph under the title")
    parser.add_argument("--templates", type=Path, metavar="DIR", help="template overrides")
    parser.add_argument("--content", type=Path, metavar="DIR", help="content overrides")
    parser.add_argument("--base-url", metavar="URL", help="absolute URL of the published site")
    parser.add_argument(
        "--base-path", metavar="PATH", help="URL path the site is served under (default /)"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a site (a folder with an index.html) that reportgen did not write",
    )
    parser.add_argument(
        "--task-pages",
        metavar="WHICH",
        help="which tasks get a page of their own: all (default, up to 20,000 pages), flaky "
        "(neither always passing nor always failing), worst:N (the N least reliable) or none",
    )
    parser.add_argument(
        "--history",
        type=Path,
        metavar="FILE",
        help="history.jsonl of earlier builds (for example the published site's) to extend",
    )
    parser.add_argument(
        "--label",
        help="this build's name in the history (default: the git commit, else the time "
        "SOURCE_DATE_EPOCH pins, else 'build N'); needs --history",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="ignore and do not update .reportgen-cache/ beside the output",
    )
    parser.set_defaults(handler=_run_build)


def _serve_command(commands: Commands) -> None:
    """`reportgen serve` and its arguments."""
    parser = commands.add_parser(
        "serve",
        help=_HELP["serve"],
        description="Build the report, serve it on 127.0.0.1 for preview, and rebuild whenever "
        "an input file, the config, the history, a template or a content file changes. Open "
        "pages reload by themselves after each rebuild; a failed build keeps the last good "
        "site served and shows its located error over the page. Only 127.0.0.1 is bound: "
        "the preview is for this machine.",
    )
    _input_options(parser)
    parser.add_argument(
        "--port", default="8000", metavar="N", help="port (default 8000; 0 picks a free one)"
    )
    parser.add_argument(
        "--output", "-o", type=Path, metavar="DIR", help="output folder (default site)"
    )
    parser.add_argument("--templates", type=Path, metavar="DIR", help="template overrides")
    parser.add_argument("--content", type=Path, metavar="DIR", help="content overrides")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a site (a folder with an index.html) that reportgen did not write",
    )
    parser.add_argument(
        "--task-pages",
        metavar="WHICH",
        help="which tasks get a page of their own: all (default, up to 20,000 pages), flaky "
        "(neither always passing nor always failing), worst:N (the N least reliable) or none",
    )
    parser.set_defaults(handler=_run_serve)


def _check_command(commands: Commands) -> None:
    """`reportgen check` and its arguments."""
    parser = commands.add_parser(
        "check",
        help=_HELP["check"],
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
    _add_reading_options(parser, "a --baseline of result files")
    parser.add_argument(
        "--estimator",
        choices=["headline", "plugin", "unbiased"],
        default="headline",
        help="which reliability@k to check (default: each set's headline estimate)",
    )
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
    parser.add_argument(
        "--format",
        choices=["text", "json", "markdown", "github"],
        default="text",
        help="output: text (default), json, markdown (a pull-request comment) or github "
        "(workflow annotations, and the Markdown appended to $GITHUB_STEP_SUMMARY)",
    )
    parser.set_defaults(handler=_run_check)


def _compare_command(commands: Commands) -> None:
    """`reportgen compare` and its arguments."""
    parser = commands.add_parser(
        "compare",
        help=_HELP["compare"],
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
    _add_estimate_options(parser, from_reports=True)
    _add_reading_options(parser, "A and B where they are result files")
    parser.set_defaults(handler=_run_compare)


def _plan_command(commands: Commands) -> None:
    """`reportgen plan` and its arguments."""
    parser = commands.add_parser(
        "plan",
        help=_HELP["plan"],
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
    _add_level_and_format(parser)
    parser.set_defaults(handler=_run_plan)


#: Each command: how it sets up its arguments, and its line in `reportgen --help`.
_HELP = {
    "formats": "list the input formats reportgen reads",
    "sql": "print the SQL that turns a warehouse table of runs into per-task counts",
    "estimate": "compute the estimates for counts typed at the terminal",
    "summary": "print per-task counts and estimates of result files",
    "build": "write the static HTML report",
    "serve": "build, serve on 127.0.0.1 and rebuild on changes",
    "check": "fail (exit 1) when reliability is below a bar, dropped, or a task regressed",
    "compare": "paired comparison of two result sets on their shared tasks",
    "plan": "how many runs per task and how many tasks a target precision needs",
}
_COMMANDS: dict[str, Callable[[Commands], None]] = {
    "estimate": _estimate_command,
    "summary": _summary_command,
    "build": _build_command,
    "serve": _serve_command,
    "check": _check_command,
    "compare": _compare_command,
    "plan": _plan_command,
    "sql": _sql_command,
    "formats": _formats_command,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; given the command, only that command's arguments.

    The others are listed (for --help) without their arguments, whose choices
    and defaults would load the readers and the config: `estimate` runs in about
    the time numpy and scipy.special take to import, and should stay there.
    """
    parser = _Parser(
        prog="reportgen",
        description="Turn repeated eval runs into a reliability report (pass^k, pass@k, "
        "reliability@k with intervals).",
    )
    parser.add_argument("--version", action="version", version=f"reportgen {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, add in _COMMANDS.items():
        if command is None or command == name:
            add(commands)
        else:
            commands.add_parser(name, help=_HELP[name])
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point: returns the exit status instead of calling sys.exit itself."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv and argv[0] in _COMMANDS else None)
    # Output passes through terminal_safe, so no name or id read from an input can
    # send escape sequences to the terminal; piece by piece, not gathered, so that a
    # large JSON document is never held whole.
    text = cast(TextIO, _SafeOutput(out or sys.stdout))
    try:
        args = parser.parse_args(argv)
        handler: Callable[[argparse.Namespace, TextIO], int] | None = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(text)
            return EXIT_USER_ERROR
        return handler(args, text)
    except _OutputFailed as failed:
        # Not the input's fault: __main__ says so (or stays quiet for `| head`).
        raise failed.error from None
    except UserError as error:
        for line in error.problems:
            print(f"reportgen: error: {terminal_safe(line)}", file=sys.stderr)
        if error.hint is not None:
            print(f"reportgen: {terminal_safe(error.hint)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except OSError as error:
        # The system refused something (a busy port, an unreadable folder): not a bug,
        # so one line saying what and where, as for bad input.
        print(f"reportgen: error: {os_reason(error)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("reportgen: interrupted", file=sys.stderr)
        return 130
    finally:
        text.flush()


class _OutputFailed(Exception):
    """Writing the output failed (a full disk, a closed pipe)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class _SafeOutput(io.TextIOBase):
    """Writes to `out` with control and bidirectional marks spelled out
    (terminal_safe works character by character, so pieces may split anywhere)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, piece: str) -> int:
        try:
            self._out.write(terminal_safe(piece))
        except OSError as error:
            raise _OutputFailed(error) from None
        return len(piece)

    def flush(self) -> None:
        self._out.flush()
