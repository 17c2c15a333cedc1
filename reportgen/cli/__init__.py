"""The command line: parse arguments, call one function, map errors to exit codes.

Exit status: 0 success, 1 a check failed (`reportgen check`), 2 the user's
input or arguments were wrong (one located line per problem, no traceback).

Each command is a module of this package with the same name (`build`, `check`, ...):
its `add_command` sets up its arguments, its `run` runs it. What several commands
share is in options.py (the exit codes, the number flags, the options `build` and
`serve` both take) and inputs.py (the input flags and the config they override).
"""

from __future__ import annotations

import argparse
import importlib
import io
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO, cast

from .. import __version__
from ..errors import UserError, os_reason
from ..terminal import terminal_safe
from .options import EXIT_CHECK_FAILED, EXIT_OK, EXIT_USER_ERROR

__all__ = ["EXIT_CHECK_FAILED", "EXIT_OK", "EXIT_USER_ERROR", "build_parser", "main"]

# The readers, the config, the report model, the history and the statistics (numpy)
# are imported where they are used: `estimate` and `plan` need no readers, a build
# that finds its pages unchanged needs no statistics, and only the chosen command's
# module is imported and its arguments set up (see build_parser).

#: Each command (the module of this package that adds and runs it), and its line in
#: `reportgen --help`, in the order that lists them.
COMMANDS = {
    "estimate": "compute the estimates for counts typed at the terminal",
    "summary": "print per-task counts and estimates of result files",
    "build": "write the static HTML report",
    "serve": "build, serve on 127.0.0.1 and rebuild on changes",
    "check": "fail (exit 1) when reliability is below a bar, dropped, or a task regressed",
    "compare": "paired comparison of two result sets on their shared tasks",
    "plan": "how many runs per task and how many tasks a target precision needs",
    "sql": "print the SQL that turns a warehouse table of runs into per-task counts",
    "formats": "list the input formats reportgen reads",
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage mistake as one line instead of exiting itself."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see {self.prog} --help)")


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
    for name, help_line in COMMANDS.items():
        if command is None or command == name:
            importlib.import_module(f"{__name__}.{name}").add_command(commands, help_line)
        else:
            commands.add_parser(name, help=help_line)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point: returns the exit status instead of calling sys.exit itself."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
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
