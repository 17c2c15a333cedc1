"""The input flags, defined and read in one place: which result files (or the
config), how to read them, and -k and --confidence over the config's.

`build`, `serve` and `summary` take the files and the config (add_input_options,
config_for); `compare` and `check` read result files given otherwise with the same
reading flags (add_reading_options, reading).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Problems, UserError
from ..stats.plain import MAX_K
from ..terminal import skipped_warnings, terminal_safe, warnings_text
from .options import parse_confidence, parse_number, parse_whole

if TYPE_CHECKING:
    from ..config import Config
    from ..readers import Source


def add_input_options(parser: argparse.ArgumentParser) -> None:
    from ..config import CONFIG_NAME

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
    add_reading_options(parser, "the FILEs")
    # Defaults of None: a flag overrides the config only when it is given.
    parser.add_argument("-k", default=None, metavar="K", help="runs that must all pass (default 3)")
    parser.add_argument(
        "--confidence", default=None, metavar="LEVEL", help="confidence level (default 0.95)"
    )


def add_reading_options(parser: argparse.ArgumentParser, files: str) -> None:
    """How result files are read: for build's and summary's FILEs, and for result files
    given to compare (A, B) or check (--baseline)."""
    from ..readers import FORMATS
    from ..readers.source import ERROR_CHOICES

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
        "task=instance_id,run=trial,passed=resolved,cost=cost_usd",
    )
    parser.add_argument(
        "--skip-unreadable",
        action="store_true",
        default=None,  # None: not given (see reading)
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
        "--condition",
        metavar="NAME",
        help=f"the condition {files} were run under: 'baseline' or a perturbation's name, "
        "compared with the baseline runs of the same suite and model (default: the "
        "condition each run names, else baseline)",
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
    "condition": "--condition",
    "skip_unreadable": "--skip-unreadable",
}


def reading(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """The reading flags as Source fields (Source(path, **fields)), and those given."""
    if args.scorer is not None and not args.scorer.strip():
        raise UserError("--scorer: empty; leave it out to read the only score, or name one")
    columns = parse_columns(args.columns) if args.columns is not None else ()
    threshold = _parse_threshold(args.threshold) if args.threshold is not None else None
    for flag, value in (
        ("--suite", args.suite),
        ("--model", args.model),
        ("--condition", args.condition),
    ):
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
        "condition": args.condition,
        "named_in": ("the command line", "the command line"),
        "skip_unreadable": bool(args.skip_unreadable),
    }
    given = [flag for name, flag in _READING_FLAGS.items() if getattr(args, name) is not None]
    return fields, given


def _check_name(flag: str, value: str) -> None:
    from ..readers.fields import unprintable

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


def config_for(args: argparse.Namespace) -> Config:
    """The config file (if any), then the files and flags given on the command line."""
    from ..config import CONFIG_NAME, Config, check_task_pages, load_config

    if args.files and args.config is None:
        config = Config()
    else:
        config = load_config(args.config or Path(CONFIG_NAME))
    config.result_sets = _result_sets(config, args)
    if args.k is not None:
        config.k = parse_whole("-k", args.k, 1, MAX_K)
    if args.confidence is not None:
        config.confidence = parse_confidence(args.confidence)
    if getattr(args, "task_pages", None) is not None:
        problems = Problems()
        pages = check_task_pages("--task-pages", args.task_pages, problems)
        problems.raise_if_any()
        assert pages is not None
        config.task_pages = pages
    _set_site_flags(config, args)
    return config


def _result_sets(config: Config, args: argparse.Namespace) -> list[Source]:
    """The FILEs given, read as the flags say; else the config's inputs, with the
    flags filling in what each does not set itself."""
    from ..readers import Source

    fields, _ = reading(args)
    columns, threshold = fields["columns"], fields["threshold"]
    if args.files:
        return [Source(path=path, **fields) for path in args.files]
    return [
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
            condition=s.condition or args.condition,
            named_in=_named_in(s, args),
            skip_unreadable=bool(args.skip_unreadable),
        )
        for s in config.result_sets
    ]


def _set_site_flags(config: Config, args: argparse.Namespace) -> None:
    """The site's flags over the config's values (only those the command takes and
    that were given): messages then name the flag, not the file."""
    from ..config import NAMING_KEYS
    from ..readers.fields import unprintable

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


def parse_columns(text: str) -> tuple[tuple[str, str], ...]:
    """--columns task=instance_id,passed=resolved -> (("task", "instance_id"), ...)."""
    from ..readers.fields import did_you_mean, unprintable
    from ..readers.table import FIELDS as COLUMN_FIELDS

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


def _parse_threshold(text: str) -> float:
    value = parse_number("--threshold", text)
    if not math.isfinite(value):  # 1e400
        raise UserError(f"--threshold: expected a finite number, got {text}")
    return value


def say_skipped(skipped: Sequence[tuple[str, str]]) -> None:
    """The files --skip-unreadable left out, one warning each, as build prints them."""
    sys.stderr.write(terminal_safe(warnings_text(skipped_warnings(skipped))))
