"""`reportgen formats`: the input formats reportgen reads, in the order it tries them."""

from __future__ import annotations

import argparse
from typing import TextIO

from .options import EXIT_OK, Commands


def add_command(commands: Commands, help_line: str) -> None:
    parser = commands.add_parser(
        "formats",
        help=help_line,
        description="List the input formats reportgen reads, in the order it tries them "
        "when detecting a file's format. A folder given as input is read as files of one "
        "of these formats.",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..readers import formats_text

    out.write(formats_text())
    return EXIT_OK
