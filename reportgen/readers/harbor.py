"""Harbor jobs (Terminal-Bench 2): a job folder of `<trial>/result.json`.

Harbor writes one TrialResult per trial (src/harbor/models/trial/result.py):
`task_name`, `trial_name`, `verifier_result` (VerifierResult,
src/harbor/models/verifier/result.py: `rewards`, a map such as
{"reward": 1.0}), `exception_info` (set when the trial raised: an agent
timeout, a container that would not start, a missing reward file) and
`agent_info` (the agent's `name` and `model_info.name`, which name the result
set: "terminus-2 (claude-sonnet-4-5)"; a job folder with neither is named after
itself, so separate jobs are never pooled). The job folder also holds the job's own
result.json (counts over all trials, no task_name), which is skipped.

A trial passes when its reward reaches the threshold (1 unless `threshold:`
says otherwise). A trial with exception_info and no verifier result was never
graded: it is excluded (left out of n and counted), or failed with `errors:
fail`. One with exception_info that was graded all the same counts by its
reward. When the rewards map has several entries, `reward` is used, or the one
named by `scorer:`.

Beside the outcome a trial may record what it cost: `agent_result` (AgentResult:
`cost_usd`, and `n_input_tokens` and `n_output_tokens`, summed as its tokens) and
`agent_execution` (TimingInfo: the agent's `started_at` and `finished_at`, whose
difference is its duration; the trial's own span also holds the environment's setup
and the verifier).
"""

from __future__ import annotations

import math
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from ..counts import NAMED_BY_FOLDER
from .base import Tally
from .documents import load_json_document
from .fields import agent_with_model, describe, harness_measures, short_note, summed
from .reader import Reader
from .source import Source

#: The reward a trial needs to pass unless `threshold:` is given.
DEFAULT_THRESHOLD = 1.0
#: The rewards entry read when there are several and no `scorer:`.
DEFAULT_REWARD = "reward"


def read_harbor(source: Source, tally: Tally) -> None:
    problems = tally.problems
    path = source.path
    doc = load_json_document(path, problems)
    if doc is None:
        return
    if not isinstance(doc, dict):
        problems.add(f"{path}: expected a Harbor trial result (an object with task_name)")
        return
    if "task_name" not in doc and _is_job_summary(doc):
        problems.add(
            f"{path}: this is a Harbor job's summary, which holds no per-trial results; "
            "give the job folder instead"
        )
        return
    task = doc.get("task_name")
    if not isinstance(task, str) or not task.strip():
        problems.add(f"{path}: task_name: expected a string, got {describe(task)}")
        return
    trial = doc.get("trial_name")
    if not isinstance(trial, str) or not trial.strip():
        problems.add(f"{path}: trial_name: expected a string, got {describe(trial)}")
        return
    started = doc.get("started_at")
    # Trial names end in a random suffix: order runs by their start, then by name.
    run = f"{started if isinstance(started, str) else ''} {trial}"
    model, suite = _model(doc), doc.get("source")
    suite = suite if isinstance(suite, str) and suite.strip() else None
    tally.named_from(suite="source", model="agent_info")
    if model is None and len(path.parents) > 1:
        # No agent or model named: each job folder (<job>/<trial>/result.json) is taken
        # as one agent, so that a folder of several jobs never pools them (said on the page).
        model = Path(os.path.abspath(path)).parents[1].name
        tally.named_from(suite="source", model=NAMED_BY_FOLDER)
    where = str(path)
    measures = _measures(path, doc, tally)
    if measures is None:
        return
    exception = doc.get("exception_info")
    if exception is not None:
        if not isinstance(exception, dict):
            problems.add(f"{path}: exception_info: expected an object or null")
            return
        # A trial that raised but was still graded (an agent that timed out, then
        # failed the tests) counts by its reward: leaving such failures out would
        # make the agent look more reliable than it is. Only an ungraded trial is
        # an error run, excluded (or failed with errors: fail).
        if doc.get("verifier_result") is None:
            log = path.parent / "trial.log"
            note = short_note(
                "raised, never graded",
                " ".join(
                    str(exception.get(key))
                    for key in ("exception_type", "exception_message")
                    if isinstance(exception.get(key), str)
                ),
                f"log {log}" if log.is_file() else None,
            )
            tally.add_run(
                where,
                task,
                source.error_outcome,
                suite=suite,
                model=model,
                run=run,
                note=note,
                measures=measures,
            )
            return
    reward = _reward(path, doc.get("verifier_result"), source.scorer, tally)
    if reward is None:
        return
    threshold = DEFAULT_THRESHOLD if source.threshold is None else source.threshold
    tally.add_run(
        where, task, reward >= threshold, suite=suite, model=model, run=run, measures=measures
    )


def _measures(path: Path, doc: dict[str, Any], tally: Tally) -> dict[str, float] | None:
    """The agent's cost, tokens and wall time, where the trial recorded them."""
    result = doc.get("agent_result")
    result = result if isinstance(result, dict) else {}
    return harness_measures(
        str(path),
        {
            "cost": ("agent_result.cost_usd", result.get("cost_usd")),
            "tokens": (
                "agent_result.n_input_tokens + n_output_tokens",
                summed(result.get("n_input_tokens"), result.get("n_output_tokens")),
            ),
            "duration": ("agent_execution", _seconds(doc.get("agent_execution"))),
        },
        tally.problems,
    )


def _seconds(span: Any) -> Any:
    """finished_at - started_at of a TimingInfo, in seconds; None where either is
    missing; the span itself where its times cannot be read (harness_measures names it)."""
    if not isinstance(span, dict):
        return span
    started, finished = span.get("started_at"), span.get("finished_at")
    if started is None or finished is None:
        return None
    try:
        seconds = (
            datetime.fromisoformat(finished) - datetime.fromisoformat(started)
        ).total_seconds()
    except (TypeError, ValueError):
        return span
    return seconds


def _reward(path: Path, verifier: Any, scorer: str | None, tally: Tally) -> float | None:
    problems = tally.problems
    if verifier is None:
        problems.add(
            f"{path}: verifier_result: missing, and the trial has no exception_info "
            "(was the trial finished?)"
        )
        return None
    rewards = verifier.get("rewards") if isinstance(verifier, dict) else None
    if not isinstance(rewards, dict) or not rewards:
        got = verifier.get("rewards") if isinstance(verifier, dict) else verifier
        problems.add(
            f"{path}: verifier_result.rewards: expected a map such as "
            f'{{"reward": 1.0}}, got {describe(got)}'
        )
        return None
    if scorer is not None:
        key = scorer
        if key not in rewards:
            problems.add(
                f"{path}: verifier_result.rewards: no {key!r} (scorer:); "
                f"it has {', '.join(map(str, rewards))}"
            )
            return None
    elif DEFAULT_REWARD in rewards or len(rewards) == 1:
        key = DEFAULT_REWARD if DEFAULT_REWARD in rewards else next(iter(rewards))
    else:
        problems.add(
            f"{path}: verifier_result.rewards: several rewards ({', '.join(map(str, rewards))}) "
            "and none named reward; choose one with scorer: (or --scorer)"
        )
        return None
    value = rewards[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problems.add(
            f"{path}: verifier_result.rewards.{key}: expected a number, got {describe(value)}"
        )
        return None
    return float(value)


def _model(doc: dict[str, Any]) -> str | None:
    """The agent and its model ("terminus-2 (claude-sonnet-4-5)") from agent_info, else
    from the trial config's agent: two agents run with one model are two result sets."""
    info = doc.get("agent_info")
    if isinstance(info, dict):
        model_info = info.get("model_info")
        model = model_info.get("name") if isinstance(model_info, dict) else None
        named = agent_with_model(info.get("name"), model)
        if named is not None:
            return named
    config = doc.get("config")
    agent = config.get("agent") if isinstance(config, dict) else None
    if not isinstance(agent, dict):
        return None
    # "anthropic/claude-sonnet-4-5" there is model_info's "claude-sonnet-4-5" (with its
    # provider apart): named as agent_info names it, one agent's trials stay one set.
    model = agent.get("model_name")
    if isinstance(model, str) and "/" in model:
        model = model.split("/", 1)[1]
    return agent_with_model(agent.get("name"), model)


def _is_job_summary(doc: dict[str, Any]) -> bool:
    return "n_total_trials" in doc or "stats" in doc


def folder_files(paths: list[Path]) -> list[Path]:
    """Every trial's result.json, not the job's summary beside them."""
    keep = []
    for path in paths:
        with path.open("rb") as handle:
            head = handle.read(64 * 1024)
        summary = b'"n_total_trials"' in head or b'"stats"' in head
        if b'"task_name"' in head or not summary:
            keep.append(path)
    return keep


def sniff(head: bytes) -> bool:
    """A trial result (task_name and trial_name), or a job summary (n_total_trials)."""
    if not head.startswith(b"{"):
        return False
    trial = b'"task_name"' in head and b'"trial_name"' in head
    return trial or (b'"n_total_trials"' in head and b'"stats"' in head)


READER = Reader(
    name="harbor",
    suffixes=(),
    sniff=sniff,
    read=read_harbor,
    summary="Harbor (Terminal-Bench 2) job folders of <trial>/result.json; passed = reward "
    "reaches threshold:; trials that raised and were never graded are excluded",
    folder_files=folder_files,
    scorers=True,
    scores=True,
)
