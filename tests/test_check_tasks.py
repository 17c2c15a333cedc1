"""`reportgen check --per-task`: baselines of every kind, outputs, exit codes, bad input."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from reportgen.check import headline_estimator
from reportgen.check_output import code, escape_data, escape_property
from reportgen.cli import EXIT_CHECK_FAILED, main
from reportgen.stats.estimate import estimate_suite
from reportgen.stats.task_tests import natural_key
from reportgen.views import reliability_json

Counts = dict[str, tuple[int, int]]

BASELINE: Counts = {
    "steady": (10, 10),
    "one-miss": (10, 10),
    "login: 50%, retry": (20, 20),
    "search": (5, 10),
    "retired": (1, 1),
}
CURRENT: Counts = {
    "steady": (10, 10),
    "one-miss": (9, 10),
    "login: 50%, retry": (4, 20),
    "search": (10, 10),
    "added": (1, 2),
}


def report_doc(
    sets: dict[str, Counts], version: int = 3, label: str | None = None, k: int = 3
) -> dict[str, Any]:
    """A report.json as a build writes it, reduced to what check reads."""
    result_sets = []
    for name, counts in sets.items():
        values = list(counts.values())
        suite = estimate_suite([c for c, _ in values], [n for _, n in values], k, 0.95)
        result_sets.append(
            {
                "id": name,
                "suite": "desk",
                "model": name,
                "name": name,
                "reliability_at_k": reliability_json(suite),
                "tasks": [{"id": t, "successes": c, "runs": n} for t, (c, n) in counts.items()],
            }
        )
    history = None if label is None else {"label": label}
    return {
        "schema_version": version,
        "k": k,
        "confidence": 0.95,
        "result_sets": result_sets,
        "history": history,
    }


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def results_jsonl(path: Path, model: str, counts: Counts) -> Path:
    lines = []
    for task, (c, n) in counts.items():
        for run in range(n):
            record = {"suite": "desk", "model": model, "task": task, "run": run, "passed": run < c}
            lines.append(json.dumps(record))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def history_jsonl(path: Path, builds: list[tuple[str, Counts]]) -> Path:
    lines = []
    for label, counts in builds:
        entry = {
            "schema_version": 1,
            "label": label,
            "k": 3,
            "confidence": 0.95,
            "result_sets": [
                {
                    "suite": "desk",
                    "model": "agent",
                    "name": "agent",
                    "tasks": {t: [c, n] for t, (c, n) in counts.items()},
                    "reliability_at_k": {},
                }
            ],
        }
        lines.append(json.dumps(entry))
    path.write_text("\n".join(lines) + "\n")
    return path


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    status = main(argv, out=out)
    return status, out.getvalue()


@pytest.fixture
def site(tmp_path: Path) -> Path:
    write(tmp_path / "site" / "report.json", report_doc({"agent": CURRENT}, label="v2"))
    return tmp_path / "site"


@pytest.fixture
def old(tmp_path: Path) -> Path:
    return write(tmp_path / "old" / "report.json", report_doc({"agent": BASELINE}, version=2))


# ---------------------------------------------------------------- the numbers


def test_verdicts_agree_with_scipy_and_statsmodels(site: Path, old: Path) -> None:
    status, out = run(
        ["check", str(site), "--baseline", str(old), "--per-task", "--format", "json"]
    )
    assert status == 1
    doc = json.loads(out)
    per_task = doc["per_task"]
    rows = {row["task"]: row for row in per_task["tasks"]}
    assert set(rows) == {"one-miss", "login: 50%, retry", "search"}  # "steady" did not change
    for task, row in rows.items():
        (cb, nb), (cc, nc) = BASELINE[task], CURRENT[task]
        table = [[cc, nc - cc], [cb, nb - cb]]
        assert row["p_lower"] == pytest.approx(stats.fisher_exact(table, "less").pvalue)
        assert row["p_higher"] == pytest.approx(stats.fisher_exact(table, "greater").pvalue)
    # The family of falls: the tasks whose margins allow p <= 0.05. "one-miss" (19 of 20
    # passed: its smallest p is 1/2) and "steady" (p = 1 always) cannot; the others can.
    assert rows["one-miss"]["adjusted_lower"] is None
    family = ["login: 50%, retry", "search"]
    assert per_task["family"]["lower"] == 2
    adjusted = multipletests([rows[t]["p_lower"] for t in family], method="holm")[1]
    assert [rows[t]["adjusted_lower"] for t in family] == pytest.approx(list(adjusted))
    assert {t: r["verdict"] for t, r in rows.items()} == {
        "one-miss": "moved down",
        "login: 50%, retry": "regressed",
        "search": "improved",
    }
    assert per_task["only_in_candidate"] == {"agent": ["added"]}
    assert per_task["only_in_baseline"] == {"agent": ["retired"]}
    assert doc["passed"] is False and doc["baseline"] == str(old)


# ---------------------------------------------------------------- golden outputs

GOLDEN_MARKDOWN = """\
### reportgen check: 1 task regressed beyond noise

Baseline: `{old}`

Per task: one-sided Fisher's exact test on each task's pass rate; Holm's family-wise control \
at level 0.05 over the 2 of 4 shared tasks whose counts could show a fall (the others cannot \
reach the level).

| verdict | task | baseline | now | change | p | adjusted p |
|:--|:--|--:|--:|--:|--:|--:|
| **regressed** | `login: 50%, retry` | 20/20 | 4/20 | -0.800 | 7.7e-08 | 1.5e-07 |
| improved | `search` | 5/10 | 10/10 | +0.500 | 0.016 | 0.033 |
| moved down | `one-miss` | 10/10 | 9/10 | -0.100 | 0.500 | – |

– : these counts cannot reach the level, so the task is not in the family.

New since the baseline, not tested: `added`.

Gone since the baseline, not tested: `retired`.
"""

GOLDEN_GITHUB = """\
::error title=Regressed beyond noise%3A login%3A 50%25%2C retry::pass rate 20/20 -> 4/20 \
(-0.800); p = 7.7e-08, Holm-adjusted 1.5e-07 <= 0.05
::notice title=Improved beyond noise%3A search::pass rate 5/10 -> 10/10 (+0.500); \
p = 0.016, Holm-adjusted 0.033 <= 0.05
reportgen check: 1 task regressed beyond noise
"""


def test_markdown_output_is_the_golden_table(site: Path, old: Path) -> None:
    status, out = run(
        ["check", str(site), "--baseline", str(old), "--per-task", "--format", "markdown"]
    )
    assert status == 1
    assert out == GOLDEN_MARKDOWN.format(old=old)
    # The golden numbers, independently: 20/20 -> 4/20 is C(20,4) C(20,16) / C(40,20) ...
    tail = stats.hypergeom.cdf(4, 40, 24, 20)
    assert f"{tail:.1e}" == "7.7e-08" and f"{min(1, 2 * tail):.1e}" == "1.5e-07"
    rise = stats.fisher_exact([[10, 0], [5, 5]], "greater").pvalue
    assert f"{rise:.3f}" == "0.016"
    # Its family of rises holds "search" and the login task (whose own rise p is ~1): Holm 2p.
    login_rise = stats.fisher_exact([[4, 16], [20, 0]], "greater").pvalue
    assert f"{multipletests([rise, login_rise], method='holm')[1][0]:.3f}" == "0.033"


def test_github_output_is_the_golden_annotations(
    site: Path, old: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    status, out = run(
        ["check", str(site), "--baseline", str(old), "--per-task", "--format", "github"]
    )
    assert status == 1
    assert out == GOLDEN_GITHUB
    assert summary.read_text() == "earlier step\n" + GOLDEN_MARKDOWN.format(old=old) + "\n"


def test_github_output_without_a_step_summary(
    site: Path, old: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    status, out = run(
        ["check", str(site), "--baseline", str(old), "--per-task", "--format", "github"]
    )
    assert status == 1 and out == GOLDEN_GITHUB


def test_a_step_summary_that_is_a_pipe_nobody_reads_does_not_hang_the_gate(
    site: Path, old: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    done = subprocess.run(
        [
            *(sys.executable, "-m", "reportgen", "check", str(site), "--baseline", str(old)),
            *("--per-task", "--format", "github"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(fifo)},
        timeout=60,  # it waited for a reader for ever
        check=False,
    )
    assert done.returncode == 1 and done.stdout == GOLDEN_GITHUB
    assert f"reportgen: warning: GITHUB_STEP_SUMMARY: cannot write {fifo}" in done.stderr


def test_workflow_command_escaping_follows_github_rules() -> None:
    # Data: %, CR, LF. Properties: also ':' and ','. '%' first, so escapes are not re-escaped.
    assert escape_data("50%\r\nnext::x") == "50%25%0D%0Anext::x"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_an_id_with_a_line_break_cannot_start_a_second_annotation(tmp_path: Path) -> None:
    sneaky = "x\n::error::forged"
    now = write(tmp_path / "now.json", report_doc({"agent": {sneaky: (0, 30)}}))
    then = write(tmp_path / "then.json", report_doc({"agent": {sneaky: (30, 30)}}))
    status, out = run(
        ["check", str(now), "--baseline", str(then), "--per-task", "--format", "github"]
    )
    assert status == 1
    assert out.splitlines()[0].startswith("::error title=Regressed beyond noise%3A x%0A%3A%3Aerror")
    assert len(out.splitlines()) == 2
    _, md = run(["check", str(now), "--baseline", str(then), "--per-task", "--format", "markdown"])
    assert "`x ::error::forged`" in md


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("plain", "`plain`"),
        ("a|b", "`a|b`"),
        ("tick`in", "``tick`in``"),
        ("`edge", "`` `edge ``"),
    ],
)
def test_markdown_code_spans(text: str, span: str) -> None:
    assert code(text) == span
    # In a table cell a | would end the cell: there, and only there, it is escaped.
    assert code(text, in_table=True) == span.replace("|", "\\|")


def test_a_check_that_compared_nothing_fails_in_every_format(tmp_path: Path) -> None:
    now = write(tmp_path / "now.json", report_doc({"renamed": {"a": (5, 10), "b": (10, 10)}}))
    then = write(tmp_path / "then.json", report_doc({"agent": {"a": (10, 10), "b": (10, 10)}}))
    # What was looked for and what the baseline holds, so the fix is plain.
    said = (
        "--max-drop compared nothing and --per-task tested no task: no suite / model of the "
        "report (desk / renamed) is in the baseline, which holds desk / agent"
    )
    argv = ["check", str(now), "--baseline", str(then), "--per-task", "--max-drop", "0.1"]
    status, out = run([*argv, "--format", "json"])
    assert status == EXIT_CHECK_FAILED
    doc = json.loads(out)
    assert doc["passed"] is False and doc["errors"][0].startswith(said)
    assert doc["warnings"] == []
    status, out = run([*argv, "--format", "markdown"])
    assert status == EXIT_CHECK_FAILED
    assert out.startswith("### reportgen check: nothing was compared with the baseline\n")
    assert "**Failed:** --max-drop compared nothing" in out and "No task was tested" in out
    status, out = run([*argv, "--format", "github"])
    assert status == EXIT_CHECK_FAILED
    assert any(
        line.startswith("::error title=reportgen check::" + said) for line in out.splitlines()
    )
    assert out.endswith("reportgen check: nothing was compared with the baseline\n")
    status, out = run([*argv, "--format", "text"])
    assert status == EXIT_CHECK_FAILED and f"FAIL  {said}" in out

    # --allow-unmatched lets it pass, and says the same as a warning in every format.
    allowed = [*argv, "--allow-unmatched"]
    status, out = run([*allowed, "--format", "json"])
    doc = json.loads(out)
    assert status == 0 and doc["passed"] is True and doc["errors"] == []
    assert doc["warnings"][0].startswith(said)
    status, out = run([*allowed, "--format", "markdown"])
    assert status == 0 and out.startswith("### reportgen check: passed, with warnings")
    assert "**Warning:** --max-drop compared nothing" in out
    status, out = run([*allowed, "--format", "github"])
    assert status == 0
    assert any(
        line.startswith("::warning title=reportgen check::" + said) for line in out.splitlines()
    )
    status, out = run([*allowed, "--format", "text"])
    assert status == 0 and "FAIL" not in out


def test_a_check_whose_sets_match_but_share_no_task_fails(tmp_path: Path) -> None:
    now = write(tmp_path / "now.json", report_doc({"agent": {"new-a": (5, 10), "new-b": (9, 10)}}))
    then = write(
        tmp_path / "then.json", report_doc({"agent": {"old-a": (9, 10), "old-b": (5, 10)}})
    )
    argv = ["check", str(now), "--baseline", str(then), "--per-task", "--format", "json"]
    status, out = run(argv)
    assert status == EXIT_CHECK_FAILED
    (error,) = json.loads(out)["errors"]
    assert error == (
        "--per-task tested no task: the result sets desk / agent are in both, but share no "
        "task id with the baseline's"
    )
    # The suite gate alone did compare the set, so it does not fail for this.
    assert run(["check", str(now), "--baseline", str(then), "--max-drop", "0.9"])[0] == 0
    assert run([*argv, "--allow-unmatched"])[0] == 0


def test_allow_unmatched_needs_a_baseline(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", str(site), "--min-reliability", "0.1", "--allow-unmatched"])[0] == 2
    assert "--allow-unmatched needs --baseline OLD" in capsys.readouterr().err


# ---------------------------------------------------------------- exit codes


def test_exit_0_when_tasks_only_moved_within_noise(tmp_path: Path) -> None:
    now = write(tmp_path / "now.json", report_doc({"agent": {"a": (9, 10), "b": (10, 10)}}))
    then = write(tmp_path / "then.json", report_doc({"agent": {"a": (10, 10), "b": (10, 10)}}))
    status, out = run(["check", str(now), "--baseline", str(then), "--per-task"])
    assert status == 0
    assert "regressed beyond noise (0): none" in out and "moved within noise (1):" in out


def test_exit_1_when_the_suite_gate_fails_even_if_no_task_regressed(tmp_path: Path) -> None:
    now = write(tmp_path / "now.json", report_doc({"agent": {"a": (9, 10), "b": (10, 10)}}))
    then = write(tmp_path / "then.json", report_doc({"agent": {"a": (10, 10), "b": (10, 10)}}))
    argv = ["check", str(now), "--baseline", str(then), "--per-task", "--max-drop", "0.01"]
    status, out = run(argv)
    assert status == 1 and "dropped by" in out and "regressed beyond noise (0)" in out


def test_level_fdr_and_min_task_drop_flags(tmp_path: Path) -> None:
    # Three moderate falls: each alone passes 0.05 by a little; Holm over three does not
    # call them all, Benjamini-Hochberg does.
    then = {f"t{i}": (15, 20) for i in range(3)}
    now = {f"t{i}": (8, 20) for i in range(3)}
    a = write(tmp_path / "now.json", report_doc({"agent": now}))
    b = write(tmp_path / "then.json", report_doc({"agent": then}))
    p = stats.fisher_exact([[8, 12], [15, 5]], "less").pvalue
    assert p <= 0.05 < 2 * p  # so with equal p-values Holm calls none, BH calls all three
    base = ["check", str(a), "--baseline", str(b), "--per-task", "--format", "json"]
    holm = json.loads(run(base)[1])["per_task"]
    fdr = json.loads(run([*base, "--fdr"])[1])["per_task"]
    assert holm["regressed"] == 0 and fdr["regressed"] == 3 and fdr["control"] == "bh"
    assert run([*base, "--level", "0.2"])[0] == 1
    assert run([*base, "--fdr", "--min-task-drop", "0.4"])[0] == 0  # each fell by 0.35
    boschloo = json.loads(run([*base, "--test", "boschloo"])[1])["per_task"]
    assert boschloo["test"] == "boschloo" and boschloo["screened"] is False
    everything = json.loads(run([*base, "--all-tasks"])[1])["per_task"]
    assert everything["screened"] is False


# ---------------------------------------------------------------- baselines of every kind


def _verdicts(out: str) -> dict[str, str]:
    return {row["task"]: row["verdict"] for row in json.loads(out)["per_task"]["tasks"]}


EXPECTED = {"one-miss": "moved down", "login: 50%, retry": "regressed", "search": "improved"}


@pytest.mark.parametrize("version", [1, 2, 3])
def test_reports_of_every_schema_version_are_baselines(
    site: Path, tmp_path: Path, version: int
) -> None:
    then = write(tmp_path / f"v{version}.json", report_doc({"agent": BASELINE}, version=version))
    status, out = run(
        ["check", str(site), "--baseline", str(then), "--per-task", "--format", "json"]
    )
    assert status == 1 and _verdicts(out) == EXPECTED


def test_a_report_baseline_of_another_k_is_recomputed_at_this_reports_k(tmp_path: Path) -> None:
    """The same runs built with k = 3 and k = 5: reliability@3 is not a baseline for
    reliability@5 (the gate said the set dropped by the change of k)."""
    now = write(tmp_path / "now.json", report_doc({"agent": BASELINE}, k=5))
    then = write(tmp_path / "then.json", report_doc({"agent": BASELINE}, k=3))
    status, out = run(["check", str(now), "--baseline", str(then), "--max-drop", "0.01"])
    assert status == 0, out
    assert f"baseline: {then} (built with k = 3, 95%; recomputed from its task counts" in out
    assert "reliability@5" in out and out.count(" held") == 1


def test_a_site_folder_result_files_or_their_folder_and_a_history_are_baselines(
    site: Path, tmp_path: Path
) -> None:
    folder = write(tmp_path / "oldsite" / "report.json", report_doc({"agent": BASELINE})).parent
    file = results_jsonl(tmp_path / "results" / "agent.jsonl", "agent", BASELINE)
    history = history_jsonl(tmp_path / "history.jsonl", [("v1", BASELINE), ("v2", CURRENT)])
    # file.parent: a folder of result files, as a harness leaves its runs.
    for baseline in (folder, file, file.parent, history):
        argv = ["check", str(site), "--baseline", str(baseline), "--per-task", "--format", "json"]
        status, out = run(argv)
        assert status == 1, baseline
        assert _verdicts(out) == EXPECTED, baseline
    # The history's build before the report's own label (v2) is v1.
    argv = ["check", str(site), "--baseline", str(history), "--per-task", "--format", "json"]
    assert json.loads(run(argv)[1])["baseline"] == f"build v1 of {history}"


def test_several_result_sets_form_one_family_and_unmatched_sets_are_named(tmp_path: Path) -> None:
    now = write(
        tmp_path / "now.json",
        report_doc({"alpha": {"a": (0, 20)}, "beta": {"a": (20, 20)}, "gamma": {"a": (1, 1)}}),
    )
    then = write(
        tmp_path / "then.json", report_doc({"alpha": {"a": (20, 20)}, "beta": {"a": (20, 20)}})
    )
    status, out = run(["check", str(now), "--baseline", str(then), "--per-task"])
    assert status == 1
    assert "alpha / a" in out and "not in the baseline, not tested: gamma" in out


@pytest.mark.parametrize(
    ("before", "after", "dash"),
    [
        # A rise within noise that could never be called a rise: out of the rises' family.
        ((0, 2), (2, 5), True),
        # A rise in the rises' family, though no fall of these counts could reach the level.
        ((0, 2), (5, 5), False),
    ],
)
def test_markdown_notes_the_family_exactly_when_a_row_shows_a_dash(
    tmp_path: Path, before: tuple[int, int], after: tuple[int, int], dash: bool
) -> None:
    now = write(tmp_path / "now.json", report_doc({"agent": {"x": after, "big": (2, 20)}}))
    then = write(tmp_path / "then.json", report_doc({"agent": {"x": before, "big": (20, 20)}}))
    status, out = run(
        ["check", str(now), "--baseline", str(then), "--per-task", "--format", "markdown"]
    )
    assert status == 1
    row = next(line for line in out.splitlines() if "`x`" in line)
    assert row.startswith("| moved up ")
    assert row.endswith("| – |") is dash
    assert ("not in the family" in out) is dash
    # The terminal table says the same.
    status, out = run(["check", str(now), "--baseline", str(then), "--per-task"])
    row = next(line for line in out.splitlines() if line.strip().startswith("x "))
    assert row.rstrip().endswith("–") is dash
    assert ("not in the family" in out) is dash


# ---------------------------------------------------------------- bad input: exit 2, located


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert run(argv)[0] == 2
    return capsys.readouterr().err


def test_bad_baselines_exit_2_with_located_messages(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["check", str(site), "--per-task", "--baseline"]
    assert "no such file or folder" in _error([*base, str(tmp_path / "missing")], capsys)

    doc = report_doc({"agent": BASELINE})
    doc["result_sets"][0]["tasks"][1]["successes"] = 11
    bad = write(tmp_path / "bad.json", doc)
    assert f"--baseline: {bad}: result_sets[0].tasks[1].successes" in _error(
        [*base, str(bad)], capsys
    )

    doc["result_sets"] = "x"
    listless = write(tmp_path / "listless.json", doc)
    assert f'--baseline: {listless}: result_sets: expected a list, got "x"' in _error(
        [*base, str(listless)], capsys
    )

    history = history_jsonl(tmp_path / "history.jsonl", [("v1", BASELINE)])
    history.write_text(history.read_text() + '{"schema_version": 1, "label": 3}\n')
    assert f"{history}:2: label" in _error([*base, str(history)], capsys)

    lonely = history_jsonl(tmp_path / "lonely.jsonl", [("v2", CURRENT)])
    assert "no build before this one" in _error([*base, str(lonely)], capsys)

    results = results_jsonl(tmp_path / "r.jsonl", "agent", BASELINE)
    results.write_text(results.read_text() + '{"suite": "desk", "model": "agent", "task": 5}\n')
    assert f"{results}:" in _error([*base, str(results)], capsys)

    empty = tmp_path / "empty"
    empty.mkdir()
    assert f"{empty}: the folder holds no files to read" in _error([*base, str(empty)], capsys)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--per-task"], "--per-task needs --baseline"),
        (["--min-reliability", "0.1", "--level", "0.1"], "--level: only with --per-task"),
        (["--min-reliability", "0.1", "--fdr"], "--fdr: only with --per-task"),
        (["--baseline", "x"], "--baseline needs --max-drop X, --per-task, or both"),
        (["--max-drop", "0.1"], "--max-drop needs --baseline"),
    ],
)
def test_check_usage_errors(
    site: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert message in _error(["check", str(site), *extra], capsys)


@pytest.mark.parametrize("level", ["0", "1", "1.5", "-0.1", "x", "nan"])
def test_bad_level_exits_2(
    site: Path, old: Path, level: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", str(site), "--baseline", str(old), "--per-task", "--level", level]
    said = _error(argv, capsys)
    assert "--level" in said
    if level not in ("x", "nan"):  # one wording for every number out of range
        assert f"--level: must lie strictly between 0 and 1, got {level}" in said


def test_all_tasks_is_refused_with_boschloo(
    site: Path, old: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", str(site), "--baseline", str(old), "--per-task", "--all-tasks"]
    said = _error([*argv, "--test", "boschloo"], capsys)
    assert "--all-tasks: only with --test fisher" in said


def test_current_report_with_broken_tasks_exits_2(
    tmp_path: Path, old: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = report_doc({"agent": CURRENT})
    doc["result_sets"][0]["tasks"][0]["runs"] = 0
    now = write(tmp_path / "now.json", doc)
    err = _error(["check", str(now), "--baseline", str(old), "--per-task"], capsys)
    assert f"report: {now}: result_sets[0].tasks[0].runs" in err


def test_schema_version_4_is_written_and_1_to_4_are_read() -> None:
    from reportgen.check import READABLE_VERSIONS
    from reportgen.views import SCHEMA_VERSION

    schema = json.loads((Path(__file__).parent.parent / "reportgen/report.schema.json").read_text())
    assert SCHEMA_VERSION == 4 == schema["properties"]["schema_version"]["const"]
    assert READABLE_VERSIONS == (1, 2, 3, 4)
    assert "task_tests" in schema["properties"]["comparisons"]["items"]["required"]
    assert "outcome_consistency" in schema["$defs"]["result_set"]["required"]


def test_the_example_sites_per_task_tests_match_scipy(example_site: Path) -> None:
    doc = json.loads((example_site / "report.json").read_text())
    sets = {
        rs["id"]: {t["id"]: (t["successes"], t["runs"]) for t in rs["tasks"]}
        for rs in doc["result_sets"]
    }
    cmp = doc["comparisons"][0]
    a, b = sets[cmp["a"]], sets[cmp["b"]]
    tests = cmp["task_tests"]
    assert tests["shared_tasks"] == cmp["shared_tasks"]
    for row in tests["tasks"]:
        (cb, nb), (ca, na) = b[row["id"]], a[row["id"]]
        assert row["baseline"] == {"successes": cb, "runs": nb}
        expected = stats.fisher_exact([[ca, na - ca], [cb, nb - cb]], "less").pvalue
        assert row["p_lower"] == pytest.approx(expected)
    trend = doc["history"]["trends"][cmp["a"]][-1]["change"]["task_tests"]
    assert trend["test"] == "fisher" and trend["control"] == "holm"
    assert trend["level"] == pytest.approx(1 - doc["confidence"])


def test_a_baseline_sharing_no_result_set_fails_unless_allowed(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = write(tmp_path / "other.json", report_doc({"someone-else": BASELINE}))
    status, out = run(["check", str(site), "--baseline", str(other), "--per-task"])
    assert status == EXIT_CHECK_FAILED and "not in the baseline, not tested: agent" in out
    assert "FAIL  --per-task tested no task" in out
    assert "nothing was compared with the baseline" in capsys.readouterr().err
    argv = ["check", str(site), "--baseline", str(other), "--per-task", "--max-drop", "0.1"]
    assert run([*argv, "--allow-unmatched"])[0] == 0
    err = capsys.readouterr().err
    assert "warning: --max-drop compared nothing and --per-task tested no task" in err
    argv = ["check", str(site), "--baseline", str(other), "--max-drop", "0.1"]
    status, out = run(argv)
    assert status == EXIT_CHECK_FAILED and "not in the baseline; nothing to compare" in out
    assert run([*argv, "--allow-unmatched"])[0] == 0
    assert "warning: --max-drop compared nothing:" in capsys.readouterr().err
    # Against a baseline that does hold the set, no such failure ...
    assert run(["check", str(site), "--baseline", str(site), "--max-drop", "0.1"])[0] == 0
    assert "compared nothing" not in capsys.readouterr().err
    # ... even where its value is undefined there: that is said of the set itself.
    doc = json.loads((site / "report.json").read_text())
    for rs in doc["result_sets"]:
        for estimator in ("plugin", "unbiased"):
            rs["reliability_at_k"][estimator]["estimate"] = None
    undefined = write(tmp_path / "undefined.json", doc)
    status, out = run(["check", str(site), "--baseline", str(undefined), "--max-drop", "0.1"])
    assert status == 0 and "is undefined in the baseline; nothing to compare" in out
    assert "compared nothing" not in capsys.readouterr().err


_GROUPS = ["regressed", "improved", "moved down", "moved up"]


def _reading_order(row: dict[str, Any]) -> tuple[Any, ...]:
    """Where a task-test row stands in the pages' tables (see TaskTests.calls_first)."""
    p = row["p_higher"] if row["change"] > 0 else row["p_lower"]
    return _GROUPS.index(row["verdict"]), p, -abs(row["change"]), natural_key(row["id"])


def test_pages_list_the_calls_first_and_report_json_worst_first(example_site: Path) -> None:
    import re

    doc = json.loads((example_site / "report.json").read_text())
    cmp = doc["comparisons"][0]
    trend_points = doc["history"]["trends"][cmp["a"]]
    pages = [
        (example_site / cmp["page"], "compare-task-tests", cmp["task_tests"]),
        (
            example_site / f"sets/{cmp['a']}/trend.html",
            "trend-task-tests",
            trend_points[-1]["change"]["task_tests"],
        ),
    ]
    for page, table_id, tests in pages:
        html = page.read_text()
        table = html[html.index(f'id="{table_id}"') : html.index("</table>", html.index(table_id))]
        shown = re.findall(r'<tr><th scope="row">([^<]+)</th>', table)
        # report.json ranks on the evidence of a fall (worst first) ...
        falls = [row["p_lower"] for row in tests["tasks"]]
        assert falls == sorted(falls)
        # ... and the page's table lists the calls, falls then rises, then the changes
        # within noise, each group by the p-value in its own direction.
        changed = [row for row in tests["tasks"] if row["verdict"] != "unchanged"]
        assert shown == [row["id"] for row in sorted(changed, key=_reading_order)]
        assert tests["regressed"] == sum(r["verdict"] == "regressed" for r in tests["tasks"])
    # The comparison reads A first, as its other tables do: A's counts, then B's.
    counts = {
        rs["id"]: {t["id"]: f"{t['successes']}/{t['runs']}" for t in rs["tasks"]}
        for rs in doc["result_sets"]
    }
    html = pages[0][0].read_text()
    table = html[html.index('id="compare-task-tests"') :]
    table = table[: table.index("</table>")]
    assert '<th scope="col" class="num">A c/n</th><th scope="col" class="num">B c/n</th>' in table
    rows = re.findall(
        r'<tr><th scope="row">([^<]+)</th><td class="num">([^<]+)</td>'
        r'<td class="num">([^<]+)</td>',
        table,
    )
    assert rows and all(
        (a, b) == (counts[cmp["a"]][task], counts[cmp["b"]][task]) for task, a, b in rows
    )


def test_check_lists_each_group_clearest_first_with_p_in_its_own_direction(
    tmp_path: Path,
) -> None:
    then = {"a": (0, 10), "c": (2, 10), "d": (5, 10), "e": (9, 10)}
    now = {"a": (10, 10), "c": (9, 10), "d": (6, 10), "e": (8, 10)}
    now_path = write(tmp_path / "now.json", report_doc({"agent": now}))
    then_path = write(tmp_path / "then.json", report_doc({"agent": then}))
    status, out = run(["check", str(now_path), "--baseline", str(then_path), "--per-task"])
    assert status == 0
    lines = out.splitlines()

    def rows(heading: str) -> list[list[str]]:
        start = next(i for i, line in enumerate(lines) if line.startswith(heading))
        found = []
        for line in lines[start + 3 :]:  # heading, column names, rule
            if not line.startswith("  ") or not line.strip():
                break
            found.append(line.split())
        return found

    # Both rises are called; the clearer (a: 0/10 -> 10/10) comes first, not last.
    improved = rows("improved beyond noise")
    assert [r[0] for r in improved] == ["a", "c"]
    assert [float(r[4]) for r in improved] == sorted(float(r[4]) for r in improved)
    # Within noise, a rise (d) shows the p-value of a rise, not of a fall.
    moved = {r[0]: r for r in rows("moved within noise")}
    assert set(moved) == {"d", "e"}
    rise = stats.fisher_exact([[6, 4], [5, 5]], alternative="greater").pvalue
    assert float(moved["d"][4]) == pytest.approx(rise, abs=0.0005)
    # A family of every shared task is not said as "1 of 1 ... (the others ...)".
    one_now = write(tmp_path / "one-now.json", report_doc({"agent": {"a": (5, 20)}}))
    one_then = write(tmp_path / "one-then.json", report_doc({"agent": {"a": (20, 20)}}))
    status, out = run(["check", str(one_now), "--baseline", str(one_then), "--per-task"])
    assert status == 1  # a regressed
    assert "at level 0.05 over all 1 shared task" in out and "the others" not in out


def test_one_set_against_one_result_file_is_paired_whatever_their_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The README's gate: a site built from results.jsonl against the main branch's
    # main-results.jsonl. Each file's set is named after the file, so matching by
    # name compared nothing and passed every regression.
    now, then = tmp_path / "results.jsonl", tmp_path / "main-results.jsonl"
    then.write_text("".join(f'{{"task": "t{i % 5}", "passed": true}}\n' for i in range(20)))
    # Task t0 now fails every run: reliability@3 falls from 1.0 to 0.8.
    now.write_text(
        "".join(f'{{"task": "t{i % 5}", "passed": {str(i % 5 != 0).lower()}}}\n' for i in range(20))
    )
    site = tmp_path / "site"
    assert run(["build", str(now), "-o", str(site)])[0] == 0
    # Five tasks: an interval too rough to gate on unless accepted (tested elsewhere).
    argv = ["check", str(site), "--baseline", str(then), "--max-drop", "0.05"]
    status, out = run([*argv, "--accept-uncalibrated"])
    assert status == 1, out
    # "results.jsonl" names no suite, so the report's set is named after its folder.
    assert f"its one result set, 'main-results', taken as the report's {tmp_path.name!r}" in out
    assert "dropped by" in out and "compared nothing" not in capsys.readouterr().err


def test_a_bar_close_to_the_value_is_shown_with_the_digits_that_tell_them_apart(
    site: Path,
) -> None:
    doc = json.loads((site / "report.json").read_text())
    rs = doc["result_sets"][0]
    value = rs["reliability_at_k"][headline_estimator(rs)]["estimate"]
    bar = value + 4e-6  # the same to three decimals
    status, out = run(["check", str(site), "--min-reliability", repr(bar)])
    assert status == 1
    below = re.search(r"\) (\d\.\d+) is below (\d\.\d+)", out)
    assert below is not None and below.group(1) != below.group(2), out
    assert float(below.group(1)) < float(below.group(2))


def test_check_json_carries_each_sets_figures_at_full_precision(site: Path) -> None:
    doc = json.loads((site / "report.json").read_text())
    argv = ["check", str(site), "--min-reliability", "0.5", "--baseline", str(site)]
    status, out = run([*argv, "--max-drop", "0.05", "--format", "json"])
    figures = json.loads(out)["suite"]["result_sets"]
    assert [f["name"] for f in figures] == [rs["name"] for rs in doc["result_sets"]]
    for figure, rs in zip(figures, doc["result_sets"], strict=True):
        value = rs["reliability_at_k"][headline_estimator(rs)]["estimate"]
        assert figure["value"] == value and figure["baseline"] == value  # not rounded
        assert figure["drop"] == 0 and figure["max_drop"] == 0.05
        assert figure["passed"] is (value >= 0.5)
    assert status == (0 if all(f["passed"] for f in figures) else 1)
