"""`make bench`: how reportgen's build scales, against baselines measured in the same run.

For each size (tasks x runs per model, two models, so comparison pages are built
too) it generates seeded JSONL, then measures:

* each stage of the build (load, estimate, charts, render, write) in-process;
* the whole `reportgen build` as a subprocess: wall time (median of --repeat
  runs) and peak memory (max RSS);
* a rebuild of an unchanged project and one after a template-only change;
* baseline (a), the floor: a bare loop of json.loads over the same lines;
* baseline (b): a straightforward per-task implementation (dictionary
  counting, math.comb, scipy's binomtest(c, n).proportion_ci(method="wilson")).

And for tables (`--tables`, on by default; `--only-tables` runs just these): the
same 1,000,000 runs as Parquet, CSV and JSONL, each loaded (read, checked and
grouped into per-task counts) and timed against the json.loads floor of the JSONL;
the JSONL both through DuckDB and through the Python reader.

Ratios, not seconds, are the results: machines differ, a ratio in one run does
not. Writes bench/RESULTS.md and bench/scaling.svg and prints the table.
Timings here are never asserted in tests.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.synth import write_jsonl  # noqa: E402
from reportgen.readers import Source, load_sources  # noqa: E402
from reportgen.report import build_report  # noqa: E402
from reportgen.settings import BuildSettings  # noqa: E402
from reportgen.stats.coverage import check_coverage  # noqa: E402
from reportgen.stats.estimate import estimate_suite  # noqa: E402
from reportgen.stats.population import fit_population  # noqa: E402
from reportgen.website.chart import make_charts  # noqa: E402
from reportgen.website.render import render_site  # noqa: E402
from reportgen.website.theme import Theme  # noqa: E402
from reportgen.website.write import write_site  # noqa: E402

SIZES = {"small": (100, 10), "medium": (1_000, 50), "large": (10_000, 100)}
#: Tasks x runs per model (two models) of the table benchmark: 1,000,000 runs.
TABLE_SIZE = (5_000, 100)


@dataclass
class Row:
    name: str
    tasks: int
    runs: int
    lines: int
    stages: dict[str, float] = field(default_factory=dict)
    build: float = 0.0
    peak_mb: float = 0.0
    rebuild_unchanged: float = 0.0
    rebuild_template: float = 0.0
    floor: float = 0.0
    per_task_count: float = 0.0
    per_task: float = 0.0
    site_mb: float = 0.0
    task_pages: int = 0
    task_page_kb: float = 0.0


def timed(fn: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def floor_json_loads(path: Path) -> float:
    def loop() -> None:
        with path.open("rb") as handle:
            for line in handle:
                json.loads(line)

    return timed(loop)


def per_task_baseline(path: Path, k: int = 3) -> tuple[float, float]:
    """The obvious implementation: count in dicts, then one scipy call per task.

    Returns (counting seconds, estimating seconds), so estimation can be
    compared with reportgen's estimate stage on its own.
    """
    from scipy.stats import binomtest

    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])

    def count() -> None:
        with path.open("rb") as handle:
            for line in handle:
                record = json.loads(line)
                if record["passed"] is None:
                    continue
                entry = counts[(record["suite"], record["model"], record["task"])]
                entry[0] += bool(record["passed"])
                entry[1] += 1

    def estimate() -> None:
        for c, n in counts.values():
            ci = binomtest(c, n).proportion_ci(confidence_level=0.95, method="wilson")
            _ = ((c / n) ** k, ci.low**k, ci.high**k)
            if k <= n:
                _ = (math.comb(c, k) / math.comb(n, k), 1 - math.comb(n - c, k) / math.comb(n, k))

    return timed(count), timed(estimate)


class Stopwatch:
    """Collects named durations: `with watch("load"): ...`."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self._name = ""
        self._start = 0.0

    def __call__(self, name: str) -> Stopwatch:
        self._name = name
        return self

    def __enter__(self) -> None:
        gc.collect()
        self._start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.times[self._name] = time.perf_counter() - self._start


def stage_times(path: Path, out: Path) -> dict[str, float]:
    """Each stage of the pipeline on its own, as build() calls them."""
    watch = Stopwatch()
    with watch("load"):
        loaded = load_sources([Source(path)])
    counts = [
        ([t.successes for t in rs.evaluated_tasks], [t.runs for t in rs.evaluated_tasks])
        for rs in loaded.result_sets
    ]
    # The same quantities as the per-task baseline, for a like-for-like ratio ...
    with watch("core"):
        for successes, runs in counts:
            estimate_suite(successes, runs, 3, 0.95)
    # ... the coverage check of every suite interval, one result set at a time ...
    with watch("coverage"):
        for successes, runs in counts:
            check_coverage(runs, 3, fit_population(successes, runs), 0.95)
    times_per_set = len(counts)
    # ... and the whole stage: curves over k, bootstrap, comparisons, planner.
    with watch("estimate"):
        report = build_report(loaded.result_sets, "bench", "", 3, 0.95)
    with watch("charts"):
        charts = make_charts(report)
    theme = Theme.from_folders(None, None)
    with watch("render"):
        for _ in render_site(report, charts, theme, BuildSettings()):
            pass
    with watch("render+write"):
        write_site(out, render_site(report, charts, theme, BuildSettings()), force=True)
    times = watch.times
    times["write"] = max(times.pop("render+write") - times["render"], 0.0)
    times["coverage"] /= times_per_set
    return times


def settle() -> None:
    """Let the disk catch up first: a previous build's 200 MB still being written back
    would otherwise slow the next one down by seconds (seen on this machine's VM disk)."""
    os.sync()
    time.sleep(0.5)


# Runs a command and prints its wall seconds and peak RSS (KB). The peak must be taken
# here, in a small process: a child forked straight from this benchmark counts the
# benchmark's own resident memory (it held up to 500 MB after the in-process stages)
# in its ru_maxrss, as Linux records the pre-exec image's high-water mark.
_TIMED = """
import resource, subprocess, sys, time
start = time.perf_counter()
status = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
seconds = time.perf_counter() - start
print(seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(status)
"""


def cli_build(path: Path, out: Path, extra: list[str] | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `reportgen build` subprocess."""
    settle()
    command = [sys.executable, "-m", "reportgen", "build", str(path), "-o", str(out), "--force"]
    done = subprocess.run(
        [sys.executable, "-c", _TIMED, *command, *(extra or [])], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"build failed: {done.stderr}")
    seconds, peak_kb = done.stdout.split()
    return float(seconds), int(peak_kb) / 1024


def measure(name: str, tasks: int, runs: int, repeat: int, work: Path) -> Row:
    path = work / f"{name}.jsonl"
    lines = write_jsonl(path, tasks, runs)
    row = Row(name, tasks, runs, lines)
    settle()
    row.floor = statistics.median(floor_json_loads(path) for _ in range(repeat))
    row.per_task_count, row.per_task = per_task_baseline(path)
    row.stages = stage_times(path, work / f"{name}-stages")
    out = work / f"{name}-site"
    # Clean builds (no cache, into a new folder, as in CI), then one that fills the
    # cache, then the rebuilds.
    # Each clean build gets a folder of its own: deleting 20,000 files just before a
    # build slowed it by seconds on this machine's VM disk, which is not the build's cost.
    results = [cli_build(path, work / f"{name}-clean-{i}", ["--no-cache"]) for i in range(repeat)]
    row.build = statistics.median(r[0] for r in results)
    row.peak_mb = max(r[1] for r in results)
    cli_build(path, out)
    row.rebuild_unchanged = cli_build(path, out)[0]
    templates = work / f"{name}-theme"
    templates.mkdir(exist_ok=True)
    (templates / "404.html").write_text("changed {{ site.title }}")
    row.rebuild_template = cli_build(path, out, ["--templates", str(templates)])[0]
    files = [p for p in out.rglob("*") if p.is_file()]
    row.site_mb = sum(p.stat().st_size for p in files) / 1e6
    task_pages = [p for p in files if p.parent.name == "tasks" and p.suffix == ".html"]
    row.task_pages = len(task_pages)
    row.task_page_kb = sum(p.stat().st_size for p in task_pages) / max(len(task_pages), 1) / 1e3
    clean = [work / f"{name}-clean-{i}" for i in range(repeat)]
    for folder in (out, work / f"{name}-stages", *clean):
        shutil.rmtree(folder, ignore_errors=True)
    path.unlink()
    return row


def table(rows: list[Row]) -> str:
    head = (
        "| size | runs | floor: json.loads | load | core estimates | coverage check per set | "
        "estimate stage | charts | "
        "render | write | "
        "build (median) | build / floor | per-task baseline: count, estimate | estimate speed-up | "
        "peak MB | site MB | KB per task page | rebuild unchanged | rebuild after template edit |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    body = ""
    for r in rows:
        s = r.stages
        body += (
            f"| {r.name} ({r.tasks:,} tasks x {r.runs} runs x 2 models) | {r.lines:,} | "
            f"{r.floor:.2f} s | {s['load']:.2f} s | {s['core']:.3f} s | {s['coverage']:.2f} s | "
            f"{s['estimate']:.3f} s | "
            f"{s['charts']:.2f} s | "
            f"{s['render']:.2f} s | {s['write']:.2f} s | {r.build:.2f} s | "
            f"**{r.build / r.floor:.2f}x** | {r.per_task_count:.2f} s, {r.per_task:.2f} s | "
            f"**{r.per_task / max(s['core'], 1e-9):.0f}x** | {r.peak_mb:.0f} | "
            f"{r.site_mb:.1f} | {r.task_page_kb:.1f} | {r.rebuild_unchanged:.2f} s | "
            f"{r.rebuild_template:.2f} s |\n"
        )
    return head + body


def scaling_chart(rows: list[Row], path: Path) -> None:
    import altair as alt
    import vl_convert

    data = [
        {"runs": r.lines, "seconds": value, "what": what}
        for r in rows
        for what, value in (("reportgen build", r.build), ("json.loads floor", r.floor))
    ]
    chart = (
        alt.Chart(alt.Data(values=data))
        .mark_line(point=True)
        .encode(
            x=alt.X("runs:Q", scale=alt.Scale(type="log"), title="run records (log)"),
            y=alt.Y("seconds:Q", scale=alt.Scale(type="log"), title="seconds (log)"),
            color=alt.Color("what:N", title=None),
        )
        .properties(title="Build time against input size", width=420, height=260)
    )
    path.write_text(vl_convert.vegalite_to_svg(chart.to_dict()))


@dataclass
class TableRow:
    lines: int
    floor: float
    #: Seconds to load each shape (median of the repeats), by name.
    loads: dict[str, float] = field(default_factory=dict)


def write_tables(jsonl: Path, folder: Path) -> dict[str, Path]:
    """The runs of a JSONL file as CSV and Parquet (written by DuckDB, not timed)."""
    import duckdb

    csv, parquet = folder / "runs.csv", folder / "runs.parquet"
    with duckdb.connect() as con:
        con.execute(
            "CREATE TABLE runs AS SELECT suite, model, task, CAST(run AS BIGINT) AS run, "
            f"passed FROM read_json('{jsonl}', format = 'newline_delimited')"
        )
        con.execute(f"COPY runs TO '{csv}' (HEADER)")
        con.execute(f"COPY runs TO '{parquet}' (FORMAT parquet)")
    return {"parquet": parquet, "csv": csv}


def load_time(path: Path) -> float:
    return timed(lambda: load_sources([Source(path)]))


def jsonl_time(path: Path, min_bytes: int) -> float:
    """The JSONL loaded with DuckDB's size threshold set to min_bytes: 0 for the DuckDB
    path whatever the size, out of reach for the Python reader alone."""
    from reportgen.readers import jsonl

    saved = jsonl.DUCKDB_MIN_BYTES
    jsonl.DUCKDB_MIN_BYTES = min_bytes
    try:
        return load_time(path)
    finally:
        jsonl.DUCKDB_MIN_BYTES = saved


def measure_tables(tasks: int, runs: int, repeat: int, work: Path) -> TableRow:
    path = work / "tables.jsonl"
    lines = write_jsonl(path, tasks, runs)
    shapes = write_tables(path, work)
    row = TableRow(lines, 0.0)
    settle()
    # Interleaved, so a burst of load on the machine does not fall on one shape only.
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(repeat):
        times["floor"].append(floor_json_loads(path))
        for name, table in shapes.items():
            times[name].append(load_time(table))
        times["jsonl through DuckDB"].append(jsonl_time(path, 0))
        times["jsonl, Python reader"].append(jsonl_time(path, 1 << 62))
    row.floor = statistics.median(times.pop("floor"))
    row.loads = {name: statistics.median(values) for name, values in times.items()}
    return row


#: Targets of load time / floor, per shape.
TABLE_TARGETS = {"parquet": 0.2, "csv": 0.5, "jsonl through DuckDB": 0.5}


def tables_table(row: TableRow) -> str:
    head = (
        f"| input ({row.lines:,} runs) | load | load / json.loads floor ({row.floor:.2f} s) "
        "| target |\n|---|---|---|---|\n"
    )
    body = ""
    for name, seconds in row.loads.items():
        target = TABLE_TARGETS.get(name)
        body += (
            f"| {name} | {seconds:.2f} s | **{seconds / row.floor:.2f}x** | "
            f"{f'<= {target}x' if target is not None else '-'} |\n"
        )
    return head + body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument(
        "--only-tables",
        action="store_true",
        help="run only the table benchmark (Parquet, CSV, JSONL through DuckDB); "
        "prints it without writing RESULTS.md",
    )
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="reportgen-bench-") as tmp:
        print("measuring tables: 1,000,000 runs as Parquet, CSV and JSONL ...", flush=True)
        table_row = measure_tables(*TABLE_SIZE, args.repeat, Path(tmp))
        tables_text = "\n## Tables\n\n" + tables_table(table_row)
        if args.only_tables:
            print(tables_text)
            return
        for name in args.sizes:
            tasks, runs = SIZES[name]
            print(f"measuring {name}: {tasks:,} tasks x {runs} runs x 2 models ...", flush=True)
            rows.append(measure(name, tasks, runs, args.repeat, Path(tmp)))
    text = table(rows)
    largest = rows[-1]
    slope = ""
    if len(rows) > 1:
        x = np.log([r.lines for r in rows])
        y = np.log([r.build for r in rows])
        fitted = np.polyfit(x, y, 1)[0]
        slope = f"\nlog-log slope of build time against runs: {fitted:.2f} (1.00 is linear)\n"
    notes = (
        f"\nTargets on the largest input: build / floor <= 3 (measured "
        f"{largest.build / largest.floor:.2f}); estimate speed-up >= 100 (measured "
        f"{largest.per_task / max(largest.stages['core'], 1e-9):.0f}, core estimates against the "
        "per-task loop over the same counts); peak memory < 400 MB "
        f"(measured {largest.peak_mb:.0f}); <= 20 KB per task page (measured "
        f"{largest.task_page_kb:.1f}); site <= 250 MB (measured {largest.site_mb:.1f}); "
        f"coverage check about a second for {largest.tasks:,} tasks x {largest.runs} runs "
        f"(measured {largest.stages['coverage']:.2f} s per result set).\n"
    )
    print(text + slope + notes + tables_text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "RESULTS.md").write_text(
        "# Benchmark results\n\nMade by `make bench` (bench/run.py); ratios are measured in one "
        f"run on one machine ({os.cpu_count()} cores).\n\n"
        + text
        + slope
        + notes
        + "\n![build time against input size](scaling.svg)\n"
        + tables_text
    )
    scaling_chart(rows, args.out / "scaling.svg")


if __name__ == "__main__":
    main()
