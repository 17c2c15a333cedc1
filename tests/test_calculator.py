"""The calculator page (calculator.html) against the core, in Chromium.

The reference numbers are the ones `reportgen estimate --no-coverage --format json`
and `reportgen plan --format json` print. They are computed in-process by the
functions those commands call (estimate_suite + views.estimate_json, plan +
views.plan_json), and a few real CLI runs prove the two are the same. The page
is driven through its public functions in batches (thousands of cases) and through
its form fields for a sample; every number must agree to 1e-9, with null exactly
where the core gives null.

The coverage check of `reportgen estimate` (a seeded simulation) is not part of the
page, so the reference is taken without it, where the headline is the unbiased
estimate whenever it is defined.

Needs Chromium; skips without it (fails in CI), as tests/test_browser.py does.
"""

from __future__ import annotations

import json
import random
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import pytest

from reportgen.numbers import percent1
from reportgen.stats.estimate import estimate_suite
from reportgen.stats.headline import choose_headline
from reportgen.stats.plain import decimals
from reportgen.stats.planner import plan
from reportgen.views import estimate_json, plan_json
from reportgen.website.calculator import JSTAT_VERSION, calculator_script
from reportgen.website.theme import package_folder

from .browser_util import ARTIFACTS, AXE, CHROMIUM_ARGS, ROOT, find_chromium, serve, unavailable

try:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright
except ImportError:  # reported by the chromium fixture
    sync_playwright = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

TOLERANCE = 1e-9
CASES = 5000
BATCH = 250
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
#: Keys of `reportgen estimate` the page does not produce: the simulated coverage
#: check, and the warnings (the page words them as notes next to the result).
NOT_ON_THE_PAGE = {"coverage", "warnings"}


# ---------------------------------------------------------------- jStat, pinned and vendored


def test_vendored_jstat_is_the_pinned_release() -> None:
    """package.json and package-lock.json pin the release that templates/vendor holds."""
    manifest = json.loads((ROOT / "package.json").read_text())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert manifest["devDependencies"]["jstat"] == JSTAT_VERSION  # exact, no range
    assert lock["packages"]["node_modules/jstat"]["version"] == JSTAT_VERSION
    vendor = package_folder("templates") / "vendor" / "jstat"
    assert "Permission is hereby granted, free of charge" in (vendor / "LICENSE").read_text()
    installed = ROOT / "node_modules" / "jstat"
    if not installed.is_dir():
        pytest.skip("node_modules/jstat not installed (npm ci): the byte comparison needs it")
    assert json.loads((installed / "package.json").read_text())["version"] == JSTAT_VERSION
    for vendored, original in (("jstat.min.js", "dist/jstat.min.js"), ("LICENSE", "LICENSE")):
        assert (vendor / vendored).read_bytes() == (installed / original).read_bytes(), vendored


def test_script_is_built_from_the_committed_files(example_site: Path) -> None:
    templates = package_folder("templates")
    script = calculator_script(templates)
    assert (example_site / "assets" / "calculator.js").read_bytes() == script
    text = script.decode()
    licence = (templates / "vendor" / "jstat" / "LICENSE").read_text().strip()
    assert text.startswith(f"/*! jStat {JSTAT_VERSION}") and licence in text
    assert (templates / "vendor" / "jstat" / "jstat.min.js").read_text().rstrip("\n") in text
    assert text.endswith((templates / "calculator" / "calculator.js").read_text())
    # Nothing fetched: no address of another host in the code that runs.
    assert not re.search(r"(?i)\b(fetch|XMLHttpRequest|importScripts)\s*\(", text)
    assert len(script) < 150_000


# ---------------------------------------------------------------- the reference


def estimate_reference(pairs: list[tuple[int, int]], k: int, level: float) -> dict[str, Any]:
    """What `reportgen estimate --no-coverage --format json` prints for these counts."""
    suite = estimate_suite([c for c, _ in pairs], [n for _, n in pairs], k, level)
    return estimate_json(suite, choose_headline(None, suite.unbiased.estimate is not None), None)


def plan_reference(case: dict[str, Any]) -> dict[str, Any]:
    """What `reportgen plan --format json` prints (the CLI passes the same arguments)."""
    options: dict[str, Any] = {
        "pass_rate": case["pass"],
        "task_sd": case["sd"],
        "correlation": case["rho"],
    }
    if case["tasks"] is not None:
        options["tasks"] = case["tasks"]
    return plan_json(plan(case["target"], case["level"], **options))


def cli(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "reportgen", *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def compare(reference: Any, got: Any, path: str, diffs: list[float]) -> None:
    """Assert `got` has reference's shape, its nulls, and its numbers to TOLERANCE."""
    if isinstance(reference, dict):
        assert isinstance(got, dict), path
        for key, value in reference.items():
            if key in NOT_ON_THE_PAGE:
                continue
            assert key in got, f"{path}.{key} missing"
            compare(value, got[key], f"{path}.{key}", diffs)
    elif isinstance(reference, list):
        assert isinstance(got, list) and len(got) == len(reference), path
        for i, (a, b) in enumerate(zip(reference, got, strict=True)):
            compare(a, b, f"{path}[{i}]", diffs)
    elif reference is None or isinstance(reference, str | bool):
        assert got == reference, f"{path}: {got!r} != {reference!r}"
    else:
        assert got is not None, f"{path}: null, the core gives {reference!r}"
        diff = abs(float(got) - float(reference))
        assert diff <= TOLERANCE, f"{path}: {got!r} != {reference!r} (diff {diff:.3g})"
        diffs.append(diff)


def random_cases(seed: int) -> list[dict[str, Any]]:
    """CASES cases: single tasks, suites of 2-200 tasks, plans; edges drawn often."""
    rng = random.Random(seed)

    def runs() -> int:
        return rng.choice([1, 2, 3, rng.randint(1, 50), int(10 ** rng.uniform(0, 6))])

    def successes(n: int) -> int:
        return rng.choice([0, n, rng.randint(0, n), max(n - 1, 0), min(1, n)])

    def k_for(n: int) -> int:
        # Up to n + 2 (undefined unbiased values above n), often small, sometimes huge.
        return rng.choice(
            [1, 2, 3, rng.randint(1, n + 2), int(10 ** rng.uniform(0, 6.0)) % (n + 2) + 1]
        )

    def level() -> float:
        return rng.choice([0.5, 0.9, 0.95, 0.99, 0.999, rng.uniform(0.5, 0.999)])

    cases: list[dict[str, Any]] = []
    for _ in range(CASES * 50 // 100):
        n = runs()
        cases.append({"kind": "task", "c": successes(n), "n": n, "k": k_for(n), "level": level()})
    for _ in range(CASES * 40 // 100):
        size = rng.choice([2, 3, rng.randint(2, 200), 200])
        shared = rng.random() < 0.4  # many suites give every task the same n
        common = runs()
        pairs = []
        for _ in range(size):
            n = common if shared else runs()
            pairs.append((successes(n), n))
        k = k_for(min(n for _, n in pairs))
        cases.append({"kind": "suite", "pairs": pairs, "k": k, "level": level()})
    while len(cases) < CASES:
        cases.append(
            {
                "kind": "plan",
                "target": rng.choice([0.05, 0.01, 10 ** rng.uniform(-2.5, -0.31)]),
                "pass": rng.choice([0.5, 0.0, 1.0, rng.random()]),
                "sd": rng.choice([0.5, 0.0, rng.uniform(0.01, 0.5)]),
                "rho": rng.choice([0.0, rng.uniform(-1, 1)]),
                "tasks": rng.choice([None, None, rng.randint(2, 5000)]),
                "level": level(),
            }
        )
    return cases


def reference_for(case: dict[str, Any]) -> dict[str, Any]:
    if case["kind"] == "task":
        return estimate_reference([(case["c"], case["n"])], case["k"], case["level"])
    if case["kind"] == "suite":
        return estimate_reference(case["pairs"], case["k"], case["level"])
    return plan_reference(case)


#: Runs cases through the page's public functions; the same shapes as the CLI's JSON.
#: The answer travels as one JSON string: Playwright's own transfer of a large
#: nested object takes minutes.
EVALUATE = """cases => JSON.stringify(cases.map(c => {
  const calc = window.reportgenCalculator;
  if (c.kind === 'task') return calc.estimateSuite([[c.c, c.n]], c.k, c.level);
  if (c.kind === 'suite') return calc.estimateSuite(c.pairs, c.k, c.level);
  return calc.plan(c.target, c.level, c.pass, c.sd, c.rho, c.tasks);
}))"""


def run_cases(page: Page, cases: list[dict[str, Any]]) -> list[Any]:
    got: list[Any] = []
    for start in range(0, len(cases), BATCH):
        got += json.loads(page.evaluate(EVALUATE, cases[start : start + BATCH]))
    return got


# ---------------------------------------------------------------- the browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    path = find_chromium()
    if path is None:
        unavailable("Chromium not found (apt-get install chromium, or set REPORTGEN_CHROMIUM)")
    if sync_playwright is None:
        unavailable("the playwright package is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        except PlaywrightError as error:
            unavailable(f"Chromium at {path} does not start: {error.message.splitlines()[0]}")
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def served(example_site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The example site over HTTP under a sub-path: yields its base URL, ending in /."""
    top = tmp_path_factory.mktemp("calc-served")
    (top / "repo").symlink_to(example_site.resolve(), target_is_directory=True)
    with serve(top, "repo") as origin:
        yield f"{origin}/repo/"


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport=DESKTOP)
    yield ctx
    ctx.close()


class Watched:
    """A page with every console message, page error and failed request recorded."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url}"))
        page.on(
            "response",
            lambda r: self.problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None,
        )

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(f"console {message.type}: {message.text}")


def file_url(site: Path, query: str = "") -> str:
    return (site / "calculator.html").resolve().as_uri() + query


@pytest.mark.slow
def test_agrees_with_the_core_on_random_cases(context: BrowserContext, example_site: Path) -> None:
    """CASES random cases through the page's functions, every number within 1e-9 of the core."""
    cases = random_cases(seed=16)
    assert len(cases) >= 5000
    page = context.new_page()
    page.goto(file_url(example_site))
    got = run_cases(page, cases)
    diffs: list[float] = []
    nulls = 0
    for i, (case, result) in enumerate(zip(cases, got, strict=True)):
        reference = reference_for(case)
        nulls += json.dumps(reference).count("null")
        compare(reference, result, f"case {i} ({case['kind']})", diffs)
    kinds = {kind: sum(c["kind"] == kind for c in cases) for kind in ("task", "suite", "plan")}
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "calculator-agreement.json").write_text(
        json.dumps({"cases": kinds, "numbers": len(diffs), "max_diff": max(diffs)}, indent=1)
    )
    assert nulls > 100  # the undefined cases (k > n, one-task suites) were drawn
    assert len(diffs) > 100_000


def test_the_cli_prints_the_in_process_reference(
    context: BrowserContext, example_site: Path
) -> None:
    """Real `reportgen estimate` and `plan` runs equal the in-process reference exactly,
    and the page agrees with them."""
    runs: list[tuple[dict[str, Any], dict[str, Any]]] = [
        (
            {"kind": "task", "c": 16, "n": 20, "k": 3, "level": 0.95},
            cli("estimate", "--successes", "16", "--runs", "20", "-k", "3", "--format", "json"),
        ),
        (
            {"kind": "task", "c": 999_999, "n": 1_000_000, "k": 1_000_000, "level": 0.999},
            cli(
                *("estimate", "--successes", "999999", "--runs", "1000000", "-k", "1000000"),
                *("--confidence", "0.999", "--format", "json"),
            ),
        ),
        (
            {"kind": "suite", "pairs": [(16, 20), (2, 2), (0, 7), (5, 5)], "k": 4, "level": 0.9},
            cli(
                *("estimate", "--suite", "16/20", "2/2", "0/7", "5/5", "-k", "4"),
                *("--confidence", "0.9", "--no-coverage", "--format", "json"),
            ),
        ),
        (
            {
                "kind": "plan",
                "target": 0.02,
                "pass": 0.3,
                "sd": 0.25,
                "rho": 0.4,
                "tasks": None,
                "level": 0.99,
            },
            cli(
                *("plan", "--target-halfwidth", "0.02", "--pass-rate", "0.3", "--task-sd", "0.25"),
                *("--correlation", "0.4", "--confidence", "0.99", "--format", "json"),
            ),
        ),
        (
            {
                "kind": "plan",
                "target": 0.1,
                "pass": 0.5,
                "sd": 0.5,
                "rho": 0.0,
                "tasks": 40,
                "level": 0.95,
            },
            cli("plan", "--target-halfwidth", "0.1", "--tasks", "40", "--format", "json"),
        ),
    ]
    page = context.new_page()
    page.goto(file_url(example_site))
    got = run_cases(page, [case for case, _ in runs])
    for (case, printed), result in zip(runs, got, strict=True):
        assert printed == reference_for(case), case
        compare(printed, result, case["kind"], [])


# ---------------------------------------------------------------- the form fields


def read_cells(page: Page, region: str) -> dict[str, float | None]:
    cells: dict[str, str] = page.eval_on_selector_all(
        f"#{region} [data-key]",
        "cells => Object.fromEntries(cells.map(c => [c.dataset.key, c.dataset.value]))",
    )
    return {key: None if value == "null" else float(value) for key, value in cells.items()}


#: Sets a field as a paste would: Playwright's fill types a long multi-line text slowly.
PASTE = """([id, value]) => {
  const field = document.getElementById(id);
  field.value = value;
  field.dispatchEvent(new Event('input', {bubbles: true}));
}"""


def fill(page: Page, values: dict[str, str]) -> None:
    for field, value in values.items():
        if "\n" in value:
            page.evaluate(PASTE, [field, value])
        else:
            page.fill(f"#{field}", value)


@pytest.mark.slow
def test_form_fields_agree_with_the_core(context: BrowserContext, example_site: Path) -> None:
    """A sample typed into the fields: every number the page shows (at full precision in
    data-value) matches the core."""
    cases = random_cases(seed=61)
    sample = (
        [c for c in cases if c["kind"] == "task"][:30]
        + [c for c in cases if c["kind"] == "suite"][:20]
        + [c for c in cases if c["kind"] == "plan"][:20]
    )
    page = context.new_page()
    watched = Watched(page)
    page.goto(file_url(example_site))
    for case in sample:
        ref = reference_for(case)
        diffs: list[float] = []
        if case["kind"] == "task":
            fill(
                page,
                {
                    "task-c": str(case["c"]),
                    "task-n": str(case["n"]),
                    "task-k": str(case["k"]),
                    "task-level": repr(case["level"]),
                },
            )
            shown = read_cells(page, "task-result")
            task = ref["tasks"][0]
            expected = {
                "pass_rate.estimate": task["pass_rate"]["estimate"],
                "pass_rate.low": task["pass_rate"]["low"],
                "pass_rate.high": task["pass_rate"]["high"],
                "pass_hat_k.plugin.estimate": task["pass_hat_k"]["plugin"]["estimate"],
                "pass_hat_k.plugin.low": task["pass_hat_k"]["plugin"]["low"],
                "pass_hat_k.plugin.high": task["pass_hat_k"]["plugin"]["high"],
                "pass_hat_k.unbiased": task["pass_hat_k"]["unbiased"],
                "pass_at_k": task["pass_at_k"],
            }
        elif case["kind"] == "suite":
            fill(
                page,
                {
                    "suite-list": "\n".join(f"{c}/{n}" for c, n in case["pairs"]),
                    "suite-k": str(case["k"]),
                    "suite-level": repr(case["level"]),
                },
            )
            shown = read_cells(page, "suite-result")
            rel = ref["reliability_at_k"]
            names = ("plugin", "unbiased") + (
                ("unbiased_partial",) if rel["unbiased_partial"] else ()
            )
            expected = {
                f"{name}.{key}": rel[name][key]
                for name in names
                for key in ("estimate", "low", "high", "sd", "t", "df")
            }
        else:
            fill(
                page,
                {
                    "plan-target": repr(case["target"]),
                    "plan-pass": repr(case["pass"]),
                    "plan-sd": repr(case["sd"]),
                    "plan-rho": repr(case["rho"]),
                    "plan-tasks": "" if case["tasks"] is None else str(case["tasks"]),
                    "plan-level": repr(case["level"]),
                },
            )
            shown = read_cells(page, "plan-result")
            expected = {
                "runs_per_task": ref["runs_per_task"],
                "tasks": ref["tasks"],
                "detectable_difference.value": ref["detectable_difference"]["value"],
            }
        assert shown.keys() == expected.keys(), case
        compare(expected, shown, json.dumps(case)[:200], diffs)
    assert not watched.problems, watched.problems


def test_pages_and_the_calculator_round_alike(context: BrowserContext) -> None:
    """The calculator writes numbers with JavaScript's toFixed; the pages and terminal with
    stats/plain.decimals. They agree, also at exact ties such as (1/2)^4 = 0.0625."""
    rng = random.Random(5)
    values = [j / 16 for j in range(-40, 41)] + [j / 1024 for j in range(0, 1025, 7)]
    values += [rng.uniform(-2, 2) for _ in range(300)] + [1.0005, 0.0005, 0.9995]
    page = context.new_page()
    shown = page.evaluate(
        "values => values.map(v => [v.toFixed(3), v.toFixed(2), (v * 100).toFixed(1)])", values
    )
    for value, (three, two, percent_one) in zip(values, shown, strict=True):
        if value == 0:
            continue  # toFixed drops the sign of -0 (no page shows a -0)
        assert (three, two) == (decimals(value, 3), decimals(value, 2)), value
        assert f"{percent_one}%" == percent1(value), value
    assert decimals(0.0625, 3) == "0.063"


# ---------------------------------------------------------------- the address


@pytest.mark.slow
def test_state_comes_from_and_goes_to_the_address(context: BrowserContext, served: str) -> None:
    page = context.new_page()
    page.goto(served + "calculator.html?c=16&n=20&k=3&level=0.95")
    assert [page.input_value(f"#task-{f}") for f in ("c", "n", "k", "level")] == [
        "16",
        "20",
        "3",
        "0.95",
    ]
    shown = read_cells(page, "task-result")
    task = estimate_reference([(16, 20)], 3, 0.95)["tasks"][0]
    assert shown["pass_hat_k.unbiased"] == pytest.approx(task["pass_hat_k"]["unbiased"], abs=1e-12)
    # Typing writes the state back, so the address can be shared.
    page.fill("#task-n", "40")
    address = page.evaluate("location.href")  # page.url does not follow replaceState
    assert address.endswith("calculator.html?c=16&n=40&k=3&level=0.95")
    assert page.get_attribute("#task-link", "href") == "?c=16&n=40&k=3&level=0.95"
    fresh = context.new_page()
    fresh.goto(address)
    assert read_cells(fresh, "task-result") == read_cells(page, "task-result")
    # A suite and a plan, from their own addresses.
    page.goto(served + "calculator.html?suite=16/20%2018/20%200/5&k=2&level=0.9")
    assert page.input_value("#suite-list") == "16/20\n18/20\n0/5"
    rel = estimate_reference([(16, 20), (18, 20), (0, 5)], 2, 0.9)["reliability_at_k"]
    assert read_cells(page, "suite-result")["unbiased.t"] == pytest.approx(
        rel["unbiased"]["t"], abs=1e-12
    )
    page.goto(served + "calculator.html?target=0.03&pass=0.2&sd=0.3&level=0.99")
    assert read_cells(page, "plan-result")["tasks"] == plan(0.03, 0.99, task_sd=0.3).tasks
    # One task is said in the singular, in the note and in the table's caption.
    page.goto(served + "calculator.html?suite=1/1&k=3")
    caption = page.inner_text("#suite-result caption")
    assert caption.startswith("reliability@3 over 1 task, ") and "1 tasks" not in caption


def marked(page: Page) -> list[str]:
    """The fields marked as wrong, in page order."""
    found: list[str] = page.eval_on_selector_all(
        "#calculator [aria-invalid='true']", "fields => fields.map(f => f.id)"
    )
    return found


@pytest.mark.slow
def test_a_bad_value_in_the_address_marks_its_own_form_only(
    context: BrowserContext, example_site: Path
) -> None:
    """k and level are shared by the forms: from the address they go to the form whose
    own keys it holds, so a bad one marks that form's field and the others calculate."""
    page = context.new_page()
    watched = Watched(page)

    def goto(query: str) -> None:
        # Until the network is idle: the next address would cancel the icon's request.
        page.goto(file_url(example_site, query), wait_until="networkidle")

    goto("?" + urlencode({"suite": "16/20 18/20", "k": "0", "level": "0.95"}))
    assert marked(page) == ["suite-k"]
    assert "k must be at least 1" in message(page, "suite-k")
    assert "Fix the marked field" in page.inner_text("#suite-result")
    assert page.input_value("#task-k") == "3"  # the site's k, untouched
    for region in ("task-result", "plan-result"):
        assert read_cells(page, region), region  # they show their results
    goto("?c=16&n=20&k=x&level=0.95")
    assert marked(page) == ["task-k"]
    assert page.input_value("#suite-k") == "3"
    assert read_cells(page, "suite-result") and read_cells(page, "plan-result")
    goto("?target=0.05&pass=0.5&sd=0.5&rho=0&level=2")
    assert marked(page) == ["plan-level"]
    assert read_cells(page, "task-result") and read_cells(page, "suite-result")
    # An address for two forms marks both; one with no form's own keys, every form with k.
    goto("?c=16&n=20&suite=1/2&k=-1")
    assert marked(page) == ["task-k", "suite-k"]
    goto("?k=0")
    assert marked(page) == ["task-k", "suite-k"]
    assert read_cells(page, "plan-result")
    # A good address still fills what it is about, and the form calculates.
    goto("?suite=16/20%2018/20&k=2&level=0.9")
    assert marked(page) == [] and page.input_value("#suite-k") == "2"
    assert page.input_value("#task-k") == "3" and page.input_value("#task-level") == "0.95"
    assert not watched.problems, watched.problems


@pytest.mark.slow
def test_the_terminal_line_is_the_whole_command(browser: Browser, example_site: Path) -> None:
    """The suite's command lists every task, however many (it stopped at 20 with an
    ellipsis once): selected by a triple click, it runs and gives the page's numbers. On a
    phone it wraps or scrolls inside its box, never the page."""
    rng = random.Random(3)
    suite = " ".join(f"{rng.randint(0, 20)}/20" for _ in range(300))
    command = f"reportgen estimate --suite {suite} -k 3 --confidence 0.9"
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        watched = Watched(page)
        page.goto(file_url(example_site, "?" + urlencode({"suite": suite, "k": 3, "level": 0.9})))
        box = page.locator("#suite-result pre.command")
        assert box.inner_text() == command
        box.click(click_count=3)
        assert page.evaluate("() => getSelection().toString()").strip() == command
        printed = cli(*shlex.split(command)[1:], "--no-coverage", "--format", "json")
        shown = read_cells(page, "suite-result")
        for name in ("plugin", "unbiased"):
            assert shown[f"{name}.estimate"] == pytest.approx(
                printed["reliability_at_k"][name]["estimate"], abs=TOLERANCE
            )
        fits = page.evaluate(
            """() => {
              const box = document.querySelector('#suite-result pre.command');
              const page = document.documentElement;
              return {page: page.scrollWidth <= page.clientWidth,
                      box: box.scrollWidth <= box.clientWidth + 1,
                      right: box.getBoundingClientRect().right <= page.clientWidth,
                      scrolls: box.scrollHeight > box.clientHeight,
                      // No word is cut across two lines (--runs once was, after its dashes).
                      words: (words => words.length > 300
                        && words.every(word => word.getClientRects().length === 1))(
                        [...document.querySelectorAll('pre.command .word')])}
            }"""
        )
        expected = {"page": True, "box": True, "right": True, "scrolls": True, "words": True}
        assert fits == expected, fits
        # The box a long command scrolls in is reached by the keyboard.
        assert box.get_attribute("tabindex") == "0"
        # The task's and the plan's commands are whole too, each in its box.
        commands = page.eval_on_selector_all("pre.command", "boxes => boxes.map(b => b.innerText)")
        assert commands[0] == "reportgen estimate --successes 16 --runs 20 -k 3 --confidence 0.95"
        assert commands[2].startswith("reportgen plan --target-halfwidth 0.05 ")
        # The worked examples' three commands keep a line each, scrolling in their box.
        worked = page.eval_on_selector(
            "pre.commands",
            """box => {
              const style = getComputedStyle(box);
              const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
              const inner = box.clientHeight - padding;
              return {lines: Math.round(inner / parseFloat(style.lineHeight)),
                      scrolls: box.scrollWidth > box.clientWidth, focusable: box.tabIndex === 0,
                      right: box.getBoundingClientRect().right <= innerWidth};
            }""",
        )
        assert worked == {"lines": 3, "scrolls": True, "focusable": True, "right": True}, worked
        assert not watched.problems, watched.problems
    finally:
        ctx.close()


@pytest.mark.slow
def test_task_and_set_pages_open_the_calculator_prefilled(
    context: BrowserContext, example_site: Path, served: str
) -> None:
    report = json.loads((example_site / "report.json").read_text())
    rs = report["result_sets"][0]
    task = rs["tasks"][0]
    page = context.new_page()
    page.goto(served + task["page"])
    page.get_by_role("link", name="Open this task in the calculator").click()
    page.wait_for_url(re.compile(r"calculator\.html\?"))
    assert page.input_value("#task-c") == str(task["successes"])
    assert page.input_value("#task-n") == str(task["runs"])
    assert page.input_value("#task-k") == str(report["k"])
    shown = read_cells(page, "task-result")
    assert shown["pass_hat_k.plugin.estimate"] == pytest.approx(
        task["pass_hat_k"]["plugin"]["estimate"], abs=1e-12
    )
    page.goto(served + rs["page"])
    page.get_by_role("link", name="Open this suite in the calculator").click()
    page.wait_for_url(re.compile(r"calculator\.html\?"))
    assert len(page.input_value("#suite-list").split("\n")) == len(rs["tasks"])
    shown = read_cells(page, "suite-result")
    for name in ("plugin", "unbiased"):
        for key in ("estimate", "low", "high", "sd", "t"):
            assert shown[f"{name}.{key}"] == pytest.approx(
                rs["reliability_at_k"][name][key], abs=TOLERANCE
            ), (name, key)


# ---------------------------------------------------------------- bad input


def message(page: Page, field: str) -> str:
    assert page.get_attribute(f"#{field}", "aria-invalid") == "true", field
    return page.inner_text(f"#{field}-error")


@pytest.mark.slow
def test_bad_input_is_named_next_to_its_field(context: BrowserContext, example_site: Path) -> None:
    page = context.new_page()
    watched = Watched(page)
    page.goto(file_url(example_site))
    for region in ("task-result", "suite-result", "plan-result"):
        assert page.get_attribute(f"#{region}", "aria-live") == "polite"
    # Each message is tied to its field for screen readers.
    assert "task-c-error" in (page.get_attribute("#task-c", "aria-describedby") or "")
    page.fill("#task-c", "21")
    assert "cannot exceed runs n (20)" in message(page, "task-c")
    assert "Fix the marked field" in page.inner_text("#task-result")
    page.fill("#task-c", "16")
    assert page.get_attribute("#task-c", "aria-invalid") is None
    assert page.inner_text("#task-c-error") == ""
    page.fill("#task-k", "0")
    assert "k must be at least 1" in message(page, "task-k")
    page.fill("#task-k", "-1")  # a whole number, below the least allowed
    assert "k must be at least 1" in message(page, "task-k")
    page.fill("#task-k", "3")
    for level in ("1", "0", "1.5", "-0.2", "abc"):
        page.fill("#task-level", level)
        assert "level" in message(page, "task-level").lower(), level
    page.fill("#task-level", "0.95")
    page.fill("#suite-list", "16/20\n18/20\n1x/20\n5/5")
    assert message(page, "suite-list").startswith("Line 3:")
    page.fill("#suite-list", "16/20 18/20\n\n7/5")
    assert message(page, "suite-list") == "Line 3: 7/5 has more successes than runs."
    page.fill("#suite-list", "3/0")
    assert message(page, "suite-list").startswith("Line 1:")
    page.fill("#plan-target", "0")
    assert "(0, 1)" in message(page, "plan-target")
    page.fill("#plan-rho", "2")
    assert message(page, "plan-rho") == "The correlation must lie in [-1, 1], got 2."
    page.fill("#plan-rho", "abc")
    assert "must be a number between -1 and 1" in message(page, "plan-rho")
    # Written as the command line accepts it: an exponent, a sign.
    page.fill("#plan-target", "0.1")
    page.fill("#plan-rho", "-1e-1")
    assert page.get_attribute("#plan-rho", "aria-invalid") != "true"
    assert "--correlation -0.1 " in page.inner_text("#plan-result")
    # A negative sd is a number out of range, not "not a number".
    page.fill("#plan-sd", "-0.1")
    assert message(page, "plan-sd") == "The task sd must lie in [0, 1], got -0.1."
    assert not watched.problems, watched.problems


def test_edge_results_read_as_the_command_line_says_them(
    context: BrowserContext, example_site: Path
) -> None:
    page = context.new_page()
    watched = Watched(page)
    page.goto(file_url(example_site))
    # A link names the result shown, never one a bad field has replaced.
    assert page.get_attribute("#task-link", "href")
    page.fill("#task-n", "0")
    assert "Fix the marked field" in page.inner_text("#task-result")
    assert page.get_attribute("#task-link", "href") is None
    page.fill("#task-n", "1")
    page.fill("#task-c", "1")
    page.fill("#task-k", "1")
    text = page.inner_text("#task-result")
    assert page.get_attribute("#task-link", "href") == "?c=1&n=1&k=1&level=0.95"
    assert "1 of 1 run passed" in text and "the chance that one of these runs" in text
    page.fill("#task-c", "16")
    page.fill("#task-n", "20")
    page.fill("#task-k", "3")  # pass@k's step shows its products, as the task pages do
    assert "pass@3 = 1 \u2212 C(4, 3) / C(20, 3) = 1 \u2212 (4·3·2) / (20·19·18) = 0.996" in (
        page.inner_text("#task-result")
    )
    # Every task alike: a zero-width interval is not certainty (as estimate warns).
    page.fill("#suite-list", "20/20\n20/20")
    text = page.inner_text("#suite-result")
    assert "[1.000, 1.000]" in text and "not that reliability@3 is known exactly" in text
    assert "Both tasks have the same pass^3" in text
    assert "Every run of every task passed: a report built from such results runs no" in text
    page.fill("#suite-list", "19/20\n20/20\n4/5")
    assert "not that reliability@3" not in page.inner_text("#suite-result")
    assert "which the calculator leads with" in page.inner_text("#suite-result")
    # Two tasks cannot detect any difference at this target: said as `plan` says it.
    page.fill("#plan-target", "0.05")
    page.fill("#plan-tasks", "2")
    assert "none, not even the largest possible (1)" in page.inner_text("#plan-result")
    assert not watched.problems, watched.problems


HOSTILE = [
    "",
    " ",
    "-1",
    "1e400",
    "1e-400",
    "NaN",
    "Infinity",
    "-0",
    "0x10",
    "１６",
    "1/0",
    "9" * 400,
    "0.5.5",
    "\u202e16",
    "<img src=x onerror=alert(1)>",
    "</textarea><b>x</b>",
    "1,5",
    "%00",
    "0" * 50 + "1",
    "4294967297",
    "1000000001",
    "2e0",
    ".",
    "1e",
]


@pytest.mark.slow
def test_hostile_input_never_throws(context: BrowserContext, example_site: Path) -> None:
    """Garbage in every field: a message or a result, never an exception, NaN or injection."""
    page = context.new_page()
    watched = Watched(page)
    page.goto(file_url(example_site) + "?c=%ZZ&n=<b>&k=%E0%A4%A&level=1e999&suite=x&target=-")
    fields = [
        "task-c",
        "task-n",
        "task-k",
        "task-level",
        "suite-list",
        "suite-k",
        "suite-level",
        "plan-target",
        "plan-pass",
        "plan-sd",
        "plan-rho",
        "plan-tasks",
        "plan-level",
    ]
    rng = random.Random(5)
    for field in fields:
        for value in HOSTILE:
            fill(page, {field: value})
        fill(page, {field: rng.choice(HOSTILE)})
    fill(page, {"suite-list": "\n".join(["1/2"] * 10_001)})
    assert "10,000" in message(page, "suite-list")
    page.fill("#suite-list", "0/1000000000 1000000000/1000000000")
    page.fill("#suite-k", "1000000")
    page.fill("#task-c", "999999999")
    page.fill("#task-n", "1000000000")
    page.fill("#task-k", "1000000")
    page.fill("#task-level", "0.999999999999")
    page.fill("#plan-target", "0.000001")
    texts = page.eval_on_selector_all(".calc-result", "rs => rs.map(r => r.textContent)")
    assert not any(re.search(r"NaN|undefined|Infinity", text) for text in texts), texts
    assert page.eval_on_selector_all("main img, main b", "e => e.length") == 0
    assert not watched.problems, watched.problems


# ---------------------------------------------------------------- file://, HTTP, no JavaScript


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["file", "http"])
def test_no_console_error_from_file_or_http(
    context: BrowserContext, example_site: Path, served: str, mode: str
) -> None:
    page = context.new_page()
    watched = Watched(page)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    base = file_url(example_site) if mode == "file" else served + "calculator.html"
    page.goto(base + "?c=3&n=7&k=2&level=0.8", wait_until="load")
    assert page.is_visible("#calculator")
    assert read_cells(page, "task-result")["pass_rate.estimate"] == pytest.approx(3 / 7)
    # The icon is linked, so a browser asks for it and not for /favicon.ico.
    if mode == "http":
        # The icon is fetched after the load event: leaving the page before it arrives
        # aborts the request, which the watch counts as a failure (a race of the test's).
        page.wait_for_load_state("networkidle")
        page.goto(served + "index.html", wait_until="load")
        page.wait_for_timeout(300)
        assert any(url.endswith("/repo/assets/favicon.svg") for url in requests), requests
    assert not any(url.endswith("/favicon.ico") for url in requests)
    assert not watched.problems, watched.problems


@pytest.mark.slow
def test_without_javascript_the_worked_examples_show(browser: Browser, example_site: Path) -> None:
    ctx = browser.new_context(java_script_enabled=False)
    try:
        page = ctx.new_page()
        page.goto(file_url(example_site))
        assert not page.is_visible("#calculator")
        text = page.inner_text("main")
        assert "JavaScript is off" in text and "reportgen estimate --successes" in text
        example = estimate_reference([(16, 20)], 3, 0.95)["tasks"][0]
        row = page.inner_text("#worked-tasks >> xpath=.. >> tbody tr >> nth=0")
        assert f"{example['pass_hat_k']['plugin']['estimate']:.3f}" in row
        assert f"{example['pass_hat_k']['unbiased']:.3f}" in row
    finally:
        ctx.close()


# ---------------------------------------------------------------- accessibility


AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => `${v.id}: ${v.help} (${v.nodes.map(n => n.target.join(' ')).join(', ')})`);
}"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scheme", "viewport", "state"),
    [
        ("light", DESKTOP, "results"),
        ("dark", DESKTOP, "results"),
        ("dark", PHONE, "results"),
        ("light", PHONE, "errors"),
        ("dark", DESKTOP, "errors"),
    ],
)
def test_axe_finds_nothing_serious_on_the_calculator(
    browser: Browser, served: str, scheme: str, viewport: dict[str, int], state: str
) -> None:
    if not AXE.is_file():
        unavailable(f"axe-core not installed ({AXE} missing): run `npm ci`")
    ctx = browser.new_context(
        viewport=viewport,  # type: ignore[arg-type]
        color_scheme=scheme,  # type: ignore[arg-type]
        is_mobile=viewport is PHONE,
        bypass_csp=True,  # for the injected axe script only
    )
    try:
        page = ctx.new_page()
        page.goto(served + "calculator.html")
        if state == "errors":
            fill(page, {"task-c": "30", "suite-list": "1/2\nx", "plan-target": "2"})
        page.add_script_tag(path=str(AXE))
        serious = page.evaluate(AXE_RUN)
        assert not serious, "\n".join(serious)
        # No sideways scrolling, even on a phone.
        assert page.evaluate(
            "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
    finally:
        ctx.close()


@pytest.mark.slow
def test_keyboard_alone_reaches_every_field_and_calculates(
    context: BrowserContext, example_site: Path
) -> None:
    page = context.new_page()
    page.goto(file_url(example_site))
    controls = page.evaluate(
        "() => [...document.querySelectorAll('#calculator input, #calculator textarea,"
        " #calculator button, #calculator a')].map(e => e.id || e.textContent)"
    )
    reached: list[str] = []
    for _ in range(len(controls) + 30):
        page.keyboard.press("Tab")
        here = page.evaluate(
            "() => { const e = document.activeElement;"
            " return e.closest('#calculator') ? (e.id || e.textContent) : null; }"
        )
        if here is not None and here not in reached:
            reached.append(here)
    assert set(controls) <= set(reached), set(controls) - set(reached)
    page.focus("#task-c")
    page.keyboard.press("Control+A")
    page.keyboard.type("7")
    page.keyboard.press("Tab")
    page.keyboard.press("Control+A")
    page.keyboard.type("9")
    page.keyboard.press("Enter")  # submits the form: handled on the page, nothing navigates
    assert page.url.startswith("file:")
    assert read_cells(page, "task-result")["pass_rate.estimate"] == pytest.approx(7 / 9)


@pytest.mark.slow
def test_readme_screenshot(browser: Browser, served: str) -> None:
    """docs/calculator.png, the picture in the README, is taken here (REPORTGEN_SCREENSHOT=1)."""
    import os

    if os.environ.get("REPORTGEN_SCREENSHOT") != "1":
        pytest.skip("set REPORTGEN_SCREENSHOT=1 to retake docs/calculator.png")
    ctx = browser.new_context(viewport={"width": 900, "height": 1000}, color_scheme="light")
    try:
        page = ctx.new_page()
        page.goto(served + "calculator.html?c=16&n=20&k=3&level=0.95")
        page.locator("#task-heading").scroll_into_view_if_needed()
        section = page.locator("section", has=page.locator("#task-heading"))
        (ROOT / "docs").mkdir(exist_ok=True)
        section.screenshot(path=str(ROOT / "docs" / "calculator.png"))
    finally:
        ctx.close()
