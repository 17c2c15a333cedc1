"""`python -m reportgen`, and the `reportgen` command (see run)."""

import gc
import os
import sys

#: The cycle collector's thresholds for a command: see run().
GC_THRESHOLDS = (50_000, 20, 100)


def run() -> None:
    """The console script. Importing the command line takes a moment (a build loads
    numpy, scipy and Altair later, where it needs them): Ctrl-C then ends as quietly
    as it does later."""
    # A build makes hundreds of thousands of objects that live to its end (tasks,
    # estimates, pages). The cycle collector, by default woken every 700 new
    # objects, passed over them again and again for nothing: about a tenth of a
    # rebuild of 20,000 pages. It still runs, a hundred times less often.
    gc.set_threshold(*GC_THRESHOLDS)
    # numpy's BLAS starts a thread per core that spins between the small matrix
    # products of the coverage checks, taking CPU from the page, content and chart
    # processes: about 4% of a small build's CPU on two cores. A user's own
    # setting wins, in any of the variables OpenBLAS reads (before numpy loads).
    if not {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"} & os.environ.keys():
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    _usable_streams()
    _check_source_date_epoch()
    if sys.argv[1:] == ["formats"]:
        # The list of formats needs only the readers: skip loading the rest.
        from .readers import formats_text

        sys.stdout.write(formats_text())
        sys.exit(0)
    from .website import chart_engine  # a few standard modules, nothing more

    if sys.argv[1:2] == ["build"] and not {"-h", "--help"} & set(sys.argv):
        # The chart engine takes longer to start than the command line takes to
        # import, so a build starts it first; cli/build.py's run takes it over.
        chart_engine.start_early()
    try:
        from .cli import main
    except KeyboardInterrupt:
        sys.stderr.write("reportgen: interrupted\n")
        sys.exit(130)
    # What the imports made lives to the end: the collector skips it. (numpy, the
    # statistics and the renderer load later, where a build needs them; the collector
    # runs rarely enough that they were not worth a second freeze: bench/FEEDBACK.md.)
    gc.freeze()
    try:
        status = main()
    except BrokenPipeError:
        status = 1  # the reader went away (`... | head`): nothing more to say
    except OSError as error:
        # Writing the output failed after the work was done (stdout on a full disk).
        sys.stderr.write(f"reportgen: error: cannot write the output: {error.strerror}\n")
        status = 2
    finally:
        chart_engine.discard_early()
    _exit(status)


def _usable_streams() -> None:
    """Output that can always be written: a closed stream (`>&-`) becomes a sink, and a
    character the stream's encoding lacks (PYTHONIOENCODING=latin-1, a task named in
    Greek) is escaped instead of ending the command with a traceback."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
        elif hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _check_source_date_epoch() -> None:
    """Refuse a SOURCE_DATE_EPOCH that is not a date, before numpy loads.

    numpy reads it while scipy is imported (numpy.f2py, which scipy's array API layer
    loads) and raised a traceback for any value int() cannot read. An empty one, as
    an unset CI variable gives, counts as unset.
    """
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if value is None:
        return
    if not value.strip():
        del os.environ["SOURCE_DATE_EPOCH"]
        return
    import datetime as dt

    try:
        dt.datetime.fromtimestamp(int(value), tz=dt.UTC)
    except (ValueError, OverflowError, OSError):
        sys.stderr.write(
            f"reportgen: error: SOURCE_DATE_EPOCH: {value!r} is not a date: give whole "
            "seconds since 1970-01-01 UTC, before the year 10000 (or leave it unset)\n"
        )
        sys.exit(2)


def _exit(status: int) -> None:
    """End the process once its output is out, without tearing the interpreter down.

    Every file is closed and every child process stopped by now; tearing down would
    only free the build's objects one by one, 0.2 s after a build of 20,000 pages.
    """
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        # The reader went away (`reportgen summary ... | head`): nothing more to say.
        status = status or 1
    os._exit(status)


if __name__ == "__main__":
    run()
