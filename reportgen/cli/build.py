"""`reportgen build`: write the static HTML report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from ..terminal import terminal_safe, warnings_text
from .inputs import add_input_options, config_for
from .options import EXIT_OK, Commands, add_site_options


def add_command(commands: Commands, help_line: str) -> None:
    """`reportgen build` and its arguments."""
    from ..config import CONFIG_NAME

    parser = commands.add_parser(
        "build",
        help=help_line,
        description=f"Build the report site. Without FILEs, reads ./{CONFIG_NAME}; flags "
        "override its values only when given.",
        epilog="examples:\n  reportgen build\n  reportgen build results.jsonl --output site\n"
        "  reportgen build --config example/reportgen.yaml --force",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_options(parser)
    add_site_options(parser, "--output")
    parser.add_argument("--title", help="report title")
    parser.add_argument("--description", help="one paragraph under the title")
    add_site_options(parser, "--templates", "--content")
    parser.add_argument("--base-url", metavar="URL", help="absolute URL of the published site")
    parser.add_argument(
        "--base-path", metavar="PATH", help="URL path the site is served under (default /)"
    )
    add_site_options(parser, "--force", "--task-pages")
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
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..website.chart_engine import started
    from ..website.write import StoppedAfterSwap

    # The chart engine's process starts first (when run as a command, before this
    # module was imported), so that its start-up overlaps the imports: only for a
    # build, as the site stack (Jinja, Altair) costs more to import than
    # `estimate` or `check` takes to run.
    converter = started()
    try:
        from ..build import build

        config = config_for(args)
        result = build(
            config,
            force=args.force,
            use_cache=not args.no_cache,
            converter=converter,
        )
    except StoppedAfterSwap as stop:
        # Too late to stop the build: it was done. Its site is what the status says.
        sys.stderr.write(
            f"reportgen: {stop.signal_name} came as the new site was swapped in; it is "
            f"complete and in place: {terminal_safe(str(config.output))}/\n"
        )
        return EXIT_OK
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
    return EXIT_OK
