"""SWE-bench run reports: `<model>.<run_id>.json`, one file per run.

SWE-bench's harness (swebench/harness/reporting.py, make_run_report) writes one
report per evaluation run with the instance ids sorted into lists:
`submitted_ids`, `resolved_ids`, `unresolved_ids`, `empty_patch_ids`,
`error_ids`, and in newer versions `infra_failure_ids` and
`ambiguous_failure_ids`. Each submitted id is one run of that task:

- in `resolved_ids`: passed;
- in `error_ids` or `infra_failure_ids`: the harness could not evaluate it, so
  the run is excluded (left out of n, counted as excluded), or failed with
  `errors: fail`;
- in `unresolved_ids`, `empty_patch_ids` or `ambiguous_failure_ids` (which
  SWE-bench also lists as unresolved): failed;
- in none of them (submitted but not run, for example outside the dataset):
  excluded, as it was never evaluated.

The file name gives the model (the part before the last dot, with SWE-bench's
`__` for `/` turned back) and the run id (the part after it); a report names no
dataset, so the suite is the folder's name unless set. A folder of such reports
is the usual input, one report per repeated run; reports given one by one are
read together the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Tally
from .documents import load_json_document
from .fields import describe, fraction
from .reader import Reader
from .source import Source

#: The lists a report sorts submitted ids into.
_PASSED = "resolved_ids"
_FAILED = ("unresolved_ids", "empty_patch_ids", "ambiguous_failure_ids")
_ERRORS = ("error_ids", "infra_failure_ids")


def model_and_run(path: Path) -> tuple[str | None, str]:
    """(model, run id) from `<model>.<run_id>.json`; no model when the name has no dot."""
    stem = path.name.removesuffix(".json")
    model, dot, run = stem.rpartition(".")
    if not dot or not model or not run:
        return None, stem
    return model.replace("__", "/"), run


def read_swe_bench(source: Source, tally: Tally) -> None:
    problems = tally.problems
    path = source.path
    doc = load_json_document(path, problems)
    if doc is None:
        return
    if not isinstance(doc, dict):
        problems.add(f"{path}: expected a SWE-bench run report (an object with submitted_ids)")
        return
    submitted = _id_list(path, doc, "submitted_ids", problems, required=True)
    if submitted is None:
        return
    if not submitted:
        problems.add(f"{path}: submitted_ids: the list is empty: no runs to count")
        return
    before = len(problems.items)
    known = set(submitted)
    lists: dict[str, list[str]] = {}
    for key in (_PASSED, *_FAILED, *_ERRORS):
        ids = _id_list(path, doc, key, problems, required=key == _PASSED)
        for i, task in enumerate(ids or ()):
            if task not in known:
                problems.add(f"{path}: {key}[{i}]: {task!r} is not in submitted_ids")
                continue
            in_lists = lists.setdefault(task, [])
            if _PASSED in in_lists or (key == _PASSED and in_lists):
                # Resolved and not resolved at once: the report contradicts itself.
                problems.add(f"{path}: {key}[{i}]: {task!r} is also in {in_lists[0]}")
            in_lists.append(key)
    if len(problems.items) > before:
        return
    model, run = model_and_run(path)
    # The report names neither its model nor its dataset: the model is in the file's
    # name by SWE-bench's convention, and the suite falls back to the folder's name.
    if model is not None:
        tally.named_from(model="the file's name, <model>.<run_id>.json")
        tally.suite_from_name()
    for i, task in enumerate(submitted):
        in_lists = lists.get(task, [])
        passed: bool | None
        note = None
        errors = [key for key in in_lists if key in _ERRORS]
        if errors:
            passed = source.error_outcome
            note = f"the harness could not evaluate it ({errors[0]})"
        elif in_lists:
            passed = _PASSED in in_lists
        else:
            passed = None
            note = "submitted, but never evaluated in this run"
        where = f"{path}: submitted_ids[{i}]"
        tally.add_run(where, task, passed, model=model, run=run, note=note)
    resolved, total = doc.get("resolved_instances"), doc.get("total_instances")
    if isinstance(total, int) and total > 0:
        rate = fraction(resolved / total) if isinstance(resolved, int) else None
        if rate is not None:  # SWE-bench's resolve rate: over the dataset it was given
            tally.add_figure(str(path), "resolved_instances / total_instances", rate, model=model)


def _id_list(
    path: Path, doc: dict[str, Any], key: str, problems: Any, required: bool
) -> list[str] | None:
    """The ids under `key`, checked: a list of non-empty strings, each once."""
    value = doc.get(key)
    if value is None:
        if required:
            problems.add(f"{path}: {key}: missing; is this a SWE-bench run report?")
        return None
    if not isinstance(value, list):
        problems.add(f"{path}: {key}: expected a list of instance ids, got {describe(value)}")
        return None
    seen: set[str] = set()
    ids = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            problems.add(f"{path}: {key}[{i}]: expected an instance id, got {describe(item)}")
            return None
        if item in seen:
            problems.add(f"{path}: {key}[{i}]: {item!r} is listed twice")
            return None
        seen.add(item)
        ids.append(item)
    return ids


def sniff(head: bytes) -> bool:
    """A JSON object with SWE-bench's counts or id lists (the counts come first)."""
    return (
        head.startswith(b"{")
        and (b'"submitted_ids"' in head or b'"submitted_instances"' in head)
        and (b'"resolved_ids"' in head or b'"resolved_instances"' in head)
    )


READER = Reader(
    name="swe-bench",
    suffixes=(),
    sniff=sniff,
    read=read_swe_bench,
    summary="SWE-bench run reports <model>.<run_id>.json, one per run (a folder of them); "
    "error and infra-failure ids are excluded runs",
)
