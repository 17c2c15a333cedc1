"""`make bench`, part two: how fast reportgen answers while someone works.

Each figure is a ratio against a baseline measured in the same run:

* `reportgen estimate` wall time against `python -c "import numpy, scipy.special"`
  (the calculator needs nothing more than those);
* a clean build of the published τ-bench file against `python -c "import jinja2, altair,
  vl_convert"` (the site stack's own start-up);
* rebuilds at 2,000,000 runs (10,000 tasks x 100 runs x 2 models) after an edit
  of the task page template and after an edit of the overview template, against
  the clean build of the same runs, and the same overview edit rebuilt inside a
  `serve` process;
* a clean build of 1,000,000 runs of ONE model (10,000 task pages; each line holds
  the task, run, outcome and model) against the bare json.loads loop over the same
  lines;
* `reportgen serve`: from saving a template to the open page showing the change in
  Chromium (median of 5 saves; target <= 1 s).

Before timing, reportgen's own modules are compiled to bytecode, as installing it
does: the baselines' libraries (numpy, scipy, Jinja, Altair) come with theirs, and
where PYTHONDONTWRITEBYTECODE is set reportgen's source was otherwise compiled again
in every run measured (`--source-only` measures it that way).

Writes bench/FEEDBACK.md (with the load average at the start and the end) and
prints it. Timings are never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench.synth import write_jsonl  # noqa: E402

#: The whole published τ-bench file (50 tasks x 4 trials) where the shared data is beside
#: the checkout; the small fixture cut from it otherwise (the row then says so).
_TAU_BENCH_FULL = ROOT.parent / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"
_TAU_BENCH_SMALL = ROOT / "tests" / "fixtures" / "tau-bench" / "gpt-4o-airline-small.json"
TAU_BENCH = _TAU_BENCH_FULL if _TAU_BENCH_FULL.is_file() else _TAU_BENCH_SMALL
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def wall(command: list[str], repeat: int) -> float:
    """Median wall seconds of a command run `repeat` times (output discarded)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def reportgen(*argv: str) -> list[str]:
    return [sys.executable, "-m", "reportgen", *argv]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def floor_json_loads(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as handle:
        for line in handle:
            json.loads(line)
    return time.perf_counter() - start


_CONTENT_ALONE = """
import sys, time
import scipy.special
from reportgen.website.content import front_matter, markdown_parser, render_content
from reportgen.settings import site_values
from reportgen.website.content_worker import read_content
from reportgen.website.theme import Theme
site = site_values("t", "", 3, 0.95)
texts = read_content(Theme.from_folders(None, None))
# What the build's content worker has before it forks (render.ContentWorker).
markdown_parser()
for source, text in texts.values():
    front_matter(text, source)
start = time.perf_counter()
for source, text in texts.values():
    render_content(text, site, source)
print(time.perf_counter() - start)
"""


#: Every library the τ-bench build loads (vl-convert in its chart engine), not only the
#: site stack of its baseline.
_BUILD_IMPORTS = (
    "import jinja2, altair, vl_convert, numpy, scipy.special, markdown_it, msgspec, orjson, yaml"
)


def tau_parts(repeat: int, build: float) -> list[tuple[str, str, str, str, str]]:
    """What a small build cannot go below: parts of it, each timed alone.

    vl-convert's JavaScript engine starts on the first chart, and the content
    pages' worked examples (their coverage simulations, a large Jinja template)
    run in one process: neither can be split, so on two cores the clean build
    takes at least the imports plus the longer of the two. The imports of every
    library the build loads are timed too, with the build's ratio to them: the
    τ-bench baseline holds only some of them.
    """
    imports = wall(python(_BUILD_IMPORTS), repeat)
    engine = wall(python("import vl_convert as v; v.vegalite_to_svg({'mark': 'point'})"), repeat)
    content = []
    for _ in range(repeat):
        done = subprocess.run(
            python(_CONTENT_ALONE), check=True, capture_output=True, text=True, cwd=ROOT
        )
        content.append(float(done.stdout.strip()))
    return [
        (
            "(part) importing every library the build loads (numpy, scipy, ... too)",
            f"{imports:.2f} s",
            "",
            f"the build: {build / imports:.2f}x",
            "",
        ),
        (
            "(part) vl-convert's first chart, in a fresh interpreter",
            f"{engine:.2f} s",
            "",
            "",
            "",
        ),
        (
            "(part) methodology and FAQ as the content worker renders them, after the fork",
            f"{statistics.median(content):.2f} s",
            "",
            "",
            "",
        ),
    ]


_SERVE_REBUILDS = """
import io, json, sys, time
from pathlib import Path
from reportgen.config import Config
from reportgen.readers import Source
from reportgen.serve import PreviewServer
runs, site, theme, port = sys.argv[1:]

def load():
    config = Config()
    config.result_sets = [Source(path=Path(runs))]
    config.output, config.templates = Path(site), Path(theme)
    return config

server = PreviewServer(load, int(port), io.StringIO())
template = Path(theme) / "index.html"
seconds = []
for edit in range(4):
    text = template.read_text()
    template.write_text(text.replace("{% block main %}", f"{{% block main %}}<p>{edit}</p>", 1))
    start = time.perf_counter()
    assert server.check_once()
    seconds.append(time.perf_counter() - start)
server.server.server_close()  # never served: stop() would wait for the loop
print(json.dumps(seconds))
"""


def serve_rebuilds(runs: Path, site: Path, theme: Path) -> list[float]:
    """Seconds of four rebuilds inside one `serve` process, each after an index.html edit.

    The server's own loop (PreviewServer.check_once), without its HTTP side: the
    first rebuild follows the start-up build, which found the site up to date.
    """
    argv = [str(runs), str(site), str(theme), str(free_port())]
    done = subprocess.run(
        [*python(_SERVE_REBUILDS), *argv], check=True, capture_output=True, text=True, cwd=ROOT
    )
    return [float(s) for s in json.loads(done.stdout.splitlines()[-1])]


def rebuild_rows(work: Path) -> list[tuple[str, str, str, str, str]]:
    """Edits of one template at 2,000,000 runs, against the clean build."""
    runs = work / "large.jsonl"
    write_jsonl(runs, 10_000, 100)
    clean = wall(reportgen("build", str(runs), "-o", str(work / "clean"), "--no-cache"), 1)
    site = work / "site"
    theme = work / "theme"
    shutil.copytree(ROOT / "templates", theme)
    build = reportgen("build", str(runs), "-o", str(site), "--templates", str(theme))
    wall(build, 1)  # fills the cache
    rows = []
    # A task.html edit re-renders 20,000 pages: once. An index.html edit takes a
    # fraction of a second, where one measurement is mostly noise: the median of three
    # edits, each of them different.
    for name, edits, target in (("task.html", 1, "<= 0.6x"), ("index.html", 3, "<= 0.3x")):
        template = theme / name
        times = []
        for edit in range(edits):
            template.write_text(
                template.read_text().replace(
                    "{% block main %}", f"{{% block main %}}<p>edited {edit}</p>", 1
                )
            )
            times.append(wall(build, 1))
        seconds = statistics.median(times)
        each = f" (each: {', '.join(f'{t:.2f}' for t in times)} s)" if edits > 1 else ""
        rows.append(
            (
                f"rebuild after an edit of {name}, 2,000,000 runs{each}",
                f"{seconds:.2f} s",
                f"clean build: {clean:.2f} s",
                f"**{seconds / clean:.3f}x**" if edits > 1 else f"**{seconds / clean:.2f}x**",
                target,
            )
        )
    first, *later = serve_rebuilds(runs, site, theme)
    seconds = statistics.median(later)
    rows.append(
        (
            "rebuild inside `serve` after an edit of index.html, 2,000,000 runs "
            "(median of the 2nd to 4th edit)",
            f"{seconds:.2f} s",
            f"clean build: {clean:.2f} s (1st edit after start: {first:.2f} s)",
            f"**{seconds / clean:.3f}x**",
            "",
        )
    )
    runs.unlink()
    return rows


def profile_row(work: Path) -> tuple[str, str, str, str, str]:
    """A clean build of 1,000,000 runs of one model with a cost, a duration and a
    confidence on every run, against the same runs without them (issue 41)."""
    plain, measured = work / "plain.jsonl", work / "measured.jsonl"
    write_jsonl(plain, 10_000, 100, models=1, suite=False)
    write_jsonl(measured, 10_000, 100, models=1, suite=False, measures=True)
    without, with_ = [], []
    for i in range(2):  # in turns, so drift falls on both alike
        without.append(
            wall(reportgen("build", str(plain), "-o", str(work / f"p{i}"), "--no-cache"), 1)
        )
        with_.append(
            wall(reportgen("build", str(measured), "-o", str(work / f"m{i}"), "--no-cache"), 1)
        )
    plain.unlink()
    measured.unlink()
    a, b = statistics.median(with_), statistics.median(without)
    return (
        "clean build, 1,000,000 runs with cost, duration and confidence (reliability profile)",
        f"{a:.2f} s",
        f"the same runs without them: {b:.2f} s",
        f"**{a / b:.2f}x**",
        "<= 1.5x",
    )


def one_model_row(work: Path) -> tuple[str, str, str, str, str]:
    """A clean build of 1,000,000 runs of one model, against the json.loads loop.

    Measured before the rebuilds: each rebuild removes the previous site's 20,000
    files, and for minutes afterwards ext4 passes over those recently freed inodes
    whenever it makes a new file (recently_deleted in find_inode_bit, seen with
    perf), which here made the next 10,000-page build's system time several times
    larger. A build on a file system that has not just deleted a large site is the
    case this row is about.
    """
    one_model = work / "one-model.jsonl"
    write_jsonl(one_model, 10_000, 100, models=1, suite=False)
    floor = statistics.median(floor_json_loads(one_model) for _ in range(3))
    seconds = wall(reportgen("build", str(one_model), "-o", str(work / "one"), "--no-cache"), 1)
    one_model.unlink()
    return (
        "clean build, 1,000,000 runs of one model (10,000 task pages)",
        f"{seconds:.2f} s",
        f"json.loads loop: {floor:.2f} s",
        f"**{seconds / floor:.2f}x**",
        "<= 2x",
    )


def serve_latency(work: Path, saves: int) -> list[float]:
    """Seconds from saving a template to the open page showing the saved text."""
    from playwright.sync_api import sync_playwright

    project = work / "project"
    shutil.copytree(ROOT / "example", project)
    (project / "templates").mkdir()
    template = project / "templates" / "content.html"
    original = (ROOT / "templates" / "content.html").read_text()
    template.write_text(original)
    config = project / "reportgen.yaml"
    config.write_text(
        config.read_text().replace("output: ../site", "output: site") + "\ntemplates: templates\n"
    )
    port = free_port()
    server = subprocess.Popen(
        reportgen("serve", "--config", str(config), "--port", str(port)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        for line in server.stderr:  # wait for "serving ... at http://..."
            if line.startswith("serving "):
                break
        chromium = shutil.which("chromium") or "/usr/bin/chromium"
        latencies = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/methodology.html")
            for save in range(saves):
                marker = f"saved-{save}-{time.monotonic_ns()}"
                time.sleep(0.5)  # apart from the previous save, as a person types
                start = time.perf_counter()
                template.write_text(
                    original.replace("{% block main %}", "{% block main %}<p>" + marker + "</p>")
                )
                page.wait_for_selector(f"text={marker}", timeout=120_000)
                latencies.append(time.perf_counter() - start)
            browser.close()
        return latencies
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument(
        "--quick", action="store_true", help="skip the 1,000,000 and 2,000,000-run builds"
    )
    parser.add_argument(
        "--source-only",
        action="store_true",
        help="do not compile reportgen to bytecode first (slower start-up of every command)",
    )
    args = parser.parse_args()
    if not args.source_only:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(ROOT / "reportgen")],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    load_before = os.getloadavg()[0]
    rows: list[tuple[str, str, str, str, str]] = []

    imports = wall(python("import numpy, scipy.special"), args.repeat)
    estimate = wall(
        reportgen("estimate", "--successes", "16", "--runs", "20", "-k", "3"), args.repeat
    )
    rows.append(
        (
            "`reportgen estimate --successes 16 --runs 20 -k 3`",
            f"{estimate:.2f} s",
            f"`import numpy, scipy.special`: {imports:.2f} s",
            f"**{estimate / imports:.2f}x**",
            "<= 1.5x",
        )
    )

    with tempfile.TemporaryDirectory(prefix="reportgen-feedback-") as tmp:
        work = Path(tmp)
        # Baseline and build taken in turns: the machine's speed drifts over a minute
        # (the baseline has moved between 0.21 and 0.25 s in runs minutes apart), and
        # in turns the drift falls on both sides of the ratio alike.
        stacks, builds = [], []
        for i in range(args.repeat):
            stacks.append(wall(python("import jinja2, altair, vl_convert"), 1))
            out = work / f"tau-{i}"
            builds.append(wall(reportgen("build", str(TAU_BENCH), "-o", str(out), "--no-cache"), 1))
        stack, build = statistics.median(stacks), statistics.median(builds)
        rows.append(
            (
                "clean build of the τ-bench file"
                + (
                    " (50 tasks x 4 trials)" if TAU_BENCH == _TAU_BENCH_FULL else " (small fixture)"
                ),
                f"{build:.2f} s",
                f"`import jinja2, altair, vl_convert`: {stack:.2f} s",
                f"**{build / stack:.2f}x**",
                "<= 3x",
            )
        )
        rows.extend(tau_parts(args.repeat, build))
        if not args.quick:
            rows.append(one_model_row(work))
            rows.append(profile_row(work))
            rows.extend(rebuild_rows(work))
        try:
            latencies = serve_latency(work, args.repeat)
        except ImportError:
            latencies = []
        if latencies:
            median = statistics.median(latencies)
            rows.append(
                (
                    "`serve`: template saved to page reloaded in Chromium (median)",
                    f"{median:.2f} s",
                    "each save: " + ", ".join(f"{s:.2f}" for s in latencies) + " s",
                    "",
                    "<= 1 s",
                )
            )

    text = "| what | time | baseline in the same run | ratio | target |\n|---|---|---|---|---|\n"
    text += "".join("| " + " | ".join(row) + " |\n" for row in rows)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    load_after = os.getloadavg()[0]
    bytecode = "source only" if args.source_only else "reportgen compiled to bytecode first"
    out = args.out / "FEEDBACK.md"
    # The notes written by hand below the table (from its first "## " heading on)
    # are kept: they explain the figures, and are revised by hand when those move.
    notes = out.read_text().partition("\n## ") if out.exists() else ("", "", "")
    out.write_text(
        "# Fast feedback\n\nMade by `make bench` (bench/feedback.py) in one run on one machine "
        f"({os.cpu_count()} cores; load average {load_before:.2f} at the start, "
        f"{load_after:.2f} at the end; {bytecode}).\n\n"
        + text
        + (f"\n## {notes[2]}" if notes[1] else "")
    )


if __name__ == "__main__":
    main()
