"""`python -m reportgen`, and the `reportgen` command (see run)."""

import sys


def run() -> None:
    """The console script. Importing the command line loads numpy, scipy and altair,
    which takes a moment: Ctrl-C then ends as quietly as it does later."""
    try:
        from .cli import main
    except KeyboardInterrupt:
        sys.stderr.write("reportgen: interrupted\n")
        sys.exit(130)
    sys.exit(main())


if __name__ == "__main__":
    run()
