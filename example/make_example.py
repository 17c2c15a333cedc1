"""Regenerate the example result files (seeded, so the output never changes).

Two agents run the same 40-task customer-support suite 10 to 20 times per task.
Some tasks are flaky, a few runs could not be evaluated (passed: null), and
agent A's runs link to transcripts. Run: .venv/bin/python example/make_example.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

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


def write_agent(
    name: str, skill: float, seed: int, with_urls: bool, folder: Path = HERE / "results"
) -> Path:
    rng = random.Random(seed)
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
                record = {"suite": "support-desk", "model": name, "task": task,
                          "category": category, "run": run, "passed": outcome}
                if with_urls:
                    record["url"] = f"https://transcripts.example.org/{name}/{task}/{run}"
                lines.append(json.dumps(record))
    rng.shuffle(lines)  # harnesses finish runs out of order
    path = folder / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_history() -> None:
    """history.jsonl: three earlier monthly builds, the agents improving a little each time."""
    import tempfile

    from reportgen.history import build_entry, history_bytes
    from reportgen.load import Source, load_sources
    from reportgen.report import build_report

    entries = []
    with tempfile.TemporaryDirectory() as tmp:
        for month, (alpha, beta) in enumerate([(0.40, 0.52), (0.47, 0.60), (0.50, 0.60)]):
            paths = [
                write_agent("agent-alpha", alpha, 10 + month, False, Path(tmp)),
                write_agent("agent-beta", beta, 20 + month, False, Path(tmp)),
            ]
            loaded = load_sources([Source(p) for p in paths])
            report = build_report(loaded.result_sets, "", "", 3, 0.95)
            entries.append(build_entry(report, f"2026-{9 + month:02d}"))
    (HERE / "history.jsonl").write_bytes(history_bytes(entries))


if __name__ == "__main__":
    write_agent("agent-alpha", skill=0.55, seed=1, with_urls=True)
    write_agent("agent-beta", skill=0.65, seed=2, with_urls=False)
    write_history()
