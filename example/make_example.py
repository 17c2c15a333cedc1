"""Regenerate the example result files (seeded, so the output never changes).

Two agents run the same 40-task customer-support suite 10 to 20 times per task.
Some tasks are flaky, a few runs could not be evaluated (passed: null), and
agent A's runs link to transcripts. Every run records what it cost, how long it
took, the tokens it used and the agent's stated confidence (drawn apart from the
outcomes, so adding them changed no outcome). Agent B also ran the suite with typos
injected into the customers' messages (condition: typos).
Run: .venv/bin/python example/make_example.py [--history]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
TOPICS = {
    "billing": ["refund-partial", "refund-full", "duplicate-charge", "invoice-copy",
                "change-plan", "cancel-plan", "apply-coupon", "tax-exempt", "failed-payment",
                "update-card"],
    "shipping": ["track-order", "change-address", "split-shipment", "lost-package",
                 "expedite", "international", "pickup-point", "delivery-window",
                 "damaged-item", "wrong-item"],
    "account": ["reset-password", "merge-accounts", "delete-account", "export-data",
                "two-factor", "change-email", "family-plan", "locked-out", "name-change",
                "close-and-refund"],
    "returns": ["return-label", "exchange-size", "late-return", "gift-return",
                "partial-return", "return-status", "restocking-fee", "warranty-claim",
                "return-no-receipt", "bundle-return"],
}


def measures(rng: random.Random, p: float, difficulty: float, price: float) -> dict[str, Any]:
    """A run's cost, duration, tokens and confidence: harder tasks take more tokens, and
    the agent's confidence follows its chance of passing, a little overconfident."""
    tokens = int(rng.lognormvariate(8.5 + 1.2 * difficulty, 0.35))
    stated = min(1.0, max(0.0, 0.2 + 0.75 * p + rng.gauss(0, 0.12)))
    return {
        "cost": round(tokens * price / 1e6, 5),
        "duration": round(tokens / 180 + rng.uniform(2, 6), 2),
        "tokens": tokens,
        "confidence": round(stated, 2),
    }


def write_agent(
    name: str,
    skill: float,
    seed: int,
    with_urls: bool,
    folder: Path = HERE / "results",
    condition: str | None = None,
    price: float | None = None,
) -> Path:
    """One agent's runs; with `price` (per million tokens) each run records its
    measures, drawn from a generator of their own."""
    rng = random.Random(seed)
    measure_rng = random.Random(seed + 1000)
    lines = []
    for category, tasks in TOPICS.items():
        for task in tasks:
            # A task is as hard for every agent (seeded by its name); agents differ in skill.
            task_rng = random.Random(f"{category}/{task}")
            difficulty = task_rng.random()
            solid = task_rng.random() < 0.3
            p = min(1.0, max(0.0, skill + 0.55 - 1.1 * difficulty + rng.gauss(0, 0.12)))
            if solid:
                p = 1.0 if p > 0.5 else 0.0  # many tasks are solid one way or the other
            runs = rng.randint(10, 20)
            for run in range(1, runs + 1):
                outcome: bool | None = rng.random() < p
                if rng.random() < 0.02:
                    outcome = None  # the sandbox crashed: this run could not be evaluated
                record: dict[str, Any] = {"suite": "support-desk", "model": name, "task": task,
                                          "category": category, "run": run, "passed": outcome}
                if condition is not None:
                    record["condition"] = condition
                if price is not None:
                    record.update(measures(measure_rng, p, difficulty, price))
                if with_urls:
                    record["url"] = f"https://transcripts.example.org/{name}/{task}/{run}"
                lines.append(json.dumps(record))
    rng.shuffle(lines)  # harnesses finish runs out of order
    path = folder / (f"{name}-{condition}.jsonl" if condition else f"{name}.jsonl")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_history() -> None:
    """history.jsonl: three earlier monthly builds, the agents improving a little each time."""
    import tempfile

    from reportgen.history import history_bytes
    from reportgen.readers import Source, load_sources
    from reportgen.report import build_report, history_entry

    entries = []
    with tempfile.TemporaryDirectory() as tmp:
        for month, (alpha, beta) in enumerate([(0.40, 0.52), (0.47, 0.60), (0.50, 0.60)]):
            paths = [
                write_agent("agent-alpha", alpha, 10 + month, False, Path(tmp)),
                write_agent("agent-beta", beta, 20 + month, False, Path(tmp)),
            ]
            loaded = load_sources([Source(p) for p in paths])
            report = build_report(loaded.result_sets, "", "", 3, 0.95)
            entries.append(history_entry(report, f"2026-{9 + month:02d}"))
    (HERE / "history.jsonl").write_bytes(history_bytes(entries))


if __name__ == "__main__":
    write_agent("agent-alpha", skill=0.55, seed=1, with_urls=True, price=3.0)
    write_agent("agent-beta", skill=0.65, seed=2, with_urls=False, price=12.0)
    write_agent("agent-beta", skill=0.5, seed=3, with_urls=False, condition="typos", price=12.0)
    if "--history" in sys.argv:  # the earlier builds: rewritten only when asked
        write_history()
