"""task_pages: which tasks get a page, with every link still pointing at a page that
exists, and report.json and tasks.csv still listing every task."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from pathlib import Path

import pytest

from reportgen.cli import main
from reportgen.website import render

K = 3
#: task -> outcomes: two always pass, two always fail, four flaky of differing rates.
RUNS = {
    "a-pass": [True] * 4,
    "b-fail": [False] * 4,
    "c-flaky": [True, False, True, True],
    "d-flaky": [False, False, True, False],
    "e-pass": [True] * 4,
    "f-flaky": [True, False, False, True],
    "g-fail": [False] * 4,
    "h-flaky": [True, True, True, False],
}


def write_runs(folder: Path, runs: dict[str, list[bool]]) -> Path:
    path = folder / "runs.jsonl"
    path.write_text(
        "".join(
            json.dumps({"suite": "s", "model": "m", "task": task, "run": r, "passed": p}) + "\n"
            for task, outcomes in runs.items()
            for r, p in enumerate(outcomes)
        )
    )
    return path


def build(folder: Path, *flags: str, runs: dict[str, list[bool]] = RUNS) -> tuple[int, str, Path]:
    site = folder / "site"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(
            ["build", str(write_runs(folder, runs)), "-o", str(site), "-k", str(K), *flags]
        )
    return status, err.getvalue(), site


def task_pages(site: Path) -> set[str]:
    return {p.stem for p in site.glob("sets/*/tasks/*.html")}


def broken_links(site: Path) -> list[str]:
    broken = []
    for page in site.rglob("*.html"):
        for href in re.findall(r'href="([^"]+)"', page.read_text()):
            if re.match(r"[a-z]+:|#|//", href):
                continue
            path = re.split(r"[#?]", href)[0]
            # 404.html links from the site root (base_path), as it is served anywhere.
            base = site if path.startswith("/") else page.parent
            target = (base / path.lstrip("/")).resolve()
            if not target.exists():
                broken.append(f"{page.relative_to(site)} -> {href}")
    return broken


def plugin_pass_hat_k(outcomes: list[bool]) -> float:
    return (sum(outcomes) / len(outcomes)) ** K


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], set(RUNS)),
        (["--task-pages", "all"], set(RUNS)),
        (["--task-pages", "flaky"], {t for t, o in RUNS.items() if 0 < sum(o) < len(o)}),
        (["--task-pages", "none"], set()),
        (
            ["--task-pages", "worst:3"],
            # The least reliable by plug-in pass^k, ties by id: the two that always
            # fail, then d (1 of 4).
            set(sorted(RUNS, key=lambda t: (plugin_pass_hat_k(RUNS[t]), t))[:3]),
        ),
    ],
)
def test_each_setting_makes_its_pages_and_no_broken_links(
    tmp_path: Path, flags: list[str], expected: set[str]
) -> None:
    status, err, site = build(tmp_path, *flags)
    assert status == 0, err
    assert task_pages(site) == expected
    assert broken_links(site) == []
    # Every task is still listed, with a page only where one was made.
    (rs,) = json.loads((site / "report.json").read_text())["result_sets"]
    assert {t["id"] for t in rs["tasks"]} == set(RUNS)
    for t in rs["tasks"]:
        assert (t["page"] is not None) == (t["id"] in expected)
        if t["page"] is not None:
            assert (site / t["page"]).is_file()
    with (site / "sets" / rs["id"] / "tasks.csv").open() as handle:
        assert {row[0] for row in list(csv.reader(handle))[1:]} == set(RUNS)
    # The set page names every task, linking only those with a page.
    page = (site / rs["page"]).read_text()
    for task in RUNS:
        assert f">{task}<" in page
    # Each task with a page is linked twice, from the run grid and the task table.
    assert sorted(re.findall(r'href="tasks/([^"]+)\.html"', page)) == sorted(2 * list(expected))


def test_the_worst_order_is_the_set_tables_order(tmp_path: Path) -> None:
    status, err, site = build(tmp_path, "--task-pages", "worst:4")
    assert status == 0, err
    page = (site / "sets" / "m-s" / "index.html").read_text()
    tasks_table = page[page.index('<table class="tasks sortable">') :]
    table = re.findall(r'<th scope="row">(?:<a href="tasks/[^"]+">)?([^<]+)<', tasks_table)
    assert sorted(table) == sorted(RUNS)
    assert task_pages(site) == set(table[:4])


def test_flaky_with_every_task_passing_makes_no_task_pages(tmp_path: Path) -> None:
    runs = {f"t{i}": [True] * 3 for i in range(5)}
    status, err, site = build(tmp_path, "--task-pages", "flaky", runs=runs)
    assert status == 0, err
    assert task_pages(site) == set()
    assert broken_links(site) == []
    assert "0 of 5 tasks have a page of their own" in (site / "sets/m-s/index.html").read_text()


def test_all_beyond_the_limit_names_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render, "MAX_TASK_PAGES", 5)
    status, err, site = build(tmp_path)
    assert status == 2
    assert "task_pages: all would make 8 task pages, more than 5" in err
    assert "flaky, worst: N or none" in err
    assert not site.exists()
    status, err, site = build(tmp_path, "--task-pages", "flaky")
    assert status == 0, err


def test_a_long_task_table_shows_the_least_reliable_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render, "TABLE_ROWS", 3)
    status, err, site = build(tmp_path)
    assert status == 0, err
    page = (site / "sets/m-s/index.html").read_text()
    assert page[page.index('<table class="tasks sortable">') :].count('<tr><th scope="row">') == 3
    assert "This set has 8 tasks: the table shows the 3 least reliable" in page
    assert {"b-fail", "g-fail", "d-flaky"} <= set(re.findall(r">([a-h]-\w+)<", page))
    assert len(json.loads((site / "report.json").read_text())["result_sets"][0]["tasks"]) == 8


def test_changing_the_setting_rebuilds_the_pages_it_touches(tmp_path: Path) -> None:
    status, err, site = build(tmp_path)
    assert status == 0, err
    assert task_pages(site) == set(RUNS)
    status, err, site = build(tmp_path, "--task-pages", "worst:1")
    assert status == 0, err
    assert task_pages(site) == {"b-fail"}
    assert broken_links(site) == []
    status, err, site = build(tmp_path)
    assert status == 0, err
    assert task_pages(site) == set(RUNS)
    assert broken_links(site) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("sometimes", "task_pages: expected all, flaky, none or worst: N"),
        ("{worst: 0}", "task_pages: worst: expected a whole number of at least 1, got 0"),
        ("{worst: many}", 'task_pages: worst: expected a whole number of at least 1, got "many"'),
        ("{worst: '²'}", 'task_pages: worst: expected a whole number of at least 1, got "²"'),
        ("[flaky]", "task_pages: expected all, flaky, none or worst: N"),
    ],
)
def test_bad_settings_are_located(tmp_path: Path, value: str, expected: str) -> None:
    write_runs(tmp_path, RUNS)
    config = tmp_path / "reportgen.yaml"
    config.write_text(f"result_sets: [runs.jsonl]\ntask_pages: {value}\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["build", "--config", str(config)])
    assert status == 2
    assert f"{config}: {expected}" in err.getvalue()


def test_the_config_setting_is_read(tmp_path: Path) -> None:
    write_runs(tmp_path, RUNS)
    config = tmp_path / "reportgen.yaml"
    config.write_text("result_sets: [runs.jsonl]\ntask_pages: {worst: 2}\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["build", "--config", str(config)])
    assert status == 0, err.getvalue()
    assert task_pages(tmp_path / "site") == {"b-fail", "g-fail"}


@pytest.mark.parametrize("flag", ["worst:x", "worst:0", "some"])
def test_bad_flags_exit_2(tmp_path: Path, flag: str) -> None:
    status, err, _ = build(tmp_path, "--task-pages", flag)
    assert status == 2
    assert "--task-pages: " in err
