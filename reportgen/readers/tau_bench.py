"""τ-bench (a JSON array of trials) and τ²-bench (results.json) results."""

from __future__ import annotations

import math
import re
from typing import Any

from .base import Tally
from .documents import load_json_records
from .fields import agent_with_model, describe, harness_measures, task_id_of
from .reader import Reader
from .source import Source

#: τ-bench and τ²-bench count a run as passed when its reward is 1 within this.
REWARD_TOLERANCE = 1e-6


def _reward_passed(value: Any) -> bool | None:
    """Pass (reward 1) or fail (anything below); None for a reward outside 0 to 1, which
    was counted as a silent failure (a reward of 2 or -1 is a broken record)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    if not -REWARD_TOLERANCE <= value <= 1 + REWARD_TOLERANCE:
        return None
    return value >= 1 - REWARD_TOLERANCE


def _reward_problem(value: Any) -> str:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return f"expected a number{' from 0 to 1' if number else ''}, got {describe(value)}"


#: The name τ-bench's run.py gives its results file, the only place that names what ran
#: (its records do not, nor which domain): <agent strategy>-<model>-<temperature>
#: _range_<start>-<end>_user-<user model>-<user strategy>_<time or job>.json, the model
#: as its last part after "/" (or with "/" as "_", in later versions). The model is
#: the shortest that leaves a number for the temperature (gpt-4o-1e-05: gpt-4o, 1e-05).
_CHECKPOINT = re.compile(
    r"(tool-calling|act|react|few-shot|orchestrated-tool-calling)-(.+?)"
    r"-(-?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)_range_-?[0-9]+--?[0-9]+"
    r"_user-(.+)-(llm|react|verify|reflection)_.+\.json"
)


def read_tau_bench(source: Source, tally: Tally) -> None:
    """τ-bench: a JSON array of {task_id, trial, reward, ...}. Where the file keeps the
    name run.py gave it, that name says what ran: the agent strategy with the model, its
    temperature and the simulated user's model and strategy, so files of two models
    are two sets; the suite is then the folder's name, the rest of the file's name
    being the run's settings. Two files of one configuration (each trial numbered from
    0) are refused as runs given twice: neither says its domain, so they may be
    airline and retail."""
    problems = tally.problems
    path = source.path
    named = _CHECKPOINT.fullmatch(path.name)
    model = None
    if named is not None:
        strategy, agent_model, temperature, user, user_strategy = named.groups()
        model = agent_with_model(
            strategy, f"{agent_model}, temperature {temperature}, user {user} {user_strategy}"
        )
        tally.named_from(model="the file's name, as τ-bench's run.py writes it")
        tally.suite_from_name()
    # Read a record at a time: memory follows the largest record, not the file.
    records = load_json_records(path, problems, top=True)
    if records is None:
        return
    if not isinstance(records.top, list):
        problems.add(f"{path}: expected a JSON array of records with task_id, trial and reward")
        return
    if not records.count:
        problems.add(f"{path}: the array is empty: no runs to count")
        return
    for i, record in records.items:
        where = f"{path}: [{i}]"
        if problems.truncated:  # not `full`: see read_jsonl
            return
        if not isinstance(record, dict):
            problems.add(f"{where}: expected an object with task_id, trial and reward")
            continue
        task = task_id_of(record.get("task_id"))
        if task is None:
            problems.add(f"{where}.task_id: expected a string or integer")
            continue
        passed = _reward_passed(record.get("reward"))
        if passed is None:
            problems.add(f"{where}.reward: {_reward_problem(record.get('reward'))}")
            continue
        trial = record.get("trial")
        if trial is not None and (isinstance(trial, bool) or not isinstance(trial, int)):
            problems.add(f"{where}.trial: expected an integer")
            continue
        tally.add_run(where, task, passed, model=model, run=trial)


#: τ²-bench's own agent (agent_info.implementation), left out of the model's name.
TAU2_DEFAULT_AGENT = "llm_agent"

#: τ²-bench's termination reason for a simulation that failed for reasons
#: outside the agent (it is left out of n and counted as excluded).
TAU2_INFRASTRUCTURE_ERROR = "infrastructure_error"


def read_tau2_bench(source: Source, tally: Tally) -> None:
    """τ²-bench: results.json with simulations[] (task_id, trial, reward_info.reward)."""
    problems = tally.problems
    path = source.path
    # The split layout keeps one summary per simulation in simulation_index. The
    # simulations are read one batch at a time (with their trajectories, a file can be
    # hundreds of megabytes); `doc` is the rest, info and tasks.
    records = load_json_records(path, problems, keys=("simulations", "simulation_index"))
    if records is None:
        return
    doc, key = records.top, records.key
    if key is None or not isinstance(doc, dict):
        problems.add(f"{path}: simulations: expected a list of simulation records")
        return
    if not records.count:
        problems.add(f"{path}: {key}: the list is empty: no runs to count")
        return
    model = _tau2_model(doc)
    suite = _tau2_domain(doc)
    tally.named_from(suite="info.environment_info.domain_name", model="info.agent_info")
    for i, sim in records.items:
        where = f"{path}: {key}[{i}]"
        if problems.truncated:  # not `full`: see read_jsonl
            return
        if not isinstance(sim, dict):
            problems.add(f"{where}: expected an object")
            continue
        task = task_id_of(sim.get("task_id"))
        if task is None:
            problems.add(f"{where}.task_id: expected a string or integer")
            continue
        trial = sim.get("trial")
        if trial is not None and (isinstance(trial, bool) or not isinstance(trial, int)):
            problems.add(f"{where}.trial: expected an integer")
            continue
        # The agent's own cost (not the simulated user's) and the simulation's wall time.
        measures = harness_measures(
            where,
            {
                "cost": ("agent_cost", sim.get("agent_cost")),
                "duration": ("duration", sim.get("duration")),
            },
            problems,
        )
        if measures is None:
            continue
        if sim.get("termination_reason") == TAU2_INFRASTRUCTURE_ERROR:
            note = "an infrastructure error ended the simulation (termination_reason)"
            tally.add_run(
                where,
                task,
                source.error_outcome,
                run=trial,
                suite=suite,
                model=model,
                note=note,
                measures=measures,
            )
            continue
        if key == "simulation_index":
            reward, field_name = sim.get("reward"), "reward"
        else:
            info = sim.get("reward_info")
            reward = info.get("reward") if isinstance(info, dict) else None
            field_name = "reward_info.reward"
        passed = _reward_passed(reward)
        if passed is None:
            problems.add(f"{where}.{field_name}: {_reward_problem(reward)}")
            continue
        tally.add_run(where, task, passed, run=trial, suite=suite, model=model, measures=measures)


def _tau2_model(doc: dict[str, Any]) -> str | None:
    """The agent's model (agent_info.llm), with its implementation when that is not
    τ²-bench's default agent: two agents run with one model are two result sets."""
    info = doc.get("info")
    agent = info.get("agent_info") if isinstance(info, dict) else None
    if not isinstance(agent, dict):
        return None
    implementation = agent.get("implementation")
    if implementation == TAU2_DEFAULT_AGENT:
        implementation = None
    return agent_with_model(implementation, agent.get("llm"))


def _tau2_domain(doc: dict[str, Any]) -> str | None:
    info = doc.get("info")
    env = info.get("environment_info") if isinstance(info, dict) else None
    domain = env.get("domain_name") if isinstance(env, dict) else None
    return domain if isinstance(domain, str) and domain.strip() else None


def sniff_tau_bench(head: bytes) -> bool:
    """τ-bench writes a JSON array of trials."""
    return head.startswith(b"[")


def sniff_tau2_bench(head: bytes) -> bool:
    """τ²-bench's results.json: an object with simulations, or with tasks and info.

    Tasks and info alone are not enough when the object also looks like an
    Inspect log (eval with samples or results): that one is Inspect's.
    """
    if not head.startswith(b"{"):
        return False
    if b'"simulations"' in head or b'"simulation_index"' in head:
        return True
    inspect_like = b'"eval"' in head and (b'"samples"' in head or b'"results"' in head)
    promptfoo_like = b'"evalId"' in head  # whose test vars may be named tasks and info
    return b'"tasks"' in head and b'"info"' in head and not inspect_like and not promptfoo_like


TAU_BENCH = Reader(
    name="tau-bench",
    suffixes=(),
    sniff=sniff_tau_bench,
    read=read_tau_bench,
    summary="τ-bench results: a JSON array of {task_id, trial, reward}",
)
TAU2_BENCH = Reader(
    name="tau2-bench",
    suffixes=(),
    sniff=sniff_tau2_bench,
    read=read_tau2_bench,
    summary="τ²-bench results.json; infrastructure errors are excluded runs",
)
