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
    """Three sets with five runs a task (they lead with the unbiased estimate); gamma, with
    four runs of eight tasks, where the check finds the plug-in's interval closer to its
    level; and delta, with two runs a task, fewer than k = 3: no unbiased value, and no
    interval for reliability@3 its runs support (its card leads with reliability@2)."""
    folder = tmp_path_factory.mktemp("leads")
    results = folder / "runs.jsonl"
    lines = (
        _runs("alpha", 5)
        + _runs("beta", 5)
        + _runs("epsilon", 5)
        + _runs("gamma", 4, tasks=8)
        + _runs("delta", 2)
    )
    results.write_text("\n".join(lines) + "\n")
    out = folder / "site"
    assert main(["build", str(results), "-o", str(out)], out=io.StringIO()) == 0
    return out


def test_the_overview_shows_every_set_on_the_estimator_most_lead_with(site: Path) -> None:
    doc = json.loads((site / "report.json").read_text())
    leads = {rs["model"]: rs["reliability_at_k"]["headline"] for rs in doc["result_sets"]}
    assert leads == {
        "alpha": "unbiased",
        "beta": "unbiased",
        "epsilon": "unbiased",
        "gamma": "plugin",
        "delta": "plugin",
    }
    html = " ".join((site / "index.html").read_text().split())
    cards = re.findall(r'<span class="label">reliability@3 \(([^)]*)\)</span>', html)
    assert cards == ["unbiased"] * 4
    assert "reliability@2 (unbiased), in place of reliability@3" in html  # delta's card
    assert html.count("Its own headline is the plug-in estimate") == 1  # gamma's
    assert "show the unbiased one, which most sets lead with" in html
    # delta's unbiased value is undefined: shown as such, not replaced by its plug-in.
    (delta,) = [rs for rs in doc["result_sets"] if rs["model"] == "delta"]
    assert delta["reliability_at_k"]["unbiased"]["estimate"] is None
    assert delta["reliability_at_k"]["supported"]["k"] == 2
    chart = (site / "index.html").read_text()
    assert "reliability@3 (unbiased, for every set)" in chart
    # The chart has no row for delta, and says why.
    assert "No row for delta · desk: its unbiased value is undefined" in html
    # The table marks the sets whose headline is the other estimate.
    assert html.count(" (headline)</td>") == 2


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
            assert labels.count("reliability@3 (unbiased)") == 4
            assert labels.count("reliability@2 (unbiased), in place of reliability@3") == 1
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
