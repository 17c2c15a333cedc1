"""The set page's run grid: one row per task, least reliable first (the forest plot's
and the table's order), one cell per run in run order, read back from the built page's
HTML and compared cell by cell with the runs as written."""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import shutil
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from reportgen.cli import main
from reportgen.readers.terminal_bench import MODEL_FAILURE_MODES
from reportgen.website import render

FIXTURES = Path(__file__).parent / "fixtures"
TB_RUN = FIXTURES / "harnesses" / "terminal-bench" / "2025-06-01__10-00-00"
K = 3
#: What each cell shows, by its outcome (the run strip's symbols).
SYMBOL = {True: "✓", False: "✗", None: "–"}
CLASS = {True: "p", False: "f", None: "x"}

#: task -> outcomes in run order (None: not evaluated). The file lists them shuffled,
#: each with its run number, so only the run numbers give this order.
RUNS: dict[str, list[bool | None]] = {
    "warm-up": [False, False, False, True, True, True, True, True],
    "coin-flip": [True, False, None, True, False, False, True, None, False],
    "steady": [True, True, True, True, True],
    "never": [False, None, False, False],
    "late-break": [True, True, True, True, True, False, False],
    "one-gap": [None, True, True, True, True, True],
}


@dataclass
class Cell:
    classes: str
    text: str = ""  # what a sighted reader sees (the visually hidden words left out)
    heard: str = ""  # the visually hidden words
    title: str | None = None
    colspan: int = 1


@dataclass
class Row:
    task: str = ""
    href: str | None = None
    cells: list[Cell] = field(default_factory=list)


class GridParser(HTMLParser):
    """The run grid's column heads and rows, from the page's HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.heads: list[str] = []
        self.rows: list[Row] = []
        self.grids = 0
        self._in_grid = False
        self._part: str | None = None  # thead or tbody
        self._cell: Cell | None = None
        self._head: list[str] | None = None
        self._row_head = False
        self._sr = 0
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and "run-grid" in (a.get("class") or "").split():
            self._in_grid = True
            self.grids += 1
            return
        if not self._in_grid:
            return
        if tag in ("thead", "tbody"):
            self._part = tag
        elif tag == "tr" and self._part == "tbody":
            self.rows.append(Row())
        elif tag == "th" and self._part == "thead":
            self._head = []
        elif tag == "th" and self._part == "tbody":
            self._row_head = True
        elif tag == "td":
            self._cell = Cell(a.get("class") or "", title=a.get("title"))
            self._cell.colspan = int(a.get("colspan") or 1)
        elif tag == "a" and self._row_head:
            self.rows[-1].href = a.get("href")
        elif tag == "span" and (self._sr or "sr" in (a.get("class") or "").split()):
            self._sr += 1  # within a visually hidden span, every span counts

    def handle_endtag(self, tag: str) -> None:
        if not self._in_grid:
            return
        if tag == "table":
            self._in_grid = False
        elif tag in ("thead", "tbody"):
            self._part = None
        elif tag == "th" and self._head is not None:
            self.heads.append("".join(self._head).strip())
            self._head = None
        elif tag == "th":
            self._row_head = False
        elif tag == "td" and self._cell is not None:
            self.rows[-1].cells.append(self._cell)
            self._cell = None
        elif tag == "span" and self._sr:
            self._sr -= 1

    def handle_data(self, data: str) -> None:
        if self._head is not None:
            self._head.append(data)
        elif self._row_head:
            self.rows[-1].task += data
        elif self._cell is not None:
            if self._sr:
                self._cell.heard += data
            else:
                self._cell.text += data


def grid_of(page: str) -> GridParser:
    parser = GridParser()
    parser.feed(page)
    parser.close()
    return parser


def table_order(page: str) -> list[str]:
    """The task table's rows, top to bottom."""
    table = page[page.index('<table class="tasks sortable">') :]
    return re.findall(r'<th scope="row">(?:<a href="tasks/[^"]+">)?([^<]+)<', table)


def least_reliable_first(runs: dict[str, list[bool | None]]) -> list[str]:
    """Plug-in pass^k = (c/n)^k over the evaluated runs, lowest first, ties by id."""

    def plugin(task: str) -> float:
        evaluated = [r for r in runs[task] if r is not None]
        return (sum(evaluated) / len(evaluated)) ** K

    return sorted(runs, key=lambda t: (plugin(t), t))


def write_jsonl(folder: Path, runs: dict[str, list[bool | None]]) -> Path:
    lines = [
        {"suite": "s", "model": "m", "task": task, "run": number, "passed": passed}
        for task, outcomes in runs.items()
        for number, passed in enumerate(outcomes, start=1)
    ]
    random.Random(7).shuffle(lines)  # the file's order is not the run order
    path = folder / "runs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def build(*argv: str, site: Path) -> str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["build", *argv, "-o", str(site), "-k", str(K), "--no-cache"])
    assert status == 0, err.getvalue()
    (page,) = site.glob("sets/*/index.html")
    return page.read_text(encoding="utf-8")


def expected_cell(passed: bool | None) -> tuple[str, str]:
    return CLASS[passed], SYMBOL[passed]


def test_the_grid_is_every_run_in_run_order_least_reliable_task_first(tmp_path: Path) -> None:
    page = build(str(write_jsonl(tmp_path, RUNS)), site=tmp_path / "site")
    grid = grid_of(page)
    assert grid.grids == 1
    longest = max(len(o) for o in RUNS.values())
    assert grid.heads == ["Task", *map(str, range(1, longest + 1))]
    # Rows in the forest plot's order, which the task table below shares.
    order = least_reliable_first(RUNS)
    assert [row.task for row in grid.rows] == order == table_order(page)
    for row in grid.rows:
        outcomes = RUNS[row.task]
        assert row.href == f"tasks/{row.task}.html"
        drawn, pad = row.cells[: len(outcomes)], row.cells[len(outcomes) :]
        assert [(c.classes, c.text) for c in drawn] == [expected_cell(p) for p in outcomes]
        # A run not evaluated says so in words too; a pass or a fail is its symbol.
        assert [c.heard.strip() for c in drawn] == [
            "not evaluated" if p is None else "" for p in outcomes
        ]
        # A shorter row ends in one empty cell across the columns it has no runs for.
        assert sum(c.colspan for c in pad) == longest - len(outcomes)
        assert all(c.classes == "" and c.text == "" for c in pad)
        assert len(pad) == (len(outcomes) < longest)
    assert "No run order to draw" not in page


def test_excluded_runs_carry_the_harness_s_reason(tmp_path: Path) -> None:
    """Terminal-Bench trials, read in the order of their trial names ("2-of-3"): the
    ones never graded are excluded, each with its failure mode in its title and in
    words for a screen reader; an escaped reason stays text."""
    run = tmp_path / TB_RUN.name
    shutil.copytree(TB_RUN, run)
    doc = json.loads((run / "results.json").read_text())
    # A harness's words may hold markup: it must come out as text.
    odd = next(t for t in doc["results"] if t["failure_mode"] == "parse_error")
    odd["failure_mode"] = 'parse_error <b>"&'
    doc["results"].reverse()  # the file's order is not the run order
    (run / "results.json").write_text(json.dumps(doc, indent=4))  # as the harness writes it
    for trial_file in run.glob("*/*/results.json"):
        trial_file.unlink()  # the run's own file holds every trial

    expected: dict[str, dict[int, tuple[bool | None, str | None]]] = {}
    for trial in doc["results"]:
        attempt = int(re.findall(r"\.(\d+)-of-\d+\.", trial["trial_name"])[0])
        passed, reason = trial["is_resolved"], None
        if passed is None and trial["failure_mode"] in MODEL_FAILURE_MODES:
            passed = False
        elif passed is None:
            reason = f"never graded (failure mode {trial['failure_mode']})"
        expected.setdefault(trial["task_id"], {})[attempt] = (passed, reason)
    assert any(r for runs in expected.values() for _, r in runs.values()), "fixture has reasons"

    page = build(str(run), site=tmp_path / "site")
    grid = grid_of(page)
    in_order = {task: [runs[a][0] for a in sorted(runs)] for task, runs in expected.items()}
    assert [row.task for row in grid.rows] == least_reliable_first(in_order)
    for row in grid.rows:
        runs = [expected[row.task][a] for a in sorted(expected[row.task])]
        assert len(row.cells) == len(runs)
        for number, (cell, (passed, reason)) in enumerate(
            zip(row.cells, runs, strict=True), start=1
        ):
            assert (cell.classes, cell.text) == expected_cell(passed)
            if reason is None:
                assert cell.title is None
                continue
            assert cell.title is not None and cell.title.startswith(f"run {number}: {reason}")
            assert cell.heard.strip().startswith(f"not evaluated: {reason}")
    assert "<b>" not in page and "&lt;b&gt;&#34;&amp;" in page


def test_counts_only_draws_no_grid_and_says_why(tmp_path: Path) -> None:
    page = build(str(FIXTURES / "tables" / "airline-counts.csv"), site=tmp_path / "site")
    assert grid_of(page).grids == 0
    (sentence,) = re.findall(r'<p class="no-grid">([^<]+)</p>', page)
    assert sentence.startswith("No run order to draw: these results came as counts per task")


def test_a_task_given_as_counts_says_so_in_its_row(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "suite: s\nmodel: m\ntasks:\n"
        "  - {id: ordered, outcomes: [true, false, null, true]}\n"
        "  - {id: counted, successes: 1, runs: 4, excluded: 2}\n"
    )
    page = build(str(suite), site=tmp_path / "site")
    rows = {row.task: row for row in grid_of(page).rows}
    assert [(c.classes, c.text) for c in rows["ordered"].cells] == [
        expected_cell(p) for p in (True, False, None, True)
    ]
    (counted,) = rows["counted"].cells
    assert counted.classes == "counts-only" and counted.colspan == 4
    assert counted.text == "counts only: 1 of 4 passed, 2 not evaluated; no run order"
    assert "1 of these tasks was given as counts only" in page


def test_a_big_set_shows_the_table_s_tasks_and_each_task_s_first_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render, "TABLE_ROWS", 4)
    monkeypatch.setattr(render, "GRID_RUNS", 6)
    page = build(
        str(write_jsonl(tmp_path, RUNS)), "--task-pages", "worst:2", site=tmp_path / "site"
    )
    grid = grid_of(page)
    order = least_reliable_first(RUNS)[:4]
    assert [row.task for row in grid.rows] == order == table_order(page)
    assert grid.heads == ["Task", "1", "2", "3", "4", "5", "6", "more"]
    for rank, row in enumerate(grid.rows):
        outcomes = RUNS[row.task]
        drawn = min(len(outcomes), 6)
        assert [(c.classes, c.text) for c in row.cells[:drawn]] == [
            expected_cell(p) for p in outcomes[:drawn]
        ]
        (last,) = row.cells[drawn:]
        if len(outcomes) > 6:
            assert last.classes == "more" and last.text == f"+{len(outcomes) - 6}"
            assert last.heard == " more runs"
        else:
            assert last.classes == "" and last.colspan == 7 - len(outcomes)
        # Only the two tasks with a page are linked.
        assert (row.href is not None) == (rank < 2)
    capped = sum(len(RUNS[t]) > 6 for t in order)
    assert f"The grid shows the 4 least reliable of the {len(RUNS)} tasks" in page
    assert f"{capped} tasks ran more than 6 times: the grid draws the first 6 runs" in page


GRID_IN_A_BROWSER = """() => {
  const box = document.querySelector('.grid-wrap');
  const page = [document.documentElement.scrollWidth, document.documentElement.clientWidth];
  const cells = [...box.querySelectorAll('td.p, td.f, td.x')];
  const sizes = cells.map(td => td.getBoundingClientRect());
  const hidden = [...box.querySelectorAll('td .sr')].every(sr => {
    const r = sr.getBoundingClientRect();
    return r.width <= 1 && r.height <= 1;
  });
  const px = td => parseFloat(getComputedStyle(td).fontSize);
  const name = () => box.querySelector('tbody th').getBoundingClientRect().left;
  const before = name();
  box.scrollLeft = box.scrollWidth;
  const scrolled = box.scrollLeft;
  return {page, box: [box.scrollWidth, box.clientWidth], scrolled, hidden,
          nameMoved: name() - before,
          smallest: Math.min(...sizes.map(r => Math.min(r.width, r.height))),
          fontPx: Math.min(...cells.slice(0, 50).map(px)),
          symbols: [...new Set(cells.map(td => td.firstChild.textContent))].sort()};
}"""


@pytest.mark.slow
def test_a_wide_grid_scrolls_in_its_box_not_the_page(tmp_path: Path) -> None:
    """80 runs of 30 tasks, cut to the first GRID_RUNS: at 1280 and 390 px the page does
    not scroll sideways, the grid does in its box with the task names kept in view, and
    every cell shows its symbol at a size that can be read."""
    from .browser_util import CHROMIUM_ARGS, find_chromium, unavailable

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed (pip install -e '.[test]')")
    chromium = find_chromium()
    if chromium is None:
        unavailable("Chromium not found (apt-get install chromium, or set REPORTGEN_CHROMIUM)")
    rng = random.Random(3)
    runs: dict[str, list[bool | None]] = {
        f"a-rather-long-task-name-{t:02d}": [
            None if rng.random() < 0.05 else rng.random() < t / 30 for _ in range(80)
        ]
        for t in range(30)
    }
    build(str(write_jsonl(tmp_path, runs)), site=tmp_path / "site")
    (page_path,) = (tmp_path / "site").glob("sets/*/index.html")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            for width, phone in ((1280, False), (390, True)):
                context = browser.new_context(
                    viewport={"width": width, "height": 900}, is_mobile=phone, has_touch=phone
                )
                page = context.new_page()
                page.goto(page_path.as_uri())
                facts = page.evaluate(GRID_IN_A_BROWSER)
                context.close()
                assert facts["page"][0] <= facts["page"][1], (width, facts)
                assert facts["box"][0] > facts["box"][1] and facts["scrolled"] > 0, (width, facts)
                # The names stay in view (within the grid's 2 px spacing).
                assert abs(facts["nameMoved"]) <= 2, (width, facts)
                assert facts["hidden"] and sorted(facts["symbols"]) == sorted("✓✗–"), (width, facts)
                assert facts["smallest"] >= 18 and facts["fontPx"] >= 11, (width, facts)
        finally:
            browser.close()
