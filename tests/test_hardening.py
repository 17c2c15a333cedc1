"""Issue 12, part B: ordinary data that broke builds, and bad input that gave a
traceback or a silently wrong answer. One regression test per item, named after it."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reportgen.cli import main
from reportgen.errors import UserError

from .conftest import EXAMPLE, FIXTURES


def run(argv: list[str]) -> tuple[int, str]:
    """Exit status and stdout of one command, run in this process."""
    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


# ------------------------------------------------ item 1: every task alike, or one task


@pytest.mark.parametrize(
    "tasks",
    [
        ["{id: a, successes: 5, runs: 5}", "{id: b, successes: 5, runs: 5}"],
        ["{id: a, successes: 0, runs: 5}", "{id: b, successes: 0, runs: 5}"],
        ["{id: a, successes: 3, runs: 5}"],
    ],
    ids=["all-pass", "all-fail", "one-task"],
)
def test_item1_uniform_or_single_task_suites_build(tmp_path: Path, tasks: list[str]) -> None:
    suite = tmp_path / "p.yaml"
    suite.write_text("suite: s\ntasks:\n" + "".join(f"  - {t}\n" for t in tasks))
    site = tmp_path / "site"
    assert run(["build", str(suite), "-o", str(site), "--no-cache"])[0] == 0
    report = json.loads((site / "report.json").read_text())
    assert run(["summary", str(suite), "--format", "json"])[1]
    assert len(report["result_sets"][0]["tasks"]) == len(tasks)


# ------------------------------------------------ item 2: k larger than a worked example's runs


def test_item2_k_beyond_the_worked_examples_runs_builds(tmp_path: Path) -> None:
    site = tmp_path / "out"
    status, _ = run(["build", "--config", str(EXAMPLE), "-k", "6", "-o", str(site), "--no-cache"])
    assert status == 0
    page = (site / "methodology.html").read_text()
    assert "this site uses k = 6" in page


# ------------------------------------------------ item 9: tracebacks instead of a located error


def errors_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The error lines of a command that must fail with exit status 2, no traceback."""
    status, _ = run(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("reportgen: error: ")]
    assert lines, err
    return lines


@pytest.mark.parametrize(
    ("level", "message"),
    [("0.9999999999999999", "too close to 1"), ("1.0e-300", "too close to 0")],
)
def test_item9_confidence_too_close_to_0_or_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], level: str, message: str
) -> None:
    assert message in errors_of(["estimate", "--suite", "3/5", "--confidence", level], capsys)[0]
    config = tmp_path / "reportgen.yaml"
    config.write_text(f"confidence: {level}\nresult_sets: [r.jsonl]\n")
    (line,) = errors_of(["summary", "--config", str(config)], capsys)
    assert f"{config}: confidence: " in line and message in line


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("runs.jsonl", '{"task": "\\ud800", "passed": true}\n', "runs.jsonl:1: task id"),
        ("tau.json", '[{"task_id": "\\ud800", "trial": 0, "reward": 1}]', "tau.json: [0]: task id"),
        ("suite.yaml", 'tasks:\n  - {id: "\\ud800", successes: 1, runs: 2}\n', "tasks[0]: task id"),
        ("model.jsonl", '{"task": "a", "model": "m\\udfff", "passed": true}\n', ":1: model"),
    ],
)
def test_item9_lone_surrogates_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, where: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    (line,) = errors_of(["summary", str(path)], capsys)
    assert where in line and "lone surrogate" in line


def test_item9_nul_in_a_task_id_or_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a\\u0000b", "passed": true}\n{"task": "c", "passed": true}\n')
    site = tmp_path / "site"
    (line,) = errors_of(["build", str(runs), "-o", str(site), "--no-cache"], capsys)
    assert "runs.jsonl:1: task id 'a\\x00b' holds U+0000, a control character" in line
    assert not site.exists()
    runs.write_text('{"task": "a", "passed": true}\n')
    history = ["--history", str(tmp_path / "history.jsonl")]
    (line,) = errors_of(["build", str(runs), "-o", str(site), *history, "--label", "a\0b"], capsys)
    assert line.startswith("reportgen: error: --label: 'a\\x00b' holds U+0000")
    config = tmp_path / "reportgen.yaml"
    config.write_text('label: "a\\0b"\nresult_sets: [runs.jsonl]\n')
    (line,) = errors_of(["build", "--config", str(config)], capsys)
    assert f"{config}: label: 'a\\x00b' holds U+0000" in line


def test_item9_nul_in_a_rebuild_keeps_serve_running(tmp_path: Path) -> None:
    from reportgen.config import Config
    from reportgen.readers import Source
    from reportgen.serve import PreviewServer

    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n')
    config = Config(output=tmp_path / "site", result_sets=[Source(runs)])
    log = io.StringIO()
    preview = PreviewServer(lambda: config, 0, log)
    preview.start()
    try:
        before = (tmp_path / "site" / "report.json").read_bytes()
        runs.write_text('{"task": "a\\u0000", "passed": true, "run": 1}\n')
        assert preview.check_once()
        assert "holds U+0000" in log.getvalue()
        assert (tmp_path / "site" / "report.json").read_bytes() == before
    finally:
        preview.stop()


# ------------------------------------------------ item 10: silently wrong


def test_item10_file_name_with_a_newline_stays_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "we\nird"
    folder.mkdir()
    (line,) = errors_of(["summary", str(folder / "runs.jsonl")], capsys)
    assert line.endswith("we\\nird/runs.jsonl: no such file")
    (folder / "runs.jsonl").write_text('{"task": "a", "passed": true}\n')
    assert run(["build", str(folder / "runs.jsonl"), "-o", str(tmp_path / "site")])[0] == 0
    notes = capsys.readouterr().err.splitlines()
    assert notes[0].endswith("we\\nird/runs.jsonl (jsonl, detected)")


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("name", "argv", "text"),
    [
        ("runs.jsonl", [], '{"task": ' + _deep(100_000) + ', "passed": true}\n'),
        ("tau.json", ["--input-format", "tau-bench"], _deep(100_000)),
        ("tau2.json", ["--input-format", "tau2-bench"], '{"simulations": ' + _deep(100_000) + "}"),
        ("log.json", ["--input-format", "inspect"], '{"eval": ' + _deep(100_000) + "}"),
        ("suite.yaml", [], "tasks: " + _deep(100_000)),
    ],
)
def test_item9_100000_deep_json_or_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, argv: list[str], text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    (line,) = errors_of(["summary", str(path), *argv], capsys)
    # JSON says "nested too deeply"; YAML stops at its nesting limit (limits.MAX_DEPTH) first.
    assert str(path) in line and re.search("nested (too deeply|deeper than)", line)


def test_item9_100000_deep_config_history_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "reportgen.yaml"
    config.write_text("result_sets: " + _deep(100_000))
    message = errors_of(["summary", "--config", str(config)], capsys)[0]
    assert re.search("nested (too deeply|deeper than)", message)
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n')
    history = tmp_path / "history.jsonl"
    history.write_text('{"schema_version": 1, "result_sets": ' + _deep(100_000) + "}\n")
    argv = ["build", str(runs), "-o", str(tmp_path / "site"), "--history", str(history)]
    assert f"{history}:1: " in errors_of(argv, capsys)[0]
    report = tmp_path / "report.json"
    report.write_text(_deep(100_000))
    (line,) = errors_of(["check", str(report), "--min-reliability", "0.5"], capsys)
    assert str(report) in line and "nested too deeply" in line


@pytest.mark.parametrize("header", [[1, 2], "a string", 5])
def test_item9_eval_header_json_that_is_not_an_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: object
) -> None:
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(log, "w") as archive:
        archive.writestr("header.json", json.dumps(header))
        sample = {"id": 1, "epoch": 1, "scores": {"s": {"value": "C"}}}
        archive.writestr("samples/1_epoch_1.json", json.dumps(sample))
    (line,) = errors_of(["summary", str(log)], capsys)
    assert line.endswith(f"{log}: header.json: expected an object with the eval's header")


BIG = str(10**20)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["estimate", "--successes", "1", "--runs", BIG], "--runs: must be at most 1,000,000,000"),
        (["estimate", "--suite", f"1/{BIG}"], "has more than 1,000,000,000 runs"),
        (["estimate", "--suite", "1/5", "-k", BIG], "-k: must be at most 1,000,000"),
        (["estimate", "--suite", "1/5", "-k", "1e20"], "-k: '1e20' is not a whole number"),
        (["plan", "--target-halfwidth", "0.1", "--tasks", BIG], "--tasks: must be at most"),
    ],
)
def test_item9_integers_beyond_int64_on_the_command_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert message in errors_of(argv, capsys)[0]


def test_item9_integers_beyond_int64_in_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"tasks:\n  - {{id: a, successes: 1, runs: {10**30}}}\n")
    (line,) = errors_of(["summary", str(suite)], capsys)
    assert line.endswith(f"{suite}: tasks[0].runs: must be at most 1,000,000,000, got {10**30}")
    suite.write_text("tasks:\n  - {id: a, successes: 1, runs: " + "9" * 5000 + "}\n")
    (line,) = errors_of(["summary", str(suite)], capsys)
    assert f"{suite}: not valid YAML: Exceeds the limit" in line
    config = tmp_path / "reportgen.yaml"
    config.write_text(f"k: {BIG}\nresult_sets: [suite.yaml]\n")
    (line,) = errors_of(["summary", "--config", str(config)], capsys)
    assert line.endswith(f"{config}: k: must be at most 1,000,000, got {BIG}")
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n')
    history = tmp_path / "history.jsonl"
    entry = {"schema_version": 1, "label": "x", "result_sets": [{"suite": "runs", "model": ""}]}
    entry["result_sets"][0].update(name="runs", tasks={"a": [1, 10**20]}, reliability_at_k={})
    history.write_text(json.dumps(entry) + "\n")
    argv = ["build", str(runs), "-o", str(tmp_path / "site"), "--history", str(history)]
    (line,) = errors_of(argv, capsys)
    assert f"{history}:1: result_sets[0].tasks['a']: expected [successes, runs]" in line


@pytest.mark.parametrize(
    "value",
    ['!!timestamp "x"', "2020-13-45 10:00:00", '!!float "abc"', '!!int "0x"'],
)
def test_item9_malformed_yaml_tags_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"tasks:\n  - {{id: {value}, successes: 1, runs: 2}}\n")
    (line,) = errors_of(["summary", str(suite)], capsys)
    assert f"{suite}: not valid YAML: " in line


@pytest.fixture(scope="module")
def small_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("small")
    runs = folder / "runs.jsonl"
    lines = [json.dumps({"task": f"t{i % 3}", "passed": i % 2 == 0}) for i in range(12)]
    runs.write_text("\n".join(lines) + "\n")
    assert run(["build", str(runs), "-o", str(folder / "site"), "--no-cache"])[0] == 0
    return folder / "site"


def _broken(site: Path, tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    doc = json.loads((site / "report.json").read_text())
    change(doc)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc))
    return path


def _set(doc: dict[str, Any]) -> dict[str, Any]:
    first: dict[str, Any] = doc["result_sets"][0]
    return first


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: _set(d)["reliability_at_k"]["plugin"].update(estimate="abc"),
            'result_sets[0].reliability_at_k.plugin.estimate: expected a number or null, got "abc"',
        ),
        (lambda d: d.pop("k"), "k: expected a whole number from 1 to 1,000,000, got null"),
        (lambda d: d.update(k=True), "k: expected a whole number from 1 to 1,000,000, got true"),
        (lambda d: _set(d).pop("tasks"), "result_sets[0].tasks: expected a non-empty list"),
        (
            lambda d: _set(d)["tasks"][0].update(successes=99),
            "result_sets[0].tasks[0].successes: expected a whole number from 0 to runs (4)",
        ),
        (lambda d: d.update(confidence="high"), "confidence: expected a number between 0 and 1"),
    ],
    ids=["estimate-abc", "no-k", "k-true", "no-tasks", "successes>runs", "confidence"],
)
def test_item9_malformed_report_json_in_check_and_compare(
    small_site: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, Any]], None],
    message: str,
) -> None:
    bad = _broken(small_site, tmp_path, change)
    commands = [["compare", str(bad), str(small_site)]]
    if "tasks" not in message:  # check reads no per-task counts
        commands.append(["check", str(bad), "--min-reliability", "0.5"])
        commands.append(["check", str(small_site), "--baseline", str(bad), "--max-drop", "0.1"])
    for argv in commands:
        (line,) = errors_of(argv, capsys)
        assert line.endswith(f"{bad}: {message}") or f"{bad}: {message}" in line, line


def test_report_json_with_one_set_id_twice_is_refused(
    small_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _broken(small_site, tmp_path, lambda d: d["result_sets"].append(_set(d)))
    set_id = _set(json.loads(bad.read_text()))["id"]
    said = f"{bad}: result_sets[1].id: {set_id!r} is also the id of result_sets[0]"
    for argv in (
        ["compare", str(bad), str(small_site)],
        ["check", str(bad), "--min-reliability", "0.5"],
    ):
        (line,) = errors_of(argv, capsys)
        assert said in line, line


def test_item9_nan_k_in_report_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    report.write_text('{"schema_version": 1, "k": NaN, "confidence": 0.95, "result_sets": []}')
    (line,) = errors_of(["check", str(report), "--min-reliability", "0.5"], capsys)
    assert "reliability@nan" not in line and "NaN is not valid JSON" in line


# ------------------------------------------------ item 9: the system says no


def test_item9_output_under_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n')
    (line,) = errors_of(["build", str(runs), "-o", "/dev/null/x", "--no-cache"], capsys)
    # Refused before any page is made (it was "cannot write the site" once they were).
    assert line == "reportgen: error: --output: /dev/null/x: /dev/null is not a folder"


def test_item9_dangling_symlink_as_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n')
    link = tmp_path / "site"
    link.symlink_to(tmp_path / "nowhere")
    (line,) = errors_of(["build", str(runs), "-o", str(link), "--no-cache"], capsys)
    # --force's safety checks (build_safety) refuse a dangling symlinked output up front.
    assert f"--output: {link}" in line and "does not exist" in line
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.jsonl", "site"]


def _previous_site(tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n')
    site = tmp_path / "site"
    assert run(["build", str(runs), "-o", str(site), "--no-cache"])[0] == 0
    runs.write_text('{"task": "a", "passed": false}\n{"task": "b", "passed": true}\n')
    files = {str(p): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    return runs, site, files


def test_item9_disk_full_leaves_previous_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, site, before = _previous_site(tmp_path)
    from reportgen.website import write

    write_file = write._write_file
    written: list[str] = []

    def fills_up(path: str, data: bytes) -> os.stat_result:
        if len(written) == 3:  # a few files fit, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(path)
        return write_file(path, data)

    monkeypatch.setattr(write, "_write_file", fills_up)
    (line,) = errors_of(["build", str(runs), "-o", str(site), "--no-cache"], capsys)
    assert line.endswith(f"--output: {site}: cannot write the site: No space left on device")
    assert {str(p): p.read_bytes() for p in site.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.jsonl", "site"]


def test_item9_two_builds_into_one_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, site, before = _previous_site(tmp_path)
    from reportgen.website import write

    def other_build_won(staging: Path, output: Path) -> None:
        # What a rename sees when another build swapped its folder in first.
        raise OSError(
            errno.ENOTEMPTY, os.strerror(errno.ENOTEMPTY), str(staging), None, str(output)
        )

    monkeypatch.setattr(write, "_swap", other_build_won)
    (line,) = errors_of(["build", str(runs), "-o", str(site), "--no-cache"], capsys)
    assert f"--output: {site}: cannot write the site: Directory not empty" in line
    assert {str(p): p.read_bytes() for p in site.rglob("*") if p.is_file()} == before


def test_item9_busy_serve_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n')
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        argv = ["serve", str(runs), "-o", str(tmp_path / "site"), "--port", str(port)]
        (line,) = errors_of(argv, capsys)
    assert f"--port: cannot serve on 127.0.0.1:{port}: Address already in use" in line
    assert not (tmp_path / "site").exists()


def test_item9_serve_get_nul(tmp_path: Path) -> None:
    from reportgen.config import Config
    from reportgen.readers import Source
    from reportgen.serve import PreviewServer

    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n')
    config = Config(output=tmp_path / "site", result_sets=[Source(runs)])
    preview = PreviewServer(lambda: config, 0, io.StringIO())
    preview.start()
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            with pytest.raises(urllib.error.HTTPError) as failure:
                urllib.request.urlopen(preview.url + "%00", timeout=10)
            # A name longer than the file system allows (ENAMETOOLONG), which the
            # fuzzer found dropping the connection with a traceback.
            with pytest.raises(urllib.error.HTTPError) as too_long:
                urllib.request.urlopen(preview.url + "a" * 5000, timeout=10)
            with urllib.request.urlopen(preview.url, timeout=10) as page:
                assert page.status == 200
    finally:
        preview.stop()
    assert failure.value.code == 404 and too_long.value.code == 404
    assert "Traceback" not in errors.getvalue()


def _interrupted(
    argv: list[str],
    wait_for: Path | None,
    delay: float,
    env: dict[str, str],
    sent: signal.Signals = signal.SIGINT,
) -> str:
    """Start a command in its own process group, Ctrl-C the group (or send it `sent`),
    return its stderr."""
    process = subprocess.Popen(
        argv, stderr=subprocess.PIPE, start_new_session=True, env={**os.environ, **env}
    )
    deadline = time.monotonic() + 60
    while wait_for is not None and not wait_for.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(delay)
    os.killpg(process.pid, sent)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    return err.decode()


#: The console script, with the import of scipy held for a while: a Ctrl-C sent once
#: the marker file exists lands among the command line's imports on any machine (a
#: fixed delay missed them where `estimate` finished within it).
_SLOW_START = """
import sys, time
from pathlib import Path
marker = Path(sys.argv[1])
class HoldScipy:
    def find_spec(self, name, path=None, target=None):
        if name == "scipy":
            sys.meta_path.remove(self)
            marker.touch()
            time.sleep(30)
        return None
sys.meta_path.insert(0, HoldScipy())
sys.argv = ["reportgen", *sys.argv[2:]]
from reportgen.__main__ import run
run()
"""


@pytest.mark.slow
def test_item9_ctrl_c_during_start_up(tmp_path: Path) -> None:
    marker = tmp_path / "importing"
    argv = [sys.executable, "-c", _SLOW_START, str(marker), "estimate", "--suite", "1/2"]
    err = _interrupted(argv, marker, 0.0, {})
    assert "Traceback" not in err and err.strip() == "reportgen: interrupted"


_SLOW_RENDER = """
import sys, time
from pathlib import Path
from reportgen.website import render
from reportgen.cli import main
from reportgen.errors import UserError
render.PARALLEL_MIN_PAGES = 2
task_page = render.Renderer.task_page
def slow(self, *args):
    Path(sys.argv[1]).touch()  # the workers have started
    time.sleep(0.2)
    return task_page(self, *args)
render.Renderer.task_page = slow
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.slow
def test_item9_ctrl_c_in_parallel_page_rendering(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(f'{{"task": "t{i}", "passed": true}}\n' for i in range(40)))
    started = tmp_path / "started"
    argv = [sys.executable, "-c", _SLOW_RENDER, str(started), "build", str(runs)]
    argv += ["-o", str(tmp_path / "site"), "--no-cache"]
    err = _interrupted(argv, started, 0.3, {})
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip().endswith("reportgen: interrupted")
    assert not (tmp_path / "site").exists()


@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGHUP])
def test_serve_stopped_by_kill_or_a_closed_terminal_cleans_up(
    tmp_path: Path, sent: signal.Signals
) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(f'{{"task": "t{i}", "passed": true}}\n' for i in range(40)))
    started = tmp_path / "started"
    argv = [sys.executable, "-c", _SLOW_RENDER, str(started), "serve", str(runs)]
    argv += ["-o", str(tmp_path / "site"), "--port", "0"]
    err = _interrupted(argv, started, 0.3, {}, sent)
    assert "Traceback" not in err and err.strip().endswith("reportgen: interrupted")
    # No half-staged site beside the output (the cache of parsed inputs may stay).
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".reportgen-cache",
        "runs.jsonl",
        "started",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGHUP])
def test_build_killed_leaves_no_worker_behind(tmp_path: Path, sent: signal.Signals) -> None:
    # `build` does not catch these: it ends, and its page workers must end with it.
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(f'{{"task": "t{i}", "passed": true}}\n' for i in range(40)))
    started = tmp_path / "started"
    argv = [sys.executable, "-c", _SLOW_RENDER, str(started), "build", str(runs)]
    argv += ["-o", str(tmp_path / "site"), "--no-cache"]
    process = subprocess.Popen(argv, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, sent)
    process.wait(timeout=60)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)  # is any process of the group left?
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)
    pytest.fail("page workers outlived the build they belonged to")


# ------------------------------------------------ item 10: silently wrong, now said


def test_item10_duplicate_run_ids_beside_a_run_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text(
        '{"task": "a", "passed": true, "run": 1}\n'
        '{"task": "a", "passed": true}\n'
        '{"task": "a", "passed": false, "run": 1}\n'
    )
    (line,) = errors_of(["summary", str(runs)], capsys)
    assert line.endswith(f"{runs}:3: run 1 of task 'a' appears twice (first at {runs}:1)")


@pytest.mark.parametrize("reward", [2, -1, 1.5])
def test_item10_tau_bench_reward_outside_0_to_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reward: float
) -> None:
    results = tmp_path / "tau.json"
    records = [
        {"task_id": 1, "trial": 0, "reward": 1},
        {"task_id": 1, "trial": 1, "reward": reward},
    ]
    results.write_text(json.dumps(records))
    (line,) = errors_of(["summary", str(results), "--input-format", "tau-bench"], capsys)
    assert line.endswith(f"{results}: [1].reward: expected a number from 0 to 1, got {reward}")


def test_item10_tau_bench_partial_reward_still_a_failure(tmp_path: Path) -> None:
    results = tmp_path / "tau.json"
    records = [{"task_id": 1, "trial": t, "reward": r} for t, r in enumerate([1, 0.5, 0, 1])]
    results.write_text(json.dumps(records))
    status, out = run(["summary", str(results), "--input-format", "tau-bench", "--format", "json"])
    assert status == 0
    task = json.loads(out)["result_sets"][0]["tasks"][0]
    assert (task["successes"], task["runs"]) == (2, 4)


def test_item10_duplicate_reward_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "tau.json"
    results.write_text('[{"task_id": 1, "trial": 0, "reward": 1, "reward": 0}]')
    (line,) = errors_of(["summary", str(results), "--input-format", "tau-bench"], capsys)
    assert line.endswith(f"{results}: not valid JSON: key 'reward' appears twice in one object")


def test_item10_truncated_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = (FIXTURES / "inspect" / "mini_zstd.eval").read_bytes()
    log = tmp_path / "cut.eval"
    log.write_bytes(whole[: len(whole) // 2])
    (line,) = errors_of(["summary", str(log)], capsys)
    assert line.endswith(
        f"{log}: damaged zip archive: its end is missing (was the file cut short?)"
    )


def test_item10_device_and_fifo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for device in ("/dev/null", "/dev/zero"):
        (line,) = errors_of(["summary", device, "--input-format", "jsonl"], capsys)
        assert line.endswith(
            f"{device}: is a device, not a regular file; save its contents to a file first"
        )
    fifo = tmp_path / "runs.jsonl"
    os.mkfifo(fifo)
    (line,) = errors_of(["summary", str(fifo)], capsys)
    assert line.endswith(
        f"{fifo}: is a named pipe (FIFO), not a regular file; save its contents to a file first"
    )
    config = tmp_path / "reportgen.yaml"
    os.mkfifo(config)
    (line,) = errors_of(["summary", "--config", str(config)], capsys)
    assert f"{config}: is a named pipe (FIFO)" in line
    # A folder where check expects report.json is a folder, not "a device".
    (tmp_path / "site" / "report.json").mkdir(parents=True)
    (line,) = errors_of(["check", str(tmp_path / "site"), "--min-reliability", "0.5"], capsys)
    assert line.endswith(f"{tmp_path / 'site' / 'report.json'}: is a folder, not a file")


def test_fuzz_finds_stay_fixed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Cases make fuzz found: a report.json with no result sets in plan, an .eval whose
    zip version zipfile refuses, a zip member name holding a line separator."""
    report = tmp_path / "report.json"
    report.write_text('{"schema_version": 1, "k": 3, "confidence": 0.95, "result_sets": []}')
    argv = ["plan", "--target-halfwidth", "0.1", "--report", str(report)]
    assert errors_of(argv, capsys)[0].endswith(f"--report: {report} holds no result sets")
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(log, "w") as archive:
        archive.writestr("header.json", "{}")
        archive.writestr("samples/1\x1d_epoch_1.json", "{}")
    data = bytearray(log.read_bytes())
    central = data.find(b"PK\x01\x02")
    data[central + 6] = 93  # "needs zip version 9.3"
    log.write_bytes(bytes(data))
    (line,) = errors_of(["summary", str(log)], capsys)
    assert line.endswith("zip file version 9.3")
    assert len(UserError(f"{log}: samples/1\x1d_epoch_1.json: bad").problems[0].splitlines()) == 1
