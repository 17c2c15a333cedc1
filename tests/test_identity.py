"""Which runs are one result set: identity read from the harnesses' own files.

Fixtures: tests/fixtures/real/, small cuts of result files that others published
(each folder's README names the repository, path and commit). Expected counts
are computed again here from the files with plain json and zipfile, by the rules
each reader's docstring states; the set names are the harness's own metadata.
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.cli import main
from reportgen.counts import NAMED_BY_FOLDER, naming_guesses
from reportgen.errors import UserError
from reportgen.readers import Source, load_sources
from reportgen.readers.terminal_bench import MODEL_FAILURE_MODES

from .conftest import FIXTURES, examples

REAL = FIXTURES / "real"
TB = REAL / "terminal-bench" / "terminal-bench-core@0.1.1"
SWE = REAL / "swe-bench"
TAU2 = REAL / "tau2"
INSPECT = REAL / "inspect"
HARBOR = REAL / "harbor" / "jobs"
PROMPTFOO = REAL / "promptfoo"

#: (successes, evaluated runs, excluded runs) per task.
Counts = dict[str, tuple[int, int, int]]


def tally(outcomes: dict[str, list[bool | None]]) -> Counts:
    """Counts from outcome lists: True passed, False failed, None excluded."""
    return {
        task: (sum(o is True for o in runs), sum(o is not None for o in runs), runs.count(None))
        for task, runs in outcomes.items()
    }


def read(*paths: Path, **options: Any) -> dict[str, Counts]:
    """{result set name: counts} as reportgen reads the paths, given one by one."""
    loaded = load_sources([Source(path, **options) for path in paths])
    return {
        rs.name: {t.id: (t.successes, t.runs, t.excluded) for t in rs.tasks}
        for rs in loaded.result_sets
    }


def summary_counts(rs: dict[str, Any]) -> Counts:
    """Counts of one set of `summary --format json`, which lists the evaluated tasks."""
    return {t["id"]: (t["successes"], t["runs"], t["excluded_runs"]) for t in rs["tasks"]}


def evaluated(counts: Counts) -> Counts:
    return {task: c for task, c in counts.items() if c[1] > 0}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    status = main(argv, out=out)
    return status, out.getvalue(), capsys.readouterr().err


# ------------------------------------------------------------ Terminal-Bench 1


def tb_counts(run_files: list[Path]) -> Counts:
    """Counts of the trials in these runs' results.json files (terminal_bench/harness/
    models.py; a trial never graded is excluded unless the model ran out of room)."""
    outcomes: dict[str, list[bool | None]] = defaultdict(list)
    for path in run_files:
        for trial in json.loads(path.read_text())["results"]:
            resolved = trial["is_resolved"]
            if resolved is None and trial["failure_mode"] in MODEL_FAILURE_MODES:
                resolved = False
            outcomes[trial["task_id"]].append(resolved)
    return tally(outcomes)


def tb_runs(submission: str, model: str | None = "any") -> list[Path]:
    """The run-level results.json files of a leaderboard submission (of one model_name)."""
    found = []
    for metadata in sorted((TB / submission).rglob("run_metadata.json")):
        if model == "any" or json.loads(metadata.read_text())["model_name"] == model:
            found.append(metadata.parent / "results.json")
    return found


def test_a_leaderboard_folder_gives_one_set_per_agent_and_model() -> None:
    """The Terminal-Bench 1 leaderboard: one orchestrator agent run with two models whose
    run_metadata.json names no model_name (pooled before: 10 runs a task), an agent with
    five one-attempt runs, and an agent whose runs name the model in two ways."""
    sets = read(TB)
    claude = "20250902_orchestrator_claude-4-sonnet"
    qwen = "20250902_orchestrator_qwen-3-coder-480B"
    droid = "20250924_droid_gpt-5"
    mini = "20250825_swe-agent-mini_claude-4-sonnet"
    core = "terminal-bench-core@0.1.1"
    expected = {
        f"LeadArchitectAgent ({claude}) · terminal-bench-core@0.1.1": tb_counts(tb_runs(claude)),
        f"LeadArchitectAgent ({qwen}) · terminal-bench-core@0.1.1": tb_counts(tb_runs(qwen)),
        f"Factory Droid ({droid}) · terminal-bench-core@0.1.1": tb_counts(tb_runs(droid)),
        # Two spellings of one model are two identities as the harness wrote them: kept
        # apart (and said), not pooled on a guess.
        f"mini-swe-agent (anthropic/claude-sonnet-4-20250514) · {core}": tb_counts(
            tb_runs(mini, "anthropic/claude-sonnet-4-20250514")
        ),
        "mini-swe-agent (anthropic/claude-sonnet-4-0) · terminal-bench-core@0.1.1": tb_counts(
            tb_runs(mini, "anthropic/claude-sonnet-4-0")
        ),
    }
    assert sets == expected
    # Each orchestrator run has n_attempts = 5; the droid, five runs of one attempt.
    for name in (f"LeadArchitectAgent ({claude}) · terminal-bench-core@0.1.1",):
        assert {runs + excluded for _, runs, excluded in sets[name].values()} == {5}
    droid_set = sets[f"Factory Droid ({droid}) · terminal-bench-core@0.1.1"]
    assert {runs + excluded for _, runs, excluded in droid_set.values()} == {5}


def test_terminal_bench_runs_of_two_versions_or_two_agent_models_stay_apart(
    tmp_path: Path,
) -> None:
    """Two runs in tb's own layout (runs/<run_id>/) with no model_name: the model their
    agent_kwargs name keeps them apart, and so does the dataset's version (they were
    pooled as 'Factory Droid (runs) · terminal-bench-core')."""
    droid = TB / "20250924_droid_gpt-5"
    runs = tmp_path / "runs"
    for run_id, kwargs, version in (
        ("tb_rc2_g5_1", {"model_name": "openai/gpt-5"}, "0.1.1"),
        ("tb_rc2_g5_2", {"model": "anthropic/claude-opus-4-1"}, "0.1.1"),
        ("tb_rc2_g5_3", {"model_name": "openai/gpt-5"}, "0.2.0"),
    ):
        shutil.copytree(droid / run_id, runs / run_id)
        metadata = runs / run_id / "run_metadata.json"
        doc = json.loads(metadata.read_text())
        assert doc["model_name"] is None and doc["agent_kwargs"] is None
        doc |= {"agent_kwargs": kwargs, "dataset_version": version}
        metadata.write_text(json.dumps(doc))
    sets = {rs.name: rs for rs in load_sources([Source(runs)]).result_sets}
    assert sorted(sets) == [
        "Factory Droid (anthropic/claude-opus-4-1) · terminal-bench-core@0.1.1",
        "Factory Droid (openai/gpt-5) · terminal-bench-core@0.1.1",
        "Factory Droid (openai/gpt-5) · terminal-bench-core@0.2.0",
    ]
    for name, rs in sets.items():
        assert {t.runs + t.excluded for t in rs.tasks} == {1}, name
    gpt5 = sets["Factory Droid (openai/gpt-5) · terminal-bench-core@0.1.1"]
    assert gpt5.named_by["model"] == "run_metadata.json: agent_name, agent_kwargs.model_name"
    assert list(naming_guesses(gpt5)) == []


def test_a_model_named_by_a_folder_is_said_to_be_a_guess() -> None:
    loaded = load_sources([Source(TB / "20250924_droid_gpt-5")])
    (rs,) = loaded.result_sets
    assert rs.named_by == {
        "suite": "run_metadata.json: dataset_name, dataset_version",
        "model": NAMED_BY_FOLDER,
    }
    (warning,) = naming_guesses(rs)
    assert "'Factory Droid (20250924_droid_gpt-5)' takes the folder's name" in warning
    assert "--model" in warning
    named = load_sources([Source(TB / "20250825_swe-agent-mini_claude-4-sonnet")])
    for rs in named.result_sets:
        assert rs.named_by["model"] == "run_metadata.json: agent_name, model_name"
        assert list(naming_guesses(rs)) == []


def test_one_submission_s_runs_given_one_by_one_are_one_set() -> None:
    submission = TB / "20250924_droid_gpt-5"
    runs = sorted(p for p in submission.iterdir() if p.is_dir())
    assert len(runs) == 5
    assert read(*runs) == read(submission)
    (counts,) = read(*runs).values()
    assert counts == tb_counts(tb_runs("20250924_droid_gpt-5"))


def test_model_on_the_command_line_joins_two_spellings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = TB / "20250825_swe-agent-mini_claude-4-sonnet"
    argv = ["summary", str(folder), "--format", "json", "--no-coverage"]
    status, out, _ = run_cli([*argv, "--model", "mini-swe-agent (claude-sonnet-4)"], capsys)
    assert status == 0
    (rs,) = json.loads(out)["result_sets"]
    assert rs["name"] == "mini-swe-agent (claude-sonnet-4) · terminal-bench-core@0.1.1"
    # Joined, and said: the set's warnings name the two it pools.
    assert any(
        w.startswith(
            "the model 'mini-swe-agent (claude-sonnet-4)' from the command line stands for 2 "
            "models the files name ('mini-swe-agent (anthropic/claude-sonnet-4-0)', "
            "'mini-swe-agent (anthropic/claude-sonnet-4-20250514)'): their runs are pooled"
        )
        for w in rs["warnings"]
    ), rs["warnings"]
    assert summary_counts(rs) == evaluated(
        tb_counts(tb_runs("20250825_swe-agent-mini_claude-4-sonnet"))
    )
    status, out, _ = run_cli([*argv, "--suite", "tb-core"], capsys)
    names = sorted(rs["name"] for rs in json.loads(out)["result_sets"])
    assert names == [
        "mini-swe-agent (anthropic/claude-sonnet-4-0) · tb-core",
        "mini-swe-agent (anthropic/claude-sonnet-4-20250514) · tb-core",
    ]


@pytest.mark.parametrize("reading", ["jsonl", "jsonl-duckdb", "csv", "counts-jsonl"])
def test_a_name_given_for_several_the_files_name_is_said_per_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reading: str
) -> None:
    """--model (or model: in the config) over a file of several models pools their
    runs: each set that pools several says which, whichever path read the file; a set
    that pools one (s1), or a file that names none, says nothing. The same for a
    condition given over a file's baseline and perturbed runs."""
    from reportgen.readers import jsonl as jsonl_reader

    if reading == "jsonl-duckdb":
        monkeypatch.setattr(jsonl_reader, "DUCKDB_MIN_BYTES", 0)
    rows = [
        ("a", "A", "s1", None),
        ("b", "B", "s2", None),
        ("c", "C", "s2", None),
        ("d", "C", "s2", "typos"),
    ]
    if reading == "csv":
        path = tmp_path / "runs.csv"
        lines = [f"{t},1,{m},{s},{c or ''}" for t, m, s, c in rows]
        path.write_text("task,passed,model,suite,condition\n" + "\n".join(lines) + "\n")
    else:
        counts = {"successes": 1, "runs": 2} if reading == "counts-jsonl" else {"passed": True}
        path = tmp_path / "runs.jsonl"
        records = [
            {"task": t, "model": m, "suite": s, "condition": c, **counts} for t, m, s, c in rows
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    sets = {
        (rs.suite, rs.condition): rs for rs in load_sources([Source(path, model="X")]).result_sets
    }
    assert {key: rs.pooled for key, rs in sets.items()} == {
        ("s1", ""): {},
        ("s2", ""): {"model": ["B", "C"]},
        ("s2", "typos"): {},
    }
    (warning,) = naming_guesses(sets["s2", ""])
    assert warning.startswith("the model 'X' from the config stands for 2 models the files")
    assert list(naming_guesses(sets["s1", ""])) == []
    given = Source(path, condition="baseline", suite="S", model="X")
    (pooled,) = load_sources([given]).result_sets
    assert pooled.pooled == {
        "suite": ["s1", "s2"],
        "model": ["A", "B", "C"],
        "condition": ["", "typos"],
    }
    assert any("the condition 'baseline' from the config" in w for w in naming_guesses(pooled))
    lone = tmp_path / ("lone.csv" if reading == "csv" else "lone.jsonl")
    lone.write_text(path.read_text().replace("B", "A").replace("C", "A"))
    assert all(rs.pooled == {} for rs in load_sources([Source(lone, model="X")]).result_sets)


# ------------------------------------------------------------ SWE-bench


def swe_counts(*reports: Path) -> Counts:
    """swebench/harness/reporting.py: every submitted id is one run; error ids are
    excluded, resolved ids pass, the rest fail (those in no list were never run)."""
    outcomes: dict[str, list[bool | None]] = defaultdict(list)
    for path in reports:
        report = json.loads(path.read_text())
        listed = {*report["resolved_ids"], *report["unresolved_ids"], *report["empty_patch_ids"]}
        for task in report["submitted_ids"]:
            if task in report["error_ids"] or task not in listed:
                outcomes[task].append(None)
            else:
                outcomes[task].append(task in report["resolved_ids"])
    return tally(outcomes)


def test_one_model_s_reports_given_one_by_one_are_one_set_of_two_runs() -> None:
    reports = sorted((SWE / "autocoding").glob("*.json"))
    assert len(reports) == 2
    sets = read(*reports)
    assert sets == {"qwen3-coder-flash · autocoding": swe_counts(*reports)}
    # A task of both runs has two; one submitted in only one run (incomplete in the
    # other, as the reports list it), one.
    per_task = [runs + ex for _, runs, ex in sets["qwen3-coder-flash · autocoding"].values()]
    first, second = (set(json.loads(r.read_text())["submitted_ids"]) for r in reports)
    assert max(per_task) == 2 and per_task.count(2) == len(first & second) > 0
    # The same as the folder, and in either order.
    assert read(SWE / "autocoding") == sets == read(*reversed(reports))


def test_two_models_reports_in_one_folder_are_two_sets() -> None:
    folder = SWE / "benchmarkllmagent"
    devstral = sorted(folder.glob("hosted_vllm__Devstral*.json"))
    mini = sorted(folder.glob("gpt-5.4-mini.*.json"))
    assert read(folder) == {
        # "__" in the file name stands for "/" (SWE-bench's convention).
        "hosted_vllm/Devstral-Small-2-24B-Instruct-2512 · benchmarkllmagent": swe_counts(*devstral),
        "gpt-5.4-mini · benchmarkllmagent": swe_counts(*mini),
    }


def test_a_report_given_twice_under_two_names_is_refused(tmp_path: Path) -> None:
    """Read together, the runs of a copy repeat the run ids of its original."""
    (report,) = sorted((SWE / "autocoding").glob("*.full-eval.json"))[:1]
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    shutil.copy(report, first / report.name)
    shutil.copy(report, second / report.name)
    with pytest.raises(UserError, match="appears twice"):
        load_sources(
            [Source(first / report.name, suite="s"), Source(second / report.name, suite="s")]
        )


# ------------------------------------------------------------ τ²-bench


def tau2_counts(path: Path) -> Counts:
    """src/tau2/metrics/agent_metrics.py: a simulation passes at reward 1 within 1e-6."""
    outcomes: dict[str, list[bool | None]] = defaultdict(list)
    for sim in json.loads(path.read_text())["simulations"]:
        if sim["termination_reason"] == "infrastructure_error":
            outcomes[sim["task_id"]].append(None)
        else:
            outcomes[sim["task_id"]].append(abs(sim["reward_info"]["reward"] - 1) <= 1e-6)
    return tally(outcomes)


def test_tau2_model_and_domain_come_from_the_file() -> None:
    airline = TAU2 / "claude-sonnet-4-5_airline_aide-platform_1trial.json"
    telecom = TAU2 / "ft-gpt-4.1-sft_telecom_sierra_1trial.json"
    assert read(airline, telecom) == {
        "claude-sonnet-4-5 · airline": tau2_counts(airline),
        "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm · telecom": tau2_counts(telecom),
    }
    rs = load_sources([Source(airline)]).result_sets[0]
    assert rs.named_by == {
        "suite": "info.environment_info.domain_name",
        "model": "info.agent_info",
    }


def test_tau2_another_agent_with_the_same_model_is_another_set(tmp_path: Path) -> None:
    airline = TAU2 / "claude-sonnet-4-5_airline_aide-platform_1trial.json"
    doc = json.loads(airline.read_text())
    doc["info"]["agent_info"]["implementation"] = "my_agent"
    other = tmp_path / "mine.json"
    other.write_text(json.dumps(doc))
    sets = read(airline, other)
    assert sorted(sets) == ["claude-sonnet-4-5 · airline", "my_agent (claude-sonnet-4-5) · airline"]


# ------------------------------------------------------------ Inspect


def inspect_counts(path: Path, scorer: str) -> Counts:
    outcomes: dict[str, list[bool | None]] = defaultdict(list)
    with zipfile.ZipFile(path) as archive:
        for name in sorted(archive.namelist()):
            if name.startswith("samples/"):
                sample = json.loads(archive.read(name))
                outcomes[str(sample["id"])].append(sample["scores"][scorer]["value"] == "C")
    return tally(outcomes)


def test_inspect_model_and_task_come_from_the_header() -> None:
    log = INSPECT / "log_streaming_epochs2.eval"
    other = INSPECT / "log_read_sample.json"  # the same task, another model
    sets = read(log, other)
    epochs = "azureai/Meta-Llama-3-1-405B-Instruct-jqf · popularity"
    assert sorted(sets) == [epochs, "ollama/gemma3 · popularity"]
    assert sets[epochs] == inspect_counts(log, "match")
    assert {runs for _, runs, _ in sets[epochs].values()} == {2}  # two epochs
    # Each task carries its sample's input, on one line, for its page.
    (rs,) = load_sources([Source(log)]).result_sets
    with zipfile.ZipFile(log) as archive:
        first = json.loads(archive.read("samples/1_epoch_1.json"))["input"]
    (task,) = [t for t in rs.tasks if t.id == "1"]
    assert task.detail == " ".join(first.split())
    # The log's own accuracy of the scorer, beside reportgen's.
    with zipfile.ZipFile(log) as archive:
        header = json.loads(archive.read("header.json"))
    (score,) = [s for s in header["results"]["scores"] if s["name"] == "match"]
    assert rs.figures == [(f"match accuracy ({log})", score["metrics"]["accuracy"]["value"])]


def test_an_inspect_log_that_finished_unscored_says_so() -> None:
    log = INSPECT / "popularity_unscored_success.eval"
    with pytest.raises(UserError) as caught:
        load_sources([Source(log)])
    message = str(caught.value)
    assert "finished (status success) but was never scored" in message
    assert f"inspect score {log.name}" in message


# ------------------------------------------------------------ Harbor and promptfoo


def harbor_counts(jobs: list[Path]) -> Counts:
    outcomes: dict[str, list[bool | None]] = defaultdict(list)
    for job in jobs:
        for path in sorted(job.glob("*/result.json")):
            trial = json.loads(path.read_text())
            if trial["verifier_result"] is None:
                outcomes[trial["task_name"]].append(None)  # raised, never graded
            else:
                outcomes[trial["task_name"]].append(
                    trial["verifier_result"]["rewards"]["reward"] >= 1
                )
    return tally(outcomes)


def test_harbor_jobs_are_grouped_by_harbor_s_own_agent_and_model(tmp_path: Path) -> None:
    """Both harnesses of this repository run one Harbor agent name with one model: Harbor's
    own key (agent_info.name, model) pools them, and so does reportgen; a config that
    names each harness's jobs keeps them apart."""
    jobs = sorted(HARBOR.iterdir())
    name = "direct-openai-pairwise (gpt-5.6-sol) · terminal-bench/terminal-bench-2-1"
    assert read(HARBOR) == {name: harbor_counts(jobs)}
    config = tmp_path / "reportgen.yaml"
    config.write_text(
        "result_sets:\n"
        + "".join(
            f"  - path: {job}\n    model: {job.name.split('--')[-1].split('-')[0]}\n"
            for job in jobs
        )
    )
    from reportgen.config import load_config

    loaded = load_sources(load_config(config).result_sets)
    by_model = {rs.model: rs for rs in loaded.result_sets}
    assert sorted(by_model) == ["pi", "thinharness"]
    for harness, rs in by_model.items():
        own = [job for job in jobs if f"--{harness}-" in job.name]
        assert {t.id: (t.successes, t.runs, t.excluded) for t in rs.tasks} == harbor_counts(own)
        assert rs.named_by["model"] == "the config"


def test_promptfoo_providers_are_sets_and_the_description_the_suite() -> None:
    path = PROMPTFOO / "sample-export.json"
    sets = read(path)
    suite = "Comparing OpenAI flagship and mini models performance on riddles"
    assert sorted(sets) == [f"openai:gpt-5 · {suite}", f"openai:gpt-5-mini · {suite}"]


# ------------------------------------------------------------ laws


def _jsonl(runs: list[tuple[str, str, int, bool]]) -> str:
    return "".join(
        json.dumps({"suite": "s", "model": model, "task": task, "run": run, "passed": passed})
        + "\n"
        for model, task, run, passed in runs
    )


RUNS = st.lists(
    st.tuples(
        st.sampled_from(["agent-a", "agent-b", "agent-c"]),
        st.sampled_from(["t1", "t2", "t3"]),
        st.booleans(),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=examples(60), deadline=None)
@given(runs=RUNS, data=st.data())
def test_any_partition_over_files_and_folders_counts_as_one_file(
    runs: list[tuple[str, str, bool]], data: st.DataObject
) -> None:
    """However one agent's runs are spread over files, folders and inputs given one by one,
    the counts are those of one file; runs of two agents are never in one set."""
    import tempfile

    numbered = [(model, task, i, passed) for i, (model, task, passed) in enumerate(runs)]
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        whole = root / "whole.jsonl"
        whole.write_text(_jsonl(numbered))
        # Each run goes to one of a few files, each file into one of a few folders.
        files = data.draw(st.lists(st.integers(0, 3), min_size=len(runs), max_size=len(runs)))
        folders = data.draw(st.lists(st.sampled_from(["x", "x/y", "z"]), min_size=4, max_size=4))
        parts: dict[Path, list[tuple[str, str, int, bool]]] = defaultdict(list)
        for run, file in zip(numbered, files, strict=True):
            parts[root / "parts" / folders[file] / f"runs{file}.jsonl"].append(run)
        for path, lines in parts.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_jsonl(lines))
        # Given as the folder, as each file, or as the top folders.
        how = data.draw(st.sampled_from(["folder", "files", "top folders"]))
        if how == "folder":
            inputs = [root / "parts"]
        elif how == "files":
            inputs = sorted(parts)
        else:
            inputs = sorted({root / "parts" / folder.split("/")[0] for folder in folders})
            inputs = [p for p in inputs if p.exists()]
        expected = {rs.model: rs for rs in load_sources([Source(whole)]).result_sets}
        got = {rs.model: rs for rs in load_sources([Source(p) for p in inputs]).result_sets}
        assert sorted(got) == sorted(expected)
        for model, rs in got.items():
            mine = [run for run in numbered if run[0] == model]
            assert rs.runs == len(mine)  # no run of another agent, none lost
            # The same runs of each task, in run order (tasks may be met in another order).
            assert {t.id: t.codes for t in rs.tasks} == {
                t.id: t.codes for t in expected[model].tasks
            }


# ------------------------------------------------------------ --skip-unreadable


def test_skip_unreadable_leaves_out_a_damaged_file_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "reports"
    shutil.copytree(SWE / "autocoding", folder)
    good = read(folder)
    damaged = folder / "qwen3-coder-flash.third.json"
    damaged.write_text('{"submitted_ids": ["a"], "resolved_ids": [')  # cut short
    argv = ["summary", str(folder), "--format", "json", "--no-coverage"]
    status, _, err = run_cli(argv, capsys)
    assert status == 2 and str(damaged) in err and "--skip-unreadable" in err
    status, out, err = run_cli([*argv, "--skip-unreadable"], capsys)
    assert status == 0
    doc = json.loads(out)
    (rs,) = doc["result_sets"]
    ((name, counts),) = good.items()
    assert rs["name"] == name and summary_counts(rs) == evaluated(counts)
    (skipped,) = doc["skipped_files"]
    assert skipped["file"] == str(damaged) and "JSON" in skipped["reason"]
    assert f"skipped {damaged}" in err


def test_skip_unreadable_drops_every_run_of_a_file_with_a_bad_record(tmp_path: Path) -> None:
    """A file whose first lines are good and a later one bad adds none of its runs."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.jsonl").write_text(_jsonl([("m", "t1", 0, True), ("m", "t1", 1, False)]))
    (folder / "b.jsonl").write_text(
        _jsonl([("m", "t1", 2, True), ("m", "t2", 3, True)]) + '{"task": "t2", "passed": "x"}\n'
    )
    loaded = load_sources([Source(folder, skip_unreadable=True)])
    (rs,) = loaded.result_sets
    assert [(t.id, t.successes, t.runs) for t in rs.tasks] == [("t1", 1, 2)]
    ((path, reason),) = loaded.skipped
    assert path == str(folder / "b.jsonl") and ":3:" in reason
    with pytest.raises(UserError, match=r"no result sets to report \(1 file skipped\)"):
        load_sources([Source(folder / "b.jsonl", skip_unreadable=True)])


# ------------------------------------------------------------ names on the command line


def test_model_and_suite_flags_name_the_inputs_and_the_config_keeps_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "results.jsonl"
    plain.write_text('{"task": "t", "passed": true}\n')
    argv = ["summary", str(plain), "--format", "json", "--no-coverage"]
    status, out, _ = run_cli(argv, capsys)
    # A file named "results" names no suite: its folder does.
    assert [rs["name"] for rs in json.loads(out)["result_sets"]] == [tmp_path.name]
    status, out, _ = run_cli([*argv, "--model", "m", "--suite", "s"], capsys)
    assert [rs["name"] for rs in json.loads(out)["result_sets"]] == ["m · s"]
    config = tmp_path / "reportgen.yaml"
    config.write_text(f"result_sets:\n  - path: {plain}\n    suite: kept\n")
    status, out, _ = run_cli(
        [
            "summary",
            "--config",
            str(config),
            "--format",
            "json",
            "--no-coverage",
            "--model",
            "m",
            "--suite",
            "s",
        ],
        capsys,
    )
    assert [rs["name"] for rs in json.loads(out)["result_sets"]] == ["m · kept"]
    status, _, err = run_cli([*argv, "--model", " "], capsys)
    assert status == 2 and "--model: empty" in err


# ------------------------------------------------------------ the pages say why


def test_task_and_set_pages_give_the_harness_s_reasons_and_figures(tmp_path: Path) -> None:
    """A run the harness never graded shows its failure mode and recording on its task
    page; the set page shows each run file's own accuracy beside the pooled rate, and the
    rate with those runs counted as failures is what the harness's figures make."""
    submission = TB / "20250825_swe-agent-mini_claude-4-sonnet"
    site = tmp_path / "site"
    assert main(["build", str(submission), "-o", str(site), "--no-cache"], out=io.StringIO()) == 0
    runs = tb_runs("20250825_swe-agent-mini_claude-4-sonnet", "anthropic/claude-sonnet-4-0")
    docs = [json.loads(path.read_text()) for path in runs]
    (set_page,) = [
        page
        for page in (site / "sets").glob("*/index.html")
        if "mini-swe-agent (anthropic/claude-sonnet-4-0)" in page.read_text()
    ]
    html = set_page.read_text()
    for path, doc in zip(runs, docs, strict=True):
        assert f"accuracy ({path}): {100 * doc['accuracy']:.2f}%" in html
    trials = [t for doc in docs for t in doc["results"]]
    passed = sum(t["is_resolved"] is True for t in trials)
    # Counted as failures, the pooled rate is made as the harness makes its accuracy.
    assert f"the rate is {passed} of {len(trials)}: {100 * passed / len(trials):.2f}%" in html
    by_file = sum(doc["accuracy"] * len(doc["results"]) for doc in docs)
    assert abs(by_file - passed) < 1e-6
    ungraded = [t for t in trials if t["is_resolved"] is None]
    assert ungraded, "the fixture has trials the harness never graded"
    for trial in ungraded:
        pages = [p.read_text() for p in set_page.parent.glob("tasks/*.html")]
        (page,) = [p for p in pages if f'<h1 class="task-id">{trial["task_id"]}</h1>' in p]
        assert f"never graded (failure mode {trial['failure_mode']})" in page


def test_serve_prints_the_warnings_build_prints(tmp_path: Path) -> None:
    from reportgen.config import Config
    from reportgen.serve import PreviewServer

    log = io.StringIO()
    config = Config(result_sets=[Source(TB / "20250924_droid_gpt-5")], output=tmp_path / "site")
    preview = PreviewServer(lambda: config, port=0, log=log)
    try:
        text = log.getvalue()
        assert (
            "warning: Factory Droid (20250924_droid_gpt-5) · terminal-bench-core@0.1.1: the model"
            in text
        )
        assert "takes the folder's name" in text
    finally:
        preview.server.server_close()


# ------------------------------------------------------------ found in review


def test_a_table_whose_rows_only_sometimes_name_the_suite_is_one_set(tmp_path: Path) -> None:
    """Rows without a suite fall back to the file's name, as the Python reader does; the
    DuckDB grouping must key them the same (it refused the table as tasks given twice)."""
    table = tmp_path / "foo.csv"
    table.write_text("task,passed,suite\na,true,foo\na,false,\nb,true,foo\nb,true,\n")
    (rs,) = load_sources([Source(table)]).result_sets
    assert (rs.suite, [(t.id, t.successes, t.runs) for t in rs.tasks]) == (
        "foo",
        [("a", 1, 2), ("b", 2, 2)],
    )


def test_swe_bench_reports_whose_names_give_no_model_are_not_pooled(tmp_path: Path) -> None:
    for name in ("claude", "gpt"):
        resolved = name == "gpt"
        report = {
            "submitted_ids": ["t"],
            "resolved_ids": ["t"] if resolved else [],
            "unresolved_ids": [] if resolved else ["t"],
        }
        (tmp_path / f"{name}.json").write_text(json.dumps(report))
    paths = [tmp_path / "claude.json", tmp_path / "gpt.json"]
    sets = read(*paths, format="swe-bench")
    assert sets == {"claude": {"t": (0, 1, 0)}, "gpt": {"t": (1, 1, 0)}}


def test_a_run_folder_given_as_dot_is_named_as_the_folder_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "2025-06-01__10-00-00"
    shutil.copytree(TB / "20250924_droid_gpt-5" / "tb_rc2_g5_1", run)
    doc = json.loads((run / "run_metadata.json").read_text())
    doc["run_id"] = run.name
    (run / "run_metadata.json").write_text(json.dumps(doc))
    by_path = {rs.model for rs in load_sources([Source(run)]).result_sets}
    monkeypatch.chdir(run)
    assert {rs.model for rs in load_sources([Source(Path("."))]).result_sets} == by_path
    assert by_path == {f"Factory Droid ({tmp_path.name})"}


def test_harbor_names_a_trial_without_agent_info_as_its_job_s_others(tmp_path: Path) -> None:
    """config.agent.model_name carries the provider ("anthropic/claude-sonnet-4-5");
    agent_info keeps it apart. Named alike, one agent's trials stay one set. (A custom
    agent's config may name it by its import path, unlike agent_info: then the harness's
    own records disagree, and the sets say so.)"""
    job = tmp_path / "job"
    shutil.copytree(FIXTURES / "harnesses" / "harbor" / "2025-11-05__14-30-00", job)
    trial = sorted(job.glob("*/result.json"))[0]
    doc = json.loads(trial.read_text())
    assert doc["config"]["agent"]["model_name"].endswith(
        "/" + doc["agent_info"]["model_info"]["name"]
    )
    doc["agent_info"] = None
    trial.write_text(json.dumps(doc))
    assert list(read(job)) == ["terminus-2 (claude-sonnet-4-5) · terminal-bench"]


def test_check_does_not_pair_a_lone_baseline_set_of_another_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = "".join(f'{{"task": "t{i % 4}", "passed": true}}\n' for i in range(12))
    (tmp_path / "now.jsonl").write_text(runs)
    (tmp_path / "before.jsonl").write_text(runs)
    site = tmp_path / "site"
    argv = ["build", str(tmp_path / "now.jsonl"), "-o", str(site), "--model", "m"]
    assert main(argv, out=io.StringIO()) == 0
    check = ["check", str(site), "--baseline", str(tmp_path / "before.jsonl"), "--max-drop", "0.1"]
    status, _, err = run_cli([*check, "--model", "other"], capsys)
    assert status == 1 and "no suite / model of the report" in err + _
    status, out, _ = run_cli([*check, "--model", "m"], capsys)
    assert status == 0 and "taken as the report's" in out


def test_check_and_compare_list_what_they_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "good.jsonl").write_text(_jsonl([("m", "t1", 0, True), ("m", "t2", 1, True)]))
    (folder / "bad.jsonl").write_text('{"task": "t1", "passed": "x"}\n')
    site = tmp_path / "site"
    assert main(["build", str(folder / "good.jsonl"), "-o", str(site)], out=io.StringIO()) == 0
    argv = ["check", str(site), "--baseline", str(folder), "--max-drop", "0.5", "--skip-unreadable"]
    status, _, err = run_cli([*argv, "--allow-unmatched"], capsys)
    assert status == 0 and f"warning: skipped {folder / 'bad.jsonl'}" in err
    argv = ["compare", str(folder), str(folder / "good.jsonl"), "--skip-unreadable"]
    status, _, err = run_cli(argv, capsys)
    assert f"warning: skipped {folder / 'bad.jsonl'}" in err


def test_skip_unreadable_skips_a_file_whose_names_no_page_can_show(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "good.jsonl").write_text(_jsonl([("m", "t1", 0, True)]))
    (folder / "ctl.jsonl").write_text('{"task": "a\\u0007", "passed": true}\n')
    loaded = load_sources([Source(folder, skip_unreadable=True)])
    assert [t.id for rs in loaded.result_sets for t in rs.tasks] == ["t1"]
    assert [path for path, _ in loaded.skipped] == [str(folder / "ctl.jsonl")]


def test_a_set_names_only_the_inputs_that_held_its_runs(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(_jsonl([("m1", "t", 0, True)]))
    second.write_text(_jsonl([("m2", "t", 1, True)]))
    loaded = load_sources([Source(first), Source(second)])
    assert {rs.model: rs.sources for rs in loaded.result_sets} == {
        "m1": [str(first)],
        "m2": [str(second)],
    }


def test_a_rebuild_sees_an_edit_of_the_run_metadata_beside_a_results_file(
    tmp_path: Path,
) -> None:
    run = tmp_path / "2025-06-01__10-00-00"
    shutil.copytree(TB / "20250924_droid_gpt-5" / "tb_rc2_g5_1", run)
    site = tmp_path / "site"
    argv = ["build", str(run / "results.json"), "-o", str(site)]
    assert main(argv, out=io.StringIO()) == 0
    doc = json.loads((run / "run_metadata.json").read_text())
    doc["model_name"] = "gpt-5"
    (run / "run_metadata.json").write_text(json.dumps(doc))
    assert main(argv, out=io.StringIO()) == 0
    (rs,) = json.loads((site / "report.json").read_text())["result_sets"]
    assert rs["model"] == "Factory Droid (gpt-5)"
