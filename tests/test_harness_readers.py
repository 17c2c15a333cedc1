"""The five harness formats (SWE-bench, Terminal-Bench 1, Harbor, promptfoo, JUnit XML)
and folder inputs.

Fixtures: tests/fixtures/harnesses/, written by make_fixtures.py there from the
formats' own definitions; README.md beside them says which upstream file defines
each field. Every expected count here is computed again from the fixture with
plain json / xml.etree, following the rules stated in each reader's docstring,
not copied from the readers' output.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reportgen.build import build
from reportgen.cache import input_digest
from reportgen.cli import main
from reportgen.config import Config
from reportgen.errors import Problems, UserError
from reportgen.readers import FORMATS, READERS, Source, detect_format, load_sources
from reportgen.readers import folder as folder_module
from reportgen.readers.terminal_bench import MODEL_FAILURE_MODES

from .conftest import EXAMPLE, FIXTURES, examples

HARNESSES = FIXTURES / "harnesses"
SWE = HARNESSES / "swe-bench"
TB_RUN = HARNESSES / "terminal-bench" / "2025-06-01__10-00-00"
HARBOR_JOB = HARNESSES / "harbor" / "2025-11-05__14-30-00"
PROMPTFOO = HARNESSES / "promptfoo" / "results.json"
JUNIT = HARNESSES / "junit"

#: (successes, evaluated runs, excluded runs) per task.
Counts = dict[str, tuple[int, int, int]]


def loaded_counts(path: Path, **options: Any) -> dict[str, Counts]:
    """{result set name: {task: (successes, runs, excluded)}} as reportgen reads path."""
    loaded = load_sources([Source(path, **options)])
    return {
        rs.name: {t.id: (t.successes, t.runs, t.excluded) for t in rs.tasks}
        for rs in loaded.result_sets
    }


def tally(outcomes: dict[str, list[bool | None]]) -> Counts:
    """Counts from outcome lists: True passed, False failed, None excluded."""
    return {
        task: (sum(o is True for o in runs), sum(o is not None for o in runs), runs.count(None))
        for task, runs in outcomes.items()
    }


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    status = main(argv, out=out)
    return status, out.getvalue(), capsys.readouterr().err


# ------------------------------------------------------------ SWE-bench


def swe_expected(folder: Path, errors_fail: bool = False) -> Counts:
    # swebench/harness/reporting.py (make_run_report): submitted_ids, resolved_ids,
    # unresolved_ids, empty_patch_ids, error_ids; newer reports add infra_failure_ids
    # and ambiguous_failure_ids (also listed as unresolved).
    outcomes: dict[str, list[bool | None]] = defaultdict(list)
    for path in sorted(folder.glob("*.json")):
        report = json.loads(path.read_text())
        for task in report["submitted_ids"]:
            if task in report["error_ids"] or task in report.get("infra_failure_ids", []):
                outcomes[task].append(False if errors_fail else None)
            else:
                outcomes[task].append(task in report["resolved_ids"])
    return tally(outcomes)


def test_swe_bench_folder_counts() -> None:
    sets = loaded_counts(SWE)
    # The model comes from the file name <model>.<run_id>.json, "__" standing for "/".
    assert list(sets) == ["openai/gpt-4o-2024-08-06 · swe-bench"]
    assert sets["openai/gpt-4o-2024-08-06 · swe-bench"] == swe_expected(SWE)


def test_swe_bench_errors_fail_counts_error_ids_as_failures() -> None:
    counts = loaded_counts(SWE, errors="fail")["openai/gpt-4o-2024-08-06 · swe-bench"]
    assert counts == swe_expected(SWE, errors_fail=True)
    assert all(excluded == 0 for _, _, excluded in counts.values())


def test_swe_bench_one_report_is_one_run() -> None:
    path = SWE / "openai__gpt-4o-2024-08-06.run2.json"
    (counts,) = loaded_counts(path).values()
    assert all(runs + excluded == 1 for _, runs, excluded in counts.values())


# ------------------------------------------------------------ Terminal-Bench 1


def tb_expected(results: Path, errors_fail: bool = False) -> Counts:
    # terminal_bench/harness/models.py: BenchmarkResults.results[] of TrialResults
    # (task_id, trial_name, is_resolved: bool | None, failure_mode);
    # terminal_bench/agents/failure_mode.py: FailureMode values.
    outcomes: dict[str, list[bool | None]] = defaultdict(list)
    for trial in json.loads(results.read_text())["results"]:
        resolved = trial["is_resolved"]
        if resolved is None:
            model_side = trial["failure_mode"] in MODEL_FAILURE_MODES
            resolved = False if model_side or errors_fail else None
        outcomes[trial["task_id"]].append(resolved)
    return tally(outcomes)


@pytest.mark.parametrize(
    "path",
    [TB_RUN / "results.json", TB_RUN, TB_RUN.parent],
    ids=["results.json", "run folder", "runs folder"],
)
def test_terminal_bench_counts(path: Path) -> None:
    # run_metadata.json beside results.json names the agent, its model and the dataset.
    sets = loaded_counts(path)
    assert list(sets) == ["terminus (anthropic/claude-sonnet-4) · terminal-bench-core@0.1.1"]
    assert sets["terminus (anthropic/claude-sonnet-4) · terminal-bench-core@0.1.1"] == tb_expected(
        TB_RUN / "results.json"
    )


def test_terminal_bench_per_trial_files_alone(tmp_path: Path) -> None:
    """Without the run's results.json, the trials' own files are read."""
    run = tmp_path / TB_RUN.name
    shutil.copytree(TB_RUN, run)
    (run / "results.json").unlink()
    (counts,) = loaded_counts(tmp_path).values()
    assert counts == tb_expected(TB_RUN / "results.json")


def test_terminal_bench_errors_fail() -> None:
    (counts,) = loaded_counts(TB_RUN, errors="fail").values()
    assert counts == tb_expected(TB_RUN / "results.json", errors_fail=True)


def test_terminal_bench_runs_of_two_invocations_stay_apart(tmp_path: Path) -> None:
    """Two `tb run` folders with one attempt each, of one agent and model: attempt 1 of
    each is its own run of one result set."""
    for run_id, resolved in (("2025-06-01__10-00-00", True), ("2025-06-02__10-00-00", False)):
        trial = {"task_id": "t", "trial_name": f"t.1-of-1.{run_id}", "is_resolved": resolved}
        (tmp_path / run_id).mkdir()
        (tmp_path / run_id / "results.json").write_text(json.dumps({"results": [trial]}))
        metadata = {"run_id": run_id, "agent_name": "terminus", "model_name": "m"}
        (tmp_path / run_id / "run_metadata.json").write_text(json.dumps(metadata))
    loaded = load_sources([Source(tmp_path)])
    (rs,) = loaded.result_sets
    (task,) = rs.tasks
    assert rs.model == "terminus (m)"
    assert task.outcomes == [True, False]  # in run-id (date) order


def test_terminal_bench_runs_that_name_no_agent_are_not_pooled(tmp_path: Path) -> None:
    """Without run_metadata.json nothing says the two runs are of one agent: each run
    folder is taken as its own, and the page says the name is a guess."""
    for run_id, resolved in (("2025-06-01__10-00-00", True), ("2025-06-02__10-00-00", False)):
        trial = {"task_id": "t", "trial_name": f"t.1-of-1.{run_id}", "is_resolved": resolved}
        (tmp_path / run_id).mkdir()
        (tmp_path / run_id / "results.json").write_text(json.dumps({"results": [trial]}))
    loaded = load_sources([Source(tmp_path)])
    assert [(rs.model, rs.tasks[0].outcomes) for rs in loaded.result_sets] == [
        ("2025-06-01__10-00-00", [True]),
        ("2025-06-02__10-00-00", [False]),
    ]
    assert {rs.named_by["model"] for rs in loaded.result_sets} == {"the folder's name"}
    # One name given for them joins them.
    (rs,) = load_sources([Source(tmp_path, model="terminus")]).result_sets
    assert rs.tasks[0].outcomes == [True, False]


# ------------------------------------------------------------ Harbor


def harbor_expected(
    job: Path, threshold: float = 1.0, errors_fail: bool = False, key: str = "reward"
) -> Counts:
    # harbor src/harbor/models/trial/result.py (TrialResult: task_name, trial_name,
    # verifier_result, exception_info) and src/harbor/models/verifier/result.py
    # (VerifierResult.rewards).
    outcomes: dict[str, list[bool | None]] = defaultdict(list)
    for path in sorted(job.glob("*/result.json")):
        trial = json.loads(path.read_text())
        if trial["exception_info"] is not None and trial["verifier_result"] is None:
            outcomes[trial["task_name"]].append(False if errors_fail else None)
        else:
            reward = trial["verifier_result"]["rewards"][key]
            outcomes[trial["task_name"]].append(reward >= threshold)
    return tally(outcomes)


@pytest.mark.parametrize("path", [HARBOR_JOB, HARBOR_JOB.parent], ids=["job", "jobs folder"])
def test_harbor_job_counts(path: Path) -> None:
    sets = loaded_counts(path)
    # agent_info.model_info.name is the model; the trial's source, the suite.
    assert list(sets) == ["terminus-2 (claude-sonnet-4-5) · terminal-bench"]
    assert sets["terminus-2 (claude-sonnet-4-5) · terminal-bench"] == harbor_expected(HARBOR_JOB)


def test_harbor_threshold_and_errors_settings() -> None:
    (counts,) = loaded_counts(HARBOR_JOB, threshold=0.5, errors="fail").values()
    assert counts == harbor_expected(HARBOR_JOB, threshold=0.5, errors_fail=True)
    assert counts != harbor_expected(HARBOR_JOB)  # the fixture has a reward of 0.5


def test_harbor_several_rewards_need_a_scorer(tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(HARBOR_JOB, job)
    for path in job.glob("*/result.json"):
        trial = json.loads(path.read_text())
        if trial["verifier_result"] is not None:
            reward = trial["verifier_result"]["rewards"].pop("reward")
            trial["verifier_result"]["rewards"] = {"tests": reward, "style": 1.0}
        path.write_text(json.dumps(trial))
    with pytest.raises(UserError, match=r"several rewards \(tests, style\)"):
        load_sources([Source(job)])
    (counts,) = loaded_counts(job, scorer="tests").values()
    assert counts == harbor_expected(job, key="tests")


def test_harbor_job_summary_alone_is_explained() -> None:
    with pytest.raises(UserError, match="job's summary, which holds no per-trial results"):
        load_sources([Source(HARBOR_JOB / "result.json")])


# ------------------------------------------------------------ promptfoo


def promptfoo_expected(path: Path) -> Counts:
    # promptfoo src/util/output.ts (createOutputData: {evalId, results: summary, ...}),
    # src/types/index.ts (EvaluateSummaryV3.results: EvaluateResult[] with testCase,
    # success, failureReason; ResultFailureReason.ERROR = 2).
    outcomes: dict[str, list[bool | None]] = defaultdict(list)
    for result in json.loads(path.read_text())["results"]["results"]:
        case = result["testCase"]
        key = json.dumps([case.get("description"), case["vars"]], sort_keys=True)
        outcomes[key].append(None if result["failureReason"] == 2 else result["success"])
    return tally(outcomes)


def test_promptfoo_counts() -> None:
    sets = loaded_counts(PROMPTFOO)
    # provider.id when label is empty; "results.json" names no suite, so its folder does
    assert list(sets) == ["openai:gpt-4o-mini · promptfoo"]
    counts = sets["openai:gpt-4o-mini · promptfoo"]
    assert sorted(counts.values()) == sorted(promptfoo_expected(PROMPTFOO).values())
    # Readable ids: the description (or the vars) and a short hash.
    assert sorted(counts) == [
        "Greets the user by name #33295d10",
        "Refuses to give medical advice #8ced8250",
        "city=Paris, unit=celsius #3451c5d0",
    ]


def test_promptfoo_task_is_not_test_idx() -> None:
    """testIdx differs for every repeat; the three repeats of a test are one task."""
    doc = json.loads(PROMPTFOO.read_text())
    assert len({r["testIdx"] for r in doc["results"]["results"]}) == 9
    (counts,) = loaded_counts(PROMPTFOO).values()
    assert len(counts) == 3


def test_promptfoo_older_layout_and_several_prompts(tmp_path: Path) -> None:
    """Older promptfoo wrote the summary at the top level ({version, results: [...]});
    with two prompts the prompt's label joins the provider as the model."""
    doc = json.loads(PROMPTFOO.read_text())
    results = doc["results"]["results"]
    second = [
        {
            **r,
            "promptIdx": 1,
            "prompt": {"raw": "x", "label": "terse-v2"},
            "success": True,
            "failureReason": 0,
        }
        for r in results
    ]
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"version": 2, "timestamp": "t", "results": results + second}))
    assert detect_format(path) == "promptfoo"
    sets = loaded_counts(path)
    assert sorted(sets) == [
        "openai:gpt-4o-mini · helpful-v1 · old",
        "openai:gpt-4o-mini · terse-v2 · old",
    ]
    assert sorted(sets["openai:gpt-4o-mini · terse-v2 · old"].values()) == [(3, 3, 0)] * 3


def test_promptfoo_repeat_index_when_present(tmp_path: Path) -> None:
    doc = json.loads(PROMPTFOO.read_text())
    for i, result in enumerate(doc["results"]["results"]):
        result["repeatIndex"] = 2 - i // 3  # reversed: the run order must follow it
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    loaded = load_sources([Source(path)])
    task = next(t for t in loaded.result_sets[0].tasks if t.id.startswith("Refuses"))
    assert task.outcomes == [None, False, True]


def test_promptfoo_tests_alike_but_for_their_assertions_are_refused(tmp_path: Path) -> None:
    """Two tests with the same vars and no description, checking other things, would
    share a task id (made from description and vars): refused once, by place, rather
    than pooled as one test (they were one task at 2/4). Repeats that agree are fine."""
    doc = json.loads(PROMPTFOO.read_text())
    results = doc["results"]["results"]
    first = results[0]
    for i, result in enumerate(results):
        result["testCase"] = {**first["testCase"], "description": None}
        result["testCase"]["assert"] = [{"type": "contains", "value": f"v{i % 2}"}]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError) as caught:
        load_sources([Source(path)])
    (problem,) = caught.value.problems
    assert problem.startswith(f"{path}: results.results[1].testCase.assert: another test")
    assert f"({path}: results.results[0])" in problem
    for result in results:
        result["testCase"]["assert"] = [{"type": "contains", "value": "v0"}]
    path.write_text(json.dumps(doc))
    (rs,) = load_sources([Source(path)]).result_sets
    assert len(rs.tasks) == 1 and rs.tasks[0].runs + rs.tasks[0].excluded == len(results)


# ------------------------------------------------------------ JUnit XML


def junit_expected(folder: Path, errors_fail: bool = False) -> Counts:
    # pytest src/_pytest/junitxml.py: <testsuites><testsuite><testcase classname name>
    # with a <failure>, <error> or <skipped> child.
    outcomes: dict[str, list[bool | None]] = defaultdict(list)
    for path in sorted(folder.glob("*.xml")):
        for case in ET.parse(path).getroot().iter("testcase"):
            tags = {child.tag for child in case}
            task = f"{case.get('classname')}::{case.get('name')}"
            if "failure" in tags:
                outcomes[task].append(False)
            elif "error" in tags:
                outcomes[task].append(False if errors_fail else None)
            elif "skipped" in tags:
                outcomes[task].append(None)
            else:
                outcomes[task].append(True)
    return tally(outcomes)


def test_junit_folder_counts() -> None:
    assert loaded_counts(JUNIT) == {"junit": junit_expected(JUNIT)}


def test_junit_errors_fail_but_skipped_stays_out() -> None:
    counts = loaded_counts(JUNIT, errors="fail")["junit"]
    assert counts == junit_expected(JUNIT, errors_fail=True)
    assert counts["tests.test_api::test_logout"][2] == 1  # the skipped run


def test_junit_single_testsuite_root_and_no_classname(tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    path.write_text(
        '<testsuite name="jest"><testcase name="renders"/>'
        '<testcase name="renders"><failure/></testcase></testsuite>'
    )
    # The same test twice in one file: two runs of it.
    assert loaded_counts(path) == {"r": {"renders": (1, 2, 0)}}


def test_junit_billion_laughs_and_external_entities_are_refused_fast(tmp_path: Path) -> None:
    laughs = tmp_path / "laughs.xml"
    entities = "".join(f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 30))
    laughs.write_text(
        f'<?xml version="1.0"?><!DOCTYPE testsuites [<!ENTITY l0 "ha">{entities}]>'
        '<testsuites><testsuite><testcase name="&l29;"/></testsuite></testsuites>'
    )
    external = tmp_path / "external.xml"
    external.write_text(
        '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<testsuites><testsuite><testcase name="&x;"/></testsuite></testsuites>'
    )
    for path in (laughs, external):
        start = time.perf_counter()
        with pytest.raises(UserError) as caught:
            load_sources([Source(path)])
        assert time.perf_counter() - start < 5  # refused before any expansion
        assert caught.value.problems == [
            f"{path}:1: refused: a document type declaration (DTD), which a JUnit report "
            "never needs"
        ]


# ------------------------------------------------------------ detection


FIXTURE_FILES = {
    "swe-bench": sorted(SWE.glob("*.json")),
    "terminal-bench": [TB_RUN / "results.json", *sorted(TB_RUN.glob("*/*/results.json"))],
    "harbor": sorted(HARBOR_JOB.glob("*/result.json")),
    "promptfoo": [PROMPTFOO],
    "junit": sorted(JUNIT.glob("*.xml")),
}
OTHER_FIXTURES = {
    "tau-bench": [FIXTURES / "tau-bench" / "gpt-4o-airline-small.json"],
    "tau2-bench": [FIXTURES / "tau2" / "results.json"],
    "inspect": [FIXTURES / "inspect" / "mini.json", FIXTURES / "inspect" / "mini_zstd.eval"],
}


@pytest.mark.parametrize("name", list(FIXTURE_FILES))
def test_each_fixture_is_detected_as_its_format_only(name: str, tmp_path: Path) -> None:
    for path in FIXTURE_FILES[name]:
        assert detect_format(path) == name, path
        # And by content alone, under a name without a telling suffix.
        copy = tmp_path / "results.data"
        copy.write_bytes(path.read_bytes())
        assert detect_format(copy) == name, path


@pytest.mark.parametrize("name", list(OTHER_FIXTURES))
def test_the_new_sniffers_leave_the_other_formats_alone(name: str, tmp_path: Path) -> None:
    assert OTHER_FIXTURES[name]
    for path in OTHER_FIXTURES[name]:
        assert detect_format(path) == name, path
        copy = tmp_path / "results.data"  # by content alone
        copy.write_bytes(path.read_bytes())
        assert detect_format(copy) == name, path


def test_side_files_of_the_harnesses_are_of_no_format() -> None:
    """Configs, metadata and the job summary beside the results are not results."""
    for path in (
        TB_RUN / "run_metadata.json",
        HARBOR_JOB / "config.json",
        *sorted(HARBOR_JOB.glob("*/config.json")),
    ):
        assert detect_format(path) is None, path


# ------------------------------------------------------------ folders


def test_folder_with_two_formats_names_the_files(tmp_path: Path) -> None:
    shutil.copytree(JUNIT, tmp_path / "junit")
    shutil.copy(PROMPTFOO, tmp_path / "promptfoo.json")
    with pytest.raises(UserError) as caught:
        load_sources([Source(tmp_path)])
    (message,) = caught.value.problems
    assert message == (
        f"{tmp_path}: holds result files of several formats (junit: junit/run-1.xml, "
        "junit/run-2.xml, junit/run-3.xml; promptfoo: promptfoo.json); give a folder of "
        "one format, or set format: (or --input-format) to read only one"
    )
    # format: picks one and skips the rest.
    assert loaded_counts(tmp_path, format="junit") == {tmp_path.name: junit_expected(JUNIT)}


def test_folder_skips_hidden_entries_and_files_of_no_format(tmp_path: Path) -> None:
    shutil.copytree(JUNIT, tmp_path / "runs")
    (tmp_path / "runs" / ".hidden.xml").write_text("<broken")
    (tmp_path / "runs" / ".git").mkdir()
    (tmp_path / "runs" / ".git" / "run-9.xml").write_text("<broken")
    (tmp_path / "runs" / "notes.txt").write_text("ci notes\n")
    (tmp_path / "runs" / "empty.log").write_text("")
    assert loaded_counts(tmp_path / "runs") == {"runs": junit_expected(JUNIT)}


def test_folder_passes_over_yaml_configs_but_reads_yaml_suites(tmp_path: Path) -> None:
    """A YAML file without a top-level tasks key, met in a folder, is a config (reportgen's
    own, a harness's), not a suite file: not a second format, and not read as a suite."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(JUNIT / "run-1.xml", runs / "run-1.xml")
    shutil.copy(EXAMPLE, runs / "reportgen.yaml")
    (runs / "settings.yml").write_text("model: gpt-4o\nepochs: 3\n")
    assert loaded_counts(runs) == {"runs": loaded_counts(JUNIT / "run-1.xml")["run-1"]}
    suites = tmp_path / "suites"
    suites.mkdir()
    shutil.copy(EXAMPLE, suites / "reportgen.yaml")
    (suites / "a.yaml").write_text("suite: s\ntasks:\n  - {id: t1, successes: 3, runs: 4}\n")
    (suites / "b.yml").write_text('{"tasks": [{id: t2, successes: 1, runs: 2}], suite: s}\n')
    assert loaded_counts(suites) == {"s": {"t1": (3, 4, 0), "t2": (1, 2, 0)}}
    # Given alone, a YAML file is still read as a suite, and its problems named.
    with pytest.raises(UserError, match=r"reportgen\.yaml: unknown key 'title'"):
        load_sources([Source(suites / "reportgen.yaml")])


def test_folder_passes_over_a_history_kept_beside_the_results(tmp_path: Path) -> None:
    results = EXAMPLE.parent / "results" / "agent-alpha.jsonl"
    shutil.copy(results, tmp_path / "runs.jsonl")
    shutil.copy(EXAMPLE.parent / "history.jsonl", tmp_path / "history.jsonl")
    assert list(loaded_counts(tmp_path).values()) == list(loaded_counts(results).values())
    # Given alone, it is said to be a history, not read as runs.
    with pytest.raises(UserError, match=r"history\.jsonl:1: this is a build of a reportgen"):
        load_sources([Source(tmp_path / "history.jsonl")])


def test_a_folder_given_as_dot_is_named_as_the_folder_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(JUNIT, tmp_path / "ci-runs")
    monkeypatch.chdir(tmp_path / "ci-runs")
    assert list(loaded_counts(Path("."))) == ["ci-runs"]
    (tmp_path / "ci-runs" / "inner").mkdir()
    monkeypatch.chdir(tmp_path / "ci-runs" / "inner")
    assert list(loaded_counts(Path(".."))) == ["ci-runs"]


def test_a_built_site_given_as_results_is_refused(example_site: Path) -> None:
    """Its tasks.csv files and history.jsonl would otherwise be read as results."""
    with pytest.raises(UserError) as caught:
        load_sources([Source(example_site)])
    assert caught.value.problems == [
        f"{example_site}: is a site reportgen built, not result files; give the files it "
        "was built from (check and compare take a site as it is)"
    ]


def test_folder_reads_a_damaged_file_that_looks_like_the_others(tmp_path: Path) -> None:
    """A cut-short result.json is read, and fails where it is, instead of being skipped."""
    job = tmp_path / "job"
    shutil.copytree(HARBOR_JOB, job)
    damaged = job / "regex-log__Xc2ZaS4" / "result.json"
    damaged.write_bytes(damaged.read_bytes()[:5])
    empty = job / "hello-world__aB3dE9x" / "result.json"
    empty.write_text("")
    with pytest.raises(UserError) as caught:
        load_sources([Source(job)])
    assert caught.value.problems == [
        f"{empty}: the file is empty: no runs to count",
        f"{damaged}:2: not valid JSON: Expecting property name enclosed in double quotes "
        "(column 4)",
    ]


def test_folder_order_is_sorted_and_the_result_repeatable(tmp_path: Path) -> None:
    # Files created in reverse order still read in name order: run-1, run-2, run-3.
    for path in sorted(JUNIT.glob("*.xml"), reverse=True):
        shutil.copy(path, tmp_path / path.name)
    first = load_sources([Source(tmp_path)])
    again = load_sources([Source(tmp_path)])
    assert first == again
    task = next(t for t in first.result_sets[0].tasks if t.id.endswith("test_large_upload"))
    assert task.outcomes == [True, None, True]  # run-2 holds the <error>


def test_folder_symlink_loops_are_not_followed(tmp_path: Path) -> None:
    shutil.copytree(JUNIT, tmp_path / "runs")
    os.symlink(tmp_path / "runs", tmp_path / "runs" / "loop")
    os.symlink(tmp_path / "runs" / "run-1.xml", tmp_path / "runs" / "zz-link.xml")
    counts = loaded_counts(tmp_path / "runs")["runs"]
    # The link to a file the folder holds adds no run (it is run-1.xml's); the link to
    # the folder is not walked.
    assert counts["tests.test_api::test_login"] == (3, 3, 0)


def test_folder_walk_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(folder_module, "MAX_ENTRIES", 5)
    for i in range(6):
        (tmp_path / f"r{i}.xml").write_text("<testsuite/>")
    with pytest.raises(UserError, match="holds more than 5 files and folders"):
        load_sources([Source(tmp_path)])
    monkeypatch.setattr(folder_module, "MAX_ENTRIES", 100)
    monkeypatch.setattr(folder_module, "MAX_DEPTH", 1)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    shutil.copy(JUNIT / "run-1.xml", deep / "deep.xml")
    found = folder_module.walk(tmp_path, Problems())
    assert found is not None and deep / "deep.xml" not in found
    # With nothing nearer, the message says where the walk stopped.
    for stray in tmp_path.glob("r*.xml"):
        stray.unlink()
    with pytest.raises(UserError) as caught:
        load_sources([Source(tmp_path)])
    (problem,) = caught.value.problems
    assert problem.endswith(
        f"the walk stops 1 levels down, above {deep}: give a folder nearer the files"
    )
    # Also beside files that are not results (a job folder's README).
    (tmp_path / "README.md").write_text("notes\n")
    for options in ({}, {"format": "junit"}):
        with pytest.raises(UserError) as caught:
            load_sources([Source(tmp_path, **options)])
        (problem,) = caught.value.problems
        assert problem.endswith(f"above {deep}: give a folder nearer the files"), problem


def test_folder_digest_follows_its_files(tmp_path: Path) -> None:
    shutil.copytree(JUNIT, tmp_path / "runs")
    before = input_digest(tmp_path / "runs")
    assert before == input_digest(tmp_path / "runs")
    shutil.copy(JUNIT / "run-1.xml", tmp_path / "runs" / "run-4.xml")
    assert input_digest(tmp_path / "runs") != before


def test_config_takes_a_folder_and_the_new_settings(tmp_path: Path) -> None:
    from reportgen.config import load_config

    shutil.copytree(HARBOR_JOB, tmp_path / "jobs" / "job")
    config = tmp_path / "reportgen.yaml"
    config.write_text("result_sets:\n  - {path: jobs/job, errors: fail, threshold: 0.5}\n")
    (source,) = load_config(config).result_sets
    assert source.path == tmp_path / "jobs" / "job" and source.errors == "fail"
    assert source.threshold == 0.5
    config.write_text("result_sets:\n  - {path: x, errors: maybe, threshold: high}\n")
    with pytest.raises(UserError) as caught:
        load_config(config)
    assert caught.value.problems == [
        f'{config}: result_sets[0].errors: expected exclude or fail, got "maybe"'
    ]
    config.write_text("result_sets:\n  - {path: x, threshold: high}\n")
    with pytest.raises(UserError, match=r"result_sets\[0\]\.threshold: expected a number"):
        load_config(config)


# ------------------------------------------------------------ the CLI


def test_formats_lists_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(["formats"], capsys)
    assert status == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == list(FORMATS)
    for line, reader in zip(lines, READERS, strict=True):
        assert reader.summary in line


BAD = {
    "swe-bench": [
        (
            "m.r1.json",
            '{"submitted_ids": ["a"], "resolved_ids": "a"}',
            r"m\.r1\.json: resolved_ids: expected a list of instance ids, got \"a\"",
        ),
        (
            "m.r1.json",
            '{"submitted_ids": ["a"], "resolved_ids": ["b"]}',
            r"m\.r1\.json: resolved_ids\[0\]: 'b' is not in submitted_ids",
        ),
        (
            "m.r1.json",
            '{"submitted_ids": ["a", 7], "resolved_ids": []}',
            r"m\.r1\.json: submitted_ids\[1\]: expected an instance id, got 7",
        ),
        (
            "m.r1.json",
            '{"submitted_ids": ["a"], "resolved_ids": ["a"], "error_ids": ["a"]}',
            r"m\.r1\.json: error_ids\[0\]: 'a' is also in resolved_ids",
        ),
        (
            "m.r1.json",
            '{"submitted_instances": 1, "resolved_instances": 0}',
            r"m\.r1\.json: submitted_ids: missing; is this a SWE-bench run report\?",
        ),
        (
            "m.r1.json",
            '{"submitted_ids": ["a"], "resolved_ids": [',
            r"m\.r1\.json:1: not valid JSON: Expecting value",
        ),
    ],
    "terminal-bench": [
        (
            "results.json",
            '{"results": [{"task_id": "t", "trial_name": "t.1-of-1.r"}, 5]}',
            r"results\.json: results\[1\]: expected a trial object, got 5",
        ),
        (
            "results.json",
            '{"results": [{"task_id": "t", "trial_name": "t.1-of-1.r", "is_resolved": "yes"}]}',
            r"results\.json: results\[0\]\.is_resolved: expected true, false or null, got \"yes\"",
        ),
        (
            "results.json",
            '{"results": [{"trial_name": "t.1-of-1.r", "is_resolved": true}]}',
            r"results\.json: results\[0\]\.task_id: expected a string, got null",
        ),
        (
            "results.json",
            '{"results": {"trial_name": 1, "is_resolved": true}}',
            r"results\.json: results: expected a list of trials",
        ),
        ("results.json", '{"results": []}', r"results\.json: results: the list is empty"),
    ],
    "harbor": [
        (
            "result.json",
            '{"task_name": "t", "trial_name": "t__a", "verifier_result": '
            '{"rewards": {"reward": "1"}}, "exception_info": null}',
            r"result\.json: verifier_result\.rewards\.reward: expected a number, got \"1\"",
        ),
        (
            "result.json",
            '{"task_name": "t", "trial_name": "t__a", "verifier_result": null, '
            '"exception_info": null}',
            r"result\.json: verifier_result: missing, and the trial has no exception_info",
        ),
        (
            "result.json",
            '{"task_name": 3, "trial_name": "t__a"}',
            r"result\.json: task_name: expected a string, got 3",
        ),
        (
            "result.json",
            '{"task_name": "t", "trial_name": "t__a", "verifier_result": {"rewards": {}}}',
            r"result\.json: verifier_result\.rewards: expected a map",
        ),
        (
            "result.json",
            '{"task_name": "t", "trial_name": "t__a", "exception_info": "boom"}',
            r"result\.json: exception_info: expected an object or null",
        ),
    ],
    "promptfoo": [
        (
            "out.json",
            '{"evalId": "e", "results": {"version": 3, "results": [{"success": "no"}]}}',
            r"out\.json: results\.results\[0\]\.success: expected true or false, got \"no\"",
        ),
        (
            "out.json",
            '{"evalId": "e", "results": {"version": 3, "results": [{"success": true, '
            '"provider": {"id": "p"}, "testCase": {}}]}}',
            r"out\.json: results\.results\[0\]\.testCase: neither a description nor vars",
        ),
        (
            "out.json",
            '{"evalId": "e", "results": {"version": 3, "results": [{"success": true, '
            '"testCase": {"vars": {"a": 1}}}]}}',
            r"out\.json: results\.results\[0\]\.provider: expected \{id, label\}",
        ),
        (
            "out.json",
            '{"evalId": "e", "results": {"version": 3, "results": 4}}',
            r"out\.json: results\.results: expected promptfoo's results list",
        ),
        (
            "out.json",
            '{"evalId": "e", "results": {"version": 3, "results": [{"success": true, '
            '"provider": "p", "testCase": {"vars": {"a": 1}}, "testIdx": -1}]}}',
            r"out\.json: results\.results\[0\]\.testIdx: expected a whole number, got -1",
        ),
    ],
    "junit": [
        (
            "run.xml",
            "<testsuites><testsuite><testcase classname='c'/></testsuite></testsuites>",
            r"run\.xml:1: <testcase> has no name attribute",
        ),
        (
            "run.xml",
            "<testsuites>\n<testsuite>\n<testcase name='a'>\n",
            r"run\.xml:4: not well-formed XML: no element found \(was the file cut short\?\)",
        ),
        (
            "run.xml",
            "<html><body/></html>",
            r"run\.xml:1: expected a JUnit report \(<testsuites> or <testsuite>\), found <html>",
        ),
        (
            "run.xml",
            "<testsuites><testsuite></testsuite></testsuites>",
            r"run\.xml: no <testcase> elements: no runs to count",
        ),
        (
            "run.xml",
            "<testsuites><testsuite><testcase name='a'></testsuite></testsuites>",
            r"run\.xml:1: not well-formed XML: mismatched tag",
        ),
        (
            # Found by the fuzzer: an XML declaration naming an encoding Python lacks.
            "run.xml",
            '<?xml version="1.0" encoding="utf-d"?><testsuites/>',
            r"run\.xml:1: cannot read the XML's encoding: unknown encoding: utf-d",
        ),
    ],
}


@pytest.mark.parametrize(
    ("name", "case"),
    [(name, i) for name, cases in BAD.items() for i in range(len(cases))],
)
def test_bad_inputs_exit_2_located_without_traceback(
    name: str, case: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file_name, text, expected = BAD[name][case]
    path = tmp_path / file_name
    path.write_text(text)
    status, out, err = run_cli(["summary", str(path), "--input-format", name], capsys)
    assert status == 2 and out == ""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines and all(line.startswith("reportgen: error: ") for line in lines), err
    assert any(re.search(expected, line) for line in lines), err


def test_bad_file_in_a_folder_is_located_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(JUNIT, tmp_path / "runs")
    bad = tmp_path / "runs" / "run-2.xml"
    bad.write_text(bad.read_text()[:300])
    status, _, err = run_cli(["summary", str(tmp_path / "runs")], capsys)
    assert status == 2 and "Traceback" not in err
    assert re.search(rf"{re.escape(str(bad))}:\d+: not well-formed XML", err), err


def test_errors_and_threshold_flags(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(
        ["summary", str(HARBOR_JOB), "--errors", "fail", "--threshold", "0.5", "--format", "json"],
        capsys,
    )
    assert status == 0, err
    (rs,) = json.loads(out)["result_sets"]
    expected = harbor_expected(HARBOR_JOB, threshold=0.5, errors_fail=True)
    assert {t["id"]: (t["successes"], t["runs"]) for t in rs["tasks"]} == {
        task: (s, n) for task, (s, n, _) in expected.items()
    }
    status, _, err = run_cli(["summary", str(HARBOR_JOB), "--threshold", "lots"], capsys)
    assert status == 2 and "--threshold: 'lots' is not a number" in err


# ------------------------------------------------------------ sites


SITE_INPUTS = {
    "swe-bench": SWE,
    "terminal-bench": TB_RUN,
    "harbor": HARBOR_JOB,
    "promptfoo": PROMPTFOO,
    "junit": JUNIT,
}


@pytest.mark.parametrize("name", list(SITE_INPUTS))
def test_a_site_builds_from_each_format(name: str, tmp_path: Path) -> None:
    path = SITE_INPUTS[name]
    result = build(Config(output=tmp_path / "site", result_sets=[Source(path)]))
    report = json.loads((tmp_path / "site" / "report.json").read_text())
    (rs,) = report["result_sets"]
    assert rs["format"] == name and result.result_sets == 1
    expected = loaded_counts(path)
    (counts,) = expected.values()
    assert {t["id"]: (t["successes"], t["runs"]) for t in rs["tasks"]} == {
        task: (s, n) for task, (s, n, _) in counts.items() if n > 0
    }
    assert rs["excluded_runs"] == sum(e for _, _, e in counts.values())


@pytest.mark.parametrize(
    ("path", "options"),
    [
        (FIXTURES / "tau2" / "results.json", {}),
        (FIXTURES / "inspect" / "mini_error.eval", {"scorer": "match"}),
    ],
    ids=["tau2-bench infrastructure errors", "inspect sample errors"],
)
def test_errors_fail_applies_to_the_older_readers_too(path: Path, options: dict[str, Any]) -> None:
    excluded = loaded_counts(path, **options)
    failed = loaded_counts(path, errors="fail", **options)
    assert excluded.keys() == failed.keys()
    flat_before = {(n, t): c for n, counts in excluded.items() for t, c in counts.items()}
    flat_after = {(n, t): c for n, counts in failed.items() for t, c in counts.items()}
    assert any(e for _, _, e in flat_before.values())  # the fixture has errors to count
    for key, (successes, runs, ex) in flat_before.items():
        assert flat_after[key] == (successes, runs + ex, 0)


def test_folder_passes_over_a_site_reportgen_wrote(tmp_path: Path) -> None:
    """`reportgen build runs/ -o runs/site` twice: the second build does not read the site."""
    from reportgen.website.write import MARKER

    assert folder_module.SITE_MARKER == MARKER
    runs = tmp_path / "runs"
    shutil.copytree(JUNIT, runs)
    build(Config(output=runs / "site", result_sets=[Source(runs)]))
    assert (runs / "site" / "report.json").is_file()
    assert loaded_counts(runs) == {"runs": junit_expected(JUNIT)}


OUTCOME = st.sampled_from(["pass", "failure", "error", "skipped"])


@settings(max_examples=examples(25), deadline=None)
@given(runs=st.lists(st.lists(OUTCOME, min_size=1, max_size=4), min_size=1, max_size=4))
def test_junit_counts_law(runs: list[list[str]]) -> None:
    """For any outcomes: successes = passes, n = passes + failures, excluded = errors +
    skips, summed over the files of a folder."""
    # A folder with no evaluated run at all is refused (tested in test_load.py).
    assume(any(o in ("pass", "failure") for outcomes in runs for o in outcomes))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i, outcomes in enumerate(runs):
            cases = "".join(
                f'<testcase classname="c" name="t{j}">'
                + ("" if o == "pass" else f"<{o}/>")
                + "</testcase>"
                for j, o in enumerate(outcomes)
            )
            (folder / f"run-{i}.xml").write_text(
                f"<testsuites><testsuite>{cases}</testsuite></testsuites>"
            )
        expected: dict[str, list[str]] = defaultdict(list)
        for outcomes in runs:
            for j, o in enumerate(outcomes):
                expected[f"c::t{j}"].append(o)
        (counts,) = loaded_counts(folder).values()
        assert counts == {
            task: (
                os_.count("pass"),
                os_.count("pass") + os_.count("failure"),
                os_.count("error") + os_.count("skipped"),
            )
            for task, os_ in expected.items()
        }


@settings(max_examples=examples(25), deadline=None)
@given(
    runs=st.lists(
        st.dictionaries(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(
                [
                    "resolved_ids",
                    "unresolved_ids",
                    "empty_patch_ids",
                    "error_ids",
                    "infra_failure_ids",
                    None,
                ]
            ),
            min_size=1,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_swe_bench_counts_law(runs: list[dict[str, str | None]]) -> None:
    """Each report adds one run per submitted id: a pass if resolved, excluded if an error
    or never evaluated, else a failure."""
    evaluated = ("resolved_ids", "unresolved_ids", "empty_patch_ids")
    assume(any(key in evaluated for outcome_of in runs for key in outcome_of.values()))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i, outcome_of in enumerate(runs):
            report: dict[str, list[str]] = defaultdict(list)
            report["submitted_ids"] = sorted(outcome_of)
            report["resolved_ids"] = []
            for task, key in sorted(outcome_of.items()):
                if key is not None:
                    report[key].append(task)
            (folder / f"m.run{i}.json").write_text(json.dumps(report))
        successes: dict[str, int] = defaultdict(int)
        n: dict[str, int] = defaultdict(int)
        excluded: dict[str, int] = defaultdict(int)
        for outcome_of in runs:
            for task, key in outcome_of.items():
                successes[task] += key == "resolved_ids"
                if key in (None, "error_ids", "infra_failure_ids"):
                    excluded[task] += 1
                else:
                    n[task] += 1
        (counts,) = loaded_counts(folder).values()
        tasks = {t for r in runs for t in r}
        assert counts == {t: (successes[t], n[t], excluded[t]) for t in tasks}


TRUNCATABLE = {
    "swe-bench": SWE / "openai__gpt-4o-2024-08-06.run1.json",
    "terminal-bench": TB_RUN / "results.json",
    "harbor": HARBOR_JOB / "hello-world__aB3dE9x" / "result.json",
    "promptfoo": PROMPTFOO,
    "junit": JUNIT / "run-1.xml",
}


@pytest.mark.parametrize("name", list(TRUNCATABLE))
def test_cut_short_and_empty_files_exit_2_located(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = TRUNCATABLE[name]
    data = original.read_bytes()
    cut = tmp_path / original.name
    cut.write_bytes(data[: len(data) // 2])
    status, out, err = run_cli(["summary", str(cut), "--input-format", name], capsys)
    assert status == 2 and out == "" and "Traceback" not in err
    # The file and the line where the text stops.
    assert re.search(rf"^reportgen: error: {re.escape(str(cut))}:\d+: not ", err, re.M), err
    cut.write_bytes(b"")
    status, out, err = run_cli(["summary", str(cut), "--input-format", name], capsys)
    assert status == 2
    assert err == f"reportgen: error: {cut}: the file is empty: no runs to count\n"


def test_junit_keeps_to_the_document_size_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reportgen.readers import junit

    monkeypatch.setattr(junit, "MAX_DOCUMENT_BYTES", 100)
    path = tmp_path / "big.xml"
    shutil.copy(JUNIT / "run-1.xml", path)
    with pytest.raises(UserError) as caught:
        load_sources([Source(path)])
    assert caught.value.problems == [
        f"{path}: is {path.stat().st_size:,} bytes; files of this kind are read up to 100 bytes"
    ]


def test_promptfoo_with_words_of_other_formats_in_its_vars(tmp_path: Path) -> None:
    """Test vars named tasks and info, or a value "eval", do not make it τ²-bench or Inspect."""
    doc = json.loads(PROMPTFOO.read_text())
    for result in doc["results"]["results"]:
        result["vars"] = result["testCase"]["vars"] = {"tasks": "eval", "info": "x", "eval": 1}
    path = tmp_path / "out.json"
    path.write_text(json.dumps(doc))
    head = path.read_bytes()[:65536]
    assert b'"tasks"' in head and b'"info"' in head and b'"eval"' in head
    assert detect_format(path) == "promptfoo"


def test_folder_of_jsonl_files_locates_lines_in_their_own_files(tmp_path: Path) -> None:
    """Line numbers in a folder's files name the file they are in, also for a run given
    twice across two files."""
    (tmp_path / "a.jsonl").write_text(
        '{"task": "t", "passed": true, "run": 1}\n{"task": "t", "passed": false, "run": 2}\n'
    )
    (tmp_path / "b.jsonl").write_text(
        '{"task": "u", "passed": true}\n{"task": "t", "passed": true, "run": 1}\n'
    )
    with pytest.raises(UserError) as caught:
        load_sources([Source(tmp_path)])
    assert caught.value.problems == [
        f"{tmp_path / 'b.jsonl'}:2: run 1 of task 't' appears twice "
        f"(first at {tmp_path / 'a.jsonl'}:1)"
    ]
    (tmp_path / "b.jsonl").write_text('{"task": "t", "passed": true, "run": 3}\n')
    (counts,) = loaded_counts(tmp_path).values()
    assert counts == {"t": (2, 3, 0)}


def test_a_folder_names_the_suite_with_its_whole_name(tmp_path: Path) -> None:
    shutil.copytree(JUNIT, tmp_path / "ci.runs-v2")
    assert list(loaded_counts(tmp_path / "ci.runs-v2")) == ["ci.runs-v2"]


def test_terminal_bench_attempt_numbers_too_long_or_not_ascii_stay_trial_names() -> None:
    from reportgen.readers.terminal_bench import run_of

    assert run_of("t", "t.3-of-5.r1") == "r1/000000003"
    for odd in ("t." + "9" * 5000 + "-of-5.r1", "t.٣-of-5.r1"):
        assert run_of("t", odd) == odd
