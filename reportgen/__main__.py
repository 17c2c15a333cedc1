"""`python -m reportgen`, and the `reportgen` command (see run)."""

import sys


def run() -> None:
    """The console script. Importing the command line loads numpy and scipy,
    which takes a moment: Ctrl-C then ends as quietly as it does later."""
    if sys.argv[1:] == ["formats"]:
        # The list of formats needs only the readers: skip loading the rest.
        from .readers import formats_text

        sys.stdout.write(formats_text())
        sys.exit(0)
    from .website import chart_engine  # a few standard modules, nothing more

    if sys.argv[1:2] == ["build"] and not {"-h", "--help"} & set(sys.argv):
        # The chart engine takes longer to start than the command line takes to
        # import, so a build starts it first; _run_build takes it over.
        chart_engine.start_early()
    try:
        from .cli import main
    except KeyboardInterrupt:
        sys.stderr.write("reportgen: interrupted\n")
        sys.exit(130)
    try:
        status = main()
    finally:
        chart_engine.discard_early()
    sys.exit(status)


if __name__ == "__main__":
    run()
