"""The canonical YAML suite file: tasks given as counts or as run outcomes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..counts import MAX_COUNT
from ..errors import Problems
from .base import Tally
from .documents import BadDocument, yaml_document
from .fields import describe, did_you_mean, is_optional_text, key_text, parse_passed, task_id_of
from .reader import Reader, never
from .source import Source


def _yaml_document(path: Path, problems: Problems) -> Any:
    try:
        return yaml_document(path)
    except BadDocument as error:
        problems.add(str(error))
        return None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def read_yaml(source: Source, tally: Tally) -> None:
    """suite/model/tasks, each task with successes and runs, or outcomes."""
    problems = tally.problems
    path = source.path
    doc = _yaml_document(path, problems)
    if doc is None and not problems.items:
        problems.add(f"{path}: the file is empty; expected suite, model and tasks")
    if not isinstance(doc, dict):
        if doc is not None:
            problems.add(f"{path}: expected a mapping with a 'tasks' list at the top")
        return
    known = {"suite", "model", "tasks", "name", "description"}
    for key in doc:
        if key not in known:
            problems.add(f"{path}: unknown key {key_text(key)}{did_you_mean(str(key), known)}")
    for key in ("suite", "model"):
        if not is_optional_text(doc.get(key)):
            problems.add(f"{path}: {key}: must be a non-empty string")
    tasks = doc.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        problems.add(f"{path}: tasks: expected a non-empty list of tasks")
        return
    # A bad suite or model (already reported) must not reach the tally: a list there
    # crashed with "unhashable type" instead of going on to check the tasks.
    suite = doc.get("suite") if is_optional_text(doc.get("suite")) else None
    model = doc.get("model") if is_optional_text(doc.get("model")) else None
    seen: dict[str, int] = {}
    for i, item in enumerate(tasks):
        task = task_id_of(item.get("id")) if isinstance(item, dict) else None
        if task is not None and task in seen:
            problems.add(f"{path}: tasks[{i}].id: {task!r} already given at tasks[{seen[task]}]")
            continue
        if task is not None:
            seen[task] = i
        _yaml_task(f"{path}: tasks[{i}]", item, tally, suite, model)


def _yaml_task(where: str, item: Any, tally: Tally, suite: str | None, model: str | None) -> None:
    problems = tally.problems
    if not isinstance(item, dict):
        problems.add(f"{where}: expected a mapping with id and successes/runs or outcomes")
        return
    known = {"id", "successes", "runs", "outcomes", "category", "excluded"}
    for key in item:
        if key not in known:
            problems.add(f"{where}: unknown key {key_text(key)}{did_you_mean(str(key), known)}")
    task = task_id_of(item.get("id"))
    if task is None:
        problems.add(f"{where}.id: expected a string or integer task id")
        return
    category = item.get("category")
    if not is_optional_text(category):
        problems.add(f"{where}.category: must be a non-empty string")
        return
    if "outcomes" in item:
        if "successes" in item or "runs" in item:
            problems.add(f"{where}: give either outcomes or successes and runs, not both")
            return
        if "excluded" in item:
            # With outcomes, an excluded run is a null entry; a count beside them would be
            # a second, possibly contradicting, statement of the same thing.
            problems.add(f"{where}.excluded: with outcomes, give excluded runs as null entries")
            return
        outcomes = item["outcomes"]
        if not isinstance(outcomes, list) or not outcomes:
            problems.add(f"{where}.outcomes: expected a non-empty list of true/false/null")
            return
        for j, value in enumerate(outcomes):
            ok, passed = parse_passed(value)
            if not ok:
                problems.add(
                    f"{where}.outcomes[{j}]: {describe(value)} is not true, false, 1, 0 or null"
                )
                return
            tally.add_run(
                f"{where}.outcomes[{j}]", task, passed, suite=suite, model=model, category=category
            )
        return
    successes, runs = _count(item.get("successes")), _count(item.get("runs"))
    for key, value in (("successes", successes), ("runs", runs)):
        if value is None:
            problems.add(f"{where}.{key}: expected a whole number, got {describe(item.get(key))}")
            return
    assert successes is not None and runs is not None
    # `excluded` (runs that could not be evaluated, not part of runs) was accepted as a key
    # but silently dropped; it is now checked and counted like a null run in JSONL.
    excluded = _count(item.get("excluded", 0))
    if runs < 1 and not (runs == 0 and excluded is not None and excluded >= 1):
        # A task whose every run was excluded has runs 0, as in JSONL and the tables.
        problems.add(f"{where}.runs: must be at least 1 (or excluded at least 1), got {runs}")
    elif runs > MAX_COUNT or (excluded is not None and excluded > MAX_COUNT):
        key = "runs" if runs > MAX_COUNT else "excluded"
        problems.add(f"{where}.{key}: must be at most {MAX_COUNT:,}, got {item[key]}")
    elif successes < 0:
        problems.add(f"{where}.successes: must not be negative, got {successes}")
    elif successes > runs:
        problems.add(f"{where}.successes: {successes} is more than runs ({runs})")
    elif excluded is None or excluded < 0:
        problems.add(
            f"{where}.excluded: expected a whole number of at least 0, "
            f"got {describe(item.get('excluded'))}"
        )
    else:
        tally.add_counts(
            where,
            task,
            successes,
            runs,
            suite=suite,
            model=model,
            category=category,
            excluded=excluded,
        )


#: A top-level tasks key: at the start of a line, perhaps quoted, or inside a
#: mapping written in flow style ({tasks: [...]}).
_TASKS_KEY = re.compile(rb"""(?m)^(?:\{\s*)?["']?tasks["']?\s*:""")


def has_tasks_key(head: bytes) -> bool:
    """Whether a YAML file inside a folder input is a suite file: a top-level tasks
    key. Its configs (reportgen's own, a harness's) have none, and are passed over."""
    return _TASKS_KEY.search(head) is not None


READER = Reader(
    name="yaml",
    suffixes=(".yaml", ".yml"),
    sniff=never,
    in_folder=has_tasks_key,
    read=read_yaml,
    summary="a suite file: suite, model, tasks as counts or as run outcomes",
)
