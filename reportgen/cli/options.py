"""What several commands share: the exit codes, the number flags' parsers, and the
options more than one command takes (so each is defined once).

Plain Python: the readers and the config are imported where an option needs them.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from ..counts import MAX_COUNT
from ..errors import UserError
from ..stats.plain import DEFAULT_CONFIDENCE, confidence_extreme

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USER_ERROR = 2

#: argparse's sub-parser collection; its class is private to argparse.
Commands = Any

#: What the number flags take: ASCII digits, a sign, a point and an exponent. int() and
#: float() also take "3_0" (as 30) and other scripts' digits ("٣").
_WHOLE = re.compile(r"\s*[-+]?[0-9]+\s*")
_DECIMAL = re.compile(r"\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*")


def parse_whole(flag: str, text: str, minimum: int, maximum: int = MAX_COUNT) -> int:
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


def parse_number(flag: str, text: str) -> float:
    if not _DECIMAL.fullmatch(text):
        raise UserError(f"{flag}: {text!r} is not a number")
    return float(text)


def parse_confidence(text: str) -> float:
    value = parse_number("--confidence", text)
    if not 0.0 < value < 1.0:
        raise UserError(f"--confidence: must lie strictly between 0 and 1, got {text}")
    extreme = confidence_extreme(value)
    if extreme is not None:
        raise UserError(f"--confidence: {extreme}")
    return value


def parse_fraction(flag: str, text: str | None, strict: bool = False) -> float | None:
    """A number from 0 to 1 (`strict`: strictly between them), as given for `flag`."""
    if text is None:
        return None
    value = parse_number(flag, text)
    if strict and not 0.0 < value < 1.0:
        raise UserError(f"{flag}: must lie strictly between 0 and 1, got {text}")
    if not 0.0 <= value <= 1.0:
        raise UserError(f"{flag}: must lie between 0 and 1, got {text}")
    return value


def add_estimate_options(parser: argparse.ArgumentParser, from_reports: bool = False) -> None:
    """-k, --confidence and --format; `from_reports`: -k and --confidence default to
    those of the reports given (None here), else to 3 and 0.95."""
    parser.add_argument(
        "-k",
        default=None if from_reports else "3",
        metavar="K",
        help="runs that must all pass ("
        + ("default: the k the reports were built with, else 3)" if from_reports else "default 3)"),
    )
    add_level_and_format(parser, from_reports)


def add_level_and_format(parser: argparse.ArgumentParser, from_reports: bool = False) -> None:
    parser.add_argument(
        "--confidence",
        default=None if from_reports else str(DEFAULT_CONFIDENCE),
        metavar="LEVEL",
        help="confidence level of every interval, in (0, 1) ("
        + ("default: the reports' level, else 0.95)" if from_reports else "default 0.95)"),
    )
    add_text_or_json(parser)


def add_text_or_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=["text", "json"], default="text", help="output format (default text)"
    )


#: The options `build` and `serve` share: (flags, argparse settings).
_SITE_OPTIONS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "--output": (
        ("--output", "-o"),
        {"type": Path, "metavar": "DIR", "help": "output folder (default site)"},
    ),
    "--templates": (
        ("--templates",),
        {"type": Path, "metavar": "DIR", "help": "template overrides"},
    ),
    "--content": (("--content",), {"type": Path, "metavar": "DIR", "help": "content overrides"}),
    "--force": (
        ("--force",),
        {
            "action": "store_true",
            "help": "replace a site (a folder with an index.html) that reportgen did not write",
        },
    ),
    "--task-pages": (
        ("--task-pages",),
        {
            "metavar": "WHICH",
            "help": "which tasks get a page of their own: all (default, up to 20,000 pages), "
            "flaky (neither always passing nor always failing), worst:N (the N least "
            "reliable) or none",
        },
    ),
}


def add_site_options(parser: argparse.ArgumentParser, *names: str) -> None:
    """Options `build` and `serve` share, in the order given: each command's --help
    lists them among its own, where they always stood."""
    for name in names:
        flags, settings = _SITE_OPTIONS[name]
        parser.add_argument(*flags, **settings)
