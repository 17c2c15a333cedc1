"""`reportgen build`: the site's pages, data files and properties, without a browser."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import markupsafe
import pytest

from reportgen.build import Progress, build
from reportgen.cli import main
from reportgen.config import Config
from reportgen.readers import Source
from reportgen.website import render as render_module
from reportgen.website import theme as theme_module
from reportgen.website.theme import package_folder
from reportgen.website.write import MARKER

from .conftest import ROOT, build_example, first_fast


class Links(HTMLParser):
    """Collects href/src attributes and the ids and text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("href", "src"):
                self.refs.append((tag, name, value))
            if name == "id":
                self.ids.append(value)


def parse(path: Path) -> Links:
    parser = Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def html_pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def tree(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


def run_cli(argv: list[str]) -> int:
    return main(argv, out=io.StringIO())


# ------------------------------------------------------------ pages and files


def test_example_site_has_every_page(example_site: Path) -> None:
    for name in ("index.html", "methodology.html", "faq.html", "404.html", "report.json"):
        assert (example_site / name).is_file(), name
    assert (example_site / "assets" / "style.css").is_file()
    assert (example_site / MARKER).is_file()
    report = json.loads((example_site / "report.json").read_text())
    assert len(report["result_sets"]) == 4
    for rs in report["result_sets"]:
        assert (example_site / rs["page"]).is_file()
        assert (example_site / f"sets/{rs['id']}/tasks.csv").is_file()
        for task in rs["tasks"]:
            assert (example_site / task["page"]).is_file()


def test_overview_shows_headlines_and_comparison(example_site: Path) -> None:
    page = (example_site / "index.html").read_text()
    report = json.loads((example_site / "report.json").read_text())
    assert "Support-desk agents" in page
    for rs in report["result_sets"]:
        rel = rs["reliability_at_k"]
        assert html.escape(rs["name"]) in page
        assert f"{rel['plugin']['estimate']:.3f}" in page
        assert f"[{rel['plugin']['low']:.3f}, {rel['plugin']['high']:.3f}]" in page
        assert f"{rel['unbiased']['estimate']:.3f}" in page
    assert "Comparison" in page and "95%" in page
    excluded = [rs["excluded_runs"] for rs in report["result_sets"]]
    assert all(f"{n} excluded" in page for n in excluded) and any(excluded)


def test_report_json_validates_against_shipped_schema(example_site: Path) -> None:
    schema = json.loads((ROOT / "reportgen" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    report = json.loads((example_site / "report.json").read_text())
    jsonschema.validate(report, schema)
    assert (example_site / "report.schema.json").read_bytes() == (
        ROOT / "reportgen" / "report.schema.json"
    ).read_bytes()


def test_report_json_numbers_equal_reportgen_estimate(example_site: Path) -> None:
    report = json.loads((example_site / "report.json").read_text())
    rs = report["result_sets"][0]
    items = [f"{t['successes']}/{t['runs']}" for t in rs["tasks"]]
    out = io.StringIO()
    assert main(["estimate", "--suite", *items, "-k", "3", "--format", "json"], out=out) == 0
    expected = json.loads(out.getvalue())
    keep = ("successes", "runs", "pass_rate", "pass_hat_k", "pass_at_k")
    assert [{key: t[key] for key in keep} for t in rs["tasks"]] == expected["tasks"]
    # The build also measured the clustered intervals (its tasks have categories), which
    # the reason lists among the others; everything else is the same.
    built, alone = dict(rs["reliability_at_k"]), dict(expected["reliability_at_k"])
    reasons = built.pop("headline_reason"), alone.pop("headline_reason")
    assert built == alone
    assert reasons[0].split(" (the others")[0] == reasons[1].split(" (the others")[0]
    curve_k3 = next(p for p in rs["curve"] if p["k"] == 3)
    assert curve_k3["reliability_plugin"] == expected["reliability_at_k"]["plugin"]
    assert [p["k"] for p in rs["curve"]] == list(range(1, min(t["runs"] for t in rs["tasks"]) + 1))


def test_tau_bench_result_set_reproduces_published_table(example_site: Path) -> None:
    report = json.loads((example_site / "report.json").read_text())
    tau = next(rs for rs in report["result_sets"] if rs["format"] == "tau-bench")
    published = {1: 0.420, 2: 0.273, 3: 0.220, 4: 0.200}
    got = {p["k"]: round(p["reliability_unbiased"]["estimate"], 3) for p in tau["curve"]}
    assert got == published


def test_csv_matches_report_json(example_site: Path) -> None:
    report = json.loads((example_site / "report.json").read_text())
    rs = report["result_sets"][1]
    rows = list(csv.DictReader((example_site / f"sets/{rs['id']}/tasks.csv").open()))
    by_id = {t["id"]: t for t in rs["tasks"]}
    assert {r["task"] for r in rows} == set(by_id)
    for row in rows:
        task = by_id[row["task"]]
        assert int(row["successes"]) == task["successes"]
        assert float(row["pass_hat_3_plugin"]) == task["pass_hat_k"]["plugin"]["estimate"]
        assert float(row["pass_rate_low"]) == task["pass_rate"]["low"]
    plugin = [float(r["pass_hat_3_plugin"]) for r in rows]
    assert plugin == sorted(plugin), "least reliable first"


def test_result_set_page_lists_tasks_least_reliable_first(example_site: Path) -> None:
    report = json.loads((example_site / "report.json").read_text())
    rs = report["result_sets"][0]
    page = (example_site / rs["page"]).read_text()
    body = page[page.index('<table class="tasks sortable">') :]
    shown = re.findall(r'<th scope="row"><a href="tasks/[^"]+">([^<]+)</a>', body)
    plugin = {t["id"]: t["pass_hat_k"]["plugin"]["estimate"] for t in rs["tasks"]}
    assert sorted(shown) == sorted(plugin)
    values = [plugin[html.unescape(s)] for s in shown]
    assert values == sorted(values)
    for chart_id in ("forest", "curve", "gap"):
        assert f'id="chart-{chart_id}"' in page
    assert 'href="tasks.csv"' in page


def test_task_page_shows_strip_estimates_and_worked_calculation(example_site: Path) -> None:
    report = json.loads((example_site / "report.json").read_text())
    rs = report["result_sets"][0]  # agent-alpha: its runs carry transcript links
    task = next(t for t in rs["tasks"] if 0 < t["successes"] < t["runs"] and t["excluded_runs"])
    page = (example_site / task["page"]).read_text()
    c, n = task["successes"], task["runs"]
    opening = page.index('<ol class="strip"')
    strip = page[page.index(">", opening) + 1 : page.index("</ol>", opening)]
    assert strip.count('<li class="p">') == c
    assert strip.count('<li class="f">') == n - c
    assert strip.count('<li class="x">') == task["excluded_runs"]
    assert strip.count("✓") == c and strip.count("✗") == n - c  # a symbol, not colour alone
    assert strip.count("not evaluated") == task["excluded_runs"]
    assert strip.count('href="https://transcripts.example.org/') == n + task["excluded_runs"]
    assert (
        "run 1 transcript" in strip
        and strip.count('<span class="sr">') == n + task["excluded_runs"]
    )
    # A screen reader hears which run each link opens, not a row of "passed" links.
    spoken = re.findall(r'<span class="sr"> ([^<]+)</span>', strip)
    assert spoken == [
        f"run {i + 1} {'passed' if s == '✓' else 'failed' if s == '✗' else 'not evaluated'}, "
        "transcript"
        for i, s in enumerate(re.findall(r"[✓✗–]", strip))
    ]
    assert f"p̂ = c / n = {c} / {n} = {task['pass_rate']['estimate']:.3f}" in page
    unbiased = task["pass_hat_k"]["unbiased"]
    assert f"C({c}, 3) / C({n}, 3)" in page and f"{unbiased:.3f}" in page
    assert f"{task['pass_at_k']:.3f}" in page


def test_every_chart_is_accessible_and_ids_are_unique(example_site: Path) -> None:
    for page in html_pages(example_site):
        text = page.read_text()
        svgs = re.findall(r"<svg [^>]*>", text)
        for svg in svgs:
            if "ibar" in svg:
                continue
            assert 'role="img"' in svg and "aria-labelledby" in svg, page
        ids = parse(page).ids
        assert len(ids) == len(set(ids)), f"duplicate ids in {page}"
        assert text.count("<title id=") == len([s for s in svgs if 'role="img"' in s])


# ------------------------------------------------------------ self-contained and safe


#: Every page's policy; only the calculator page may run a script, and only the site's own.
CSP = (
    "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "script-src {}; base-uri 'none'; form-action 'none'"
)
CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


def test_only_the_calculator_and_set_pages_run_a_script(example_site: Path) -> None:
    """Each page's CSP is exactly as stated; no page but calculator.html (the calculator)
    and a set page (its table's sorting) carries a <script>, and theirs is the site's
    own file, with nothing inline."""
    pages = html_pages(example_site)
    own = {example_site / "calculator.html": "assets/calculator.js"}
    own |= {page: "../../assets/sort.js" for page in example_site.glob("sets/*/index.html")}
    assert example_site / "calculator.html" in pages and len(own) == 5
    for page in pages:
        text = page.read_text()
        assert CSP_META.findall(text) == [CSP.format("'self'" if page in own else "'none'")], page
        assert not re.search(r"(?i)\son[a-z]+\s*=", text), f"{page}: an event handler attribute"
        assert "javascript:" not in text.lower(), page
        if page not in own:
            assert "<script" not in text.lower(), page
            continue
        scripts = re.findall(r"(?is)<script\b[^>]*>(.*?)</script>", text)
        assert scripts == [""], scripts
        assert re.findall(r"<script\b[^>]*>", text) == [f'<script src="{own[page]}" defer>']


def test_pages_load_nothing_from_elsewhere(example_site: Path) -> None:
    for page in html_pages(example_site):
        for tag, attr, value in parse(page).refs:
            if attr == "src" or tag == "link":
                # data: is the page's own (404.html's icon, served at any depth).
                assert not re.match(r"(?i)(?!data:)[a-z]+:|//", value), (
                    f"{page}: {tag} {attr}={value}"
                )
    css = (example_site / "assets" / "style.css").read_text()
    assert "@import" not in css and "url(" not in css


def test_every_internal_link_resolves(example_site: Path) -> None:
    for page in html_pages(example_site):
        if page.name == "404.html":
            continue  # served at any depth: its links use the base path
        for _tag, _attr, value in parse(page).refs:
            if re.match(r"(?i)(https?|mailto):", value) or value.startswith("#"):
                continue
            assert not value.startswith("/"), f"{page}: absolute link {value}"
            target = (page.parent / value.split("#")[0].split("?")[0]).resolve()
            assert target.is_file(), f"{page}: broken link {value}"
            assert example_site.resolve() in target.parents


NASTY_IDS = [
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "CON",
    "a/b",
    "x" * 300,
    "Task",
    "task",
    "naïve-ταυ-任务",
    "a&b \"quoted\" 'single'",
]


def test_hostile_task_ids_get_safe_unique_files_and_show_literally(tmp_path: Path) -> None:
    results = tmp_path / "runs.jsonl"
    lines = [
        json.dumps({"task": task, "passed": i % 2 == 0, "url": "javascript:alert(1)"})
        if i == 0
        else json.dumps({"task": task, "passed": i % 2 == 0})
        for task in NASTY_IDS
        for i in range(3)
    ]
    results.write_text("\n".join(lines) + "\n")
    status = main(["build", str(results), "--output", str(tmp_path / "site")], out=io.StringIO())
    # javascript: urls are refused at load time with a located error.
    assert status == 2
    results.write_text(
        "\n".join(
            json.dumps({"task": task, "passed": i % 2 == 0}) for task in NASTY_IDS for i in range(3)
        )
        + "\n"
    )
    site = tmp_path / "site"
    assert run_cli(["build", str(results), "--output", str(site)]) == 0
    report = json.loads((site / "report.json").read_text())
    pages = [t["page"] for t in report["result_sets"][0]["tasks"]]
    assert len(pages) == len(NASTY_IDS) == len({p.lower() for p in pages})
    for task, page in zip(report["result_sets"][0]["tasks"], pages, strict=True):
        path = (site / page).resolve()
        assert site.resolve() in path.parents and path.is_file()
        name = path.name
        assert re.fullmatch(r"[a-z0-9_-]+\.html", name) and len(name) < 100
        assert name.split(".")[0] not in ("con", "nul", "aux", "prn")
        text = path.read_text()
        assert str(markupsafe.escape(task["id"])) in text
    everything = "".join(p.read_text() for p in html_pages(site))
    assert "<script>alert(1)</script>" not in everything
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in everything


def test_tasks_csv_keeps_a_formula_shaped_task_id_from_running(tmp_path: Path) -> None:
    ids = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "plain", "1e3"]
    results = tmp_path / "runs.jsonl"
    results.write_text(
        "".join(json.dumps({"task": t, "passed": i == 0}) + "\n" for t in ids for i in range(2))
    )
    site = tmp_path / "site"
    assert run_cli(["build", str(results), "--output", str(site)]) == 0
    report = json.loads((site / "report.json").read_text())
    (rs,) = report["result_sets"]
    assert {t["id"] for t in rs["tasks"]} == set(ids)  # the JSON keeps them as they are
    with (site / "sets" / rs["id"] / "tasks.csv").open(newline="") as handle:
        written = {row["task"] for row in csv.DictReader(handle)}
    assert written == {f"'{t}" if t[0] in "=+-@" else t for t in ids}


def _words(markup: str) -> str:
    """HTML's words: tags dropped, entities read."""
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def _text(page: Path) -> str:
    return _words(page.read_text(encoding="utf-8"))


def test_measured_shares_read_as_short_percentages(example_site: Path) -> None:
    for page in html_pages(example_site):
        text = _text(page)
        # 3.956956735% once stood in a sentence: a share is shown to one decimal at most.
        assert not re.search(r"\d\.\d{2,}%", text), page


def test_bootstrap_sentence_agrees_with_the_widths_it_prints(example_site: Path) -> None:
    pages = sorted(example_site.glob("sets/*/index.html"))
    assert pages
    for page in pages:
        text = " ".join(_text(page).split())
        found = re.search(
            r"the bootstrap interval is (the wider|the narrower|as wide as the t interval) "
            r"\((\d\.\d{3}) wide, against (\d\.\d{3})\)",
            text,
        )
        assert found, page
        word, boot, t_interval = found[1], float(found[2]), float(found[3])
        expected = (
            "the wider" if boot > t_interval else "the narrower" if boot < t_interval else "as"
        )
        assert word.startswith(expected)
        # The widths are those of the table just above (t, then bootstrap), to within
        # the rounding of its printed bounds.
        rows = re.findall(r"\[(\d\.\d{3}), (\d\.\d{3})\]", text[: found.start()])
        (t_low, t_high), (b_low, b_high) = rows[-2:]
        assert abs(float(t_high) - float(t_low) - t_interval) <= 0.0011
        assert abs(float(b_high) - float(b_low) - boot) <= 0.0011


def test_methodology_claims_about_coverage_follow_its_table(example_site: Path) -> None:
    text = " ".join(_text(example_site / "methodology.html").split())
    claim = re.search(
        r"The plug-in interval gets worse as the suite grows large\. With true pass rates "
        r"from a (.+?), its coverage falls from (\d+\.\d)% with (\d+) tasks to "
        r"(\d+\.\d)% with (\d+)\.",
        text,
    )
    assert claim, "the plug-in coverage claim is missing"
    label, before, few, after, many = claim.groups()
    assert float(after) < float(before) and int(few) < int(many)
    # The same figures stand in the table's plug-in t column for those rows.
    for tasks, share in ((few, before), (many, after)):
        assert re.search(rf"{re.escape(label)} {tasks} {share}% ", text), (tasks, share)


def test_pass_at_k_is_set_against_pass_hat_k_of_the_same_estimator(example_site: Path) -> None:
    """The pages' first contrast of "at least once" with "every time" uses the unbiased
    estimate of both, as its worked example's table gives them (not pass@k unbiased
    against pass^k plug-in)."""
    method = " ".join(_text(example_site / "methodology.html").split())
    intro = re.search(
        r"at least one of (\d+) runs passes is (\d\.\d{3}), yet the chance that all \1 pass "
        r"is only (\d\.\d{3}) \(both unbiased estimates\)",
        method,
    )
    assert intro, "the methodology's opening contrast is missing"
    k, at_k, hat_k = intro.groups()
    assert f"pass^{k}, unbiased {hat_k} " in method and f"pass@{k} {at_k} " in method
    faq = " ".join(_text(example_site / "faq.html").split())
    table = re.search(rf"pass@{k} (\d\.\d{{3}}) .*?pass\^{k}, unbiased (\d\.\d{{3}})", faq)
    assert table and table.groups() == (at_k, hat_k)
    miss = re.search(
        r"only with probability (\d\.\d{3}), yet fails at least one of \d+ runs with "
        r"probability (\d\.\d{3}) \(both from the unbiased estimates\)",
        faq,
    )
    assert miss, "the FAQ's contrast is missing"
    assert float(miss[1]) == round(1 - float(at_k), 3)
    assert float(miss[2]) == round(1 - float(hat_k), 3)


def _table_rows(page: Path, table_id: str) -> list[list[str]]:
    """The body rows of one table, each as its cells' text."""
    text = page.read_text(encoding="utf-8")
    start = text.index(f'<caption id="{table_id}">')
    body = text[start : text.index("</table>", start)]
    return [
        [_words(cell).strip() for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body.partition("<tbody>")[2], re.S)
    ]


def test_task_test_tables_list_calls_before_changes_within_noise(example_site: Path) -> None:
    # agent-beta's last step has one task improved beyond noise among many within it.
    page = example_site / "sets" / "agent-beta-support-desk" / "trend.html"
    verdicts = [row[-1] for row in _table_rows(page, "trend-task-tests")]
    assert "improved" in verdicts and "within noise" in verdicts
    order = ["regressed", "improved", "within noise"]
    ranks = [order.index(v) for v in verdicts]
    assert ranks == sorted(ranks), verdicts


def test_compare_page_signs_its_differences_and_ranks_by_the_headline(
    example_site: Path,
) -> None:
    report = json.loads((example_site / "report.json").read_text(encoding="utf-8"))
    signed = re.compile(r"[+-]\d\.\d{3}|0\.000|n/a")
    for comparison in report["comparisons"]:
        page = example_site / comparison["page"]
        rows = _table_rows(page, "compare-table-2")
        assert len(rows) == comparison["shared_tasks"]
        for row in rows:
            assert all(signed.fullmatch(cell) for cell in row[3:]), row
        # Shown in report.json's order, which runs by the headline difference.
        headline = comparison["headline"]
        assert [row[0].split()[0] for row in rows] == [t["id"] for t in comparison["tasks"]]
        lead = [t["difference"][headline] for t in comparison["tasks"]]
        assert lead == sorted(lead)
        for row in _table_rows(page, "compare-table-1"):
            assert signed.fullmatch(row[1]), row
        changes = [row[3] for row in _table_rows(page, "compare-task-tests")]
        assert changes and all(signed.fullmatch(cell) for cell in changes)


def test_trend_chart_marks_only_the_change_it_tested(example_site: Path) -> None:
    report = json.loads((example_site / "report.json").read_text(encoding="utf-8"))
    for set_id, builds in report["history"]["trends"].items():
        page = (example_site / "sets" / set_id / "trend.html").read_text(encoding="utf-8")
        marks = re.findall(
            r'aria-label="build: ([^;]+); [^"]*series: ([^;]+); marked: ([^"]+)"', page
        )
        assert marks, set_id
        by_build = {b["label"]: b for b in builds}
        for shown, series, marked in marks:
            point = by_build[shown]
            followed = (
                f"reliability@k {'unbiased' if point['headline'] == 'unbiased' else 'plug-in'}"
            )
            if point["change"] is None or series != followed:
                assert marked == "change not tested", (set_id, build, series)
            else:
                significant = point["change"]["significant"]
                assert marked == ("changed beyond noise" if significant else "within noise")
    # The example has builds whose headline moved beyond noise, and its pass rate is
    # never marked so (it was not tested).
    text = (example_site / "sets" / "agent-beta-support-desk" / "trend.html").read_text()
    assert "series: reliability@k unbiased; marked: changed beyond noise" in text
    assert "series: pass rate; marked: changed beyond noise" not in text


def test_trend_pages_count_their_builds_against_the_history(example_site: Path) -> None:
    report = json.loads((example_site / "report.json").read_text(encoding="utf-8"))
    everything = len(report["history"]["builds"])
    for set_id, builds in report["history"]["trends"].items():
        text = " ".join(_text(example_site / "sets" / set_id / "trend.html").split())
        if len(builds) < everything:
            assert f"In {len(builds)} of the {everything} builds in history.jsonl" in text
        else:
            assert f"{everything} builds in history.jsonl" in text
    # The example has a set that joined the history late.
    assert any(len(b) < everything for b in report["history"]["trends"].values())
    overview = " ".join(_text(example_site / "index.html").split())
    for rs in report["result_sets"]:
        runs = sum(t["runs"] for t in rs["tasks"])
        assert f"{runs} evaluated runs · {rs['excluded_runs']} excluded" in overview


def test_task_pages_give_tied_tasks_their_shared_places(example_site: Path) -> None:
    report = json.loads((example_site / "report.json").read_text(encoding="utf-8"))
    tied_somewhere = False
    for rs in report["result_sets"]:
        values = sorted(t["pass_hat_k"]["plugin"]["estimate"] for t in rs["tasks"])
        for task in rs["tasks"]:
            if task["page"] is None:
                continue
            value = task["pass_hat_k"]["plugin"]["estimate"]
            first, last = values.index(value) + 1, len(values) - values[::-1].index(value)
            text = " ".join(_text(example_site / task["page"]).split())
            place = f"rank {first}" if first == last else f"tied at ranks {first}–{last}"
            tied_somewhere |= first != last
            assert f"{place} of {len(values)} by plug-in pass^{report['k']}" in text, task["id"]
    assert tied_somewhere


def test_content_tables_mark_their_header_cells_as_column_headers(example_site: Path) -> None:
    for name in ("methodology.html", "faq.html"):
        page = (example_site / name).read_text(encoding="utf-8")
        cells = re.findall(r"<th\b[^>]*>", page)
        assert cells and all('scope="col"' in cell for cell in cells), name


def test_content_formulas_are_boxes_a_keyboard_can_scroll(example_site: Path) -> None:
    """A formula (a code block) scrolls sideways in its own box on a phone, so the box
    takes focus, as a table's wrapper does; tests/test_browser.py looks at them."""
    page = (example_site / "methodology.html").read_text(encoding="utf-8")
    blocks = re.findall(r"<pre\b[^>]*>", page)
    assert len(blocks) > 3 and all(block == '<pre tabindex="0">' for block in blocks), blocks


def test_compare_page_states_both_holm_families(example_site: Path) -> None:
    report = json.loads((example_site / "report.json").read_text(encoding="utf-8"))
    for comparison in report["comparisons"]:
        family = comparison["task_tests"]["family"]
        text = _text(example_site / comparison["page"])
        assert re.search(rf"across the {family['lower']} tasks? whose counts could show it", text)
        assert f"across the {family['higher']} that could show that" in text


def test_an_interval_said_to_exclude_zero_prints_bounds_of_one_sign(example_site: Path) -> None:
    number = r"(-?\d+(?:\.\d+)?(?:e-?\d+)?)"
    seen = 0
    for page in html_pages(example_site):
        for row in re.findall(r"<tr>.*?</tr>", page.read_text(encoding="utf-8"), re.S):
            if "excludes 0" not in row:
                continue
            low, high = map(float, re.findall(rf"\[{number}, {number}\]", _words(row))[-1])
            assert low > 0 or high < 0, (page, low, high)
            seen += 1
    assert seen  # the example has such rows (its 2026-10 build's low bound is 5e-05)


def test_a_suite_where_every_run_passed_says_what_its_zero_width_means(tmp_path: Path) -> None:
    results = tmp_path / "runs.jsonl"
    results.write_text(
        "".join(
            json.dumps({"task": f"t{i}", "passed": True}) + "\n"
            for i in range(3)
            for _ in range(10)
        )
    )
    site = tmp_path / "site"
    assert run_cli(["build", str(results), "--output", str(site)]) == 0
    (page,) = site.glob("sets/*/index.html")
    text = " ".join(_text(page).split())
    assert "1.000 [1.000, 1.000]" in text
    assert (
        "all 3 tasks have the same pass^3 (plug-in 1.000, unbiased 1.000), so both intervals "
        "across tasks have zero width" in text
    )
    one = tmp_path / "one.jsonl"
    one.write_text("".join(json.dumps({"task": "only", "passed": i < 7}) + "\n" for i in range(10)))
    assert run_cli(["build", str(one), "--output", str(tmp_path / "one")]) == 0
    words = " ".join(_text(tmp_path / "one" / "index.html").split())
    assert "1 task · 10 evaluated runs" in words and "1 tasks" not in words


def test_only_http_links_come_from_data(tmp_path: Path) -> None:
    results = tmp_path / "runs.jsonl"
    results.write_text(json.dumps({"task": "t", "passed": True, "url": "javascript:alert(1)"}))
    assert run_cli(["build", str(results), "--output", str(tmp_path / "site")]) == 2
    assert not (tmp_path / "site").exists()


# ------------------------------------------------------------ deterministic and atomic


def test_two_builds_are_byte_identical(example_site: Path, tmp_path: Path) -> None:
    again = build_example(tmp_path / "again")
    assert tree(again) == tree(example_site)


def test_source_date_epoch_is_the_only_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    plain = build_example(tmp_path / "plain")
    assert "Built " not in (plain / "index.html").read_text()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    dated = build_example(tmp_path / "dated")
    assert "Built 2026-01-01." in (dated / "index.html").read_text()


def _previous_site(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    site = build_example(tmp_path / "site")
    return site, tree(site)


def test_bad_input_leaves_previous_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site, before = _previous_site(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": "a", "passed": true}\n{"task": "a", "passed": "maybe"}\n')
    assert run_cli(["build", str(bad), "--output", str(site)]) == 2
    assert f"{bad}:2:" in capsys.readouterr().err
    assert tree(site) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site")] == []


def test_template_error_leaves_previous_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site, before = _previous_site(tmp_path)
    broken = tmp_path / "theme"
    broken.mkdir()
    (broken / "task.html").write_text(
        "{% extends 'base.html' %}{% block main %}{{ oops(}}{% endblock %}"
    )
    config = str(ROOT / "example/reportgen.yaml")
    status = run_cli(["build", "--config", config, "-o", str(site), "--templates", str(broken)])
    assert status == 2
    assert "task.html:1: template error" in capsys.readouterr().err
    assert tree(site) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site")] == []


@pytest.mark.parametrize(
    ("expression", "reason"),
    first_fast(
        [
            ("{{ 1 / 0 }}", "ZeroDivisionError: division by zero"),
            ('{{ "%d" | format("x") }}', "TypeError: %d format"),
            ("{{ [1][5] }}", "list object has no element 5"),  # undefined, strictly
            ('{{ "{:d}".format("x") }}', "ValueError: Unknown format code"),
        ]
    ),
)
def test_failing_template_expression_is_a_located_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], expression: str, reason: str
) -> None:
    site, before = _previous_site(tmp_path)
    broken = tmp_path / "theme"
    broken.mkdir()
    (broken / "task.html").write_text(
        "{% extends 'base.html' %}{% block main %}\n<p>fine</p>\n" + expression + "{% endblock %}\n"
    )
    config = str(ROOT / "example/reportgen.yaml")
    status = run_cli(["build", "--config", config, "-o", str(site), "--templates", str(broken)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert f"{broken / 'task.html'}:3: template error: {reason}" in err
    assert "Traceback" not in err
    assert tree(site) == before


def test_a_failure_inside_reportgens_own_templates_is_not_blamed_on_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bug of reportgen's (here a filter that fails) keeps its traceback: only an
    # expression in the user's --templates is reported as their template error.
    def broken(value: object) -> str:
        raise ValueError("a bug in a filter")

    monkeypatch.setattr(theme_module, "fixed", broken)  # the pages' f3 filter
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task": "a", "passed": true}\n{"task": "b", "passed": false}\n')
    config = Config(output=tmp_path / "site")
    config.result_sets = [Source(path=runs)]
    with pytest.raises(ValueError, match="a bug in a filter"):
        build(config, progress=Progress(io.StringIO()), use_cache=False)


def test_interrupted_build_leaves_previous_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, before = _previous_site(tmp_path)
    real = render_module.Renderer._set_files
    calls = {"n": 0}

    def interrupt_midway(self, s):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        yield from real(self, s)

    monkeypatch.setattr(render_module.Renderer, "_set_files", interrupt_midway)
    config = str(ROOT / "example/reportgen.yaml")
    # --no-cache: otherwise the unchanged build is recognised and nothing is rendered.
    assert run_cli(["build", "--config", config, "-o", str(site), "--no-cache"]) == 130
    assert tree(site) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site")] == []


def _beside(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".site."))


def test_the_previous_site_is_removed_before_the_command_returns(tmp_path: Path) -> None:
    site, _ = _previous_site(tmp_path)
    config = str(ROOT / "example/reportgen.yaml")
    assert run_cli(["build", "--config", config, "-o", str(site), "--no-cache"]) == 0
    assert _beside(tmp_path) == []


def test_refuses_to_replace_a_folder_it_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    precious = tmp_path / "docs"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    config = ["build", "--config", str(ROOT / "example/reportgen.yaml"), "-o", str(precious)]
    assert run_cli(config) == 2
    assert "was not written by reportgen" in capsys.readouterr().err
    assert (precious / "thesis.tex").read_text() == "years of work"
    # Nor with --force: a folder without an index.html is no site (issue 38).
    assert run_cli([*config, "--force"]) == 2
    assert "is not a site (no index.html), so even --force" in capsys.readouterr().err
    assert (precious / "thesis.tex").read_text() == "years of work"
    # Another tool's site is replaced with --force.
    (precious / "index.html").write_text("an old site")
    assert run_cli([*config, "--force"]) == 0
    assert not (precious / "thesis.tex").exists() and (precious / MARKER).exists()


# ------------------------------------------------------------ theme and content overrides


def test_a_theme_stylesheet_goes_into_404_as_written(tmp_path: Path) -> None:
    """404.html holds the theme's stylesheet as text, not as template code: braces stay,
    and a `</style>` inside it cannot end the page's style element; a changed
    stylesheet changes the page on the next (cached) build."""
    theme = tmp_path / "theme"
    (theme / "assets").mkdir(parents=True)
    css = (
        "/* {{ site.title }} {% if %} </style><script>alert(1)</script> */\nmain { color: red; }\n"
    )
    (theme / "assets" / "style.css").write_text(css)
    site = build_example(tmp_path / "site", templates=theme)
    page = (site / "404.html").read_text()
    style = page[page.index("<style>") + len("<style>") : page.index("</style>")]
    assert style.strip() == css.replace("</", "<\\/").strip()
    assert "<script" not in page.replace("<\\/style><script>", "")
    assert (site / "assets" / "style.css").read_text() == css  # the file itself as given
    (theme / "assets" / "style.css").write_text("main { color: blue; }\n")
    site = build_example(tmp_path / "site", templates=theme)
    assert "main { color: blue; }" in (site / "404.html").read_text()


def test_user_templates_win_file_by_file(tmp_path: Path) -> None:
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "404.html").write_text("custom not found for {{ site.title }}")
    site = build_example(tmp_path / "site", templates=theme)
    assert (
        site / "404.html"
    ).read_text() == "custom not found for Support-desk agents — reliability report"
    builtin = package_folder("templates")
    assert "Skip to content" in (site / "index.html").read_text()  # base.html from the theme
    assert (builtin / "base.html").is_file()


def test_methodology_numbers_follow_their_inputs(tmp_path: Path) -> None:
    """Change a worked example's inputs in the front matter: the page changes with them."""
    site = build_example(tmp_path / "site")
    page = (site / "methodology.html").read_text()
    assert "0.512" in page and "3360" in page and "0.491" in page
    content = tmp_path / "content"
    content.mkdir()
    source = (package_folder("content") / "methodology.md").read_text()
    changed = source.replace("successes: 16", "successes: 15", 1)
    assert changed != source
    (content / "methodology.md").write_text(changed)
    site2 = build_example(tmp_path / "site2", content=content)
    page2 = (site2 / "methodology.html").read_text()
    assert "0.422" in page2 and "2730" in page2 and "0.399" in page2  # 15/20 cubed; C(15,3)/C(20,3)
    assert "3360" not in page2
    assert (site2 / "faq.html").read_bytes() == (site / "faq.html").read_bytes()


def test_pages_and_build_say_undefined_without_the_json_word_null(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs.jsonl"
    lines = [
        f'{{"task": "t{i}", "passed": {str(j <= i).lower()}}}' for i in range(3) for j in range(2)
    ]
    runs.write_text("\n".join(lines) + "\n")
    site = tmp_path / "site"
    assert run_cli(["build", str(runs), "-o", str(site), "-k", "3"]) == 0
    said = "every task has fewer than k = 3 runs, so unbiased pass^3, pass@3 and reliability@3"
    (set_page,) = site.glob("sets/*/index.html")
    page = set_page.read_text()
    assert f"{said} are undefined; the plug-in estimates stand" in page
    assert "(null)" not in page
    # The build's terminal output says what the page's notes say, as summary does.
    err = capsys.readouterr().err
    (name,) = json.loads((site / "report.json").read_text())["result_sets"]
    assert f"warning: {name['name']}: {said}" in " ".join(err.split())
    assert "(null)" not in err
    assert any(f"{said} are undefined (null)" in w for w in name["warnings"])
    # A rebuild that keeps every file says the same: a CI log with a warm cache
    # must not lose the warnings, nor which format each input was read as.
    assert run_cli(["build", str(runs), "-o", str(site), "-k", "3"]) == 0
    again = capsys.readouterr().err
    assert "nothing changed: kept every file" in again
    assert again.replace(again.splitlines()[-1], "") == err.replace(err.splitlines()[-1], "")
    assert f"read {runs} (jsonl, detected)" in again


def test_content_tables_are_named_after_the_heading_above_them(example_site: Path) -> None:
    page = (example_site / "methodology.html").read_text()
    labels = re.findall(
        r'<div class="table-wrap" role="region" tabindex="0" aria-label="([^"]*)">', page
    )
    assert len(labels) == page.count("<table>")
    assert labels[:2] == ["Worked example: one task, table 1", "Worked example: a suite, table 2"]
    assert len(set(labels)) == len(labels)  # each region's name is its own
    label = theme_module._table_label('<h2 id="x">pass^k &amp; <code>n</code></h2><p>t</p>', 4)
    assert label == "pass^k & n, table 4"
    assert theme_module._table_label("<p>no heading</p>", 1) == "Table 1"


def test_faq_answers_the_spec_questions(example_site: Path) -> None:
    page = (example_site / "faq.html").read_text()
    for phrase in ("standard term", "pass@k", "plug-in or unbiased", "1.000", "How many runs"):
        assert phrase in page, phrase
    assert "fewer than k" in page.lower() or "fewer than" in page


# ------------------------------------------------------------ feedback


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_and_summary_line(tmp_path: Path) -> None:
    stream = _Terminal()
    config = Config(
        output=tmp_path / "site",
        result_sets=[Source(ROOT / "tests/fixtures/tau-bench/gpt-4o-airline-small.json")],
    )
    result = build(config, progress=Progress(stream))
    assert "\r" in stream.getvalue()
    assert "tau-bench, detected" in stream.getvalue()
    assert result.pages == len(html_pages(tmp_path / "site")) and result.result_sets == 1


def test_a_dumb_terminal_gets_no_line_redraws(monkeypatch: pytest.MonkeyPatch) -> None:
    """TERM=dumb (Emacs' shell) shows \\x1b[K as it is."""
    monkeypatch.setenv("TERM", "dumb")
    stream = _Terminal()
    progress = Progress(stream)
    progress.update("reading inputs")
    progress.note("read r.jsonl")
    assert stream.getvalue() == "read r.jsonl\n"
    monkeypatch.setenv("TERM", "xterm")
    assert Progress(_Terminal()).live


def test_build_prints_one_line_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixture = ROOT / "tests/fixtures/tau-bench/gpt-4o-airline-small.json"
    assert run_cli(["build", str(fixture), "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert re.search(r"built \d+ pages for 1 result set .* in \d+\.\d s: .*out/", err)
    assert "\r" not in err  # not a terminal: no progress redraws
    assert os.path.isfile(tmp_path / "out" / "index.html")


def test_parallel_rendering_gives_the_same_bytes(
    example_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large suites render task pages in forked workers; the site must not change."""
    monkeypatch.setattr(render_module, "PARALLEL_MIN_PAGES", 1)
    monkeypatch.setattr(render_module, "_CHUNK", 7)
    assert render_module._worker_count(40) >= 1
    parallel = build_example(tmp_path / "parallel")
    assert tree(parallel) == tree(example_site)


# ------------------------------------------------------------ incremental rebuilds


def _cli_build(site: Path, *extra: str) -> str:
    err = io.StringIO()
    from contextlib import redirect_stderr

    with redirect_stderr(err):
        status = main(
            ["build", "--config", str(ROOT / "example/reportgen.yaml"), "-o", str(site), *extra]
        )
    assert status == 0, err.getvalue()
    return err.getvalue()


def test_unchanged_rebuild_reuses_everything_and_says_so(tmp_path: Path) -> None:
    site = tmp_path / "site"
    first = _cli_build(site)
    assert "reused" not in first and "nothing changed" not in first
    before = tree(site)
    again = _cli_build(site)
    assert "nothing changed: kept every file" in again
    assert tree(site) == before


def test_template_change_reuses_inputs_and_charts_and_matches_a_clean_build(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    first = _cli_build(site)
    pages = int(re.search(r"built (\d+) pages", first).group(1))  # type: ignore[union-attr]
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "404.html").write_text("gone {{ site.title }}")
    note = _cli_build(site, "--templates", str(theme))
    # In one process the report itself is kept (as `serve` does); from the command
    # line the parsed inputs come from the cache. Only 404.html is made again.
    assert f"26 charts and {pages - 1} unchanged pages from the cache" in note
    assert "parsed inputs" in note
    clean = tmp_path / "clean"
    _cli_build(clean, "--templates", str(theme), "--no-cache")
    assert tree(site) == tree(clean)


def test_charts_are_drawn_again_when_the_drawing_code_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reportgen import code

    site = tmp_path / "site"
    _cli_build(site)
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "404.html").write_text("gone")
    assert "26 charts" in _cli_build(site, "--templates", str(theme))
    # chart.py edited, or vl-convert upgraded: the cached SVGs are not reused.
    identity = code.identity()
    monkeypatch.setattr(code, "identity", lambda: identity + "-changed")
    (theme / "404.html").write_text("gone again")
    assert not re.search(r"\d+ charts", _cli_build(site, "--templates", str(theme)))


def test_changed_input_is_read_again(tmp_path: Path, example_copy: Path) -> None:
    config = example_copy / "reportgen.yaml"
    site = tmp_path / "site"

    def build_copy() -> str:
        err = io.StringIO()
        from contextlib import redirect_stderr

        with redirect_stderr(err):
            assert main(["build", "--config", str(config), "-o", str(site)]) == 0
        return err.getvalue()

    build_copy()
    results = example_copy / "results" / "agent-beta.jsonl"
    results.write_text(
        results.read_text() + '{"suite": "support-desk", "model": "agent-beta", '
        '"task": "brand-new", "passed": true}\n'
    )
    note = build_copy()
    assert "parsed inputs" not in note and "nothing changed" not in note
    assert "brand-new" in (site / "report.json").read_text()


def test_a_large_suite_gets_the_least_reliable_tasks_and_a_distribution(tmp_path: Path) -> None:
    """Beyond 60 tasks the forest plot draws the 60 least reliable and says where the
    others are; a histogram shows all of them."""
    results = tmp_path / "many.jsonl"
    lines = [
        json.dumps({"task": f"t{t:03d}", "passed": (t * 7 + r) % 10 < t % 10})
        for t in range(150)
        for r in range(6)
    ]
    results.write_text("\n".join(lines) + "\n")
    site = tmp_path / "site"
    assert run_cli(["build", str(results), "-o", str(site)]) == 0
    report = json.loads((site / "report.json").read_text())
    page = (site / report["result_sets"][0]["page"]).read_text()
    assert "The 60 least reliable of 150 tasks" in page
    assert 'id="chart-distribution"' in page
    forest = page[page.index('id="chart-forest"') : page.index('id="chart-distribution"')]
    assert '90 more tasks, none less reliable than these, in <a href="#tasks-heading">' in forest
    assert 'id="tasks-heading"' in page
    # Ties go by id, as in the plot.
    least = sorted(
        report["result_sets"][0]["tasks"],
        key=lambda t: (t["pass_hat_k"]["plugin"]["estimate"], t["id"]),
    )
    drawn = set(re.findall(r">(t\d{3})</text>", forest))
    assert drawn == {t["id"] for t in least[:60]}


def test_past_the_table_the_forest_plot_points_to_tasks_csv(tmp_path: Path) -> None:
    """Past TABLE_ROWS tasks the table lists only the least reliable: the note under
    the forest plot says how many of the rest it holds, and where all of them are."""
    from reportgen.website.render import TABLE_ROWS

    tasks = TABLE_ROWS + 200
    results = tmp_path / "many.jsonl"
    lines = [
        json.dumps({"task": f"t{t:04d}", "passed": (t * 7 + r) % 10 < t % 10})
        for t in range(tasks)
        for r in range(4)
    ]
    results.write_text("\n".join(lines) + "\n")
    site = tmp_path / "site"
    assert run_cli(["build", str(results), "-o", str(site), "--task-pages", "none"]) == 0
    (page,) = site.glob("sets/*/index.html")
    text = page.read_text()
    assert (
        f"{tasks - 60:,} more tasks, none less reliable than these, the next "
        f'{TABLE_ROWS - 60:,} in <a href="#tasks-heading">the table below</a> and all of them '
        'in <a href="tasks.csv">tasks.csv</a>.'
    ) in text
    table = text[text.index('<table class="tasks') :]
    assert table[: table.index("</table>")].count('<tr><th scope="row">t') == TABLE_ROWS
    assert len(list(csv.reader((page.parent / "tasks.csv").open()))) == tasks + 1


def test_page_count_matches_the_pages_a_build_writes() -> None:
    """build's progress counts pages with page_count; it must match what render_site yields."""
    from reportgen.config import load_config
    from reportgen.history import read_history
    from reportgen.readers import load_sources
    from reportgen.report import build_report
    from reportgen.website.render import page_count
    from reportgen.website.theme import Theme

    from .conftest import EXAMPLE, ROOT

    config = load_config(EXAMPLE)
    loaded = load_sources(config.result_sets)
    assert config.history is not None
    history = (read_history(config.history), "this build")
    report = build_report(loaded.result_sets, "t", "", config.k, config.confidence, history)
    golden = ROOT / "tests" / "golden" / "example-site"
    assert page_count(report, Theme.from_folders(None, None)) == sum(
        1 for _ in golden.rglob("*.html")
    )


def _suite_site(tmp_path: Path, counts: list[tuple[int, int]], *flags: str) -> Path:
    suite = tmp_path / "suite.yaml"
    tasks = "".join(
        f"  - {{id: t{i}, successes: {c}, runs: {n}}}\n" for i, (c, n) in enumerate(counts)
    )
    suite.write_text(f"suite: s\ntasks:\n{tasks}")
    site = tmp_path / "site"
    assert main(["build", str(suite), "-o", str(site), *flags]) == 0
    return site


def _text(page: Path) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page.read_text())))


@pytest.mark.parametrize(
    ("counts", "spread"),
    [
        (
            [(5, 5)] * 4,
            "assume an sd of 0.500, about the most pass^3 can spread across many tasks, "
            "since this suite's tasks do not spread at all",
        ),
        (
            [(1, 4)],
            "assume an sd of 0.500, about the most pass^3 can spread across many tasks, "
            "since this suite's single task has no spread",
        ),
        ([(1, 4), (4, 4), (2, 4)], "use this suite's spread of pass^3 across tasks (sd "),
    ],
)
def test_planning_says_where_its_task_spread_comes_from(
    tmp_path: Path, counts: list[tuple[int, int]], spread: str
) -> None:
    text = _text(_suite_site(tmp_path, counts) / "sets" / "s" / "index.html")
    assert spread in text
    if len(counts) == 1:
        assert "needs at least 2 shared tasks" in text and "With these" not in text
        assert (
            "Forest plot of 1 task."
            in (tmp_path / "site" / "sets" / "s" / "index.html").read_text()
        )
        assert "1 of 1 task (100.0%) is flaky: it passed in some runs" in text
        # The overview's card points at the page's notes (one task: no interval).
        overview = (tmp_path / "site" / "index.html").read_text()
        assert '<a href="sets/s/index.html#notes-s">1 note</a> on its page' in overview
        assert 'id="notes-s"' in (tmp_path / "site" / "sets" / "s" / "index.html").read_text()
        assert "no interval: it needs at least two tasks" in overview and "[n/a]" not in overview
    else:
        assert f"With these {len(counts)} tasks, a comparison" in text
    if all(c == n for c, n in counts) and len(counts) > 1:
        # Two intervals of no width: no sentence comparing their widths.
        assert "Here the bootstrap interval is" not in text


def test_k_of_one_reads_as_one_run(tmp_path: Path) -> None:
    site = _suite_site(tmp_path, [(0, 1), (3, 4)], "-k", "1")
    assert "the chance that one run of a task passes." in _text(site / "index.html")
    task = _text(site / "sets" / "s" / "tasks" / "t0.html")
    assert "0 of 1 evaluated run passed" in task
    other = _text(site / "sets" / "s" / "tasks" / "t1.html")
    assert "the chance that one of these runs, drawn at random, passed." in other
    assert "the same chance, as one run is all there is to pass." in other


def test_a_curve_cut_short_by_a_task_with_few_runs_says_so(tmp_path: Path) -> None:
    site = _suite_site(tmp_path, [(1, 2), (3, 4), (4, 4)])  # k = 3, one task of 2 runs
    page = (site / "sets" / "s" / "index.html").read_text()
    curve = page[page.index('id="chart-curve"') : page.index('id="chart-gap"')]
    assert "for k = 1 to 2 (the fewest runs of any task), 95% bands" in curve
    assert "It stops at k = 2, the fewest runs of any task, before this page" in curve
    # Whole k on its axis, and the numbers behind it right below it.
    ticks = re.findall(r">(\d+(?:\.\d+)?)</text>", curve.split("<details>")[0])
    assert "1.5" not in ticks and "1" in ticks and "2" in ticks
    assert "Numbers behind the curve chart" in curve


def test_a_variance_that_cannot_be_split_says_why(tmp_path: Path) -> None:
    site = _suite_site(tmp_path, [(1, 1), (3, 5), (1, 4)])  # one task of a single run
    text = _text(site / "sets" / "s" / "index.html")
    assert (
        "The variance across tasks is not split into noise and difficulty here: 1 task has a "
        "single run, which leaves no sampling variance to estimate" in text
    )
    assert "(null)" not in text


def test_a_flat_curve_is_not_said_to_fall(tmp_path: Path) -> None:
    page = (_suite_site(tmp_path, [(5, 5), (4, 4)]) / "sets" / "s" / "index.html").read_text()
    assert "are the same at every k, as every run of every task agrees" in page
    assert "falls as k grows" not in page
