"""Render: the report model and charts in, HTML pages and data files out.

The pages are rendered in the theme's environment (theme.py: its folders, filters
and template keys). Pages are yielded one at a time so the writer can stream them
to disk.

Every link between pages is relative (`root` is the way back to the site root),
so the site works from file:// and under any sub-path, as GitHub Pages project
sites are served.
"""

from __future__ import annotations

import csv
import io
import itertools
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import jinja2
import orjson
from jinja2.exceptions import SecurityError
from markupsafe import Markup

from ..errors import UserError
from ..history import HISTORY_FILE, TrendPoint, history_bytes
from ..keys import key
from ..report import Report, SetReport
from ..settings import BuildSettings, TaskPages
from ..views import report_json
from .badges import badge_json, badge_message, badge_svg, sitemap, snippets, snippets_markdown
from .calculator import SCRIPT_PATH, calculator_script, suite_link, task_link, worked_examples
from .charts import FOREST_ROWS, Chart, PendingCharts, SiteCharts
from .content import TaskExample, front_matter, task_view
from .content_worker import ContentTexts, content_page, read_content
from .rows import comparison_table_rows, run_grid, run_strip, task_csv_rows, task_table_rows
from .theme import Theme, environment, template_key
from .write import KEEP, Keep, Written, write_staged

#: task_pages: all makes at most this many task pages; beyond it the build asks
#: for flaky, worst: N or none (a site of 100,000 pages is slow to write and to use).
MAX_TASK_PAGES = 20_000
#: A set page's task table shows at most this many rows (the least reliable);
#: tasks.csv and report.json keep every task.
TABLE_ROWS = 500
#: The run grid draws at most this many runs of each of those tasks (the first, in run
#: order; a task page shows them all): fifty about fill a desktop window, and 500 rows
#: of them are 25,000 cells, some 600 kB of HTML.
GRID_RUNS = 50


def task_pages_text(setting: TaskPages) -> str:
    mode, n = setting
    return f"worst: {n}" if mode == "worst" else mode


def tasks_with_pages(s: SetReport, setting: TaskPages) -> frozenset[int]:
    """The indices of the set's tasks that get a page under the task_pages setting."""
    mode, n = setting
    if mode == "none":
        return frozenset()
    if mode == "flaky":
        # Neither always passing nor always failing.
        return frozenset(i for i, t in enumerate(s.tasks) if 0 < t.successes < t.runs)
    if mode == "worst":
        return frozenset(s.order_least_reliable()[:n])
    return frozenset(range(len(s.tasks)))


def pages_by_set(report: Report, setting: TaskPages) -> dict[str, frozenset[int]]:
    """tasks_with_pages for every set; refuses task_pages: all beyond MAX_TASK_PAGES."""
    chosen = {s.id: tasks_with_pages(s, setting) for s in report.sets}
    total = sum(len(pages) for pages in chosen.values())
    if setting[0] == "all" and total > MAX_TASK_PAGES:
        raise UserError(
            f"task_pages: all would make {total:,} task pages, more than {MAX_TASK_PAGES:,}; "
            "set task_pages: flaky, worst: N or none in the config (or --task-pages "
            "flaky, worst:N or none); the set pages, tasks.csv and report.json still list "
            "every task"
        )
    return chosen


def _depth_root(path: str) -> str:
    return "../" * path.count("/")


class Renderer:
    """Every file of a site, from the report and its charts, in a fixed order.

    A page's key is its template's key (theme.template_key), the settings every
    page sees and the key of the data its context holds; a page of the previous
    build with the same key comes as KEEP, for the writer to keep that file. So a
    page's context holds only what its key covers: a set's pages get that set and
    its own trend, and only the overview and report.json get the whole report.
    """

    def __init__(
        self,
        report: Report,
        charts: SiteCharts | PendingCharts,
        theme: Theme,
        settings: BuildSettings,
        reusable: Mapping[str, str] | None = None,
        content: ContentTexts | None = None,
        content_ready: Callable[[], None] | None = None,
    ) -> None:
        self.report = report
        self._charts = charts if isinstance(charts, PendingCharts) else PendingCharts.ready(charts)
        #: Called before the first content page: waits for a ContentWorker's pages.
        self._content_ready = content_ready
        self._orders: dict[str, list[int]] = {}
        self.theme = theme
        self.settings = settings
        self.env = environment(theme)
        #: Pages of the previous build that may be kept: path -> key.
        self.reusable = reusable or {}
        #: What each file was made from, as a key, for the next build to keep it.
        self.keys: dict[str, str] = {}
        #: The folder write_site stages the site in, once it has made it (set_staging):
        #: rendering workers then write their pages into it themselves.
        self.staging: str | None = None
        #: How many pages of the previous build were kept.
        self.kept = 0
        self._template_keys: dict[str, str | None] = {}
        self.site = settings.site
        # Content pages are read up front: their titles make the navigation, which
        # is the same on every page. They are rendered only when not kept.
        self.content: dict[str, tuple[str, str, dict[str, Any]]] = {}
        texts = read_content(theme) if content is None else content
        for name, (source, text) in texts.items():
            self.content[name] = (source, text, front_matter(text, source))
        ordered = sorted(
            self.content.items(),
            key=lambda item: (item[1][2].get("order", 99), item[0]),
        )
        self.nav = [
            {"title": "Overview", "href": "index.html"},
            *(
                {"title": str(meta.get("title", name.title())), "href": f"{name}.html"}
                for name, (_, _, meta) in ordered
                if meta.get("nav", True)
            ),
            {"title": "Calculator", "href": CALCULATOR_PAGE},
        ]
        #: Which tasks of each set have a page (task_pages): links go only to these.
        self.with_pages = pages_by_set(report, settings.task_pages)
        # What every page's context holds besides its own data: the settings and the
        # navigation. The data keys: a set's own, from what was read for it, the
        # numbers' settings and the earlier builds (its trend); the whole report's.
        self.every_page = key("every page", self.settings, self.nav)
        history = report.history
        # The earlier builds, which every set's trend is made from besides its own numbers.
        earlier = (
            None
            if history is None
            else (history.label, [e for e in history.entries if e.get("label") != history.label])
        )
        # Robustness puts a set run under a perturbation and its baseline on each
        # other's pages.
        by_id = {s.id: s for s in report.sets}
        self.related = {s.id: [by_id[i] for i in s.related] for s in report.sets}
        self.set_keys = {
            s.id: key(
                "set",
                s.result_set,
                s.id,
                report.k,
                report.confidence,
                earlier,
                [(r.id, r.result_set) for r in self.related[s.id]],
            )
            for s in report.sets
        }
        # The comparisons are made from the sets alone.
        self.report_key = key("report", self.set_keys, report.skipped, earlier)

    def set_staging(self, folder: str) -> None:
        self.staging = folder

    def page_count(self) -> int:
        """How many HTML pages pages() yields (for progress messages)."""
        return page_count(self.report, self.theme, self.settings.task_pages)

    # -- helpers

    def _context(self, path: str, context: dict[str, Any]) -> dict[str, Any]:
        """What a page's template is given: the site's own values and the page's."""
        return {
            "site": self.site,
            "root": _depth_root(path),
            "path": path,
            "nav": self.nav,
            "options": self.settings,
            **context,
        }

    def _page(self, template: str, path: str, **context: Any) -> tuple[str, bytes]:
        try:
            html = self.env.get_template(template).render(self._context(path, context))
        except jinja2.TemplateNotFound as error:
            raise UserError(f"template {error.name!r} not found in {self._folders()}") from None
        except jinja2.TemplateSyntaxError as error:
            raise UserError(
                f"{error.filename or template}:{error.lineno}: template error: {error.message}"
            ) from None
        except jinja2.UndefinedError as error:
            where = _template_place(error) or template
            raise UserError(f"{where}: template error: {error}") from None
        except SecurityError as error:
            where = _template_place(error) or template
            raise UserError(
                f"{where}: template refused: {error} (a theme's templates run in Jinja's "
                "sandbox; see the README's section on themes)"
            ) from None
        except RecursionError:
            raise UserError(
                f"{template}: template error: it never finishes: a template includes, imports "
                "or extends itself, directly or through others"
            ) from None
        except (ArithmeticError, LookupError, TypeError, ValueError) as error:
            # An expression of the user's own templates failed ({{ 1/0 }}, "%d"|format("x")):
            # their mistake, told with its place rather than as a traceback. Raised from
            # reportgen's templates alone it is reportgen's bug, and keeps its traceback.
            place = _template_place(error, self.theme.templates[:-1])
            if place is None:
                raise
            raise UserError(f"{place}: template error: {type(error).__name__}: {error}") from None
        return path, html.encode("utf-8")

    def _folders(self) -> str:
        return ", ".join(str(p) for p in self.theme.templates)

    # -- which pages the previous build already made

    def _template_key(self, name: str) -> str | None:
        """A hash of a template and every template it extends, includes or imports."""
        if name not in self._template_keys:
            self._template_keys[name] = template_key(self.env, name)
        return self._template_keys[name]

    def _kept(self, template: str | None, path: str, data_key: str) -> tuple[str, Keep] | None:
        """Records the file's key; returns the previous build's file if it may be kept.
        `template` is None for a file made without one (report.json, tasks.csv)."""
        made_by = self._template_key(template) if template is not None else "data"
        if made_by is None:
            return None  # a template that cannot be followed: always rendered
        page_key = key(path, made_by, self.every_page, data_key)
        self.keys[path] = page_key
        if self.reusable.get(path) != page_key:
            return None
        if path.endswith(".html"):
            self.kept += 1
        return path, KEEP

    # -- pages

    def pages(self) -> Iterator[tuple[str, bytes | Written | Keep]]:
        """Every file of the site as (relative path, bytes), in a fixed order.

        A page whose template and data are those of a page of the previous build
        comes as KEEP instead, for the writer to keep that build's file.
        """
        html_pages: list[str] = []
        for name, data in self._files():
            if name.endswith(".html") and name != "404.html":
                html_pages.append(name)
            yield name, data
        if self.settings.base_url:
            yield "sitemap.xml", sitemap(self.settings.base_url, html_pages)

    def _files(self) -> Iterator[tuple[str, bytes | Written | Keep]]:
        """The pages without charts first, so that charts are drawn meanwhile; the
        order of files does not change them (the sitemap is sorted)."""
        report = self.report
        pooled = any(_worker_count(len(pages)) > 1 for pages in self.with_pages.values())
        if not pooled:
            # Otherwise the charts start once task-page workers are busy (_task_pages):
            # the workers are forked first, so they do not copy the chart specs.
            self._charts.start()
        yield self._not_found_page()
        yield self._kept("calculator.html", CALCULATOR_PAGE, "") or self._page(
            "calculator.html",
            CALCULATOR_PAGE,
            examples=worked_examples(report.k, report.confidence),
        )
        for s in report.sets:
            yield from self._set_files(s)
        yield from self._content_pages()
        charts = self._charts.get()
        yield self._kept("index.html", "index.html", self.report_key) or self._page(
            "index.html",
            "index.html",
            report=report,
            history=report.history,
            charts=charts.overview,
        )
        for s in report.sets:
            yield self._set_page(s, charts.by_set[s.id])
        for c in report.comparisons:
            yield self._kept(
                "compare.html", c.page, key(self.set_keys[c.a.id], self.set_keys[c.b.id])
            ) or self._page(
                "compare.html",
                c.page,
                c=c,
                rows=comparison_table_rows(c, self.with_pages),
                charts=charts.by_comparison[c.id],
            )
        if report.history is not None:
            yield HISTORY_FILE, history_bytes(report.history.entries)
            for s in report.sets:
                yield self._trend_page(s, charts.by_trend[s.id])
        # report.json holds what the overview shows: every set, the site and the history.
        yield self._kept(None, "report.json", self.report_key) or (
            "report.json",
            _json_bytes(report_json(report, self.with_pages)),
        )
        yield (
            "report.schema.json",
            (Path(__file__).resolve().parent.parent / "report.schema.json").read_bytes(),
        )
        assets = self.theme.asset_files()
        for name, path in assets.items():
            yield name, path.read_bytes()
        if SCRIPT_PATH not in assets:  # a theme may ship its own build of the script
            yield SCRIPT_PATH, calculator_script(*self.theme.templates)

    def _not_found_page(self) -> tuple[str, bytes | Keep]:
        """404.html carries the theme's stylesheet and icon in itself (it is served at any
        depth): their text goes in as data, never read as template code, so a `{{` in
        a stylesheet is kept as written; a `</` cannot end the <style> early."""
        assets = self.theme.asset_files()

        def text(name: str) -> str:
            path = assets.get(name)
            return path.read_text("utf-8", errors="replace") if path is not None else ""

        css, icon = text("assets/style.css").replace("</", "<\\/"), text("assets/favicon.svg")
        return self._kept("404.html", "404.html", key(css, icon)) or self._page(
            "404.html", "404.html", style_css=Markup(css.rstrip()), favicon_svg=icon.strip()
        )

    def _content_pages(self) -> Iterator[tuple[str, bytes | Keep]]:
        if self._content_ready is not None:
            self._content_ready()
        for name, (source, text, _) in self.content.items():
            page = f"{name}.html"
            kept = self._kept("content.html", page, key(source, text))
            if kept is not None:
                yield kept
                continue
            body, meta = content_page(text, self.site, source)
            yield self._page("content.html", page, body=body, meta=meta)

    def _least_reliable(self, s: SetReport) -> list[int]:
        """s.order_least_reliable(), sorted once per set (a large set takes a while)."""
        if s.id not in self._orders:
            self._orders[s.id] = s.order_least_reliable()
        return self._orders[s.id]

    def _trend(self, s: SetReport) -> list[TrendPoint] | None:
        return None if self.report.history is None else self.report.history.trends[s.id]

    def _set_page(self, s: SetReport, charts: list[Chart]) -> tuple[str, bytes | Keep]:
        order = self._least_reliable(s)
        return self._kept("set.html", s.page, self.set_keys[s.id]) or self._page(
            "set.html",
            s.page,
            s=s,
            related=self.related[s.id],
            trend=self._trend(s),
            task_rows=task_table_rows(s, order[:TABLE_ROWS], self.with_pages[s.id]),
            table_rows=TABLE_ROWS,
            # The runs of the same tasks as the table, in its order (the forest plot's).
            grid=run_grid(s, order[:TABLE_ROWS], GRID_RUNS, self.with_pages[s.id]),
            grid_runs=GRID_RUNS,
            task_pages=len(self.with_pages[s.id]),
            task_pages_setting=task_pages_text(self.settings.task_pages),
            charts=charts,
            forest_rows=FOREST_ROWS,
            snippets=snippets(self.report, s, self.settings.base_url),
            badge=badge_message(s),
            calculator=suite_link(s, s.estimates.k, s.estimates.confidence),
        )

    def _trend_page(self, s: SetReport, charts: list[Chart]) -> tuple[str, bytes | Keep]:
        page = f"sets/{s.id}/trend.html"
        assert self.report.history is not None
        return self._kept("trend.html", page, self.set_keys[s.id]) or self._page(
            "trend.html",
            page,
            s=s,
            points=self._trend(s),
            builds=len(self.report.history.entries),
            charts=charts,
        )

    def _set_files(self, s: SetReport) -> Iterator[tuple[str, bytes | Written | Keep]]:
        """A result set's files other than its page: table, badges, task pages."""
        table = f"sets/{s.id}/tasks.csv"
        yield self._kept(None, table, self.set_keys[s.id]) or (table, _csv_bytes(task_csv_rows(s)))
        yield f"badges/{s.id}.json", badge_json(s)
        yield f"badges/{s.id}.svg", badge_svg(s)
        yield f"badges/{s.id}.md", snippets_markdown(self.report, s, self.settings.base_url)
        yield from self._task_pages(s, self._least_reliable(s), self.with_pages[s.id])

    def task_page(
        self, s: SetReport, views: list[TaskExample], rank: dict[int, tuple[int, int]], i: int
    ) -> tuple[str, bytes]:
        task = s.tasks[i]
        return self._page(
            "task.html",
            s.task_page(i),
            s=s,
            task=task,
            view=views[i],
            rank=rank[i],
            strip=run_strip(task),
            calculator=task_link(task.successes, task.runs, s.estimates.k, s.estimates.confidence),
        )

    def _task_pages(
        self, s: SetReport, order: list[int], pages: frozenset[int]
    ) -> Iterator[tuple[str, bytes | Written | Keep]]:
        """Task pages in task order; many of them are rendered by forked workers.

        Pages the previous build made from the same template and data are kept.
        Rendering is pure CPU work under the GIL, so for a large suite a pool of
        processes (one per core) renders chunks of pages while this process
        writes the finished ones, in order, so the output is the same as a
        serial build, byte for byte.
        """
        todo: list[int] = []
        for i in sorted(pages):
            kept = self._kept("task.html", s.task_page(i), self.set_keys[s.id])
            if kept is not None:
                yield kept
            else:
                todo.append(i)
        if not todo:
            return
        # Only for pages to render: a rebuild that keeps them all skips this.
        views = [task_view(s.estimates.tasks, i) for i in range(len(s.tasks))]
        rank = _tied_ranks(order, s.estimates.tasks.plugin.tolist())
        workers = _worker_count(len(todo))
        if workers < 2:
            for i in todo:
                yield self.task_page(s, views, rank, i)
            return
        global _WORK
        _WORK = (self, s, views, rank)  # inherited by the forked workers
        chunks = [todo[a : a + _CHUNK] for a in range(0, len(todo), _CHUNK)]
        context = multiprocessing.get_context("fork")
        try:
            with ProcessPoolExecutor(
                workers, mp_context=context, initializer=_ignore_interrupts
            ) as pool:
                # A few chunks in flight per worker, not all of them: finished pages
                # wait here only until they are written, which bounds the memory.
                pending: deque[Future[list[tuple[str, bytes | Written]]]] = deque()
                queue = iter(chunks)
                for chunk in itertools.islice(queue, 2 * workers):
                    pending.append(pool.submit(_render_chunk, chunk))
                # The workers are forked and busy: make the chart specs meanwhile.
                self._charts.start()
                while pending:
                    done = pending.popleft().result()
                    for chunk in itertools.islice(queue, 1):
                        pending.append(pool.submit(_render_chunk, chunk))
                    yield from done
        finally:
            _WORK = None


#: The calculator page, linked from the navigation of every page.
CALCULATOR_PAGE = "calculator.html"
#: Below this many task pages a pool of workers costs more than it saves.
PARALLEL_MIN_PAGES = 2000
_CHUNK = 250
_WORK: tuple[Renderer, SetReport, list[TaskExample], dict[int, tuple[int, int]]] | None = None


def _tied_ranks(order: list[int], values: list[float]) -> dict[int, tuple[int, int]]:
    """Task index -> (first, last) place in `order` among the tasks of its value: a
    task tied with five others at 0.000 is at places 1 to 6, not "2"."""
    ranks: dict[int, tuple[int, int]] = {}
    start = 0
    for end in range(1, len(order) + 1):
        if end == len(order) or values[order[end]] != values[order[start]]:
            for i in order[start:end]:
                ranks[i] = (start + 1, end)
            start = end
    return ranks


def _worker_count(pages: int) -> int:
    if pages < PARALLEL_MIN_PAGES or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return min(os.cpu_count() or 1, 8)


def _ignore_interrupts() -> None:
    # Ctrl-C reaches every process of the terminal's group: the build stops in the
    # parent, which says so once; without this each worker printed a traceback. So do
    # a closed terminal's SIGHUP and a `kill` of the group, but those only where the
    # parent turns them into the same interruption (`serve`), as the worker inherited
    # its handler: elsewhere they end the parent, and must end the workers with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and callable(signal.getsignal(number)):
            signal.signal(number, signal.SIG_IGN)


def _template_place(error: BaseException, within: list[Path] | None = None) -> str | None:
    """ "file:line" of the innermost template frame of `error`'s traceback, if any;
    with `within`, of the innermost frame of a template in one of those folders.

    Jinja gives the frames of compiled templates the template's file name and line.
    """
    place = None
    tb = error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.endswith((".html", ".xml", ".svg", ".txt")) and (
            within is None or any(Path(name).is_relative_to(folder) for folder in within)
        ):
            place = f"{name}:{tb.tb_lineno}"
        tb = tb.tb_next
    return place


def _render_chunk(indices: list[int]) -> list[tuple[str, bytes | Written]]:
    assert _WORK is not None, "runs only in a forked worker"
    renderer, s, views, rank = _WORK
    pages = [renderer.task_page(s, views, rank, i) for i in indices]
    if renderer.staging is None:
        return list(pages)
    # Written here, in parallel with the other workers, rather than sent back whole
    # for the parent to write one by one.
    return [(path, write_staged(renderer.staging, path, data)) for path, data in pages]


def _json_bytes(doc: Any) -> bytes:
    # orjson, not json: with indentation the json module encodes in pure Python,
    # which took seconds for the report.json of a suite of 10,000 tasks.
    return orjson.dumps(
        doc,
        option=orjson.OPT_INDENT_2
        | orjson.OPT_APPEND_NEWLINE
        | orjson.OPT_NON_STR_KEYS
        | orjson.OPT_SERIALIZE_NUMPY,
    )


#: A cell a spreadsheet would take for a formula starts with one of these.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_bytes(rows: list[list[Any]]) -> bytes:
    """The rows as CSV. A text cell that a spreadsheet would run as a formula (a task
    id "=HYPERLINK(...)" from someone else's results) gets a leading apostrophe,
    which spreadsheets read as "this is text"; numbers are written as they are."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(
        [
            [
                f"'{cell}" if isinstance(cell, str) and cell.startswith(_FORMULA_STARTS) else cell
                for cell in row
            ]
            for row in rows
        ]
    )
    return buffer.getvalue().encode("utf-8")


def page_count(report: Report, theme: Theme, task_pages: TaskPages = ("all", 0)) -> int:
    """How many HTML pages render_site yields for this report (for progress messages)."""
    per_set = sum(1 + len(tasks_with_pages(s, task_pages)) for s in report.sets)
    trends = len(report.sets) if report.history is not None else 0
    # index.html, 404.html and calculator.html, the content pages, sets and tasks,
    # comparisons, trends
    return 3 + len(theme.content_pages()) + per_set + len(report.comparisons) + trends


def render_site(
    report: Report, charts: SiteCharts, theme: Theme, settings: BuildSettings
) -> Iterator[tuple[str, bytes | Written | Keep]]:
    return Renderer(report, charts, theme, settings).pages()
