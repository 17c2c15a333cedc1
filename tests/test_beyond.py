"""Beyond one number, as users meet it: comparison pages, planner, variance and categories
on the site and in report.json, and the `reportgen compare` and `reportgen plan` commands."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import markupsafe
import pytest

from reportgen.cli import main
from reportgen.stats.bootstrap import two_stage_bootstrap
from reportgen.stats.compare import compare
from reportgen.stats.planner import plan
from reportgen.stats.variance import decompose_variance
from reportgen.views import comparison_json, plan_json

from .conftest import ROOT, build_example

ALPHA = ROOT / "example/results/agent-alpha.jsonl"
BETA = ROOT / "example/results/agent-beta.jsonl"


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


def report(site: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((site / "report.json").read_text())


def counts(rs: dict) -> dict[str, tuple[int, int]]:  # type: ignore[type-arg]
    return {t["id"]: (t["successes"], t["runs"]) for t in rs["tasks"]}


def test_report_json_carries_the_comparison_of_models_on_one_suite(example_site: Path) -> None:
    doc = report(example_site)
    jsonschema.validate(doc, json.loads((ROOT / "reportgen/report.schema.json").read_text()))
    (cmp,) = doc["comparisons"]  # the τ-bench set is another suite: not compared
    sets = {rs["id"]: rs for rs in doc["result_sets"]}
    a, b = sets[cmp["a"]], sets[cmp["b"]]
    assert (a["model"], b["model"]) == ("agent-alpha", "agent-beta")
    expected = comparison_json(compare(counts(a), counts(b), doc["k"], doc["confidence"]))
    assert {key: cmp[key] for key in expected} == expected
    assert cmp["shared_tasks"] == 40 and cmp["only_in_a"] == [] and cmp["only_in_b"] == []
    assert (example_site / cmp["page"]).is_file()


def test_comparison_page_shows_differences_flips_and_both_task_pages(example_site: Path) -> None:
    cmp = report(example_site)["comparisons"][0]
    page = (example_site / cmp["page"]).read_text()
    d = cmp["difference"]["plugin"]
    assert f"{d['estimate']:.3f}" in page and f"[{d['low']:.3f}, {d['high']:.3f}]" in page
    assert f"{cmp['correlation']:.3f}" in page
    for task in cmp["flipped"]["a_only_solved"] + cmp["flipped"]["b_only_solved"]:
        assert str(markupsafe.escape(task)) in page
    worst = cmp["tasks"][0]
    assert page.index(f">{worst['id']} <") < page.index(f">{cmp['tasks'][-1]['id']} <")
    assert 'id="chart-paired"' in page
    overview = (example_site / "index.html").read_text()
    assert cmp["page"] in overview


def test_set_page_shows_variance_bootstrap_categories_and_planner(example_site: Path) -> None:
    rs = report(example_site)["result_sets"][0]
    page = (example_site / rs["page"]).read_text()
    successes = [t["successes"] for t in rs["tasks"]]
    runs = [t["runs"] for t in rs["tasks"]]
    variance = decompose_variance(successes, runs)
    assert f"{variance.flaky_tasks} of {variance.tasks} tasks" in page
    assert f"{variance.within:.3f}" in page and f"{variance.between:.3f}" in page
    boot = two_stage_bootstrap(successes, runs, 3, interval="bias-corrected")
    assert boot.unbiased is not None
    shown = rs["bootstrap"]["shown"]
    assert (shown["low"], shown["high"]) == (boot.unbiased.low, boot.unbiased.high)
    assert f"[{shown['low']:.3f}, {shown['high']:.3f}]" in page
    clustered = rs["clustered"]
    assert clustered["clusters"] == 4  # billing, shipping, account, returns
    lead = rs["reliability_at_k"]["headline"]
    assert f"[{clustered[lead]['low']:.3f}, {clustered[lead]['high']:.3f}]" in page
    for category in ("billing", "shipping", "account", "returns"):
        assert f'<th scope="row">{category}</th>' in page
    sd = rs["reliability_at_k"][lead]["sd"]
    for entry in rs["planner"]:
        expected = plan_json(plan(entry["target_halfwidth"], 0.95, task_sd=sd, tasks=40))
        assert entry == expected
        assert f'<td class="num">{entry["runs_per_task"]}</td>' in page


def test_tau_bench_set_has_no_categories(example_site: Path) -> None:
    tau = next(rs for rs in report(example_site)["result_sets"] if rs["format"] == "tau-bench")
    assert tau["clustered"] is None
    assert "By category" not in (example_site / tau["page"]).read_text()


# ------------------------------------------------------------ reportgen compare


def test_compare_files_json_matches_the_core() -> None:
    status, text = run(["compare", str(BETA), str(ALPHA), "-k", "3", "--format", "json"])
    assert status == 0
    doc = json.loads(text)
    for key in ("shared_tasks", "only_in_a", "only_in_b", "difference", "correlation", "tasks"):
        assert key in doc
    assert doc["a"] == "agent-beta · support-desk"
    diff = doc["difference"]["plugin"]
    assert set(diff) == {"estimate", "low", "high", "sd", "t", "df"}
    assert diff["df"] == 39 and diff["low"] > 0  # beta is reliably better on these tasks
    # Biggest regressions first, by the difference the comparison leads with.
    assert doc["headline"] == "unbiased"
    regressions = [t["difference"]["unbiased"] for t in doc["tasks"]]
    assert regressions == sorted(regressions)


def test_compare_swapped_negates(example_site: Path) -> None:
    ids = [rs["id"] for rs in report(example_site)["result_sets"][:2]]
    site = str(example_site)
    _, ab = run(["compare", f"{site}#{ids[0]}", f"{site}#{ids[1]}", "--format", "json"])
    _, ba = run(["compare", f"{site}#{ids[1]}", f"{site}#{ids[0]}", "--format", "json"])
    d_ab, d_ba = json.loads(ab)["difference"]["plugin"], json.loads(ba)["difference"]["plugin"]
    assert d_ab["estimate"] == pytest.approx(-d_ba["estimate"], abs=1e-12)
    assert d_ab["low"] == pytest.approx(-d_ba["high"], abs=1e-12)


def test_compare_text_names_both_sides_and_lists_unshared_tasks(tmp_path: Path) -> None:
    extra = tmp_path / "extra.jsonl"
    extra.write_text(
        BETA.read_text()
        + '{"suite": "support-desk", "model": "agent-beta", "task": "new-task", "passed": true}\n'
    )
    status, text = run(["compare", str(extra), str(ALPHA)])
    assert status == 0
    assert "A = agent-beta · support-desk, B = agent-alpha · support-desk" in text
    assert "only in A (1): new-task" in text and "only in B (0): none" in text
    assert "95% interval" in text


def _regressions(text: str) -> list[tuple[str, float]]:
    """The (task, A - B pass^k) rows under the compare text's regressions heading."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("biggest regressions"))
    rows = []
    for line in lines[start + 3 :]:  # heading, column names, rule
        if not line.strip() or line.startswith("warning:"):
            break
        task, plugin, _ = line.split()
        rows.append((task, float(plugin)))
    return rows


def test_compare_lists_only_tasks_that_fell_as_regressions(tmp_path: Path) -> None:
    def write(name: str, passes: dict[str, int]) -> Path:
        path = tmp_path / f"{name}.jsonl"
        path.write_text(
            "".join(
                json.dumps({"task": task, "passed": i < passed}) + "\n"
                for task, passed in passes.items()
                for i in range(4)
            )
        )
        return path

    old = write("old", {"a": 4, "b": 4, "c": 1, "d": 3, "e": 2})
    new = write("new", {"a": 2, "b": 4, "c": 4, "d": 2, "e": 1})
    status, text = run(["compare", str(new), str(old)])
    assert status == 0
    # a fell (4 -> 2 of 4) and d fell (3 -> 2); c rose and b held: neither is listed.
    # Nor is e (2 -> 1 of 4): its unbiased pass^3, the headline, is 0 both times.
    assert [task for task, _ in _regressions(text)] == ["a", "d"]
    assert "pass^3 unbiased" in text
    assert all(diff < 0 for _, diff in _regressions(text))
    same = write("same", {"a": 4, "b": 4, "c": 4, "d": 4, "e": 4})
    status, text = run(["compare", str(same), str(old)])
    assert status == 0
    none = "biggest regressions (A - B): none, no shared task has a lower unbiased pass^3 in A"
    assert none in text


def test_plan_says_when_no_difference_can_be_detected() -> None:
    status, text = run(["plan", "--target-halfwidth", "0.05", "--tasks", "2"])
    assert status == 0
    assert plan(0.05, tasks=2).detectable_difference.value > 1  # the approximation's raw value
    assert "detects no difference, not even the largest possible (1), at 80% power" in text
    status, text = run(["plan", "--target-halfwidth", "0.05", "--tasks", "50"])
    value = plan(0.05, tasks=50).detectable_difference.value
    assert f"detects a difference of about {value:.3f} at 80% power" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["SITE", str(ALPHA)], "holds 4 result sets; pick one"),
        (["SITE#nope", str(ALPHA)], "has no result set 'nope'"),
        ([str(ALPHA), "missing.jsonl"], "missing.jsonl: no such file"),
    ],
)
def test_compare_errors(
    example_site: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [a.replace("SITE", str(example_site)) for a in args]
    assert run(["compare", *argv])[0] == 2
    assert message in capsys.readouterr().err


def test_compare_without_shared_tasks_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text('{"task": "zzz", "passed": true}\n')
    assert run(["compare", str(other), str(ALPHA)])[0] == 2
    assert "share no task ids" in capsys.readouterr().err


# ------------------------------------------------------------ reportgen plan


def test_plan_json_has_the_documented_keys_and_core_values() -> None:
    status, text = run(["plan", "--target-halfwidth", "0.05", "--format", "json"])
    assert status == 0
    doc = json.loads(text)
    assert {"target_halfwidth", "confidence", "runs_per_task", "tasks"} <= set(doc)
    assert doc == plan_json(plan(0.05, 0.95))
    assert doc["runs_per_task"] == 381  # Wilson half-width at p = 0.5 first <= 0.05 at n = 381


def test_plan_takes_the_observed_spread_from_a_report(example_site: Path) -> None:
    rs = report(example_site)["result_sets"][0]
    spec = f"{example_site}#{rs['id']}"
    _, text = run(["plan", "--target-halfwidth", "0.05", "--report", spec, "--format", "json"])
    doc = json.loads(text)
    headline = rs["reliability_at_k"]["headline"]
    assert doc["task_sd"] == rs["reliability_at_k"][headline]["sd"]
    assert doc["detectable_difference"]["tasks"] == len(rs["tasks"])
    _, words = run(["plan", "--target-halfwidth", "0.05", "--report", spec])
    assert f"tasks:         {doc['tasks']}" in words


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target-halfwidth", "0"], "--target-halfwidth"),
        (["--target-halfwidth", "x"], "'x' is not a number"),
        (["--target-halfwidth", "0.05", "--pass-rate", "2"], "--pass-rate"),
        (["--target-halfwidth", "0.05", "--tasks", "1"], "--tasks: must be at least 2"),
        (["--target-halfwidth", "0.05", "--confidence", "1.5"], "--confidence"),
    ],
)
def test_plan_errors(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["plan", *args])[0] == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.fixture(scope="module")
def site_k4(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example built with k = 4 at a 90% level."""
    return build_example(tmp_path_factory.mktemp("k4") / "site", k=4, confidence=0.9)


def test_compare_uses_the_k_and_level_its_reports_were_built_with(site_k4: Path) -> None:
    doc = report(site_k4)
    a, b = doc["result_sets"][:2]
    specs = [f"{site_k4}#{a['id']}", f"{site_k4}#{b['id']}"]
    _, text = run(["compare", *specs, "--format", "json"])
    found = json.loads(text)
    assert (found["k"], found["confidence"]) == (4, 0.9)
    expected = comparison_json(compare(counts(a), counts(b), 4, 0.9))
    assert {key: found[key] for key in expected} == expected
    # Given, they win; a results file has neither, so the report's count on one side.
    _, text = run(["compare", *specs, "-k", "2", "--confidence", "0.8", "--format", "json"])
    assert (json.loads(text)["k"], json.loads(text)["confidence"]) == (2, 0.8)
    _, text = run(["compare", specs[0], str(ALPHA), "--format", "json"])
    assert (json.loads(text)["k"], json.loads(text)["confidence"]) == (4, 0.9)
    # Two results files: the defaults.
    _, text = run(["compare", str(BETA), str(ALPHA), "--format", "json"])
    assert (json.loads(text)["k"], json.loads(text)["confidence"]) == (3, 0.95)


def test_compare_asks_for_k_when_its_reports_were_built_with_different_ones(
    site_k4: Path, example_site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = f"{site_k4}#{report(site_k4)['result_sets'][0]['id']}"
    b = f"{example_site}#{report(example_site)['result_sets'][1]['id']}"
    status, text = run(["compare", a, b])
    assert status == 2 and text == ""
    error = capsys.readouterr().err
    assert "A was built with -k 4 and B with -k 3: give -k" in error
    assert "Traceback" not in error
    status, text = run(["compare", a, b, "-k", "3"])  # the level differs too
    assert status == 2
    assert "--confidence 0.9 and B with --confidence 0.95" in capsys.readouterr().err
    status, text = run(["compare", a, b, "-k", "3", "--confidence", "0.95", "--format", "json"])
    assert status == 0 and (json.loads(text)["k"], json.loads(text)["confidence"]) == (3, 0.95)
