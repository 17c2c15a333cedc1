"""`reportgen check`: a CI gate on a built report.

Reads report.json (from a site folder or the file itself) and fails (exit 1)
when a result set's reliability@k is below a bar, or dropped against a
baseline report by more than allowed. Result sets are matched to the baseline
by suite and model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import UserError
from .load import json_loads


def read_report(path: Path, flag: str = "report") -> dict[str, Any]:
    """report.json from a site folder or a file path, checked enough to use."""
    file = path / "report.json" if path.is_dir() else path
    if not file.exists():
        raise UserError(f"{flag}: {file}: no such file (give a built site or its report.json)")
    try:
        doc = json_loads(file.read_bytes())
    except (UnicodeDecodeError, ValueError) as error:
        raise UserError(f"{flag}: {file}: not a report.json ({error})") from None
    except OSError as error:
        raise UserError(f"{flag}: {file}: cannot read ({error.strerror})") from None
    if not isinstance(doc, dict) or doc.get("schema_version") != 1:
        raise UserError(f"{flag}: {file}: not a reportgen report.json (schema_version 1)")
    sets = doc.get("result_sets")
    if not isinstance(sets, list):
        raise UserError(f"{flag}: {file}: result_sets: missing")
    for i, rs in enumerate(sets):
        try:
            rs["reliability_at_k"]["plugin"]["estimate"]
            rs["suite"], rs["model"], rs["name"]
        except (KeyError, TypeError):
            raise UserError(f"{flag}: {file}: result_sets[{i}]: missing reliability_at_k") from None
    return doc


@dataclass(frozen=True)
class Verdict:
    failures: list[str]
    passes: list[str]


def _value(rs: dict[str, Any], estimator: str) -> float | None:
    value = rs["reliability_at_k"][estimator]["estimate"]
    return None if value is None else float(value)


def check_report(
    report: dict[str, Any],
    min_reliability: float | None,
    baseline: dict[str, Any] | None,
    max_drop: float | None,
    estimator: str = "plugin",
) -> Verdict:
    k = report["k"]
    failures: list[str] = []
    passes: list[str] = []
    old_sets = {(rs["suite"], rs["model"]): rs for rs in (baseline or {}).get("result_sets", [])}
    for rs in report["result_sets"]:
        name = rs["name"]
        value = _value(rs, estimator)
        label = f"reliability@{k} ({estimator})"
        if value is None:
            failures.append(f"{name}: {label} is undefined; see the report's warnings")
            continue
        if min_reliability is not None:
            if value < min_reliability:
                failures.append(f"{name}: {label} {value:.3f} is below {min_reliability:.3f}")
            else:
                passes.append(f"{name}: {label} {value:.3f} >= {min_reliability:.3f}")
        if baseline is not None and max_drop is not None:
            old = old_sets.get((rs["suite"], rs["model"]))
            old_value = None if old is None else _value(old, estimator)
            if old_value is None:
                passes.append(f"{name}: not in the baseline; nothing to compare")
                continue
            drop = old_value - value
            if drop > max_drop:
                failures.append(
                    f"{name}: {label} dropped by {drop:.3f} ({old_value:.3f} -> {value:.3f}), "
                    f"more than the allowed {max_drop:.3f}"
                )
            else:
                passes.append(
                    f"{name}: {label} {old_value:.3f} -> {value:.3f}, within {max_drop:.3f}"
                )
    return Verdict(failures=failures, passes=passes)


def baseline_from_history(path: Path, report: dict[str, Any]) -> dict[str, Any]:
    """The build before the current one in a history.jsonl, shaped like a report.json.

    Values are recomputed from the stored counts with the report's k and
    confidence, so the comparison is like for like.
    """
    from .estimate import estimate_suite
    from .history import read_history
    from .serialize import reliability_json

    entries = read_history(path)
    current = (report.get("history") or {}).get("label")
    earlier = [e for e in entries if e["label"] != current]
    if current is not None:
        labels = [e["label"] for e in entries]
        if current in labels:
            earlier = entries[: labels.index(current)]
    if not earlier:
        raise UserError(f"--baseline: {path} has no build before this one to compare with")
    entry = earlier[-1]
    sets = []
    for rs in entry["result_sets"]:
        counts = list(rs["tasks"].values())
        suite = estimate_suite(
            [c for c, _ in counts], [n for _, n in counts], report["k"], report["confidence"]
        )
        sets.append(
            {
                "suite": rs["suite"],
                "model": rs["model"],
                "name": rs["name"],
                "reliability_at_k": reliability_json(suite),
            }
        )
    return {"schema_version": 1, "label": entry["label"], "result_sets": sets}
