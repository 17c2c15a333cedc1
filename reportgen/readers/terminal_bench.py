"""Terminal-Bench 1 (`tb run`): the run's results.json, or its per-trial files.

`tb run` writes `runs/<run_id>/results.json` (terminal_bench/harness/models.py,
BenchmarkResults: `results`, a list of TrialResults) and one
`runs/<run_id>/<task_id>/<trial_name>/results.json` per trial (a TrialResults
alone). A trial has `task_id`, `trial_name` (`<task>.<N>-of-<M>.<run_id>` with
--n-attempts M), `is_resolved` (true, false, or null when it was never graded)
and `failure_mode` (terminal_bench/agents/failure_mode.py, FailureMode).

How a trial counts:
- `is_resolved` true or false: passed or failed, whatever the failure mode (an
  agent that timed out is still graded afterwards);
- `is_resolved` null after the model ran out of room (agent_timeout,
  context_length_exceeded, output_length_exceeded, fatal_llm_parse_error): failed;
- `is_resolved` null otherwise (test_timeout, parse_error,
  agent_installation_failed, unknown_agent_error, unknown, unset, none): the
  harness never graded it, so it is excluded, or failed with `errors: fail`
  (Terminal-Bench's own accuracy counts every ungraded trial as a failure).

The run's run_metadata.json, when it lies beside the run's results.json, gives
the suite (`dataset_name@dataset_version`: two versions are two suites) and what
was evaluated (`agent_name` with `model_name`, or else the model its
`agent_kwargs` name: "terminus (anthropic/claude-sonnet-4)"). Where it names no
model, or is missing, a folder's name stands in (see _run_metadata), so that a
folder of several submissions is never pooled on a guess; the set page says so.

The run of a trial is `<run_id>/<N>` from its trial name, so several `tb run`
folders with one attempt each count as separate runs, in run-id (date) order.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..counts import NAMED_BY_FOLDER
from .base import Tally
from .documents import load_json_document
from .fields import (
    agent_with_model,
    describe,
    fraction,
    measure_rule,
    measure_value,
    short_note,
    summed,
    task_id_of,
)
from .reader import Reader
from .source import Source

#: Failure modes in which the model, not the harness, kept the trial from being
#: graded: the trial is a failure of the model.
MODEL_FAILURE_MODES = frozenset(
    {
        "agent_timeout",
        "context_length_exceeded",
        "output_length_exceeded",
        "fatal_llm_parse_error",
    }
)
# ASCII digits, at most nine: anything else is left as the trial name.
_ATTEMPT = re.compile(r"\.([0-9]{1,9})-of-([0-9]+)(?:\.(.+))?$")


def run_of(task: str, trial_name: str) -> str:
    """A sortable run id from `<task>.<N>-of-<M>.<run_id>`: "<run_id>/<N, zero-padded>";
    the trial name itself when it does not have that shape."""
    rest = trial_name[len(task) :] if trial_name.startswith(task) else trial_name
    match = _ATTEMPT.search(rest)
    if match is None:
        return trial_name
    attempt, _, run_id = match.groups()
    return f"{run_id or ''}/{int(attempt):09d}"


def read_terminal_bench(source: Source, tally: Tally) -> None:
    problems = tally.problems
    path = source.path
    doc = load_json_document(path, problems)
    if doc is None:
        return
    if isinstance(doc, dict) and "results" in doc:
        suite, model = _run_metadata(path.parent, tally)
        trials = doc["results"]
        if not isinstance(trials, list):
            problems.add(f"{path}: results: expected a list of trials, got {describe(trials)}")
            return
        if not trials:
            problems.add(f"{path}: results: the list is empty: no trials to count")
            return
        for i, trial in enumerate(trials):
            if problems.truncated:
                return
            where = f"{path}: results[{i}]"
            _add_trial(where, f"{where}.", trial, source, tally, suite, model)
        accuracy = fraction(doc.get("accuracy"))
        if accuracy is not None:  # resolved trials over all, ungraded ones failing
            tally.add_figure(str(path), "accuracy", accuracy, suite=suite, model=model)
    elif isinstance(doc, dict) and "trial_name" in doc:
        # runs/<run_id>/<task>/<trial_name>/results.json: the run's folder is two up.
        suite, model = (
            _run_metadata(path.parents[2], tally) if len(path.parents) > 2 else (None, None)
        )
        _add_trial(str(path), f"{path}: ", doc, source, tally, suite, model)
    else:
        problems.add(
            f"{path}: expected Terminal-Bench results: an object with results (the run) "
            "or with trial_name (one trial)"
        )


def _run_metadata(run: Path, tally: Tally) -> tuple[str | None, str | None]:
    """(dataset, what was evaluated) from the run's run_metadata.json.

    What was evaluated is its agent_name with its model_name, or with the model_name
    (or model) of its agent_kwargs. Many agents leave both out (the leaderboard's
    Factory Droid, its orchestrator run with two models): then the folder that holds
    the run stands for the model, so that two such submissions are never pooled,
    while the runs of one submission (`<submission>/<run_id>/`, each folder named
    after its run) stay together.
    Without the file the run's folder stands for both agent and model.
    """
    path = run / "run_metadata.json"
    run = Path(os.path.abspath(run))  # "." names the folder it is
    doc = load_json_document(path, tally.problems) if path.is_file() else None
    if not isinstance(doc, dict):
        if path.is_file() and doc is not None:
            tally.problems.add(f"{path}: expected the run's metadata object")
        tally.named_from(model=NAMED_BY_FOLDER)
        return None, run.name
    dataset, version = _text(doc.get("dataset_name")), _text(doc.get("dataset_version"))
    if dataset is not None and version is not None:
        # Versions of a dataset hold different tasks and tests: never one suite.
        # (name@version, as the leaderboard names its folders.)
        dataset, suite_by = (
            f"{dataset}@{version}",
            "run_metadata.json: dataset_name, dataset_version",
        )
    else:
        suite_by = "run_metadata.json: dataset_name"
    agent, model = doc.get("agent_name"), _text(doc.get("model_name"))
    named = "model_name"
    kwargs = doc.get("agent_kwargs")
    if model is None and isinstance(kwargs, dict):
        # `tb run --agent-kwarg model_name=...` names the agent's model where --model did not.
        for key in ("model_name", "model"):
            if _text(kwargs.get(key)) is not None:
                model, named = kwargs[key], f"agent_kwargs.{key}"
                break
    if model is not None:
        tally.named_from(suite=suite_by, model=f"run_metadata.json: agent_name, {named}")
        return dataset, agent_with_model(agent, model)
    holder = run.parent if run.name == doc.get("run_id") and run.parent.name else run
    tally.named_from(suite=suite_by, model=NAMED_BY_FOLDER)
    return dataset, agent_with_model(agent, holder.name)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _add_trial(
    where: str,
    prefix: str,
    trial: Any,
    source: Source,
    tally: Tally,
    suite: str | None,
    model: str | None,
) -> None:
    """One trial; `where` locates it, `prefix` goes before a key to locate that key."""
    problems = tally.problems
    if not isinstance(trial, dict):
        problems.add(f"{where}: expected a trial object, got {describe(trial)}")
        return
    task = task_id_of(trial.get("task_id"))
    if task is None:
        problems.add(f"{prefix}task_id: expected a string, got {describe(trial.get('task_id'))}")
        return
    name = trial.get("trial_name")
    if not isinstance(name, str) or not name.strip():
        problems.add(f"{prefix}trial_name: expected a string, got {describe(name)}")
        return
    resolved = trial.get("is_resolved")
    if resolved is not None and not isinstance(resolved, bool):
        problems.add(f"{prefix}is_resolved: expected true, false or null, got {describe(resolved)}")
        return
    mode = trial.get("failure_mode", "unset")
    if mode is not None and not isinstance(mode, str):
        problems.add(f"{prefix}failure_mode: expected a string, got {describe(mode)}")
        return
    passed: bool | None
    note = None
    if resolved is not None:
        passed = resolved
    elif mode in MODEL_FAILURE_MODES:
        passed = False
    else:
        passed = source.error_outcome
        recording = trial.get("recording_path")
        note = short_note(
            f"never graded (failure mode {mode or 'none'})",
            f"recording {recording}" if isinstance(recording, str) else None,
        )
    # The agent's tokens, where the harness counted them. Agents that do not report
    # their usage leave 0 and 0 (mini-swe-agent, Factory Droid in the leaderboard's
    # runs): no run of an agent uses no tokens, so that is read as not recorded.
    tokens = summed(trial.get("total_input_tokens"), trial.get("total_output_tokens"))
    measures = None
    if tokens is not None and tokens != 0:
        value = measure_value("tokens", tokens)
        if value is None:
            problems.add(
                f"{prefix}total_input_tokens, total_output_tokens: {describe(tokens)} is not "
                f"{measure_rule('tokens')}"
            )
            return
        measures = {"tokens": value}
    run = run_of(task, name)
    tally.add_run(
        where, task, passed, suite=suite, model=model, run=run, note=note, measures=measures
    )


def folder_files(paths: list[Path]) -> list[Path]:
    """A run folder holds the run's results.json and each trial's again below it:
    read the run's, and per-trial files only where no run file covers them."""
    runs = [p.parent for p in paths if _is_run_file(p)]
    return [
        p for p in paths if _is_run_file(p) or not any(p.parent.is_relative_to(run) for run in runs)
    ]


def _is_run_file(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(64 * 1024).lstrip()
    # A run's file starts with its id and the results list; a trial's with its fields.
    return head.startswith(b"{") and b'"results"' in head


def sniff(head: bytes) -> bool:
    """A trial (or a run's list of them): trial_name and is_resolved, not Harbor's task_name."""
    return (
        head.startswith(b"{")
        and b'"trial_name"' in head
        and b'"is_resolved"' in head
        and b'"task_name"' not in head
    )


READER = Reader(
    name="terminal-bench",
    suffixes=(),
    sniff=sniff,
    read=read_terminal_bench,
    summary="Terminal-Bench 1 (tb run): the run's results.json or its folder of trials; "
    "ungraded trials are excluded",
    folder_files=folder_files,
)
