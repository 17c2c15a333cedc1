"""The overview sets like beside like (issue 37, item 5): when result sets lead with
different estimators, its cards, chart and table all show the one most sets lead with,
and name a set's own headline where it is the other."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from reportgen.cli import main

from .browser_util import CHROMIUM_ARGS, find_chromium, unavailable

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # reported by the test: a skip, or in CI a failure
    sync_playwright = None  # type: ignore[assignment]


def _runs(model: str, runs: int, tasks: int = 20) -> list[str]:
    return [
        json.dumps(
            {"suite": "desk", "model": model, "task": f"t{i}", "run": j, "passed": j <= i % runs}
        )
        for i in range(tasks)
        for j in range(runs)
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two sets with five runs a task (they lead with the unbiased estimate) and one with
    two, fewer than k = 3 (its unbiased value is undefined: it leads with the plug-in)."""
    folder = tmp_path_factory.mktemp("leads")
    results = folder / "runs.jsonl"
    lines = _runs("alpha", 5) + _runs("beta", 5) + _runs("gamma", 2)
    results.write_text("\n".join(lines) + "\n")
    out = folder / "site"
    assert main(["build", str(results), "-o", str(out)], out=io.StringIO()) == 0
    return out


def test_the_overview_shows_every_set_on_the_estimator_most_lead_with(site: Path) -> None:
    doc = json.loads((site / "report.json").read_text())
    leads = {rs["model"]: rs["reliability_at_k"]["headline"] for rs in doc["result_sets"]}
    assert leads == {"alpha": "unbiased", "beta": "unbiased", "gamma": "plugin"}
    html = " ".join((site / "index.html").read_text().split())
    cards = re.findall(r'<span class="label">reliability@3 \(([^)]*)\)</span>', html)
    assert cards == ["unbiased", "unbiased", "unbiased"]
    assert "Its own headline is the plug-in estimate" in html
    assert "show the unbiased one, which most sets lead with" in html
    # gamma's unbiased value is undefined: shown as such, not replaced by its plug-in.
    (gamma,) = [rs for rs in doc["result_sets"] if rs["model"] == "gamma"]
    assert gamma["reliability_at_k"]["unbiased"]["estimate"] is None
    chart = (site / "index.html").read_text()
    assert "reliability@3 (unbiased, for every set)" in chart
    # The chart has no row for gamma, and says why.
    assert "No row for gamma · desk: its unbiased value is undefined" in html
    # The table marks the one set whose headline is the other estimate.
    assert html.count(" (headline)</td>") == 1


@pytest.mark.slow  # a browser beyond the smoke test of each page type
def test_a_browser_sees_one_estimator_in_the_chart_and_the_cards(site: Path) -> None:
    chromium = find_chromium()
    if chromium is None or sync_playwright is None:
        unavailable("Chromium or the playwright package is missing")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto((site / "index.html").as_uri())
            labels = page.locator(".card .label").all_inner_texts()
            assert labels and all(label == "reliability@3 (unbiased)" for label in labels)
            # The chart's own text (its axis title and row labels) names one estimator.
            texts = page.eval_on_selector_all(
                "figure svg text", "nodes => nodes.map(node => node.textContent)"
            )
            svg_text = " ".join(texts)
            assert "reliability@3 (unbiased, for every set)" in svg_text
            assert "(plug-in)" not in svg_text
            own = page.locator(".card .own-headline").all_inner_texts()
            assert len(own) == 1 and own[0].startswith("Its own headline is the plug-in")
        finally:
            browser.close()
