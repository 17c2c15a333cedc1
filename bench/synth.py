"""Seeded synthetic eval results for the benchmarks: JSONL, one run per line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def write_jsonl(
    path: Path,
    tasks: int,
    runs: int,
    models: int = 2,
    seed: int = 7,
    suite: bool = True,
    measures: bool = False,
) -> int:
    """Write tasks x runs records per model; returns the number of lines. Without
    `suite`, a line holds only the task, run, outcome and model; with `measures`, also
    a cost, a duration and a confidence (the same outcomes either way)."""
    rng = np.random.default_rng(seed)
    extra = np.random.default_rng(seed + 1)
    lines = 0
    with path.open("w", encoding="utf-8") as out:
        for m in range(models):
            model = f"model-{chr(ord('a') + m)}"
            rates = rng.beta(1.2, 0.8, size=tasks)
            passed = rng.random((tasks, runs)) < rates[:, None]
            excluded = rng.random((tasks, runs)) < 0.005
            for t in range(tasks):
                task = f"task-{t:05d}"
                row = passed[t]
                gone = excluded[t]
                for r in range(runs):
                    outcome = None if gone[r] else bool(row[r])
                    record = {"model": model, "task": task, "run": r + 1, "passed": outcome}
                    if suite:
                        record = {"suite": "synthetic", **record}
                    if measures:
                        record["cost"] = round(float(extra.gamma(2.0, 0.01)), 5)
                        record["duration"] = round(float(extra.gamma(4.0, 15.0)), 2)
                        record["confidence"] = round(float(extra.random()), 3)
                    out.write(json.dumps(record) + "\n")
                    lines += 1
    return lines


if __name__ == "__main__":
    import sys

    print(write_jsonl(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
