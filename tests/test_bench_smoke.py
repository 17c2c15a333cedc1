"""A small smoke run of the benchmark code: it must keep working, and is never timed here."""

from __future__ import annotations

import json
from pathlib import Path

from bench.run import Row, measure_tables, per_task_baseline, stage_times, table, tables_table
from bench.synth import write_jsonl


def test_benchmark_stages_run_on_a_tiny_input(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    lines = write_jsonl(path, tasks=12, runs=5)
    assert lines == 12 * 5 * 2 == sum(1 for _ in path.open())
    assert {json.loads(line)["model"] for line in path.open()} == {"model-a", "model-b"}
    stages = stage_times(path, tmp_path / "site")
    assert set(stages) == {"load", "core", "coverage", "estimate", "charts", "render", "write"}
    assert (tmp_path / "site" / "index.html").is_file()
    counting, estimating = per_task_baseline(path)
    row = Row("tiny", 12, 5, lines, stages=stages, build=1.0, floor=0.5, per_task=estimating)
    row.per_task_count = counting
    text = table([row])
    assert "| tiny (12 tasks x 5 runs x 2 models) | 120 |" in text and "**2.00x**" in text


def test_table_benchmark_runs_on_a_tiny_input(tmp_path: Path) -> None:
    row = measure_tables(tasks=6, runs=4, repeat=1, work=tmp_path)
    assert row.lines == 6 * 4 * 2
    assert set(row.loads) == {"parquet", "csv", "jsonl through DuckDB", "jsonl, Python reader"}
    text = tables_table(row)
    assert "| parquet |" in text and "<= 0.2x" in text


def test_scale_benchmark_runs_on_a_tiny_input(tmp_path: Path) -> None:
    from bench.scale import Result, part_a

    out = Result()
    part_a(tmp_path, 1, out, size=(300, 20))
    text = "\n".join(out.lines)
    assert "## (a) 6,000 runs (300 tasks x 20 runs, one model)" in text
    # The printed query and the bare GROUP BY agree, and the build made a page per
    # flaky task (about 2% of them).
    assert "The two agree on every task's counts: yes" in text
    flaky = int(text.split(" tasks are flaky")[0].rsplit("; ", 1)[1].replace(",", ""))
    assert f"| task pages | {flaky:,} | the flaky tasks |" in text
    # The runs and the site are deleted as soon as measured; the counts stay (small).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bare.parquet", "counts.parquet"]
