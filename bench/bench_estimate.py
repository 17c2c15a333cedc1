"""Benchmark: every estimate for 1,000,000 tasks in one vectorized call, against a
straightforward per-task loop (math.comb for the ratios, scipy's binomtest for the
Wilson interval) measured in the same run.

The per-task loop is timed on a seeded sample of the same tasks (it would take
minutes on all of them) and compared per task. Run: .venv/bin/python bench/bench_estimate.py
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
from scipy.stats import binomtest

from reportgen.stats.estimate import estimate_suite


def per_task_baseline(successes: np.ndarray, runs: np.ndarray, k: int) -> list[tuple]:
    out = []
    for c, n in zip(successes.tolist(), runs.tolist(), strict=True):
        ci = binomtest(c, n).proportion_ci(confidence_level=0.95, method="wilson")
        unbiased = math.comb(c, k) / math.comb(n, k)
        at_k = 1 - math.comb(n - c, k) / math.comb(n, k)
        out.append((c / n, ci.low, ci.high, (c / n) ** k, ci.low**k, ci.high**k, unbiased, at_k))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=5_000, help="tasks for the per-task loop")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(20261202)
    runs = rng.integers(5, 101, size=args.tasks)
    successes = rng.binomial(runs, rng.beta(2, 1, size=args.tasks))
    k = 3

    vector_times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        estimate_suite(successes, runs, k)
        vector_times.append(time.perf_counter() - start)
    vector = statistics.median(vector_times)

    pick = rng.choice(args.tasks, size=min(args.sample, args.tasks), replace=False)
    start = time.perf_counter()
    per_task_baseline(successes[pick], runs[pick], k)
    loop = (time.perf_counter() - start) / len(pick) * args.tasks

    print(f"tasks: {args.tasks:,}; k = {k}")
    print(f"vectorized estimate_suite: {vector:.3f} s (median of {args.repeat})")
    print(f"per-task loop: {loop:.1f} s (timed on {len(pick):,} tasks, scaled)")
    print(f"ratio: {loop / vector:.0f}x faster (target: at least 100x)")


if __name__ == "__main__":
    main()
