"""`reportgen serve` in a real browser: open pages reload after a rebuild, show a
failed build's located error over the last good page, and recover once fixed.
The built site on disk never carries the live-reload script."""

from __future__ import annotations

import io
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

from reportgen.config import load_config
from reportgen.serve import LIVE_PREFIX, PreviewServer, with_live_reload

from .browser_util import CHROMIUM_ARGS, find_chromium, unavailable
from .conftest import ROOT

try:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # reported by the browser fixture: a skip, or in CI a failure
    sync_playwright = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from playwright.sync_api import Page

#: Generous: the machines that run the tests are shared and slow under load.
WAIT_MS = 60_000


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The example project with its own copies of the content and one template."""
    folder = tmp_path / "project"
    shutil.copytree(ROOT / "example", folder)
    shutil.copytree(ROOT / "content", folder / "content")
    (folder / "templates").mkdir()
    shutil.copy(ROOT / "templates" / "content.html", folder / "templates" / "content.html")
    config = folder / "reportgen.yaml"
    data = yaml.safe_load(config.read_text())
    data.update(output="site", content="content", templates="templates")
    config.write_text(yaml.safe_dump(data, allow_unicode=True))
    return folder


@pytest.fixture
def preview(project: Path) -> Iterator[PreviewServer]:
    server = PreviewServer(lambda: load_config(project / "reportgen.yaml"), 0, io.StringIO())
    server.start()
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.1):
            server.check_once()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    yield server
    stop.set()
    watcher.join(timeout=60)
    server.stop()


@pytest.fixture
def page() -> Iterator[Page]:
    chromium = find_chromium()
    if chromium is None:
        unavailable("Chromium not found (apt-get install chromium, or set REPORTGEN_CHROMIUM)")
    if sync_playwright is None:
        unavailable("the playwright package is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        except PlaywrightError as error:
            unavailable(f"Chromium at {chromium} does not start: {error.message.splitlines()[0]}")
        yield browser.new_page()
        browser.close()


def test_open_page_follows_edits_errors_and_fixes(
    preview: PreviewServer, project: Path, page: Page
) -> None:
    errors: list[str] = []
    failed: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    page.goto(preview.url + "methodology.html")
    expect(page.locator("h1")).to_be_visible()

    # A content edit: the open page reloads by itself with the new text.
    methodology = project / "content" / "methodology.md"
    original = methodology.read_text()
    methodology.write_text(original + "\n\nFreshly saved sentence for the live reload test.\n")
    expect(page.locator("main")).to_contain_text("Freshly saved sentence", timeout=WAIT_MS)

    # A broken template: the located error lies over the last good page.
    template = project / "templates" / "content.html"
    good = template.read_text()
    template.write_text(good.replace("{% block", "{% if %}{% block", 1))
    overlay = page.locator("#reportgen-build-error")
    expect(overlay).to_contain_text("content.html:", timeout=WAIT_MS)
    expect(overlay).to_contain_text("template error")
    expect(page.locator("main")).to_contain_text("Freshly saved sentence")

    # Fixed: the page recovers, without the overlay.
    template.write_text(good)
    expect(overlay).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator("main")).to_contain_text("Freshly saved sentence")
    assert failed == []
    assert errors == []

    # Only what was served carried the script; the site on disk is as built.
    on_disk = (project / "site" / "methodology.html").read_text()
    assert LIVE_PREFIX not in on_disk and "script-src 'none'" in on_disk


def test_served_pages_get_the_script_and_a_policy_that_allows_it() -> None:
    built = (
        b'<html><head><meta http-equiv="Content-Security-Policy" content="default-src '
        b"'none'; script-src 'none'\"></head><body><p>hi</p></body></html>"
    )
    served = with_live_reload(built, 7)
    assert served.count(b"<script") == 1
    assert b'data-build="7"></script></body>' in served
    assert b"script-src 'self'" in served and b"connect-src 'self'" in served
    assert b"script-src 'none'" not in served
    # A page without a body element still gets the script, at the end.
    assert with_live_reload(b"<p>bare</p>", 1).endswith(b"</script>")


def test_serve_follows_a_changed_output_folder(tmp_path: Path) -> None:
    import urllib.request

    from reportgen.config import Config
    from reportgen.readers import Source

    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n{"task": "b", "passed": false}\n')
    configs = [Config(output=tmp_path / "site", title="First", result_sets=[Source(runs)])]
    log = io.StringIO()
    preview = PreviewServer(lambda: configs[-1], 0, log)
    preview.start()
    try:
        with urllib.request.urlopen(preview.url) as answer:
            assert "<h1>First</h1>" in answer.read().decode()
        # The config now names another folder (and a new title): that folder is served.
        configs.append(
            Config(output=tmp_path / "site2", title="Second", result_sets=[Source(runs)])
        )
        runs.write_text(runs.read_text() + '{"task": "c", "passed": true}\n')
        assert preview.check_once()
        with urllib.request.urlopen(preview.url) as answer:
            assert "<h1>Second</h1>" in answer.read().decode()
        assert f"serving {tmp_path / 'site2'} now" in log.getvalue()
    finally:
        preview.stop()
