"""The console script (`reportgen`, `python -m reportgen`) ends with os._exit, after
flushing its output: what it prints and the status it returns must survive that."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reportgen.cli import main

from .test_imports import probe

ROOT = Path(__file__).resolve().parent.parent


def _command(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reportgen", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
        env=env,
    )


def test_the_whole_output_and_status_reach_a_pipe() -> None:
    # A suite long enough that its JSON is many pipe buffers long.
    suite = [f"{i % 11}/10" for i in range(3000)]
    argv = ["estimate", "--suite", *suite, "-k", "2", "--format", "json", "--no-coverage"]
    done = _command(*argv)
    assert done.returncode == 0, done.stderr
    in_process = io.StringIO()
    assert main(argv, out=in_process) == 0
    assert len(done.stdout) > 200_000
    assert done.stdout == in_process.getvalue()
    json.loads(done.stdout)


def test_a_user_error_keeps_its_status_and_message(tmp_path: Path) -> None:
    done = _command("build", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "site"))
    assert done.returncode == 2
    assert done.stderr.startswith("reportgen: error: ") and "missing.jsonl" in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize("value", ["abc", "1e9", "1700000000.5", "99999999999999999999"])
def test_a_source_date_epoch_that_is_no_date_is_refused_before_numpy_reads_it(value: str) -> None:
    """numpy (f2py, loaded with scipy) reads SOURCE_DATE_EPOCH with int(): a traceback."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": value}
    done = _command("estimate", "--successes", "1", "--runs", "2", env=env)
    assert done.returncode == 2
    assert done.stderr == (
        f"reportgen: error: SOURCE_DATE_EPOCH: {value!r} is not a date: give whole seconds "
        "since 1970-01-01 UTC, before the year 10000 (or leave it unset)\n"
    )


def test_an_empty_source_date_epoch_counts_as_unset(tmp_path: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": ""}
    done = _command("estimate", "--successes", "1", "--runs", "2", env=env)
    assert done.returncode == 0, done.stderr
    assert "pass^3" in done.stdout


def _shell(command: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", command],
        capture_output=True,
        text=True,
        errors="replace",  # the latin-1 output below
        cwd=ROOT,
        check=False,
        timeout=120,
        env={**os.environ, **env},
    )


TAU = "tests/fixtures/tau-bench/gpt-4o-airline-small.json"


def test_output_that_cannot_be_written_ends_with_a_line_not_a_traceback() -> None:
    command = f"{sys.executable} -m reportgen summary {TAU}"
    closed = _shell(f"{command} >&-")  # nothing to write to: the work is still done
    assert closed.returncode == 0 and closed.stderr == "", closed.stderr
    if Path("/dev/full").exists():
        full = _shell(f"{command} > /dev/full")
        assert full.returncode == 2
        assert full.stderr == "reportgen: error: cannot write the output: No space left on device\n"
    # An output encoding without τ escapes it.
    latin = _shell(
        f"{sys.executable} -m reportgen summary --config example/reportgen.yaml",
        PYTHONIOENCODING="latin-1",
    )
    assert latin.returncode == 0, latin.stderr
    assert "\\u03c4-bench" in latin.stdout


def test_a_build_prints_its_summary_before_ending(tmp_path: Path) -> None:
    fixture = ROOT / "tests" / "fixtures" / "tau-bench" / "gpt-4o-airline-small.json"
    done = _command("build", str(fixture), "-o", str(tmp_path / "site"), "--no-cache")
    assert done.returncode == 0, done.stderr
    last = done.stderr.splitlines()[-1]  # the summary goes where progress goes
    assert last.startswith("built 5") and last.endswith("/site/")
    assert (tmp_path / "site" / "index.html").is_file()


def _blas_threads_seen(env: dict[str, str]) -> str | None:
    # The console script, up to its exit, in a fresh interpreter: what numpy saw.
    code = (
        "import json, os, sys\n"
        "from reportgen import __main__ as entry\n"
        "def seen(status):\n"
        "    threads = os.environ.get('OPENBLAS_NUM_THREADS')\n"
        "    print(json.dumps({'threads': threads}), file=sys.stderr)\n"
        "entry._exit = seen\n"
        "sys.argv = ['reportgen', 'estimate', '--successes', '1', '--runs', '2', '-k', '1']\n"
        "entry.run()\n"
    )
    threads: str | None = probe(code, env=env)["threads"]
    return threads


def test_blas_runs_one_thread_unless_the_user_says_otherwise() -> None:
    said = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}
    env = {name: value for name, value in os.environ.items() if name not in said}
    assert _blas_threads_seen(env) == "1"
    assert _blas_threads_seen({**env, "OPENBLAS_NUM_THREADS": "3"}) == "3"
    # OpenBLAS also reads OpenMP's variable: a user's setting there is left to act.
    assert _blas_threads_seen({**env, "OMP_NUM_THREADS": "3"}) is None
