"""`make bench`, part two: how fast reportgen answers while someone works.

Each figure is a ratio against a baseline measured in the same run:

* `reportgen estimate` wall time against `python -c "import numpy, scipy.special"`
  (the calculator needs nothing more than those);
* a clean build of the τ-bench fixture against `python -c "import jinja2, altair,
  vl_convert"` (the site stack's own start-up);
* `reportgen serve`: from saving a template to the open page showing the change in
  Chromium (median of 5 saves; target <= 1 s).

Writes bench/FEEDBACK.md and prints it. Timings are never asserted in tests.
"""

from __future__ import annotations

import argparse
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
TAU_BENCH = ROOT / "tests" / "fixtures" / "tau-bench" / "gpt-4o-airline-small.json"
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
        config.read_text().replace("output: ../site", "output: site")
        + "\ntemplates: templates\n"
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
    args = parser.parse_args()
    rows: list[tuple[str, str, str, str, str]] = []

    imports = wall(python("import numpy, scipy.special"), args.repeat)
    estimate = wall(reportgen("estimate", "--successes", "16", "--runs", "20", "-k", "3"), args.repeat)
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
        stack = wall(python("import jinja2, altair, vl_convert"), args.repeat)
        builds = []
        for i in range(args.repeat):
            out = work / f"tau-{i}"
            builds.append(
                wall(reportgen("build", str(TAU_BENCH), "-o", str(out), "--no-cache"), 1)
            )
        build = statistics.median(builds)
        rows.append(
            (
                "clean build of the τ-bench fixture",
                f"{build:.2f} s",
                f"`import jinja2, altair, vl_convert`: {stack:.2f} s",
                f"**{build / stack:.2f}x**",
                "<= 3x",
            )
        )
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
    (args.out / "FEEDBACK.md").write_text(
        "# Fast feedback\n\nMade by `make bench` (bench/feedback.py) in one run on one machine "
        f"({os.cpu_count()} cores).\n\n" + text
    )


if __name__ == "__main__":
    main()
