"""promptfoo's `promptfoo eval --output results.json`, run with `--repeat N`.

The file (src/util/output.ts, createOutputData) is `{evalId, results: summary,
config, shareableUrl, metadata}`, where the summary (src/types/index.ts,
EvaluateSummaryV3) is `{version: 3, timestamp, prompts, results: [...], stats}`;
older promptfoo wrote the summary itself, `{version, timestamp, results: [...],
table, stats}`. Each result (EvaluateResult) has `testCase` (with
`description` and `vars`), `vars`, `promptIdx`, `testIdx`, `provider`
(`{id, label}`), `prompt`, `success`, `score` and `failureReason` (0 none,
1 an assertion failed, 2 an error).

- Task: `repeatGroupId` when a result carries one; otherwise the test case,
  named by its description (or its vars) and a short hash of description and
  vars, so repeats of one test share a task. Not `testIdx`: promptfoo's
  evaluator (src/evaluator.ts) numbers every repeat of a test anew. Two tests
  alike in both but with other assertions (`assert`) are refused, not pooled.
- Model: the provider's label or id, with the prompt's label when the file
  compares several prompts.
- Run: `repeatIndex` when present, else `testIdx`, which grows with each
  repeat (the evaluator's outer loop is over repeats).
- Passed: `success`. A result with failureReason 2 (the provider or grader
  failed) is excluded, or failed with `errors: fail`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .base import Tally
from .documents import load_json_document
from .fields import describe, short_note
from .reader import Reader
from .source import Source

#: promptfoo's ResultFailureReason.ERROR.
FAILURE_REASON_ERROR = 2
#: Characters of a test's description (or vars) kept in its task id.
_LABEL_CHARS = 60


def read_promptfoo(source: Source, tally: Tally) -> None:
    problems = tally.problems
    path = source.path
    doc = load_json_document(path, problems)
    if doc is None:
        return
    results, key = _results(doc)
    if results is None:
        problems.add(
            f"{path}: {key}: expected promptfoo's results list "
            "(from promptfoo eval --output results.json)"
        )
        return
    if not results:
        problems.add(f"{path}: {key}: the list is empty: no results to count")
        return
    before = len(problems.items)
    rows = []
    for i, result in enumerate(results):
        if problems.truncated:
            return
        row = _row(f"{path}: {key}[{i}]", result, tally)
        if row is not None:
            rows.append(row)
    _different_tests_alike(rows, tally)
    if len(problems.items) > before:
        return
    # The eval's own description names the suite (optional); the provider, the model.
    config = doc.get("config") if isinstance(doc, dict) else None
    suite = config.get("description") if isinstance(config, dict) else None
    suite = suite if isinstance(suite, str) and suite.strip() else None
    tally.named_from(suite="config.description", model="provider.id (and the prompt)")
    prompts_per_provider: dict[str, set[str]] = {}
    for row in rows:
        prompts_per_provider.setdefault(row["provider"], set()).add(row["prompt"])
    for row in rows:
        model = row["provider"]
        if len(prompts_per_provider[model]) > 1:
            model = f"{model} · {row['prompt']}"
        passed = source.error_outcome if row["error"] else row["success"]
        note = (
            short_note("the provider returned an error", row["message"]) if row["error"] else None
        )
        tally.add_run(
            row["where"], row["task"], passed, suite=suite, model=model, run=row["run"], note=note
        )


def _results(doc: Any) -> tuple[list[Any] | None, str]:
    """The results list and its key path: results.results (current) or results (older)."""
    if not isinstance(doc, dict):
        return None, "(top level)"
    results = doc.get("results")
    if isinstance(results, dict):
        inner = results.get("results")
        return (inner if isinstance(inner, list) else None), "results.results"
    return (results if isinstance(results, list) else None), "results"


def _row(where: str, result: Any, tally: Tally) -> dict[str, Any] | None:
    problems = tally.problems
    if not isinstance(result, dict):
        problems.add(f"{where}: expected a result object, got {describe(result)}")
        return None
    success = result.get("success")
    if not isinstance(success, bool):
        problems.add(f"{where}.success: expected true or false, got {describe(success)}")
        return None
    reason = result.get("failureReason", 0)
    if isinstance(reason, bool) or not isinstance(reason, int):
        problems.add(f"{where}.failureReason: expected 0, 1 or 2, got {describe(reason)}")
        return None
    provider = _provider(result.get("provider"))
    if provider is None:
        problems.add(
            f"{where}.provider: expected {{id, label}} or a provider id, "
            f"got {describe(result.get('provider'))}"
        )
        return None
    task = _task(where, result, tally)
    if task is None:
        return None
    run = _run(where, result, tally)
    if run is False:
        return None
    case = result.get("testCase")
    checks = case.get("assert") if isinstance(case, dict) else None
    return {
        "where": where,
        "task": task,
        "checks": json.dumps(checks, sort_keys=True, ensure_ascii=False, default=str),
        "provider": provider,
        "prompt": _prompt(result),
        "success": success,
        "error": reason == FAILURE_REASON_ERROR,
        "message": result.get("error") if isinstance(result.get("error"), str) else None,
        "run": run,
    }


def _different_tests_alike(rows: list[dict[str, Any]], tally: Tally) -> None:
    """Two tests with one description and the same vars, but other assertions, would
    be one task (its id is made from the description and vars): refused, by place."""
    # Each task's assertions as first seen, and where; each other set of them said once.
    first: dict[str, dict[str, str]] = {}
    for row in rows:
        seen = first.setdefault(row["task"], {row["checks"]: row["where"]})
        if row["checks"] not in seen:
            tally.problems.add(
                f"{row['where']}.testCase.assert: another test ({next(iter(seen.values()))}) "
                "has this test's description and vars but other assertions; give each its "
                "own description"
            )
            seen[row["checks"]] = row["where"]


def _provider(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, dict):
        for key in ("label", "id"):
            name = value.get(key)
            if isinstance(name, str) and name.strip():
                return name
    return None


def _prompt(result: dict[str, Any]) -> str:
    prompt = result.get("prompt")
    label = prompt.get("label") if isinstance(prompt, dict) else None
    if isinstance(label, str) and label.strip():
        return label
    index = result.get("promptIdx")
    return f"prompt {index}" if isinstance(index, int) else "prompt"


def _task(where: str, result: dict[str, Any], tally: Tally) -> str | None:
    group = _field(result, "repeatGroupId")
    if group is not None:
        if isinstance(group, bool) or not isinstance(group, str | int) or group == "":
            tally.problems.add(f"{where}.repeatGroupId: expected a string, got {describe(group)}")
            return None
        return str(group)
    case = result.get("testCase")
    case = case if isinstance(case, dict) else {}
    description = case.get("description", result.get("description"))
    variables = case.get("vars", result.get("vars"))
    if description is not None and not isinstance(description, str):
        tally.problems.add(f"{where}.testCase.description: expected a string")
        return None
    if variables is not None and not isinstance(variables, dict):
        tally.problems.add(f"{where}.testCase.vars: expected an object of variables")
        return None
    if not description and not variables:
        tally.problems.add(f"{where}.testCase: neither a description nor vars to tell the test by")
        return None
    canonical = json.dumps(
        {"description": description, "vars": variables}, sort_keys=True, ensure_ascii=False
    )
    digest = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    label = description or ", ".join(
        f"{k}={_short(v)}" for k, v in sorted((variables or {}).items())
    )
    label = " ".join(label.split())  # one line: descriptions may hold line breaks
    if len(label) > _LABEL_CHARS:
        label = label[: _LABEL_CHARS - 1] + "…"
    return f"{label} #{digest}"


def _short(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _field(result: dict[str, Any], key: str) -> Any:
    """A field at the result's top level, else in its metadata."""
    if key in result:
        return result[key]
    metadata = result.get("metadata")
    return metadata.get(key) if isinstance(metadata, dict) else None


def _run(where: str, result: dict[str, Any], tally: Tally) -> int | bool | None:
    """repeatIndex, else testIdx, else None (file order); False after a problem."""
    for key in ("repeatIndex", "testIdx"):
        value = _field(result, key) if key == "repeatIndex" else result.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            tally.problems.add(f"{where}.{key}: expected a whole number, got {describe(value)}")
            return False
        return value
    return None


def sniff(head: bytes) -> bool:
    """promptfoo's output: evalId and results, or (older) results holding success and
    namedScores."""
    if not head.startswith(b"{") or b'"results"' not in head:
        return False
    return b'"evalId"' in head or (b'"success"' in head and b'"namedScores"' in head)


READER = Reader(
    name="promptfoo",
    suffixes=(),
    sniff=sniff,
    read=read_promptfoo,
    summary="promptfoo eval --output results.json (with --repeat N); "
    "a test case is a task, a provider (and prompt) a model; errors are excluded",
)
