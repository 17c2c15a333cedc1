"""The report model: loaded result sets plus every number the pages show.

Built once, before anything is rendered (as MkDocs gathers every page's data
first), so all pages, report.json and the CSV agree by construction.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np

from .estimate import CurvePoint, SuiteEstimates, curve_over_k, estimate_suite
from .load import ResultSet, TaskCounts
from .serialize import Json, interval_json, number, reliability_json, task_json


@dataclass
class SetReport:
    """One result set with its estimates, page slugs and curve over k."""

    id: str
    result_set: ResultSet
    tasks: list[TaskCounts]  # evaluated tasks, in the order of `estimates`
    estimates: SuiteEstimates
    task_slugs: list[str]
    curve: list[CurvePoint]
    warnings: list[str]

    @property
    def page(self) -> str:
        return f"sets/{self.id}/index.html"

    def task_page(self, i: int) -> str:
        return f"sets/{self.id}/tasks/{self.task_slugs[i]}.html"

    def order_least_reliable(self) -> list[int]:
        """Task indices, least reliable (lowest plug-in pass^k) first, ties by id."""
        plugin = self.estimates.tasks.plugin
        return sorted(
            range(len(self.tasks)), key=lambda i: (plugin[i], natural_key(self.tasks[i].id))
        )


@dataclass
class Report:
    title: str
    description: str
    k: int
    confidence: float
    sets: list[SetReport]


# ---------------------------------------------------------------- slugs


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort "task-2" before "task-10": digit runs compare as numbers."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part
    )


_WINDOWS_RESERVED = (
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def slugify(text: str, max_length: int = 60) -> str:
    """A lowercase ASCII file-name stem: letters, digits, '-' and '_' only."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9_]+", "-", ascii_text.lower()).strip("-_")
    return slug[:max_length].rstrip("-_")


def unique_slugs(names: list[str], prefix: str, strict: bool = True) -> list[str]:
    """Safe, unique, case-insensitively distinct file names for arbitrary ids.

    A name that survives slugify unchanged keeps its slug; any name that had to
    be altered (or collides, or is a reserved device name on Windows) gets a
    short hash of the original appended, so the mapping is stable across builds
    and two ids never share a file, even on case-insensitive file systems.
    With strict=False (result-set names, chosen by people) a cleaned-up name
    keeps its readable slug unless it collides.
    """
    slugs: list[str] = []
    taken: set[str] = set()
    for name in names:
        base = slugify(name) or prefix
        slug = base
        altered = strict and base != name
        if altered or base in _WINDOWS_RESERVED or base in taken:
            slug = f"{base}-{_short_hash(name)}"
        while slug in taken:  # a hash collision among a suite's ids: vanishingly rare
            slug = f"{slug}-{_short_hash(slug)}"
        taken.add(slug)
        slugs.append(slug)
    return slugs


# ---------------------------------------------------------------- building the model


def build_report(
    result_sets: list[ResultSet], title: str, description: str, k: int, confidence: float
) -> Report:
    set_ids = unique_slugs([rs.name for rs in result_sets], "results", strict=False)
    sets = []
    for set_id, rs in zip(set_ids, result_sets, strict=True):
        tasks = rs.evaluated_tasks
        warnings = [
            f"task {t.id!r} has no evaluated runs ({t.excluded} excluded); it is left out"
            for t in rs.tasks
            if t.runs == 0
        ]
        successes = np.array([t.successes for t in tasks], dtype=np.int64)
        runs = np.array([t.runs for t in tasks], dtype=np.int64)
        estimates = estimate_suite(
            successes, runs, k, confidence, labels=[f"task {t.id!r}" for t in tasks]
        )
        sets.append(
            SetReport(
                id=set_id,
                result_set=rs,
                tasks=tasks,
                estimates=estimates,
                task_slugs=unique_slugs([t.id for t in tasks], "task"),
                curve=curve_over_k(successes, runs, confidence),
                warnings=warnings + list(estimates.warnings),
            )
        )
    return Report(title=title, description=description, k=k, confidence=confidence, sets=sets)


# ---------------------------------------------------------------- JSON views


def summary_set_json(s: SetReport) -> Json:
    """One result set as `reportgen summary --format json` prints it."""
    rs = s.result_set
    tasks = []
    for i, t in enumerate(s.tasks):
        row: Json = {"id": t.id}
        body = task_json(s.estimates.tasks, i)
        row["successes"] = body.pop("successes")
        row["runs"] = body.pop("runs")
        row["excluded_runs"] = t.excluded
        row.update(body)
        tasks.append(row)
    return {
        "suite": rs.suite,
        "model": rs.model,
        "name": rs.name,
        "format": rs.format,
        "excluded_runs": rs.excluded_runs,
        "tasks": tasks,
        "reliability_at_k": reliability_json(s.estimates),
        "warnings": s.warnings,
    }


def summary_json(report: Report) -> Json:
    return {
        "k": report.k,
        "confidence": report.confidence,
        "result_sets": [summary_set_json(s) for s in report.sets],
    }


def report_json(report: Report) -> Json:
    """report.json at the site root: the summary plus pages and curves."""
    sets = []
    for s in report.sets:
        body = summary_set_json(s)
        for i, task in enumerate(body["tasks"]):
            task["page"] = s.task_page(i)
        sets.append(
            {
                "id": s.id,
                "page": s.page,
                **body,
                "curve": [
                    {
                        "k": p.k,
                        "reliability_plugin": interval_json(p.plugin),
                        "reliability_unbiased": interval_json(p.unbiased),
                        "pass_at_k": interval_json(p.pass_at_k),
                    }
                    for p in s.curve
                ],
            }
        )
    return {
        "schema_version": 1,
        "title": report.title,
        "description": report.description,
        "confidence": report.confidence,
        "k": report.k,
        "result_sets": sets,
    }


def task_csv_rows(s: SetReport) -> list[list[Any]]:
    """Header and one row per task (least reliable first), full precision."""
    t = s.estimates.tasks
    k = s.estimates.k
    header = [
        "task",
        "successes",
        "runs",
        "excluded_runs",
        "pass_rate",
        "pass_rate_low",
        "pass_rate_high",
        f"pass_hat_{k}_plugin",
        f"pass_hat_{k}_plugin_low",
        f"pass_hat_{k}_plugin_high",
        f"pass_hat_{k}_unbiased",
        f"pass_at_{k}",
    ]
    rows: list[list[Any]] = [header]
    for i in s.order_least_reliable():
        task = s.tasks[i]
        values = [
            t.pass_rate[i],
            t.pass_rate_low[i],
            t.pass_rate_high[i],
            t.plugin[i],
            t.plugin_low[i],
            t.plugin_high[i],
            t.unbiased[i],
            t.pass_at_k[i],
        ]
        rows.append(
            [task.id, task.successes, task.runs, task.excluded]
            + ["" if number(v) is None else repr(float(v)) for v in values]
        )
    return rows
