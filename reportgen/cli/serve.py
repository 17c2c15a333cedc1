"""`reportgen serve`: build, serve on 127.0.0.1 and rebuild on changes."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import TextIO

from ..errors import UserError
from .inputs import add_input_options, config_for
from .options import EXIT_OK, Commands, add_site_options, parse_whole


def add_command(commands: Commands, help_line: str) -> None:
    """`reportgen serve` and its arguments."""
    parser = commands.add_parser(
        "serve",
        help=help_line,
        description="Build the report, serve it on 127.0.0.1 for preview, and rebuild whenever "
        "an input file, the config, the history, a template or a content file changes. Open "
        "pages reload by themselves after each rebuild; a failed build keeps the last good "
        "site served and shows its located error over the page. Only 127.0.0.1 is bound: "
        "the preview is for this machine.",
    )
    add_input_options(parser)
    parser.add_argument(
        "--port", default="8000", metavar="N", help="port (default 8000; 0 picks a free one)"
    )
    add_site_options(parser, "--output", "--templates", "--content", "--force", "--task-pages")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..serve import serve

    port = parse_whole("--port", args.port, 0)
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
    serve(lambda: config_for(args), port, sys.stderr, force=args.force)
    return EXIT_OK  # pragma: no cover - serve runs until interrupted
