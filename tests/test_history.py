"""History across builds: labels, the trend page, replacing a label, damaged files, check."""

from __future__ import annotations

import io
import json
import re
import shutil
from collections.abc import Callable
from contextlib import redirect_stderr
from pathlib import Path

import jsonschema
import pytest

from reportgen.cli import main
from reportgen.errors import UserError
from reportgen.history import default_label, merge, read_history
from reportgen.stats.compare import compare

from .conftest import ROOT, first_fast

RESULTS = ROOT / "example" / "results" / "agent-beta.jsonl"


def build(site: Path, history: Path, *extra: str, results: Path = RESULTS) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stderr(err):
        status = main(
            ["build", str(results), "-o", str(site), "--history", str(history), *extra],
            out=io.StringIO(),
        )
    return status, err.getvalue()


def tree(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


def drifted(tmp_path: Path, flip: int) -> Path:
    """agent-beta's results with the first `flip` passing runs turned into failures."""
    lines = RESULTS.read_text().splitlines()
    out = []
    for line in lines:
        record = json.loads(line)
        if flip and record["passed"] is True:
            record["passed"] = False
            flip -= 1
        out.append(json.dumps(record))
    path = tmp_path / f"beta-{len(out)}-{flip}.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.fixture
def three_builds(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    history = site / "history.jsonl"  # each build extends the previous site's own file
    for label, flip in (("v1", 0), ("v2", 40), ("v3", 120)):
        status, err = build(site, history, "--label", label, results=drifted(tmp_path, flip))
        assert status == 0, err
    return site


def test_three_builds_give_three_trend_points_with_intervals(three_builds: Path) -> None:
    lines = (three_builds / "history.jsonl").read_text().splitlines()
    assert [json.loads(line)["label"] for line in lines] == ["v1", "v2", "v3"]
    report = json.loads((three_builds / "report.json").read_text())
    schema = json.loads((ROOT / "reportgen" / "report.schema.json").read_text())
    jsonschema.validate(report, schema)
    history = report["history"]
    assert history["label"] == "v3" and history["builds"] == ["v1", "v2", "v3"]
    (set_id,) = history["trends"]
    points = history["trends"][set_id]
    assert [p["label"] for p in points] == ["v1", "v2", "v3"]
    for p in points:
        rel = p["reliability_plugin"]
        assert rel["low"] <= rel["estimate"] <= rel["high"]
    assert points[0]["change"] is None
    # Each step is the paired comparison with the previous build on shared tasks.
    entries = read_history(three_builds / "history.jsonl")
    counts = [{t: tuple(v) for t, v in e["result_sets"][0]["tasks"].items()} for e in entries]
    step = compare(counts[2], counts[1], report["k"], report["confidence"])
    assert points[2]["change"]["plugin"]["estimate"] == pytest.approx(step.plugin.estimate)
    assert points[2]["change"]["unbiased"]["estimate"] == pytest.approx(step.unbiased.estimate)
    # The step, its verdict and the movers follow the set's headline estimate.
    headline = report["result_sets"][0]["reliability_at_k"]["headline"]
    assert {p["headline"] for p in points} == {headline}
    followed = step.unbiased if headline == "unbiased" else step.plugin
    assert followed.low is not None and followed.high is not None
    assert points[2]["change"]["significant"] == (followed.high < 0 or followed.low > 0)
    diffs = step.diff_unbiased if headline == "unbiased" else step.diff_plugin
    biggest = max(points[2]["change"]["movers"], key=lambda m: abs(m["change"]))
    assert abs(biggest["change"]) == pytest.approx(max(abs(float(d)) for d in diffs))
    assert points[2]["change"]["plugin"]["estimate"] < 0  # v3 failed many more runs

    page = (three_builds / "sets" / set_id / "trend.html").read_text()
    assert 'id="chart-trend"' in page
    for label in ("v1", "v2", "v3"):
        assert f'<th scope="row">{label}</th>' in page
    v3 = points[2]["reliability_plugin"]
    assert f"{v3['estimate']:.3f} [{v3['low']:.3f}, {v3['high']:.3f}]" in page
    assert "trend.html" in (three_builds / "index.html").read_text()


def test_rebuilding_with_an_existing_label_replaces_it(three_builds: Path, tmp_path: Path) -> None:
    history = three_builds / "history.jsonl"
    status, _ = build(three_builds, history, "--label", "v2", results=drifted(tmp_path, 7))
    assert status == 0
    labels = [json.loads(line)["label"] for line in history.read_text().splitlines()]
    assert labels == ["v1", "v2", "v3"]
    assert merge([{"label": "a"}, {"label": "b"}], {"label": "a", "x": 1}) == [
        {"label": "a", "x": 1},
        {"label": "b"},
    ]


def test_first_build_without_history_starts_one(tmp_path: Path) -> None:
    status, err = build(tmp_path / "site", tmp_path / "none.jsonl", "--label", "first")
    assert status == 0
    assert "no history at" in err and "starting one" in err
    lines = (tmp_path / "site" / "history.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["label"] == "first"


def test_label_without_history_says_why_it_is_ignored(tmp_path: Path) -> None:
    """--label alone used to vanish without a word; now the build says so and still succeeds."""
    err = io.StringIO()
    with redirect_stderr(err):
        status = main(
            ["build", str(RESULTS), "-o", str(tmp_path / "site"), "--label", "v9"],
            out=io.StringIO(),
        )
    assert status == 0
    assert "label 'v9' ignored" in err.getvalue() and "--history" in err.getvalue()
    assert not (tmp_path / "site" / "history.jsonl").exists()
    # With a history the label is used, and nothing is said about ignoring it.
    status, said = build(tmp_path / "other", tmp_path / "none.jsonl", "--label", "v9")
    assert status == 0 and "ignored" not in said


@pytest.mark.parametrize(
    ("damage", "message"),
    first_fast(
        [
            (lambda text: text + "{not json\n", ":4: not a JSON history entry"),
            (lambda text: text.replace('"label":"v2"', '"label":""', 1), ":2: label"),
            (
                lambda text: text.replace('"schema_version":1', '"schema_version":9', 1),
                ":1: schema",
            ),
            (lambda text: text + '{"schema_version":1}\n', ":4: label"),
            # A results file given as the history: one line saying so, not one per run.
            (
                lambda text: '{"task": "a", "passed": true}\n' * 30,
                ":1: this is a run of results (it has task and passed), not a history entry",
            ),
            # A set of no tasks has no suite estimate (it raised a traceback in build and check).
            (
                lambda text: re.sub(r'"tasks":\{[^}]*\}', '"tasks":{}', text, count=1),
                ":1: result_sets[0].tasks: empty; a result set has at least one task",
            ),
        ]
    ),
)
def test_damaged_history_exits_2_and_keeps_the_old_site(
    three_builds: Path, damage: Callable[[str], str], message: str
) -> None:
    history = three_builds.parent / "damaged.jsonl"
    history.write_text(damage((three_builds / "history.jsonl").read_text()))
    before = tree(three_builds)
    status, err = build(three_builds, history, "--label", "v4")
    assert status == 2
    assert f"{history}{message}" in err and "Traceback" not in err
    assert tree(three_builds) == before


def test_history_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    status, err = build(tmp_path / "site", tmp_path)
    assert status == 2 and "is a folder" in err


def test_label_never_comes_from_the_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    outside_git = tmp_path  # not a repository
    assert default_label([{}, {}], outside_git) == "build 3"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    assert default_label([], outside_git) == "2026-01-01 00:00"
    # Not a moment datetime can hold, or not ASCII digits: the build number.
    for odd in ("9" * 30, "²", "٣"):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", odd)
        assert default_label([], outside_git) == "build 1", odd
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef")
    assert default_label([], outside_git) == "0123456"
    # A label with an escape character would poison the published history (the next
    # build refuses it): refused here, with what to do instead.
    monkeypatch.setenv("GITHUB_SHA", "ab\x1bcdef")
    with pytest.raises(UserError, match=r"GITHUB_SHA: 'ab\\x1bcdef' holds U\+001B.*--label"):
        default_label([], outside_git)


def test_two_builds_with_the_same_history_are_identical(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    shutil.copy(ROOT / "example" / "history.jsonl", history)
    one, two = tmp_path / "one", tmp_path / "two"
    assert build(one, history, "--label", "x", "--no-cache")[0] == 0
    assert build(two, history, "--label", "x", "--no-cache")[0] == 0
    assert tree(one) == tree(two)
    assert history.read_bytes() == (ROOT / "example" / "history.jsonl").read_bytes()


def test_check_takes_the_previous_build_from_the_history(three_builds: Path) -> None:
    out = io.StringIO()
    history = str(three_builds / "history.jsonl")
    status = main(
        ["check", str(three_builds), "--baseline", history, "--max-drop", "0.01"], out=out
    )
    assert status == 1
    assert "baseline: build v2" in out.getvalue() and "dropped by" in out.getvalue()
    status = main(["check", str(three_builds), "--baseline", history, "--max-drop", "0.9"])
    assert status == 0
