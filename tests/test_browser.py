"""The built site in a real browser: Playwright for Python driving Debian's Chromium.

Every page of the example site is opened from file:// and over HTTP under a
sub-path (http://127.0.0.1:PORT/repo/, as GitHub Pages serves a project site):
no console errors, no failed requests, no request leaving the site, every
internal link resolves, every chart is visible. Then accessibility: axe-core on
each type of page, at desktop width and on a phone, in light and dark; every
link reached by keyboard; the run strip not relying on colour; phone widths
without sideways scrolling (with screenshots in test-artifacts/screenshots/);
and printing (with a PDF in test-artifacts/).

`make test` runs one page of each type over HTTP (test_each_type_of_page_opens_cleanly)
and 404.html from disk; everything else here is marked slow and runs in `make test-all`.

Needs Chromium (`apt-get install chromium`) and axe-core (`npm ci`, which both
make targets run). Without them these tests skip, except in CI (CI=true), where
they fail.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urlsplit
from urllib.request import url2pathname

import pytest

from reportgen.stats.plain import decimals

from .browser_util import ARTIFACTS, AXE, CHROMIUM_ARGS, find_chromium, serve, unavailable
from .conftest import build_example

try:
    from playwright.async_api import async_playwright
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright
except ImportError:  # reported by the chromium fixture: a skip, or in CI a failure
    sync_playwright = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from playwright.async_api import Browser as AsyncBrowser
    from playwright.sync_api import Browser, BrowserContext

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
PREFIX = "repo"
#: Tabs per site in the crawl of every page.
TABS = 4
#: Keep one renderer per tab from page to page: about a third faster, nothing else changes.
CRAWL_ARGS = ["--disable-features=RenderDocument,ProactivelySwapBrowsingInstance,BackForwardCache"]
#: Served for a path that does not exist, at depth, as a static host serves 404.html.
MISSING = "sets/no-such-set/tasks/no-such-task.html"
#: And for one at the site's top.
MISSING_AT_TOP = "no-such-page"
SCREENSHOTS = ARTIFACTS / "screenshots"


# ---------------------------------------------------------------- the sites


@dataclass(frozen=True)
class Site:
    """The site's folder and the URL of that folder in a browser (ending in /)."""

    mode: str
    folder: Path
    base: str

    def url(self, rel: str) -> str:
        return self.base + rel

    def inside(self, url: str) -> bool:
        return url.startswith(self.base)

    def html_pages(self) -> list[str]:
        return sorted(p.relative_to(self.folder).as_posix() for p in self.folder.rglob("*.html"))


@functools.cache
def typical_pages(folder: Path) -> dict[str, str]:
    """One page of each type: overview, result set, task, comparison and trend (when
    there are such pages), methodology, faq, 404 (at depth).

    The task page is the one with the most runs in its strip (and so the most links).
    """
    sets = sorted(p.parent for p in folder.glob("sets/*/index.html"))
    tasks = sorted(folder.glob("sets/*/tasks/*.html"))
    strip = re.compile(r'<ol class="strip".*?</ol>', re.S)
    runs = {p: "".join(strip.findall(p.read_text(encoding="utf-8"))).count("<li") for p in tasks}
    task = max(tasks, key=lambda p: runs[p])
    optional = {
        "comparison": sorted(folder.glob("compare/*.html")),
        "trend": sorted(folder.glob("sets/*/trend.html")),
    }
    return {
        "overview": "index.html",
        "result set": (sets[0] / "index.html").relative_to(folder).as_posix(),
        "task": task.relative_to(folder).as_posix(),
        **{
            kind: found[0].relative_to(folder).as_posix()
            for kind, found in optional.items()
            if found
        },
        "methodology": "methodology.html",
        "faq": "faq.html",
        "calculator": "calculator.html",
        "404": MISSING,
    }


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The example site built for /repo/ (its base_path) and served there.

    Built with base_path /repo/ as a project site would be: every other page uses
    relative links and is the same as in the default build, but 404.html, which
    is served for missing paths at any depth, links through the base path.
    """
    top = tmp_path_factory.mktemp("served")
    folder = build_example(top / PREFIX, base_path=f"/{PREFIX}/")
    with serve(top, PREFIX) as origin:
        yield Site("http", folder, f"{origin}/{PREFIX}/")


@pytest.fixture(scope="module")
def local(example_site: Path) -> Site:
    return Site("file", example_site, example_site.resolve().as_uri() + "/")


#: A generated set of 500 tasks: the forest plot draws the 60 least reliable.
LARGE_TASKS = 500


@pytest.fixture(scope="module")
def large_set(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """A site of one 500-task set whose names run from short to long."""
    import json

    from reportgen.cli import main

    top = tmp_path_factory.mktemp("large-set")
    names = ["t", "task-with-a-name-of-some-length", "category/a-very-long-task-name-" + "x" * 40]
    lines = [
        json.dumps(
            {
                "model": "agent",
                "suite": "large",
                "task": f"{names[t % 3]}-{t:03d}",
                "run": r,
                "passed": (t * 7 + r * 3) % 11 < t % 12,
            }
        )
        for t in range(LARGE_TASKS)
        for r in range(5)
    ]
    results = top / "runs.jsonl"
    results.write_text("\n".join(lines) + "\n")
    folder = top / "site"
    command = ["build", str(results), "-o", str(folder), "--task-pages", "none", "--no-cache"]
    assert main(command) == 0
    return Site("file", folder, folder.resolve().as_uri() + "/")


@pytest.fixture(scope="module")
def cost_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """A site of the real τ²-bench results with costs and times (three models)."""
    from reportgen.cli import main

    from .conftest import ROOT

    folder = tmp_path_factory.mktemp("costs") / "site"
    files = sorted((ROOT / "tests" / "fixtures" / "real" / "tau2-costs").glob("*.json"))
    assert len(files) == 3
    assert main(["build", *map(str, files), "-o", str(folder), "--no-cache"]) == 0
    return Site("file", folder, folder.resolve().as_uri() + "/")


@pytest.fixture(scope="module")
def profile_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """A generated agent run at baseline and under a perturbation (a `condition`), every
    run stating its confidence and cost: the whole profile, robustness and the
    reliability diagram."""
    import random

    from reportgen.cli import main

    top = tmp_path_factory.mktemp("profile")
    rng = random.Random(41)
    lines = []
    for t in range(40):
        rate = rng.random()
        for condition, scale in (("baseline", 1.0), ("typos", 0.7)):
            for r in range(5):
                stated = min(1.0, max(0.0, rate + rng.gauss(0, 0.2)))
                record = {
                    "model": "agent",
                    "suite": "desk",
                    "condition": condition,
                    "task": f"t{t:02d}",
                    "run": r,
                    "passed": rng.random() < rate * scale,
                    "confidence": round(stated, 2),
                    "cost": round(rng.uniform(0.01, 0.05), 4),
                }
                lines.append(json.dumps(record))
    results = top / "runs.jsonl"
    results.write_text("\n".join(lines) + "\n")
    folder = top / "site"
    command = ["build", str(results), "-o", str(folder), "--task-pages", "none", "--no-cache"]
    assert main(command) == 0
    return Site("file", folder, folder.resolve().as_uri() + "/")


# ---------------------------------------------------------------- the browser


@pytest.fixture(scope="module")
def chromium() -> str:
    path = find_chromium()
    if path is None:
        unavailable("Chromium not found (apt-get install chromium, or set REPORTGEN_CHROMIUM)")
    if sync_playwright is None:
        unavailable("the playwright package is not installed (pip install -e '.[test]')")
    return path


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        except PlaywrightError as error:
            unavailable(f"Chromium at {chromium} does not start: {error.message.splitlines()[0]}")
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def axe() -> Path:
    if not AXE.is_file():
        unavailable(f"axe-core not installed ({AXE} missing): run `npm ci` (make test does)")
    return AXE


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport=DESKTOP)
    yield ctx
    ctx.close()


# ---------------------------------------------------------------- every page, both ways

PAGE_FACTS = """() => ({
  links: [...document.querySelectorAll('a[href]')].map(a => a.href),
  ids: [...document.querySelectorAll('[id]')].map(e => e.id),
  charts: [...document.querySelectorAll('figure.chart')].map(figure => {
    // Each chart is drawn twice (wide, narrow): the one the page's width shows.
    const svg = [...figure.querySelectorAll('svg')].find(s => s.checkVisibility())
      || figure.querySelector('svg');
    if (!svg) return {id: figure.id, visible: false, width: 0, height: 0};
    const box = svg.getBoundingClientRect();
    const visible = svg.checkVisibility({
      opacityProperty: true, visibilityProperty: true, checkOpacity: true, checkVisibilityCSS: true,
    });
    return {id: figure.id, visible, width: box.width, height: box.height};
  }),
  styled: getComputedStyle(document.body).marginTop === '0px',
  // Without an icon link a browser asks for /favicon.ico, outside a project site.
  icon: document.querySelector('link[rel~="icon"]') !== null,
  // Table regions whose table is wider than they are (they scroll sideways).
  wide: [...document.querySelectorAll('.table-wrap')]
    .filter(region => region.scrollWidth > region.clientWidth + 1)
    .map(region => region.getAttribute('aria-labelledby') || region.getAttribute('aria-label')),
  strip: (() => {
    const strip = document.querySelector('ol.strip');
    if (!strip) return null;
    // The text of `node` without the elements matching `drop`.
    const text = (node, drop) => {
      const copy = node.cloneNode(true);
      copy.querySelectorAll(drop).forEach(e => e.remove());
      return copy.textContent.replace(/\\s+/g, ' ').trim();
    };
    const named = li => [li, ...li.querySelectorAll('*')]
      .flatMap(e => [e.getAttribute('aria-label'), e.getAttribute('title')]).filter(Boolean);
    return {
      label: strip.getAttribute('aria-label') || '',
      runs: [...strip.children].map(li => ({
        classes: li.className,
        seen: text(li, '.sr'),
        heard: [text(li, '[aria-hidden="true"]'), ...named(li)].join(' '),
        srHidden: [...li.querySelectorAll('.sr')].every(sr => {
          const box = sr.getBoundingClientRect();
          return box.width <= 1 && box.height <= 1;
        }),
      })),
    };
  })(),
})"""


@dataclass
class Visit:
    rel: str
    url: str
    links: list[str]
    ids: set[str]
    charts: list[dict[str, Any]]
    styled: bool
    strip: dict[str, Any] | None
    wide: list[str] = field(default_factory=list)
    icon: bool = True


@dataclass
class Crawl:
    site: Site
    visits: dict[str, Visit] = field(default_factory=dict)  # by URL
    requests: int = 0
    console: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    charts: list[str] = field(default_factory=list)


def crawl_site(chromium: str, site: Site, pages: list[tuple[str, int]]) -> Crawl:
    """Open every (page, expected HTTP status); record everything that goes wrong.

    A page load is mostly waiting, so a few tabs share the pages, with Playwright's
    async API; call it in a thread of its own, as the sync API that the other tests
    use cannot share a thread with an asyncio loop.
    """

    async def run() -> Crawl:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=chromium, args=CHROMIUM_ARGS + CRAWL_ARGS
            )
            try:
                return await _crawl(browser, site, pages)
            finally:
                await browser.close()

    return asyncio.run(run())


async def _crawl(browser: AsyncBrowser, site: Site, pages: list[tuple[str, int]]) -> Crawl:
    result = Crawl(site)
    todo = list(reversed(pages))
    context = await browser.new_context(viewport=DESKTOP)

    def elsewhere(url: str) -> bool:
        return not site.inside(url) and not url.startswith("data:")

    # Nothing may leave the site: such requests are recorded (on_request) and aborted.
    # (A pattern rather than a function, so other requests are not stopped on their way.)
    outside_site = re.compile(rf"^(?!{re.escape(site.base)}|data:)")
    await context.route(outside_site, lambda route: route.abort("blockedbyclient"))

    async def tab() -> None:
        page = await context.new_page()
        now: dict[str, Any] = {"page": "", "status": 200}

        def note(kind: list[str]) -> Callable[[str], None]:
            return lambda text: kind.append(f"{now['page']}: {text}")

        console, failed, outside = note(result.console), note(result.failed), note(result.outside)

        def on_request(request: Any) -> None:
            result.requests += 1
            if elsewhere(request.url):
                outside(request.url)

        def on_response(response: Any) -> None:
            expected = now["status"] if response.request.is_navigation_request() else 200
            if site.mode == "http" and response.status not in (expected, 304):
                failed(f"{response.url} answered {response.status}, expected {expected}")

        def on_console(message: Any) -> None:
            if message.type != "error":
                return
            # Chromium logs the deliberate 404 of the missing page itself as an error.
            expected = f"the server responded with a status of {now['status']}"
            at = message.location.get("url")
            if now["status"] != 200 and expected in message.text and at == site.url(now["page"]):
                return
            console(f"{message.text} (at {at}:{message.location.get('lineNumber')})")

        page.on("console", on_console)
        page.on("pageerror", lambda error: console(f"uncaught {error}"))
        page.on("request", on_request)

        def on_failed(request: Any) -> None:
            # Chromium fetches the icon after the page has loaded, at low priority, so the
            # crawl's next navigation can cancel it; when it does arrive it must be a 200.
            if request.url == site.url("assets/favicon.svg") and request.failure == (
                "net::ERR_ABORTED"
            ):
                return
            failed(f"{request.url}: {request.failure}")

        page.on("requestfailed", on_failed)
        page.on("response", on_response)
        while todo:
            rel, status = todo.pop()
            now["page"], now["status"] = rel, status
            url = site.url(rel)
            await page.goto(url, wait_until="load")
            facts = await page.evaluate(PAGE_FACTS)
            result.visits[url] = Visit(
                rel,
                url,
                facts["links"],
                set(facts["ids"]),
                facts["charts"],
                facts["styled"],
                facts["strip"],
                facts["wide"],
                facts["icon"],
            )
            result.charts += [
                f"{rel}: chart {chart['id']} not visible: {chart}"
                for chart in facts["charts"]
                if not (chart["visible"] and chart["width"] >= 1 and chart["height"] >= 1)
            ]
        await page.close()

    try:
        await asyncio.gather(*(tab() for _ in range(TABS)))
    finally:
        await context.close()
    return result


@pytest.fixture(scope="module")
def crawls(
    request: pytest.FixtureRequest, chromium: str, browser: Browser, local: Site
) -> dict[str, Crawl]:
    # 404.html is served by a web server for a missing path at any depth, so its
    # link goes through the base path (/ by default) and cannot work from file://;
    # it is crawled over HTTP, as itself and for missing paths at the top and at
    # depth. From disk it must still be styled: test_404_page_from_disk_is_styled_*.
    with ThreadPoolExecutor(max_workers=2) as pool:
        pages = [(rel, 200) for rel in local.html_pages() if rel != "404.html"]
        file = pool.submit(crawl_site, chromium, local, pages)
        served: Site = request.getfixturevalue("served")  # built while that crawl runs
        missing = [(MISSING, 404), (MISSING_AT_TOP, 404)]
        pages = [(rel, 200) for rel in served.html_pages()] + missing
        http = pool.submit(crawl_site, chromium, served, pages)
        return {"file": file.result(), "http": http.result()}


@pytest.fixture(params=["file", "http"])
def crawl(request: pytest.FixtureRequest, crawls: dict[str, Crawl]) -> Crawl:
    return crawls[request.param]


@pytest.fixture(scope="module")
def smoke(chromium: str, served: Site) -> Crawl:
    """One page of each type over HTTP (the missing page answered by 404.html)."""
    kinds = typical_pages(served.folder)
    return crawl_site(
        chromium, served, [(rel, 404 if rel == MISSING else 200) for rel in kinds.values()]
    )


#: Every type of page the example has: overview, result set, task, comparison, trend,
#: methodology, FAQ, calculator and 404.
PAGE_KINDS = [
    *("overview", "result set", "task", "comparison", "trend", "methodology", "faq"),
    *("calculator", "404"),
]


@pytest.mark.parametrize("kind", PAGE_KINDS)
def test_each_type_of_page_opens_cleanly(smoke: Crawl, kind: str) -> None:
    """make test's browser check, one page per type: the crawl of every page below
    (marked slow) asks the same of each of the site's pages, from disk and over HTTP."""
    rel = typical_pages(smoke.site.folder)[kind]
    [visit] = [v for v in smoke.visits.values() if v.rel == rel]
    assert visit.styled, f"stylesheet not applied on {rel}"
    assert visit.icon, f"no icon link on {rel}: a browser asks for /favicon.ico"
    if kind in ("overview", "result set"):
        assert visit.charts, f"no chart on {rel}"
    everything = smoke.console + smoke.failed + smoke.outside + smoke.charts
    problems = [problem for problem in everything if problem.startswith(f"{rel}: ")]
    assert not problems, _listing(problems)


@pytest.mark.slow
def test_404_page_served_asks_for_nothing_that_fails(context: BrowserContext, served: Site) -> None:
    """404.html served for a missing path, at the top and at depth, and as itself: the
    server is asked for the page alone (its icon and style are inside it), and the
    console has no error but the page's own 404.

    The server's log is the witness: Chromium's icon request shows in no page event, and
    none is made at all while requests are routed, as the crawl's are. index.html shows
    that the log sees icon requests: it links its icon, which is asked for and found."""
    log: list[tuple[str, int]] = []
    top = f"/{PREFIX}/"
    with serve(served.folder.parent, PREFIX, requests=log) as origin:
        page = context.new_page()
        now = {"url": "", "status": 200}
        problems: list[str] = []

        def on_console(message: Any) -> None:
            at = message.location.get("url")
            # Chromium logs the deliberate 404 of the missing page itself as an error.
            if message.type != "error" or (now["status"] == 404 and at == now["url"]):
                return
            problems.append(f"{message.text} (at {at})")

        page.on("console", on_console)
        page.on("pageerror", lambda error: problems.append(f"uncaught {error}"))
        page.on("requestfailed", lambda r: problems.append(f"{r.url}: {r.failure}"))
        visits = [("index.html", 200), ("404.html", 200)]
        visits += [(MISSING_AT_TOP, 404), (MISSING, 404), ("sets/x/tasks/nothing.html", 404)]
        asked = {}
        for rel, status in visits:
            del log[:]
            now.update(url=origin + top + rel, status=status)
            page.goto(now["url"], wait_until="load")
            page.wait_for_load_state("networkidle")  # the icon is asked for after the load
            asked[rel] = list(log)
    assert not problems, _listing(problems)
    assert (top + "assets/favicon.svg", 200) in asked["index.html"], asked
    for rel, status in visits[1:]:
        assert asked[rel] == [(top + rel, status)], asked


FROM_DISK = """() => ({
  font: getComputedStyle(document.body).fontFamily,
  margin: getComputedStyle(document.body).marginTop,
  width: getComputedStyle(document.querySelector('main')).maxWidth,
  icon: (document.querySelector('link[rel~="icon"]') || {}).href || '',
})"""


def test_404_page_from_disk_is_styled_and_requests_nothing(
    context: BrowserContext, local: Site
) -> None:
    """404.html opened from disk: its stylesheet and icon are in the page, so it is
    styled and asks for nothing (a link through the base path would fail there)."""
    page = context.new_page()
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("requestfailed", lambda r: problems.append(f"{r.url}: {r.failure}"))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"uncaught {error}"))
    url = local.url("404.html")
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")  # the icon is asked for after the load
    shown = page.evaluate(FROM_DISK)
    assert "system-ui" in shown["font"], shown
    assert (shown["margin"], shown["width"]) == ("0px", "1152px"), shown  # body, main: 72rem
    assert shown["icon"].startswith("data:image/svg+xml,"), shown
    assert [r for r in requests if not r.startswith("data:")] == [url]
    assert not problems, problems


def _listing(problems: list[str], limit: int = 20) -> str:
    more = f"\n... and {len(problems) - limit} more" if len(problems) > limit else ""
    return "\n".join(problems[:limit]) + more


@pytest.mark.slow
def test_every_page_was_opened_and_styled(crawl: Crawl) -> None:
    pages = set(crawl.site.html_pages())
    missing = {MISSING, MISSING_AT_TOP}
    expected = pages - {"404.html"} if crawl.site.mode == "file" else pages | missing
    assert {v.rel for v in crawl.visits.values()} == expected
    assert len(expected) > 100
    unstyled = [v.rel for v in crawl.visits.values() if not v.styled]
    assert not unstyled, f"{crawl.site.mode}: stylesheet not applied on {unstyled}"


@pytest.mark.slow
def test_every_page_links_its_icon(crawl: Crawl) -> None:
    """Served, a page without an icon link makes the browser ask for /favicon.ico, which
    is outside a project site's folder (and a failed request where nothing is there).
    The crawl cannot see that request (Chromium asks for no icon while Playwright routes
    requests), so it checks the link; test_404_page_served_asks_for_nothing_that_fails
    watches the server."""
    without = [v.rel for v in crawl.visits.values() if not v.icon]
    assert not without, f"{crawl.site.mode}: no icon link on {_listing(without)}"


@pytest.mark.slow
def test_tables_fit_a_desktop_window(crawl: Crawl) -> None:
    # At 1280 pixels no table of a page should need sideways scrolling (a phone may).
    wide = [f"{v.rel}: {region}" for v in crawl.visits.values() for region in v.wide]
    assert not wide, _listing(wide)


@pytest.mark.slow
def test_no_console_errors_and_no_failed_requests(crawl: Crawl) -> None:
    problems = crawl.console + crawl.failed
    assert not problems, f"{crawl.site.mode}:\n{_listing(problems)}"


@pytest.mark.slow
def test_no_request_leaves_the_site(crawl: Crawl) -> None:
    assert crawl.requests >= 2 * len(crawl.visits)  # each page and at least its stylesheet
    assert not crawl.outside, f"requests outside {crawl.site.base}:\n{_listing(crawl.outside)}"


def _target_exists(site: Site, url: str) -> bool:
    if site.mode == "file":
        path = Path(url2pathname(urlsplit(url).path))
        return path.is_file() and site.folder.resolve() in path.resolve().parents
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10) as r:
            return bool(r.status == 200)
    except urllib.error.HTTPError:
        return False


@pytest.mark.slow
def test_every_internal_link_resolves(crawl: Crawl) -> None:
    site = crawl.site
    host = urlsplit(site.base).netloc
    targets: dict[str, str] = {}  # each target once, with one page that links to it
    fragments: dict[tuple[str, str], str] = {}
    problems = []
    for visit in crawl.visits.values():
        for link in visit.links:
            parts = urlsplit(link)
            if parts.scheme == "mailto" or (
                parts.scheme in ("http", "https") and parts.netloc != host
            ):
                continue  # another site (run transcripts): not ours to check
            if parts.scheme not in ("file", "http"):
                problems.append(f"{visit.rel}: link {link}")
                continue
            target, fragment = urldefrag(link)
            if not site.inside(target):
                problems.append(f"{visit.rel}: link leaves the site: {link}")
                continue
            targets.setdefault(target, visit.rel)
            if fragment:
                fragments.setdefault((target, fragment), visit.rel)
    problems += [
        f"{source}: broken link {target}"
        for target, source in sorted(targets.items())
        if not _target_exists(site, target)
    ]
    for (target, fragment), source in sorted(fragments.items()):
        visited = crawl.visits.get(target)
        if visited is not None and fragment not in visited.ids:
            problems.append(f"{source}: no id {fragment!r} in {visited.rel}")
    assert len(targets) > 100
    assert not problems, f"{site.mode}:\n{_listing(problems)}"


@pytest.mark.slow
def test_every_chart_is_visible(crawl: Crawl) -> None:
    with_charts = {v.rel for v in crawl.visits.values() if v.charts}
    overview = re.compile(r"(sets/[^/]+/)?index\.html")
    overviews = {v.rel for v in crawl.visits.values() if overview.fullmatch(v.rel)}
    assert overviews <= with_charts, f"pages without charts: {sorted(overviews - with_charts)}"
    assert not crawl.charts, "\n".join(crawl.charts)


SYMBOLS = {"pass": "✓", "fail": "✗", "excl": "–"}
WORDS = {"pass": "passed", "fail": "failed", "excl": "not evaluated"}
#: Class names that mark a run's outcome (the template's; the colour comes from them).
CLASSES = {"pass": {"pass", "p"}, "fail": {"fail", "f"}, "excl": {"excl", "x"}}


def outcome_of(classes: str) -> str | None:
    return next((o for o, names in CLASSES.items() if names & set(classes.split())), None)


def says(heard: str, outcome: str, label: str) -> bool:
    """Whether `heard` gives `outcome` in words, or as a symbol the strip's label spells out."""
    symbol, word = SYMBOLS[outcome], WORDS[outcome]
    return word in heard or (symbol in heard and f"{symbol} {word}" in label)


@pytest.mark.slow
def test_run_strip_does_not_rely_on_colour(crawl: Crawl) -> None:
    """Each run shows its symbol, and a screen reader gets its outcome: never colour alone."""
    problems = []
    tasks = [v for v in crawl.visits.values() if "/tasks/" in v.rel and v.rel != MISSING]
    assert tasks
    for visit in tasks:
        if not visit.strip or not visit.strip["runs"]:
            problems.append(f"{visit.rel}: no run strip")
            continue
        for number, run in enumerate(visit.strip["runs"], start=1):
            outcome = outcome_of(run["classes"])
            if outcome is None:
                problems.append(f"{visit.rel}: run {number} has classes {run['classes']!r}")
            elif run["seen"] != SYMBOLS[outcome]:
                problems.append(f"{visit.rel}: run {number} ({outcome}) shows {run['seen']!r}")
            elif not says(run["heard"], outcome, visit.strip["label"]) or not run["srHidden"]:
                problems.append(f"{visit.rel}: run {number} ({outcome}) reads {run['heard']!r}")
    assert not problems, _listing(problems)


# ---------------------------------------------------------------- accessibility

AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
    targets: v.nodes.map(n => n.target.join(' ')),
    summary: (v.nodes[0] || {}).failureSummary || '',
  }));
}"""


def describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for v in violations:
        targets = ", ".join(v["targets"][:8]) + (" ..." if len(v["targets"]) > 8 else "")
        lines.append(f"[{v['impact']}] {v['id']}: {v['help']} ({v['helpUrl']})")
        lines.append(f"    {len(v['targets'])} nodes: {targets}")
        lines.append("    " + v["summary"].replace("\n", "\n    "))
    return "\n".join(lines)


@pytest.fixture(scope="module")
def axe_contexts(browser: Browser) -> Iterator[dict[str, BrowserContext]]:
    # bypass_csp: the pages' CSP (script-src 'none') would block the injected axe script.
    contexts = {
        "light": browser.new_context(viewport=DESKTOP, bypass_csp=True, color_scheme="light"),
        "dark": browser.new_context(viewport=DESKTOP, bypass_csp=True, color_scheme="dark"),
        "phone, dark": browser.new_context(
            viewport=PHONE, is_mobile=True, bypass_csp=True, color_scheme="dark"
        ),
    }
    yield contexts
    for ctx in contexts.values():
        ctx.close()


#: Every page type at desktop width in light, and on a phone in dark (which checks the
#: dark colours too); the overview also at desktop width in dark.
AXE_CASES = [
    *((kind, "light") for kind in PAGE_KINDS),
    *((kind, "phone, dark") for kind in PAGE_KINDS),
    ("overview", "dark"),
]


def axe_page(
    contexts: dict[str, BrowserContext], view: str, url: str, axe: Path, before: str = ""
) -> list[dict[str, Any]]:
    """Serious and critical axe violations of `url` in `view` (a key of axe_contexts)."""
    page = contexts[view].new_page()
    try:
        page.goto(url)
        if before:
            page.evaluate(before)
        page.add_script_tag(path=str(axe))
        violations: list[dict[str, Any]] = page.evaluate(AXE_RUN)
    finally:
        page.close()
    return [v for v in violations if v["impact"] in ("serious", "critical")]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "view"), AXE_CASES)
def test_axe_finds_nothing_serious(
    axe: Path, axe_contexts: dict[str, BrowserContext], served: Site, kind: str, view: str
) -> None:
    """axe-core on each type of page: no violation of serious or critical impact."""
    pages = typical_pages(served.folder)
    if kind not in pages:
        pytest.skip(f"the example site has no {kind} page")
    url = served.url(pages[kind])
    serious = axe_page(axe_contexts, view, url, axe)
    assert not serious, f"{kind}, {view}:\n{describe(serious)}"


@pytest.mark.slow
def test_axe_with_every_details_open_on_a_phone(
    axe: Path, axe_contexts: dict[str, BrowserContext], served: Site
) -> None:
    """What a closed <details> holds (the numbers behind the curve chart) is checked too."""
    url = served.url(typical_pages(served.folder)["result set"])
    opened = "() => document.querySelectorAll('details').forEach(d => { d.open = true; })"
    serious = axe_page(axe_contexts, "phone, dark", url, axe, before=opened)
    assert not serious, describe(serious)


@pytest.mark.slow
def test_dark_scheme_changes_the_colours(context: BrowserContext, served: Site) -> None:
    page = context.new_page()
    colours = {}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
        page.goto(served.url("index.html"))
        colours[scheme] = page.evaluate(
            "() => [getComputedStyle(document.body).backgroundColor,"
            " getComputedStyle(document.body).color]"
        )
    assert colours["light"][0] != colours["dark"][0], colours
    assert colours["light"][1] != colours["dark"][1], colours


KEYBOARD_FOCUS = """() => {
  const e = document.activeElement;
  if (!e || !e.dataset || e.dataset.kb === undefined) return null;
  const s = getComputedStyle(e), r = e.getBoundingClientRect();
  return {i: Number(e.dataset.kb), outline: s.outlineStyle !== 'none' && s.outlineWidth !== '0px',
          onScreen: r.right > 0 && r.bottom > 0 && r.width > 0 && r.height > 0};
}"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["overview", "task"])
def test_keyboard_reaches_every_link(context: BrowserContext, served: Site, kind: str) -> None:
    page = context.new_page()
    page.goto(served.url(typical_pages(served.folder)[kind]))
    hrefs: list[str] = page.evaluate(
        "() => [...document.querySelectorAll('a[href]')]"
        ".map((a, i) => { a.dataset.kb = i; return a.getAttribute('href'); })"
    )
    reached: set[int] = set()
    unseen = []
    for _ in range(len(hrefs) + 25):  # every link, plus summaries and a wrap-around
        page.keyboard.press("Tab")
        focus = page.evaluate(KEYBOARD_FOCUS)
        if focus is None:
            continue
        reached.add(focus["i"])
        if not (focus["outline"] and focus["onScreen"]):
            unseen.append(f"{hrefs[focus['i']]}: {focus}")
        if len(reached) == len(hrefs):
            break
    missed = [href for i, href in enumerate(hrefs) if i not in reached]
    assert len(hrefs) > 5
    assert not missed, f"not reached by Tab: {missed}"
    assert not unseen, f"focus not visible on: {unseen}"


@pytest.mark.slow
def test_run_strip_reads_as_text(context: BrowserContext, served: Site) -> None:
    """In the accessibility tree each run says its outcome (the crawl checks the DOM)."""
    folder = served.folder
    with_links = typical_pages(folder)["task"]
    plain = [  # a task without transcript links, if there is one
        p.relative_to(folder).as_posix()
        for p in sorted(folder.glob("sets/*/tasks/*.html"))
        if '<ol class="strip"' in (text := p.read_text(encoding="utf-8"))
        and "transcript" not in text
    ][:1]
    page = context.new_page()
    for rel in [with_links, *plain]:
        page.goto(served.url(rel))
        strip = page.locator("ol.strip")
        outcomes = [
            outcome_of(c)
            for c in page.locator("ol.strip > li").evaluate_all(
                "all => all.map(li => li.className)"
            )
        ]
        head, *lines = strip.aria_snapshot().splitlines()
        label = re.fullmatch(r"""- '?list "(.+)"'?:""", head)
        assert label, f"{rel}: the strip is not a labelled list: {head}"
        urls = re.compile(r"(?m)^\s*- /url:.*$")  # a task's URL may hold any word
        items = re.split(r"(?m)^  - listitem\b", urls.sub("", "\n".join(lines)))[1:]
        assert len(items) == len(outcomes) > 0, f"{rel}: {len(items)} items in\n{lines}"
        wrong = [
            f"run {number} ({outcome}): {item.strip()!r}"
            for number, (outcome, item) in enumerate(zip(outcomes, items, strict=True), start=1)
            if outcome is None or not says(item, outcome, label[1])
        ]
        assert not wrong, f"{rel}: {wrong}"


@pytest.mark.slow
def test_phone_and_desktop_screenshots_without_sideways_scrolling(
    browser: Browser, served: Site, large_set: Site
) -> None:
    """Screenshots to look at (test-artifacts/screenshots/, at 1,280 and 390 px) of the
    overview, a set page of 40 and of 500 tasks, a task page and the calculator; and no
    page of the example scrolls sideways on a phone."""
    typical = typical_pages(served.folder)
    shown = {
        name: (served, typical[name]) for name in ("overview", "result set", "task", "calculator")
    }
    shown["result set of 500 tasks"] = (large_set, "sets/agent-large/index.html")
    folder = served.folder
    first_tasks = [min(p.parent.glob("tasks/*.html")) for p in folder.glob("sets/*/index.html")]
    narrow = sorted(
        {
            *typical.values(),
            *(p.relative_to(folder).as_posix() for p in folder.glob("sets/*/index.html")),
            *(p.relative_to(folder).as_posix() for p in first_tasks),
        }
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    overflowing = []
    for viewport, phone in ((DESKTOP, False), (PHONE, True)):
        ctx = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
        try:
            page = ctx.new_page()
            for name, (site, rel) in shown.items():
                page.goto(site.url(rel))
                shot = SCREENSHOTS / f"{name.replace(' ', '-')}-{viewport['width']}.png"
                page.screenshot(path=shot, full_page=True)
            for rel in narrow if phone else []:
                page.goto(served.url(rel))
                widths = page.evaluate(
                    "() => [document.documentElement.scrollWidth,"
                    " document.documentElement.clientWidth]"
                )
                if widths[0] > widths[1]:
                    overflowing.append(f"{rel}: scrollWidth {widths[0]} > {widths[1]}")
        finally:
            ctx.close()
    assert not overflowing, "scrolls sideways at 390 px:\n" + "\n".join(overflowing)


FORMULAS = """() => [...document.querySelectorAll('.prose pre')].map(pre => {
  const style = getComputedStyle(pre);
  const inner = pre.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  return {
    text: pre.textContent.slice(0, 40),
    lines: pre.textContent.replace(/\\n$/, '').split('\\n').length,
    shown: Math.round(inner / parseFloat(style.lineHeight)),
    scrolls: pre.scrollWidth > pre.clientWidth,
    right: pre.getBoundingClientRect().right,
    focusable: pre.tabIndex === 0,
  };
})"""


@pytest.mark.slow
def test_formulas_keep_their_lines_on_a_phone(browser: Browser, served: Site) -> None:
    """At 390 px a formula (a content page's code block) is not wrapped mid-line: each
    line stays one line, and a wide one scrolls inside its own box, which the keyboard
    can reach; the page itself does not scroll sideways."""
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        scrolling = 0
        for rel in ("methodology.html", "faq.html"):
            page.goto(served.url(rel))
            width = page.evaluate("() => document.documentElement.clientWidth")
            assert page.evaluate("() => document.documentElement.scrollWidth") <= width, rel
            for formula in page.evaluate(FORMULAS):
                assert formula["shown"] == formula["lines"], (rel, formula)
                assert formula["right"] <= width and formula["focusable"], (rel, formula)
                scrolling += formula["scrolls"]
        assert scrolling, "no formula is wider than a phone: the test shows nothing"
    finally:
        ctx.close()


CHARTS = """() => [...document.querySelectorAll('figure.chart')].map(figure => {
  const frame = figure.querySelector('.chart-svg');
  const style = getComputedStyle(frame);
  const column = frame.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const shown = [...frame.querySelectorAll('svg')].filter(svg => svg.checkVisibility());
  if (shown.length !== 1) return {id: figure.id, shown: shown.length};
  const svg = shown[0];
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  // Text a reader sees: Vega hides a label that would overlap another with opacity 0.
  const texts = [...svg.querySelectorAll('text')]
    .filter(t => t.textContent.trim() && t.checkVisibility({opacityProperty: true}))
    .map(t => ({text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize) * scale,
                box: t.getBoundingClientRect()}));
  const overlaps = [];
  texts.forEach((a, i) => texts.slice(i + 1).forEach(b => {
    const across = Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left);
    const down = Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top);
    if (across > 1 && down > 1) overlaps.push(`${a.text} / ${b.text}`);
  }));
  const smallest = texts.reduce((least, t) => t.size < least.size ? t : least, texts[0]);
  return {id: figure.id, shown: 1, column, width: box.width, texts: texts.length,
          smallest: smallest.size, smallestText: smallest.text, overlaps};
})"""


@pytest.mark.slow
def test_every_chart_fills_its_column_legibly(
    browser: Browser, served: Site, large_set: Site, cost_site: Site, profile_site: Site
) -> None:
    """Every chart of the example site and of a 500-task set, at 1,280 and 390 px: one
    of its two drawings shows, at least 90% of its column wide, its smallest text at
    least 11 px, no text over another; at 390 px the page does not scroll sideways."""
    example = [
        p.relative_to(served.folder).as_posix() for p in sorted(served.folder.rglob("*.html"))
    ]
    pages = [
        (served, rel)
        for rel in example
        if 'class="chart"' in (served.folder / rel).read_text(encoding="utf-8")
    ]
    pages.append((large_set, "sets/agent-large/index.html"))
    pages.append((cost_site, "index.html"))  # with the cost chart
    # The profile's dot plot with every measure, and the reliability diagram.
    pages.append((profile_site, "sets/agent-desk-typos/index.html"))
    assert len(pages) >= 9
    problems, measured = [], 0
    for viewport, phone in ((DESKTOP, False), (PHONE, True)):
        ctx = browser.new_context(viewport=viewport, is_mobile=phone)
        try:
            page = ctx.new_page()
            for site, rel in pages:
                page.goto(site.url(rel))
                where = f"{rel} at {viewport['width']} px"
                charts = page.evaluate(CHARTS)
                assert charts, where
                for c in charts:
                    measured += 1
                    if c["shown"] != 1:
                        problems.append(f"{where}: {c['id']} shows {c['shown']} drawings")
                        continue
                    if c["width"] < 0.9 * c["column"]:
                        problems.append(
                            f"{where}: {c['id']} {c['width']:.0f} of {c['column']:.0f} px"
                        )
                    if c["smallest"] < 11:
                        small = f"{c['smallestText']!r} at {c['smallest']:.1f} px"
                        problems.append(f"{where}: {c['id']} text {small}")
                    if c["overlaps"]:
                        problems.append(f"{where}: {c['id']} overlapping text {c['overlaps'][:3]}")
                if phone and page.evaluate(
                    "() => document.documentElement.scrollWidth"
                    " > document.documentElement.clientWidth"
                ):
                    problems.append(f"{where}: the page scrolls sideways")
        finally:
            ctx.close()
    assert measured >= 2 * 18
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_the_chart_measure_sees_a_cramped_chart(context: BrowserContext) -> None:
    """The measure above on a chart drawn wrong: half its column wide, with 4 px text
    and two labels on top of each other."""
    page = context.new_page()
    page.set_content(
        '<figure class="chart" id="bad"><div class="chart-svg">'
        '<svg viewBox="0 0 2000 100" style="width: 50%">'
        '<text x="10" y="20" font-size="12">first label</text>'
        '<text x="14" y="22" font-size="12">second label</text>'
        '<text x="10" y="60" font-size="12" opacity="0">hidden label</text>'
        '<text x="10" y="62" font-size="12">shown</text></svg></div></figure>'
    )
    (chart,) = page.evaluate(CHARTS)
    assert chart["shown"] == 1 and chart["texts"] == 3
    assert 0.45 < chart["width"] / chart["column"] < 0.55
    assert chart["smallestText"] in {"first label", "second label", "shown"}
    assert chart["smallest"] < 11
    assert chart["overlaps"] == ["first label / second label"]


TASK_ROWS = """() => [...document.querySelectorAll('table.tasks tbody tr')]
  .map(row => [...row.cells].map(cell => cell.textContent.trim()))"""
SORTED_BY = """() => [...document.querySelectorAll('table.tasks thead th')]
  .filter(th => th.hasAttribute('aria-sort'))
  .map(th => [th.textContent.replace(/[↕↑↓]/g, '').trim(), th.getAttribute('aria-sort')])"""


@pytest.mark.slow
def test_the_task_table_sorts_by_its_columns(browser: Browser, served: Site) -> None:
    """A set page's task table reads least reliable first without a script; with it,
    a heading's button sorts by that column (ties keep their order), again reverses,
    and names sort as numbers where they are (task 2 before task 10)."""
    rel = "sets/gpt-4o-bench-airline/index.html"
    plain = browser.new_context(viewport=DESKTOP, java_script_enabled=False)
    try:
        page = plain.new_page()
        page.goto(served.url(rel))
        first = page.evaluate(TASK_ROWS)
        assert page.locator("table.tasks button").count() == 0
        assert page.evaluate(SORTED_BY) == [["pass^3 plug-in [95%]", "ascending"]]
    finally:
        plain.close()
    plugin = [float(row[3].split()[0]) for row in first]
    assert len(first) == 50 and plugin == sorted(plugin)

    def rate(row: list[str]) -> float:
        return float(row[2].split()[0])

    def ratio(row: list[str]) -> float:
        c, n = row[1].split()[0].split("/")
        return int(c) / int(n)

    ctx = browser.new_context(viewport=DESKTOP)
    try:
        page = ctx.new_page()
        page.goto(served.url(rel))
        assert page.evaluate(TASK_ROWS) == first
        # A screen reader hears the heading, not the arrows drawn after it.
        assert page.get_by_role("button", name="pass rate [95%]", exact=True).count() == 1

        def press(heading: str) -> list[list[str]]:
            page.locator("table.tasks thead button", has_text=heading).click()
            return page.evaluate(TASK_ROWS)

        by_rate = press("pass rate")
        assert by_rate == sorted(first, key=rate)
        assert page.evaluate(SORTED_BY) == [["pass rate [95%]", "ascending"]]
        assert press("pass rate") == sorted(by_rate, key=rate, reverse=True)
        assert page.evaluate(SORTED_BY) == [["pass rate [95%]", "descending"]]
        by_name = press("Task")
        assert [row[0] for row in by_name] == [str(i) for i in range(50)]
        assert press("c/n") == sorted(by_name, key=ratio)
        assert sorted(map(tuple, press("pass@3"))) == sorted(map(tuple, first))
        assert press("plug-in") == first  # back to least reliable first, ties by name
        page.keyboard.press("Shift+Tab")  # the buttons take focus like any other
        assert page.evaluate("() => document.activeElement.className") == "sort"
    finally:
        ctx.close()


@pytest.mark.slow
def test_readme_pictures(browser: Browser, served: Site) -> None:
    """docs/overview.png and docs/set-page.png, the README's pictures of the example
    at 1,280 px, are taken here (REPORTGEN_SCREENSHOT=1): the whole overview, and a
    set page from its title to the end of its forest plot."""
    import os

    from .browser_util import ROOT

    if os.environ.get("REPORTGEN_SCREENSHOT") != "1":
        pytest.skip("set REPORTGEN_SCREENSHOT=1 to retake docs/overview.png and docs/set-page.png")
    ctx = browser.new_context(viewport=DESKTOP, color_scheme="light")
    try:
        page = ctx.new_page()
        page.goto(served.url("index.html"))
        page.screenshot(path=ROOT / "docs" / "overview.png", full_page=True)
        page.goto(served.url("sets/gpt-4o-bench-airline/index.html"))
        end = page.evaluate(
            "() => document.querySelector('#chart-forest').getBoundingClientRect().bottom"
        )
        clip = {"x": 0, "y": 0, "width": DESKTOP["width"], "height": end + 24}
        page.screenshot(path=ROOT / "docs" / "set-page.png", full_page=True, clip=clip)
    finally:
        ctx.close()


@pytest.mark.slow
def test_print_hides_navigation_and_makes_a_pdf(context: BrowserContext, served: Site) -> None:
    page = context.new_page()
    page.emulate_media(media="print")
    typical = typical_pages(served.folder)
    page.goto(served.url(typical["result set"]))
    # The numbers behind the curve chart sit in a <details>: print them, opened or not.
    assert page.locator("details table").is_visible()
    page.goto(served.url(typical["overview"]))
    assert not page.locator(".site-header nav").is_visible()
    assert page.locator("main").is_visible()
    assert page.locator("main h1").is_visible()
    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF-") and len(pdf) > 10_000
    assert len(re.findall(rb"/Type\s*/Page\b", pdf)) >= 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "overview.pdf").write_bytes(pdf)


def test_the_reliability_profile_shows_report_json_s_consistency(
    browser: Browser, served: Site
) -> None:
    """The set page's profile table, as a reader sees it at both widths, holds the
    values report.json gives, each with its interval and the coverage measured."""
    doc = json.loads((served.folder / "report.json").read_text())
    for viewport in (DESKTOP, PHONE):
        ctx = browser.new_context(viewport=viewport)
        try:
            page = ctx.new_page()
            for rs in doc["result_sets"]:
                page.goto(served.url(rs["page"]))
                table = page.locator("#profile-heading ~ div table.profile")
                assert table.is_visible()
                rows = table.locator("tbody tr").all_inner_texts()
                consistency = rs["outcome_consistency"]
                assert rows[0].startswith("Outcome consistency\tunbiased")
                for row, name in zip(rows[:2], ("unbiased", "hal"), strict=True):
                    value = consistency[name]
                    cells = row.split("\t")
                    assert cells[-3] == decimals(value["estimate"], 3)
                    low, high = decimals(value["low"], 3), decimals(value["high"], 3)
                    assert cells[-2] == f"[{low}, {high}]"
                    share = consistency["coverage"][name]["coverage"]
                    assert cells[-1].startswith(decimals(100 * share, 1) + "%")
                # Nothing in the section is wider than the page.
                width = page.evaluate("document.documentElement.clientWidth")
                for region in page.locator("#profile-heading ~ div").all():
                    box = region.bounding_box()
                    assert box is not None and box["x"] + box["width"] <= width + 1
        finally:
            ctx.close()


def test_the_profile_of_runs_with_costs(browser: Browser, cost_site: Site) -> None:
    """Real τ²-bench runs with costs: the overview's cost chart (its frontier named) and
    profile table, and each set page's cost rows, read as report.json gives them."""
    doc = json.loads((cost_site.folder / "report.json").read_text())
    sets = doc["result_sets"]
    assert all(rs["resources"]["cost"] for rs in sets)

    def sig3(value: float) -> str:
        return f"{value:#.3g}".rstrip(".")

    for viewport in (DESKTOP, PHONE):
        ctx = browser.new_context(viewport=viewport)
        try:
            page = ctx.new_page()
            page.goto(cost_site.url("index.html"))
            chart = page.locator("#chart-cost")
            assert chart.is_visible()
            assert chart.locator("svg:visible").count() == 1
            best = max(sets, key=lambda rs: rs["reliability_at_k"]["unbiased"]["estimate"])
            cheapest = min(sets, key=lambda rs: rs["resources"]["cost"]["per_run"]["estimate"])
            assert best is cheapest  # this data's frontier is one set
            assert f"(the Pareto frontier): {best['name']}." in chart.inner_text()
            rows = page.locator("#profile-caption").locator("xpath=..").locator("tbody tr")
            assert rows.count() == len(sets)
            for i, rs in enumerate(sets):
                cells = rows.nth(i).inner_text().split("\t")
                assert cells[0] == rs["name"]
                cost = rs["resources"]["cost"]["per_run"]
                assert cells[3] == (
                    f"{sig3(cost['estimate'])} [{sig3(cost['low'])}, {sig3(cost['high'])}]"
                )
            for rs in sets:
                page.goto(cost_site.url(rs["page"]))
                text = page.locator("#profile-heading ~ div table.profile").inner_text()
                per_success = rs["resources"]["cost"]["per_reliable_success"]
                row = "Cost per reliable success\t3 runs / reliability@3\t"
                assert row + sig3(per_success["estimate"]) in text
        finally:
            ctx.close()


def test_robustness_and_the_reliability_diagram_of_a_perturbed_set(
    browser: Browser, profile_site: Site
) -> None:
    """Runs under a perturbation: the set page's robustness rows and the overview's
    robustness table read as report.json gives them; the profile's dot plot and the
    reliability diagram show, one drawing each, at both widths."""
    doc = json.loads((profile_site.folder / "report.json").read_text())
    by_condition = {rs["condition"]: rs for rs in doc["result_sets"]}
    assert sorted(by_condition) == ["baseline", "typos"]
    typos, base = by_condition["typos"], by_condition["baseline"]
    rob = typos["robustness"]
    assert rob["baseline"] == base["id"] and base["robustness"] is None
    ratio = rob["reliability_ratio"]

    def shown(value: dict) -> str:
        return (
            f"{decimals(value['estimate'], 3)}\t"
            f"[{decimals(value['low'], 3)}, {decimals(value['high'], 3)}]\t"
            f"{decimals(100 * value['coverage']['coverage'], 1)}%"
        )

    for viewport in (DESKTOP, PHONE):
        ctx = browser.new_context(viewport=viewport)
        try:
            page = ctx.new_page()
            page.goto(profile_site.url(typos["page"]))
            section = page.locator("section[aria-labelledby=profile-heading]")
            for chart in ("#chart-profile", "#chart-calibration"):
                assert section.locator(chart).is_visible()
                assert section.locator(chart).locator("svg:visible").count() == 1
            text = section.locator("table.profile").inner_text()
            assert "reliability@3 ratio, paired\t" + shown(ratio) in text
            assert "pass-rate ratio, paired\t" + shown(rob["pass_rate_ratio"]) in text
            assert f"HAL's R (pooled, capped at 1)\t{decimals(rob['hal'], 3)}" in text
            page.goto(profile_site.url("index.html"))
            row = page.locator("#robustness-caption").locator("xpath=..").locator("tbody tr")
            assert row.count() == 1
            cells = row.inner_text().split("\t")
            assert cells[0] == typos["name"]
            assert cells[1] == (
                f"{decimals(ratio['perturbed'], 3)} / {decimals(ratio['baseline'], 3)} (baseline)"
            )
            assert row.locator("td a").get_attribute("title") == base["name"]
            assert cells[2] == (
                f"{decimals(ratio['estimate'], 3)} "
                f"[{decimals(ratio['low'], 3)}, {decimals(ratio['high'], 3)}]"
            )
        finally:
            ctx.close()
