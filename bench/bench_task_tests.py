"""The per-task regression gate (`reportgen check --per-task`): error rate, power, cost.

Simulates builds of a 200-task suite run n = 20 times per task on both sides
(seeded), and counts how often the gate fails:

* no true change: every task keeps its pass rate, so any call is false; at
  level 0.05 with Holm the gate should fail in at most about 5% of replicates;
* five tasks truly fall from 0.95 to 0.5: how often the gate fails, and what
  share of the five it names.

Two worlds for the other tasks' true pass rates: spread evenly from 0.05 to
0.95 (hardest for the error rate: every task testable), and all at 0.95 (a
suite near the ceiling, where screening leaves most tasks out of the family).
Also times Fisher (vectorised) against Boschloo (scipy, per task) on one
200-task build. Writes bench/TASK_TESTS.md; nothing here is asserted.

    PYTHONPATH=. python bench/bench_task_tests.py --replicates 2000
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from reportgen.stats.task_tests import task_tests  # noqa: E402

TASKS, RUNS, DROPPED, HIGH, LOW = 200, 20, 5, 0.95, 0.5


def worlds() -> dict[str, np.ndarray]:
    return {
        "spread 0.05-0.95": np.linspace(0.05, 0.95, TASKS),
        "all at 0.95": np.full(TASKS, HIGH),
    }


@dataclass(frozen=True)
class Rates:
    gate_fails: float
    found_share: float
    all_found: float
    false_calls: float


def simulate(
    rates_before: np.ndarray,
    rates_after: np.ndarray,
    replicates: int,
    seed: int,
    control: str = "holm",
    screen: bool = True,
    level: float = 0.05,
) -> Rates:
    """Replicate builds; the gate fails when any task is called regressed."""
    rng = np.random.default_rng(seed)
    ids = [f"t{i}" for i in range(rates_before.size)]
    truly = {ids[i] for i in np.flatnonzero(rates_after < rates_before)}
    runs = np.full(rates_before.size, RUNS)
    fails = found = every = false = 0
    for _ in range(replicates):
        before = rng.binomial(RUNS, rates_before)
        after = rng.binomial(RUNS, rates_after)
        result = task_tests(
            ids, (before, runs), (after, runs), level=level, control=control, screen=screen
        )
        called = {t.id for t in result.regressed}
        fails += bool(called)
        false += bool(called - truly)
        if truly:
            found += len(called & truly)
            every += truly <= called
    return Rates(
        gate_fails=fails / replicates,
        found_share=found / (replicates * len(truly)) if truly else 0.0,
        all_found=every / replicates if truly else 0.0,
        false_calls=false / replicates,
    )


def with_drops(rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    before, after = rates.copy(), rates.copy()
    before[:DROPPED] = HIGH
    after[:DROPPED] = LOW
    return before, after


def timing() -> tuple[float, float]:
    rng = np.random.default_rng(3)
    ids = [f"t{i}" for i in range(TASKS)]
    runs = np.full(TASKS, RUNS)
    before = rng.binomial(RUNS, np.linspace(0.05, 0.95, TASKS))
    after = rng.binomial(RUNS, np.linspace(0.05, 0.95, TASKS))
    seconds = []
    for test in ("fisher", "boschloo"):
        start = time.perf_counter()
        task_tests(ids, (before, runs), (after, runs), test=test)
        seconds.append(time.perf_counter() - start)
    return seconds[0], seconds[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--output", type=Path, default=HERE / "TASK_TESTS.md")
    args = parser.parse_args()
    n = args.replicates
    sd = math.sqrt(0.05 * 0.95 / n)
    lines = [
        "# Per-task regression gate: error rate and power",
        "",
        f"Made by `bench/bench_task_tests.py --replicates {n}`: {TASKS} tasks, n = {RUNS} runs "
        f"per task on both sides, Fisher's one-sided test, level 0.05, seeded. A 5% rate "
        f"measured over {n:,} replicates has a Monte Carlo sd of {sd:.4f}.",
        "",
        "| world | control | screened | no change: gate fails | 5 tasks 0.95 -> 0.5: gate "
        "fails | share of the 5 named | all 5 named | a false call beside them |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, rates in worlds().items():
        for control, screen in (("holm", True), ("holm", False), ("bh", True)):
            null = simulate(rates, rates, n, seed=1, control=control, screen=screen)
            before, after = with_drops(rates)
            alt = simulate(before, after, n, seed=2, control=control, screen=screen)
            lines.append(
                f"| {name} | {control} | {'yes' if screen else 'no'} | {null.gate_fails:.2%} | "
                f"{alt.gate_fails:.2%} | {alt.found_share:.2%} | {alt.all_found:.2%} | "
                f"{alt.false_calls:.2%} |"
            )
            print(lines[-1], flush=True)
    fisher, boschloo = timing()
    lines += [
        "",
        f"One {TASKS}-task build, both sides tested: Fisher {fisher * 1000:.1f} ms, "
        f"Boschloo {boschloo:.1f} s ({boschloo / fisher:,.0f}x).",
        "",
    ]
    args.output.write_text("\n".join(lines))
    print("\n".join(lines[-3:]))


if __name__ == "__main__":
    main()
