"""`reportgen serve` in a real browser: open pages reload after a rebuild, show a
failed build's located error over the last good page, and recover once fixed.
The built site on disk never carries the live-reload script."""

from __future__ import annotations

import io
import re
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

from reportgen.build import build
from reportgen.config import Config, load_config
from reportgen.errors import UserError
from reportgen.readers import Source
from reportgen.serve import LIVE_PREFIX, PreviewServer, allow_live_reload, with_live_reload

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


@pytest.mark.slow
def test_an_overview_edit_reloads_the_open_page(
    preview: PreviewServer, project: Path, page: Page, tmp_path: Path
) -> None:
    # Inside `serve`, an edit of index.html alone renders that page again and keeps
    # every other; a template error still shows with its place.
    page.goto(preview.url + "index.html")
    expect(page.locator("h1")).to_be_visible()
    index = project / "templates" / "index.html"
    original = (ROOT / "templates" / "index.html").read_text()
    index.write_text(original.replace("</h1>", "</h1><p>Saved once.</p>", 1))
    expect(page.locator("main")).to_contain_text("Saved once.", timeout=WAIT_MS)
    counted = "<p>{{ report.sets | length }} sets, saved twice.</p>"
    index.write_text(original.replace("</h1>", "</h1>" + counted, 1))
    expect(page.locator("main")).to_contain_text("4 sets, saved twice.", timeout=WAIT_MS)
    log = preview.log.getvalue()  # type: ignore[attr-defined]
    assert "unchanged pages" in log.splitlines()[-1]

    index.write_text(original.replace("</h1>", "</h1>{{ report.sets | length }</p>", 1))
    overlay = page.locator("#reportgen-build-error")
    expect(overlay).to_contain_text("index.html:", timeout=WAIT_MS)
    index.write_text(original.replace("</h1>", "</h1><p>Fixed.</p>", 1))
    expect(overlay).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator("main")).to_contain_text("Fixed.")

    clean = load_config(project / "reportgen.yaml")
    clean.output = tmp_path / "clean"
    build(clean, use_cache=False)
    assert _tree(project / "site") == _tree(clean.output)


def _tree(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


ORIGIN = "http://127.0.0.1:8000"
LIVE = f"{ORIGIN}/__reportgen__/live.js"
STATE = f"{ORIGIN}/__reportgen__/state"


def test_served_pages_get_the_script_and_a_policy_that_allows_only_it() -> None:
    built = (
        b'<html><head><meta http-equiv="Content-Security-Policy" content="default-src '
        b"'none'; script-src 'none'\"></head><body><p>hi</p></body></html>"
    )
    served = with_live_reload(built, 7, ORIGIN)
    assert served.count(b"<script") == 1
    assert re.search(rb'<script src="/__reportgen__/live.js" nonce="[^"]+" data-build="7">', served)
    assert served.endswith(b"</script></body></html>")
    policy = f"default-src 'none'; script-src {LIVE}; connect-src {STATE}"
    assert f'content="{policy}"'.encode() in served
    # A page without a body gets the script at the end.
    assert with_live_reload(b"<p>bare</p>", 1, ORIGIN).endswith(b"</script>")


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # The site's pages, and its calculator (which runs its own script).
        (
            "default-src 'none'; script-src 'none'",
            "default-src 'none'; script-src L; connect-src S",
        ),
        (
            "default-src 'none'; script-src 'self'",
            "default-src 'none'; script-src 'self' L; connect-src S",
        ),
        # Written by a theme: only default-src; connect-src 'none'; no limit at all.
        ("default-src 'self'", "default-src 'self'; script-src 'self' L; connect-src 'self' S"),
        ("script-src 'none'; connect-src 'none'", "script-src L; connect-src S"),
        ("img-src 'self'", "img-src 'self'"),
        ("script-src 'none'; script-src *", "script-src L"),  # the first one counts
        # A URL, not a nonce: a nonce would switch off the page's own 'unsafe-inline'.
        ("script-src 'self' 'unsafe-inline'", "script-src 'self' 'unsafe-inline' L"),
        # 'strict-dynamic' ignores URLs: there the script's nonce is what counts.
        (
            "script-src 'strict-dynamic' 'nonce-a'",
            "script-src 'strict-dynamic' 'nonce-a' 'nonce-n0'",
        ),
        # <script> elements follow script-src-elem where there is one.
        ("script-src-elem https://cdn.example", "script-src-elem https://cdn.example L"),
        # Only ASCII whitespace parts words: with a no-break space it is one unknown word.
        (
            "default-src 'none'; script-src\u00a0https://cdn.example",
            "default-src 'none'; script-src\u00a0https://cdn.example; script-src L; connect-src S",
        ),
    ],
)
def test_the_policy_gains_only_the_live_script_and_its_state_url(
    policy: str, expected: str
) -> None:
    allowed = allow_live_reload(policy, ORIGIN, "n0")
    assert allowed == expected.replace("L", LIVE).replace("S", STATE)


def test_a_policy_written_another_way_is_still_found_and_text_is_not_a_policy() -> None:
    # Attributes in another order, single quotes, other case: still the policy.
    built = (
        b"<head><META content='default-src &#39;none&#39;' HTTP-EQUIV='Content-Security-Policy'>"
        b'<meta name="description" content="http-equiv=Content-Security-Policy here">'
        b'<meta data-content="x" name="a>b" content="script-src \'none\'"></head><body>'
    )
    served = with_live_reload(built, 1, ORIGIN)
    policy = f"default-src &#39;none&#39;; script-src {LIVE}; connect-src {STATE}"
    assert f'<META content="{policy.replace("&#39;", chr(39))}"'.encode() in served
    # Text that merely looks like a policy, in another tag, is left as it was.
    assert b'content="http-equiv=Content-Security-Policy here">' in served
    assert b'<meta data-content="x" name="a>b" content="script-src \'none\'">' in served


@pytest.mark.slow
def test_serve_follows_a_changed_output_folder(tmp_path: Path) -> None:
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


def _get(url: str, host: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture
def small(tmp_path: Path) -> Iterator[tuple[PreviewServer, list[Config], Path]]:
    """A preview of a two-task file, its configs (the last one is loaded) and the file."""
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n{"task": "b", "passed": false}\n')
    configs = [Config(output=tmp_path / "site", title="First", result_sets=[Source(runs)])]
    preview = PreviewServer(lambda: configs[-1], 0, io.StringIO())
    preview.start()
    yield preview, configs, runs
    preview.stop()


def test_only_this_machine_by_name_is_answered(
    small: tuple[PreviewServer, list[Config], Path],
) -> None:
    preview = small[0]
    port = preview.port
    assert _get(preview.url)[0] == 200
    with urllib.request.urlopen(preview.url + "report.json") as answer:
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert _get(preview.url, f"localhost:{port}")[0] == 200
    # A page of another site whose name was pointed at 127.0.0.1 (DNS rebinding).
    for path in ("", "report.json", "__reportgen__/state"):
        status, body = _get(preview.url + path, f"attacker.example:{port}")
        assert status == 403 and "reliability" not in body
    assert _get(preview.url, f"127.0.0.1:{port + 1}")[0] == 403


def test_folders_are_not_listed_and_files_are_not_folders(
    small: tuple[PreviewServer, list[Config], Path],
) -> None:
    preview = small[0]
    for path in ("assets/", "sets/", "index.html/", "report.json/"):
        status, body = _get(preview.url + path)
        assert status == 404 and "Directory listing" not in body, path
    assert _get(preview.url + "sets")[0] == 404  # redirected to sets/, then 404


@pytest.mark.slow
def test_a_save_during_a_rebuild_is_built_after_it(
    small: tuple[PreviewServer, list[Config], Path],
) -> None:
    preview, _, runs = small
    build_once = preview._build

    def build_then_save() -> None:
        build_once()
        runs.write_text(runs.read_text() + '{"task": "late", "passed": true}\n')

    preview._build = build_then_save  # type: ignore[method-assign]
    runs.write_text(runs.read_text() + '{"task": "c", "passed": true}\n')
    assert preview.check_once()
    preview._build = build_once  # type: ignore[method-assign]
    assert preview.check_once()  # the save made while the first rebuild ran
    assert '"late"' in (preview.served / "report.json").read_text()
    assert not preview.check_once()


@pytest.mark.slow
def test_the_history_file_is_watched(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n{"task": "b", "passed": false}\n')
    history = tmp_path / "history.jsonl"
    config = Config(output=tmp_path / "site", result_sets=[Source(runs)], history=history)
    config.label = "now"
    preview = PreviewServer(lambda: config, 0, io.StringIO())
    preview.start()
    try:
        history.write_text((preview.served / "history.jsonl").read_text())
        assert preview.check_once()
    finally:
        preview.stop()


def test_a_bug_or_a_failing_new_folder_does_not_end_or_strand_the_preview(
    small: tuple[PreviewServer, list[Config], Path], tmp_path: Path
) -> None:
    preview, configs, runs = small
    build_once = preview._build

    def crash() -> None:
        raise RuntimeError("a bug")

    preview._build = crash  # type: ignore[method-assign]
    runs.write_text(runs.read_text() + '{"task": "c", "passed": true}\n')
    assert preview.check_once()
    assert preview.problems and "bug in reportgen" in preview.problems[0]
    assert _get(preview.url)[0] == 200  # the last good site, still served
    preview._build = build_once  # type: ignore[method-assign]
    # `output:` changes while the build fails; once it works, that folder is served.
    missing = Source(tmp_path / "missing.jsonl")
    configs.append(Config(output=tmp_path / "site3", title="Third", result_sets=[missing]))
    runs.write_text(runs.read_text() + '{"task": "d", "passed": true}\n')
    assert preview.check_once() and preview.problems
    assert not preview.check_once()  # nothing changed since: not built again
    missing.path.write_text(runs.read_text())  # the file the config names, now there
    assert preview.check_once() and not preview.problems
    assert "<h1>Third</h1>" in _get(preview.url)[1]


@pytest.mark.slow
def test_a_site_deleted_by_hand_is_built_again(
    small: tuple[PreviewServer, list[Config], Path],
) -> None:
    preview = small[0]
    shutil.rmtree(preview.served)
    assert preview.check_once()
    assert _get(preview.url)[0] == 200
    assert not preview.check_once()


@pytest.mark.slow
def test_a_first_build_that_fails_serves_the_site_already_there(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n{"task": "b", "passed": false}\n')
    config = Config(output=tmp_path / "site", title="Good", result_sets=[Source(runs)])
    PreviewServer(lambda: config, 0, io.StringIO()).server.server_close()  # a built site
    runs.write_text('{"task": "a", "passed": "maybe"}\n')
    preview = PreviewServer(lambda: config, 0, io.StringIO())
    preview.start()
    try:
        assert preview.problems and "runs.jsonl:1" in preview.problems[0]
        assert "<h1>Good</h1>" in _get(preview.url)[1]
        runs.write_text('{"task": "a", "passed": true}\n{"task": "c", "passed": true}\n')
        assert preview.check_once() and not preview.problems
    finally:
        preview.stop()
    # Without a site to fall back on, the error ends the command as before.
    runs.write_text('{"task": "a", "passed": "maybe"}\n')
    elsewhere = Config(output=tmp_path / "other", result_sets=[Source(runs)])
    with pytest.raises(UserError):
        PreviewServer(lambda: elsewhere, 0, io.StringIO())


@pytest.mark.slow
def test_a_history_kept_in_the_site_it_extends_is_not_an_edit(tmp_path: Path) -> None:
    # history: site/history.jsonl, the build's own output: its rewrite by each build
    # must not count as a change, or serve rebuilds (and the history grows) for ever.
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n{"task": "b", "passed": false}\n')
    site = tmp_path / "site"
    config = Config(output=site, result_sets=[Source(runs)], history=site / "history.jsonl")
    preview = PreviewServer(lambda: config, 0, io.StringIO())
    preview.start()
    try:
        entries = len((site / "history.jsonl").read_text().splitlines())
        assert not preview.check_once() and not preview.check_once()
        runs.write_text(runs.read_text() + '{"task": "c", "passed": true}\n')
        assert preview.check_once() and not preview.check_once()
        # One rebuild for one edit (the label, here the commit, replaces its entry).
        assert len((site / "history.jsonl").read_text().splitlines()) == entries
    finally:
        preview.stop()
