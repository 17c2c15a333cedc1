"""Hostile inputs, round two (issue 38): each case an audit found broken, kept fixed."""

from __future__ import annotations

import io
import itertools
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reportgen.cli import main

RESULTS = Path(__file__).resolve().parent.parent / "example" / "results" / "agent-alpha.jsonl"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    status = main(argv, out=out)
    return status, out.getvalue(), capsys.readouterr().err


# ------------------------------------------------------------ 1: sandboxed themes

#: Ways out of a template into Python: each would run `touch` as the build's user.
ESCAPES = [
    "{{ cycler.__init__.__globals__.os.popen('touch PWNED').read() }}",
    "{{ lipsum.__globals__['os'].system('touch PWNED') }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ joiner.__init__.__globals__.__builtins__['__import__']('os').system('touch PWNED') }}",
    "{{ self._TemplateReference__context }}",
]


@pytest.mark.parametrize("escape", ESCAPES)
def test_a_theme_template_cannot_reach_python(
    escape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    marker = tmp_path / "PWNED"
    body = escape.replace("PWNED", str(marker))
    (templates / "index.html").write_text(
        '{% extends "base.html" %}\n{% block main %}\n' + body + "\n{% endblock %}\n"
    )
    site = tmp_path / "site"
    argv = ["build", str(RESULTS), "--templates", str(templates), "-o", str(site)]
    status, _, err = run(argv, capsys)
    assert status == 2 and not marker.exists() and not site.exists()
    assert f"{templates / 'index.html'}:3: template" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("escape", ESCAPES)
def test_a_content_page_cannot_reach_python(
    escape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = tmp_path / "content"
    content.mkdir()
    marker = tmp_path / "PWNED"
    (content / "extra.md").write_text(
        "---\ntitle: Extra\n---\nBefore.\n" + escape.replace("PWNED", str(marker)) + "\n"
    )
    site = tmp_path / "site"
    argv = ["build", str(RESULTS), "--content", str(content), "-o", str(site)]
    status, _, err = run(argv, capsys)
    assert status == 2 and not marker.exists() and not site.exists()
    assert f"{content / 'extra.md'}:5: template" in err


def test_the_configs_theme_folders_are_sandboxed_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped pull-request workflow builds the pull request's own config."""
    (tmp_path / "theme").mkdir()
    marker = tmp_path / "PWNED"
    (tmp_path / "theme" / "set.html").write_text(
        "{{ cycler.__init__.__globals__.os.popen('touch " + str(marker) + "').read() }}\n"
    )
    config = tmp_path / "reportgen.yaml"
    config.write_text(f"templates: theme\nresult_sets:\n  - path: {RESULTS}\n")
    status, _, err = run(["build", "--config", str(config), "-o", str(tmp_path / "s")], capsys)
    assert status == 2 and not marker.exists()
    assert "set.html:1: template refused" in err


def test_a_theme_still_reads_every_value_and_helper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "set.html").write_text(
        '{% extends "base.html" %}{% block main %}'
        "<p id=own>{{ s.result_set.name }}: {{ s.lead.estimate | f3 }} "
        "{{ interval(s.lead.low, s.lead.high) }} {{ s.headline.reason | length > 0 }} "
        "{% for t in s.tasks[:2] %}{{ t.id }};{% endfor %} {{ '%.2f' | format(0.5) }}</p>"
        "{% endblock %}"
    )
    site = tmp_path / "site"
    argv = ["build", str(RESULTS), "--templates", str(templates), "-o", str(site)]
    status, _, err = run(argv, capsys)
    assert status == 0, err
    doc = json.loads((site / "report.json").read_text())
    (rs,) = doc["result_sets"]
    page = (site / rs["page"]).read_text()
    lead = rs["reliability_at_k"][rs["reliability_at_k"]["headline"]]
    assert f"{rs['name']}: {lead['estimate']:.3f} [{lead['low']:.3f}, {lead['high']:.3f}]" in (page)
    assert "True" in page and "0.50</p>" in page
    assert os.path.exists(site / "index.html")


# ------------------------------------------------ 4: nothing unreadable skipped silently


def _as_nobody(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """The command line run by an unprivileged user: root reads every file whatever its
    permissions, so the case can only be seen from another account."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to run as an unprivileged user")
    command = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run(
        [*command, sys.executable, "-c", "import reportgen"],
        capture_output=True,
        timeout=60,
        cwd="/",
    )
    if probe.returncode != 0:  # a checkout in a folder only root may enter
        pytest.skip("the unprivileged user cannot run this checkout's Python")
    return subprocess.run(
        [*command, sys.executable, "-m", "reportgen", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
        env={**os.environ, "HOME": "/nonexistent"},
    )


@pytest.fixture
def two_folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of two runs folders, each with the same three tasks: six runs in all."""
    base = tmp_path_factory.mktemp("perm")
    base.chmod(0o755)
    for name in ("a", "b"):
        (base / name).mkdir(mode=0o755)
        lines = [json.dumps({"task": f"t{i}", "passed": i > 0}) for i in range(3)]
        (base / name / "runs.jsonl").write_text("\n".join(lines) + "\n")
        (base / name / "runs.jsonl").chmod(0o644)
    for parent in base.parents:  # pytest's own temporary folders are private to root
        if parent == Path("/"):
            break
        if not os.access(parent, os.X_OK, effective_ids=False) or parent.stat().st_uid == 0:
            parent.chmod(parent.stat().st_mode | 0o011)
    return base


@pytest.mark.parametrize("unreadable", ["b", "b/runs.jsonl"])
def test_an_unreadable_entry_in_an_input_folder_is_an_error(
    two_folders: Path, unreadable: str
) -> None:
    (two_folders / unreadable).chmod(0)
    try:
        done = _as_nobody(["summary", str(two_folders), "--format", "json"])
        assert done.returncode == 2 and done.stdout == ""
        assert f"{two_folders / unreadable}: cannot be read (Permission denied)" in done.stderr
        assert "Traceback" not in done.stderr
        # With --skip-unreadable the rest is read, and the entry is listed as skipped.
        done = _as_nobody(["summary", str(two_folders), "--skip-unreadable", "--format", "json"])
        assert done.returncode == 0, done.stderr
        (rs,) = json.loads(done.stdout)["result_sets"]
        assert sum(t["runs"] for t in rs["tasks"]) == 3
        assert f"skipped {two_folders / unreadable}: cannot be read" in done.stderr
    finally:
        (two_folders / unreadable).chmod(0o755)


# ------------------------------------------------ 5: links out of an input folder, secrets


def test_a_link_out_of_an_input_folder_is_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "git-credentials"
    secret.write_text("https://alice:ghp_SECRETTOKEN123@github.com\n")
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "own.jsonl").write_text('{"task": "t", "passed": true}\n')
    (folder / "creds.csv").symlink_to(secret)
    status, _, err = run(["summary", str(folder)], capsys)
    assert status == 2 and "SECRET" not in err
    assert f"{folder / 'creds.csv'}: a symbolic link out of {folder}, not followed" in err
    status, text, err = run(["summary", str(folder), "--skip-unreadable"], capsys)
    assert status == 0 and "SECRET" not in err + text
    assert f"skipped {folder / 'creds.csv'}: a symbolic link out of" in err
    # A link to a file inside the folder is followed as before.
    (folder / "creds.csv").unlink()
    (folder / ".kept.jsonl").write_text('{"task": "u", "passed": false}\n')  # hidden: not walked
    (folder / "more.jsonl").symlink_to(folder / ".kept.jsonl")
    status, text, err = run(["summary", str(folder), "--format", "json"], capsys)
    assert status == 0, err
    (rs,) = json.loads(text)["result_sets"]
    assert sorted(t["id"] for t in rs["tasks"]) == ["t", "u"]


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_a_link_to_a_file_the_folder_holds_is_read_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], link: str
) -> None:
    """latest.xml -> run-3.xml names the same runs: counted once, whichever name sorts
    first (the link once added a fourth run of three)."""
    folder = tmp_path / "junit"
    folder.mkdir()
    for run_number, passed in ((1, True), (2, False), (3, True)):
        failure = "" if passed else "<failure message='no'/>"
        (folder / f"run-{run_number}.xml").write_text(
            f"<testsuite name='s'><testcase classname='c' name='t'>{failure}</testcase>"
            "</testsuite>\n"
        )
    for name in ("a-latest.xml", "z-latest.xml"):
        if link == "symbolic":
            (folder / name).symlink_to("run-3.xml")
        else:
            os.link(folder / "run-3.xml", folder / name)
    status, text, err = run(["summary", str(folder), "--format", "json"], capsys)
    assert status == 0, err
    (rs,) = json.loads(text)["result_sets"]
    assert [(t["id"], t["successes"], t["runs"]) for t in rs["tasks"]] == [("c::t", 2, 3)]


def test_an_error_quotes_a_files_header_only_cut_short(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file given by mistake (a credential) is quoted only as column names, cut short."""
    table = tmp_path / "creds.csv"
    table.write_text("https://alice:ghp_SECRETTOKEN123@github.com\n")
    status, _, err = run(["summary", str(table)], capsys)
    assert status == 2 and "ghp_SECRETTOKEN123" not in err
    assert "Its columns are 'https://alice:ghp_SECRE…'" in err
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(40)) + "\n" + ",".join("1" * 40) + "\n")
    status, _, err = run(["summary", str(wide)], capsys)
    assert status == 2 and "'c11' and 28 more" in err and "'c12'" not in err


# ------------------------------------------------ 3: every encoding an XML file can declare

JUNIT = (
    '<?xml version="1.0" encoding="{encoding}"?>\n<testsuite name="s">'
    '<testcase classname="c" name="テスト"/><testcase classname="c" name="二">'
    "<failure/></testcase></testsuite>\n"
)


@pytest.mark.parametrize(
    "encoding", ["shift_jis", "gbk", "big5", "euc_jp", "cp932", "utf-7", "utf-32", "utf-16"]
)
def test_junit_in_any_encoding_python_knows_is_read(
    encoding: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "junit.xml"
    report.write_bytes(JUNIT.format(encoding=encoding).encode(encoding))
    status, text, err = run(["summary", str(report), "--format", "json"], capsys)
    assert status == 0, err
    (rs,) = json.loads(text)["result_sets"]
    assert {t["id"]: t["successes"] for t in rs["tasks"]} == {"c::テスト": 1, "c::二": 0}


@pytest.mark.parametrize(
    ("declared", "body", "said"),
    [
        ("klingon", b"<testsuite/>", ":1: cannot read the XML's encoding: unknown encoding"),
        ("shift_jis", b'<testsuite name="\x82"/>', ":1: cannot read the XML's encoding: "),
    ],
)
def test_junit_in_an_encoding_that_cannot_be_read_is_located(
    declared: str, body: bytes, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "junit.xml"
    report.write_bytes(f'<?xml version="1.0" encoding="{declared}"?>\n'.encode() + body)
    status, _, err = run(["summary", str(report)], capsys)
    assert status == 2 and f"{report}{said}" in err and "Traceback" not in err


# ------------------------------------------------ 10: serve and clients that go away


def test_serve_says_nothing_of_a_client_that_resets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A client that asks for a large file and resets the connection, and one that sends
    half a request and goes: no traceback on the console, and the server goes on."""
    from http.server import SimpleHTTPRequestHandler

    from reportgen.serve import PreviewHTTPServer

    (tmp_path / "big.bin").write_bytes(os.urandom(8 * 1024 * 1024))

    class Files(SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = PreviewHTTPServer(("127.0.0.1", 0), Files)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        for request in (b"GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", b"GET /bi"):
            client = socket.create_connection(("127.0.0.1", port))
            client.sendall(request)
            if request.endswith(b"\r\n\r\n"):
                client.recv(1024)  # the response has begun
            # Closing with unread data (and SO_LINGER 0) sends a reset.
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
        time.sleep(0.5)
        with socket.create_connection(("127.0.0.1", port)) as client:  # still serving
            client.sendall(b"GET /big.bin HTTP/1.0\r\n\r\n")
            assert client.recv(12).startswith(b"HTTP/1.0 200")
    finally:
        server.shutdown()
        server.server_close()
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Error" not in err, err


# ------------------------------------------------ the smaller items


def test_a_hash_in_a_file_name_is_part_of_the_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`PATH#ID` picks a set of a site; a path that exists with its `#` is taken whole."""
    results = tmp_path / "res#1.jsonl"
    results.write_text(RESULTS.read_text())
    status, text, err = run(["compare", str(results), str(RESULTS)], capsys)
    assert status == 0, err
    assert "40 shared tasks" in text
    site = tmp_path / "si#te"
    assert run(["build", str(results), "-o", str(site)], capsys)[0] == 0
    (rs,) = json.loads((site / "report.json").read_text())["result_sets"]
    status, text, err = run(["compare", f"{site}#{rs['id']}", str(RESULTS)], capsys)
    assert status == 0 and "40 shared tasks" in text, err


def test_one_column_for_two_fields_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "t.csv"
    table.write_text("task,passed\na,1\n")
    status, _, err = run(["summary", str(table), "--columns", "task=passed,passed=passed"], capsys)
    assert status == 2 and "column 'passed' is given for both task and passed" in err
    config = tmp_path / "reportgen.yaml"
    config.write_text(
        f"result_sets:\n  - path: {table}\n    columns: {{task: passed, passed: passed}}\n"
    )
    status, _, err = run(["summary", "--config", str(config)], capsys)
    assert status == 2 and "columns.passed: column 'passed' is already given for task" in err


# ------------------------------------------------------------ 7: long histories


def _history_of(path: Path, builds: int) -> None:
    """`builds` earlier builds of the suite below, each with its own counts."""
    with path.open("w") as handle:
        for i in range(builds):
            tasks = {t: [(i * (j + 3)) % 11, 10] for j, t in enumerate("abc")}
            entry = {"schema_version": 1, "label": f"b{i}", "k": 3, "confidence": 0.95}
            entry["result_sets"] = [
                {
                    "suite": "s",
                    "model": "m",
                    "name": "m · s",
                    "tasks": tasks,
                    "reliability_at_k": {},
                }
            ]
            handle.write(json.dumps(entry) + "\n")


SMALL_SUITE = """suite: s
model: m
tasks:
  - {id: a, successes: 7, runs: 10}
  - {id: b, successes: 10, runs: 10}
  - {id: c, successes: 3, runs: 10}
"""


def test_the_builds_a_long_trend_draws() -> None:
    from reportgen.website.chart import TREND_DRAWN, drawn_builds

    assert drawn_builds(5) == [0, 1, 2, 3, 4]
    for count in (TREND_DRAWN, TREND_DRAWN + 1, 1_500, 10_001):
        drawn = drawn_builds(count)
        assert len(drawn) == min(count, TREND_DRAWN) and drawn == sorted(set(drawn))
        assert drawn[0] == 0 and drawn[-1] == count - 1
        gaps = {b - a for a, b in itertools.pairwise(drawn)}
        assert max(gaps) - min(gaps) <= 1  # evenly spaced


@pytest.mark.slow
def test_a_history_of_ten_thousand_builds_is_drawn_and_tabled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 1,500 builds stopped the chart engine ("Maximum call stack size exceeded").
    suite = tmp_path / "suite.yaml"
    suite.write_text(SMALL_SUITE)
    history = tmp_path / "history.jsonl"
    _history_of(history, 10_000)
    site = tmp_path / "site"
    argv = ["build", str(suite), "--history", str(history), "--label", "now", "-o", str(site)]
    status, _, err = run(argv, capsys)
    assert status == 0, err
    page = (site / "sets" / "m-s" / "trend.html").read_text()
    rows = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert rows.count('<th scope="row">') == 10_001  # the table keeps every build
    assert "<svg" in page and "For 300 of the 10,001 builds, evenly spaced" in page
    assert page.index(">b0<") < page.index(">b9999<") < page.index(">now<")
    assert len((site / "history.jsonl").read_text().splitlines()) == 10_001


# ------------------------------------------------------------ 8: the chart engine's failures


def test_a_chart_engine_without_address_space_is_a_located_error(tmp_path: Path) -> None:
    # V8 reserves about 64 GiB of address space at start: under `ulimit -v` 32 GiB it
    # aborted, and the build printed a traceback.
    import resource

    site = tmp_path / "site"
    command = [sys.executable, "-m", "reportgen", "build", str(RESULTS), "-o", str(site)]
    first = subprocess.run(command, capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stderr
    before = (site / "index.html").read_bytes()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (32 * 2**30, 32 * 2**30))

    done = subprocess.run(
        [*command, "--no-cache"], capture_output=True, text=True, check=False, preexec_fn=limit
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert (
        "error: the chart engine (vl-convert) stopped: Fatal process out of memory" in done.stderr
    )
    assert "ulimit -v" in done.stderr and "the limit here is 32.0 GiB" in done.stderr
    assert (site / "index.html").read_bytes() == before  # the old site stands


def test_a_chart_the_engine_cannot_draw_names_its_page() -> None:
    from reportgen.errors import UserError
    from reportgen.website.chart import _send_all
    from reportgen.website.charts import Chart, SiteCharts

    good = {"mark": "point", "data": {"values": [{"x": 1}]}, "encoding": {"x": {"field": "x"}}}
    charts = SiteCharts(
        overview=[Chart("o", "Overview", "d", specs=[good])],
        by_set={"alpha": [Chart("f", "Forest", "d", specs=[{"mark": {"type": "nonsense"}}])]},
        by_comparison={},
        by_trend={},
    )
    with pytest.raises(UserError) as raised:
        _send_all(charts, None)()
    (problem,) = raised.value.problems
    assert problem.startswith("result set alpha: drawing the chart 'Forest' failed: ")


# ------------------------------------------------------------ 8: summary --format json streams


def _peak_mb(command: list[str], stdout: io.TextIOBase | int) -> tuple[int, float]:
    """Exit status and peak resident memory (MB) of a command, measured by a small
    wrapper process (test_input_limits._MEASURE), not by this one: a process forked
    from a large one (a pytest worker of 500 MB) counts that one's size as its peak."""
    from .test_input_limits import _MEASURE

    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    status, peak = done.stderr.strip().splitlines()[-1].split()
    return int(status), float(peak)


@pytest.mark.slow
def test_summary_json_of_many_tasks_is_written_as_it_is_made(tmp_path: Path) -> None:
    # 10^6 tasks: 5.4 GB (a list of a million dicts, one string of 543 MB, then a
    # copy of it on the way out); 200,000 tasks took 1,158 MB, now about 270.
    table = tmp_path / "many.csv"
    lines = ["suite,model,task,successes,runs"]
    lines += [f"s,m,t{i},{(i * 7) % 11},10" for i in range(200_000)]
    table.write_text("\n".join(lines) + "\n")
    out = tmp_path / "summary.json"
    command = [sys.executable, "-m", "reportgen", "summary", str(table), "--format", "json"]
    with out.open("w") as handle:
        status, peak = _peak_mb(command, handle.fileno())
    assert status == 0
    assert peak < 500, f"peak {peak:.0f} MB"
    doc = json.loads(out.read_text())
    assert len(doc["result_sets"][0]["tasks"]) == 200_000


def test_streamed_json_is_the_same_as_json_dumps(capsys: pytest.CaptureFixture[str]) -> None:
    from reportgen.readers import Source, load_sources
    from reportgen.report import build_report
    from reportgen.views import summary_json

    status, out, _ = run(["summary", str(RESULTS), "--format", "json"], capsys)
    assert status == 0
    report = build_report(load_sources([Source(RESULTS)]).result_sets, "", "", 3, 0.95)
    assert out == json.dumps(summary_json(report), indent=2) + "\n"


# ------------------------------------------------------------ smaller: a stop at the swap


@pytest.mark.parametrize("sent", ["SIGINT", "SIGTERM"])
def test_a_stop_during_the_swap_finishes_it_and_says_so(
    sent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ctrl-C there exited 130 with the new site in place; SIGTERM ended the process
    # before the old site, moved aside, was removed.
    import signal

    from reportgen.website import write

    site = tmp_path / "site"
    assert run(["build", str(RESULTS), "-o", str(site), "--label", "one"], capsys)[0] == 0
    real_swap = write._swap

    def stopped_swap(staging: Path, output: Path) -> Path | None:
        signal.raise_signal(getattr(signal, sent))
        return real_swap(staging, output)

    monkeypatch.setattr(write, "_swap", stopped_swap)
    before = signal.getsignal(signal.SIGTERM)
    argv = ["build", str(RESULTS), "-o", str(site), "--no-cache", "--title", "Two"]
    status, _, err = run(argv, capsys)
    assert status == 0, err
    assert f"reportgen: {sent} came as the new site was swapped in; it is complete" in err
    assert "<title>Two" in (site / "index.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".reportgen-cache") == ["site"]
    assert signal.getsignal(signal.SIGTERM) == before


# ------------------------------------------------------------ smaller: internal column names


def _table(path: Path, extra: str, bad: bool) -> Path:
    """task/passed runs with one more column named `extra`; row 4 damaged if `bad`."""
    rows = [("a", "1"), ("a", "0"), ("b", "1"), ("b", "x" if bad else "1")]
    text = f"task,passed,{extra}\n" + "".join(f"{t},{p},9\n" for t, p in rows)
    if path.suffix == ".csv":
        path.write_text(text)
        return path
    import duckdb

    source = path.with_suffix(".csv")
    source.write_text(text)
    scan = f"read_csv('{source}', all_varchar = true)"
    duckdb.connect().execute(f"COPY (SELECT * FROM {scan}) TO '{path}' (FORMAT parquet)")
    source.unlink()
    return path


@pytest.mark.parametrize("extra", ["__reportgen_row", "__REPORTGEN_ROW", "file_row_number"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_column_named_like_an_internal_one_is_data(
    extra: str, suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # __reportgen_row was read as the row number (an error named row 9, not 4), and
    # a Parquet file with a file_row_number column was refused.
    bad = _table(tmp_path / f"bad{suffix}", extra, bad=True)
    status, _, err = run(["summary", str(bad)], capsys)
    assert status == 2
    assert f"{bad}: row 4, column 'passed': 'x' is not true" in err
    good = _table(tmp_path / f"good{suffix}", extra, bad=False)
    status, out, err = run(["summary", str(good), "--format", "json", "-k", "1"], capsys)
    assert status == 0, err
    tasks = json.loads(out)["result_sets"][0]["tasks"]
    assert [(t["id"], t["successes"], t["runs"]) for t in tasks] == [("a", 1, 2), ("b", 2, 2)]


def test_a_counts_record_with_an_internal_field_name_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    counts = tmp_path / "counts.jsonl"
    counts.write_text(
        '{"task": "a", "successes": 1, "runs": 2, "__reportgen_row": 5}\n'
        '{"task": "b", "successes": 1, "runs": "x", "__reportgen_row": 5}\n'
    )
    status, _, err = run(["summary", str(counts)], capsys)
    assert status == 2 and "Traceback" not in err
    assert f"{counts}: line 2, column 'runs': expected a whole number" in err


# ------------------------------------------------------------ smaller: values in a history


HISTORY = Path(__file__).resolve().parent.parent / "example" / "history.jsonl"


@pytest.mark.parametrize(
    ("block", "key", "value", "said"),
    [
        ("plugin", "estimate", "NaN", "plugin.estimate: expected a number or null"),
        ("plugin", "low", 1e400, "plugin.low: expected a finite number or null"),
        ("unbiased", "df", "39", "unbiased.df: expected a whole number or null"),
        (None, "headline", "bootstrap", "headline: expected one of"),
    ],
)
def test_a_history_value_no_build_writes_is_refused_not_copied(
    block: str | None,
    key: str,
    value: object,
    said: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A "NaN" string in an earlier build's estimate was copied into the new history.
    lines = HISTORY.read_text().splitlines()
    entry = json.loads(lines[1])
    reliability = entry["result_sets"][0]["reliability_at_k"]
    (reliability if block is None else reliability[block])[key] = value
    lines[1] = json.dumps(entry)  # 1e400 is written as Infinity: put the number back
    lines[1] = lines[1].replace("Infinity", "1e400")
    history = tmp_path / "history.jsonl"
    history.write_text("\n".join(lines) + "\n")
    site = tmp_path / "site"
    status, _, err = run(
        ["build", str(RESULTS), "--history", str(history), "-o", str(site)], capsys
    )
    assert status == 2 and not site.exists()
    assert f"{history}:2: result_sets[0].reliability_at_k." in err and said in err


# ------------------------------------------------------------ found by `make fuzz`

TABLES = Path(__file__).resolve().parent / "fixtures" / "tables"


def test_a_parquet_file_whose_statistics_lie_is_read_by_its_rows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Its statistics put `excluded` at most 2; row 3 holds 210813889544194. DuckDB
    # counted the row as over the limit, then skipped it when listing: an IndexError.
    path = TABLES / "lying-statistics.parquet"
    status, _, err = run(["summary", str(path)], capsys)
    assert status == 2 and "Traceback" not in err
    assert f"{path}: row 3, column 'excluded': must be at most 1,000,000,000" in err


def test_json_too_deep_to_explain_is_said_plainly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A file no format claims is parsed to say whether it was cut short: nested
    # 100,000 deep, the parse raised RecursionError through main.
    path = tmp_path / "deep.json"
    path.write_text('{"info": ' + '{"a":' * 100_000 + "1" + "}" * 100_000 + "}")
    status, _, err = run(["summary", str(path)], capsys)
    assert status == 2 and "Traceback" not in err
    assert f"{path}: cannot tell the format" in err
