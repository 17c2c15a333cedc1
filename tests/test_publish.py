"""Publishing: badges, model-card snippets, sitemap, `reportgen check`, `reportgen serve`."""

from __future__ import annotations

import html
import io
import json
import shutil
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from reportgen.cli import main
from reportgen.config import load_config
from reportgen.serve import LIVE_PREFIX, PreviewServer
from reportgen.website.badges import badge_colour

from .conftest import ROOT, build_example


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_example(
        tmp_path_factory.mktemp("pub") / "site", base_url="https://acme.github.io/evals/"
    )


def test_badge_json_follows_shields_endpoint_schema(published: Path) -> None:
    report = json.loads((published / "report.json").read_text())
    for rs in report["result_sets"]:
        badge = json.loads((published / f"badges/{rs['id']}.json").read_text())
        assert set(badge) == {"schemaVersion", "label", "message", "color"}
        assert badge["schemaVersion"] == 1 and badge["label"] == rs["name"]
        lead = rs["reliability_at_k"]["headline"]
        p = rs["reliability_at_k"][lead]
        name = "plug-in" if lead == "plugin" else lead
        assert (
            badge["message"]
            == f"reliability@3 ({name}) {p['estimate']:.2f}, 95% [{p['low']:.2f}, {p['high']:.2f}]"
        )
        assert badge["color"] == badge_colour(p["estimate"])
        # The set page describes the badge with the badge's own words.
        alt = f'alt="Badge: {html.escape(rs["name"])}: {html.escape(badge["message"])}"'
        assert alt in (published / rs["page"]).read_text()


@pytest.mark.parametrize(
    ("value", "colour"),
    [
        (0.95, "brightgreen"),
        (0.9, "brightgreen"),
        (0.8, "green"),
        (0.6, "yellow"),
        (0.3, "orange"),
        (0.1, "red"),
        (None, "lightgrey"),
    ],
)
def test_badge_colour_by_value(value: float | None, colour: str) -> None:
    assert badge_colour(value) == colour


def test_badge_svg_is_well_formed_and_labelled(published: Path) -> None:
    for svg in sorted((published / "badges").glob("*.svg")):
        root = ET.fromstring(svg.read_text())
        assert root.get("role") == "img" and "reliability@3" in (root.get("aria-label") or "")
        texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
        assert any(t and t.startswith("reliability@3 ") for t in texts)
        assert int(root.get("width") or 0) > 100


def test_snippets_on_page_and_in_file_use_absolute_urls(published: Path) -> None:
    report = json.loads((published / "report.json").read_text())
    rs = report["result_sets"][0]
    page = (published / rs["page"]).read_text()
    snippet_file = (published / f"badges/{rs['id']}.md").read_text()
    badge_url = f"https://acme.github.io/evals/badges/{rs['id']}.svg"
    page_url = f"https://acme.github.io/evals/{rs['page']}"
    markdown = f"[![reliability@3: {rs['name']}]({badge_url})]({page_url})"
    assert markdown in snippet_file
    assert badge_url in page and "model-index" in page
    hf = yaml.safe_load(snippet_file.split("```yaml\n")[1].split("```")[0])
    result = hf["model-index"][0]["results"][0]
    assert hf["model-index"][0]["name"] == rs["model"]
    assert result["metrics"][0]["type"] == "reliability@3"
    lead = rs["reliability_at_k"]["headline"]
    assert result["metrics"][0]["value"] == round(rs["reliability_at_k"][lead]["estimate"], 4)
    assert f"({'plug-in' if lead == 'plugin' else lead})" in result["metrics"][0]["name"]
    assert result["source"]["url"] == page_url


def test_sitemap_and_canonical_links_only_with_base_url(
    published: Path, example_site: Path
) -> None:
    assert not (example_site / "sitemap.xml").exists()
    assert 'rel="canonical"' not in (example_site / "index.html").read_text()
    root = ET.fromstring((published / "sitemap.xml").read_text())
    locs = [e.text for e in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    pages = sorted(p.relative_to(published).as_posix() for p in published.rglob("*.html"))
    pages.remove("404.html")
    assert locs == sorted(f"https://acme.github.io/evals/{p}" for p in pages)
    assert (
        '<link rel="canonical" href="https://acme.github.io/evals/methodology.html">'
        in (published / "methodology.html").read_text()
    )


# ------------------------------------------------------------ check


def test_check_passes_and_fails_on_minimum(
    example_site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run(["check", str(example_site), "--min-reliability", "0.2"])
    sets = json.loads((example_site / "report.json").read_text())["result_sets"]
    assert status == 0 and out.count("ok ") == len(sets) == 4
    status, out = run(["check", str(example_site / "report.json"), "--min-reliability", "0.5"])
    assert status == 1
    values = {
        rs["name"]: rs["reliability_at_k"][rs["reliability_at_k"]["headline"]]["estimate"]
        for rs in json.loads((example_site / "report.json").read_text())["result_sets"]
    }
    below = {name: value for name, value in values.items() if value < 0.5}
    assert below and len(below) < len(values)  # the example has sets on both sides of 0.5
    failing = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(failing) == len(below)
    for name, value in below.items():
        assert any(name in line and f"{value:.3f} is below 0.500" in line for line in failing)
    noun = "result set failed" if len(below) == 1 else "result sets failed"
    assert f"{len(below)} {noun}" in capsys.readouterr().err


def test_check_against_baseline(example_site: Path, tmp_path: Path) -> None:
    baseline = json.loads((example_site / "report.json").read_text())
    # check compares the current headline estimator with the same one in the baseline
    rel = baseline["result_sets"][1]["reliability_at_k"]
    now = rel[rel["headline"]]["estimate"]
    rel[rel["headline"]]["estimate"] += 0.1
    old = tmp_path / "old.json"
    old.write_text(json.dumps(baseline))
    status, out = run(["check", str(example_site), "--baseline", str(old), "--max-drop", "0.05"])
    assert status == 1
    assert "agent-beta" in out and "dropped by 0.100" in out
    status, out = run(["check", str(example_site), "--baseline", str(old), "--max-drop", "0.2"])
    assert status == 0
    assert f"{now + 0.1:.3f} -> {now:.3f}: fell by 0.100, within the allowed 0.200" in out
    # A set that rose says so, instead of reading as a drop within the limit.
    rel[rel["headline"]]["estimate"] -= 0.2
    old.write_text(json.dumps(baseline))
    status, out = run(["check", str(example_site), "--baseline", str(old), "--max-drop", "0.05"])
    assert status == 0
    assert f"{now - 0.1:.3f} -> {now:.3f}: rose" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--min-reliability", "2"], "--min-reliability: must lie between 0 and 1"),
        ([], "give --min-reliability"),
        (["--max-drop", "0.1"], "--max-drop needs --baseline"),
    ],
)
def test_check_usage_errors(
    example_site: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["check", str(example_site), *argv])[0] == 2
    assert message in capsys.readouterr().err


def test_check_refuses_a_file_that_is_not_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bogus = tmp_path / "report.json"
    bogus.write_text("{not json")
    assert run(["check", str(bogus), "--min-reliability", "0.5"])[0] == 2
    assert "not a report.json" in capsys.readouterr().err
    assert run(["check", str(tmp_path / "missing"), "--min-reliability", "0.5"])[0] == 2


# ------------------------------------------------------------ serve


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode("utf-8")


def test_serve_builds_serves_and_rebuilds_on_change(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "example", project)
    config_path = project / "reportgen.yaml"
    config_path.write_text(config_path.read_text().replace("output: ../site", "output: site"))
    log = io.StringIO()
    preview = PreviewServer(lambda: load_config(config_path), 0, log)
    preview.start()
    try:
        assert preview.url.startswith("http://127.0.0.1:")
        assert "Support-desk agents" in _get(preview.url + "index.html")
        assert preview.check_once() is False  # nothing changed
        # A missing page gets the site's own 404 page, live too, with the 404 status.
        with pytest.raises(urllib.error.HTTPError) as missing:
            _get(preview.url + "sets/no-such-page.html")
        assert missing.value.code == 404
        body = missing.value.read().decode("utf-8")
        assert "Page not found" in body and "Support-desk agents" in body
        assert f'src="{LIVE_PREFIX}live.js"' in body
        time.sleep(0.01)
        config_path.write_text(
            config_path.read_text().replace("Support-desk agents", "Helpdesk bots")
        )
        assert preview.check_once() is True
        assert "Helpdesk bots" in _get(preview.url + "index.html")
        # A broken input keeps the last good site up and says why.
        results = project / "results" / "agent-beta.jsonl"
        results.write_text(results.read_text() + '{"task": "x", "passed": "maybe"}\n')
        assert preview.check_once() is True
        assert "agent-beta.jsonl:" in log.getvalue() and "Helpdesk bots" in _get(preview.url)
    finally:
        preview.stop()


def _interrupt(seconds: float) -> None:
    raise KeyboardInterrupt


def test_serve_takes_force_as_build_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from reportgen import serve as serve_module

    results = ROOT / "example" / "results" / "agent-alpha.jsonl"
    foreign = tmp_path / "docs"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    (foreign / "index.html").write_text("another tool's site")
    # Without --force the first build refuses the folder, and says how to go on. (Should
    # it build instead, the serving loop's first sleep ends the command, with 130.)
    monkeypatch.setattr(serve_module.time, "sleep", _interrupt)
    assert run(["serve", str(results), "-o", str(foreign), "--port", "0"])[0] == 2
    assert "--force" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "mine"
    # The flag reaches serve() ...
    seen: dict[str, object] = {}
    monkeypatch.setattr(serve_module, "serve", lambda *a, **kw: seen.update(kw))
    assert run(["serve", str(results), "-o", str(foreign), "--force"])[0] == 0
    assert seen["force"] is True
    # ... and the preview's build replaces the folder with it.
    config_path = tmp_path / "reportgen.yaml"
    config_path.write_text(f"output: docs\nresult_sets:\n  - path: {results}\n")
    preview = PreviewServer(lambda: load_config(config_path), 0, io.StringIO(), force=True)
    try:
        assert (foreign / "index.html").is_file() and not (foreign / "notes.txt").exists()
    finally:
        preview.server.server_close()


def test_serve_rejects_bad_port(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["serve", "--port", "70000"])[0] == 2
    assert "--port" in capsys.readouterr().err


# ------------------------------------------------------------ workflow and README


def test_workflow_example_uses_the_pages_actions() -> None:
    workflow = yaml.safe_load((ROOT / "example" / "github-workflow.yml").read_text())
    steps = [s.get("uses", "") for job in workflow["jobs"].values() for s in job["steps"]]
    for action in (
        "actions/configure-pages",
        "actions/upload-pages-artifact",
        "actions/deploy-pages",
    ):
        assert any(u.startswith(action + "@") for u in steps), action
    runs = " ".join(s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"])
    assert "reportgen build" in runs and "--base-url" in runs and "reportgen check" in runs
    assert "--history history.jsonl" in runs and "history.jsonl" in runs.split("reportgen build")[0]
    assert "--baseline site/history.jsonl" in runs
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    assert jobs["build"]["permissions"] == {
        "contents": "read",
        "pages": "write",
        "id-token": "write",
    }


def test_workflow_example_comments_the_per_task_table_on_pull_requests() -> None:
    workflow = yaml.safe_load((ROOT / "example" / "github-workflow.yml").read_text())
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key "on" as True
    job = workflow["jobs"]["pr-check"]
    assert job["if"] == "github.event_name == 'pull_request'"
    assert job["permissions"]["pull-requests"] == "write"
    runs = " ".join(s.get("run", "") for s in job["steps"])
    assert "--per-task --format markdown > comment.md" in runs
    assert "--per-task --format github" in runs
    assert "gh pr comment" in runs and "--body-file comment.md" in runs


def test_readme_shows_setup_serve_publish_badge_and_check() -> None:
    readme = (ROOT / "README.md").read_text()
    assert (
        readme.index("make site") < readme.index("make test") < readme.index("reportgen estimate")
    )
    # The two set-up commands come first, alone in their block; the full run is named.
    first_block = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()]
    assert commands == ["make site", "make test"]
    assert "`make test-all`" in readme
    for heading in ("## Publish to GitHub Pages", "reportgen serve", "badges/", "reportgen check"):
        assert heading in readme, heading
