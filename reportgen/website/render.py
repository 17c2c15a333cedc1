"""Render: the report model and charts in, HTML pages and data files out.

The pages are rendered in the theme's environment (theme.py: its folders, filters
and template keys). Pages are yielded one at a time so the writer can stream them
to disk.

Every link between pages is relative (`root` is the way back to the site root),
so the site works from file:// and under any sub-path, as GitHub Pages project
sites are served.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import importlib
import io
import itertools
import json
import multiprocessing
import os
import select
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import jinja2
import orjson
from jinja2.exceptions import SecurityError
from markupsafe import Markup, escape

from .. import code
from ..counts import EXCLUDED, FAIL, PASS, ResultSet, TaskCounts
from ..errors import UserError, os_reason
from ..history import HISTORY_FILE, history_bytes
from ..numbers import fixed, percent, signed
from ..report import ComparisonReport, Report, SetReport, task_csv_rows
from ..views import report_json
from .badges import badge_json, badge_message, badge_svg, sitemap, snippets, snippets_markdown
from .calculator import SCRIPT_PATH, calculator_script, suite_link, task_link, worked_examples
from .charts import Chart, PendingCharts, SiteCharts
from .content import TaskExample, front_matter, markdown_parser, render_content, task_view
from .replay import Record, ReplayEnvironment, guard, record_page
from .theme import (
    SiteOptions,
    TaskPages,
    Theme,
    digest,
    environment,
    interval_text,
    safe_url,
    template_key,
)
from .write import KEEP, Keep, Written, write_staged

#: task_pages: all makes at most this many task pages; beyond it the build asks
#: for flaky, worst: N or none (a site of 100,000 pages is slow to write and to use).
MAX_TASK_PAGES = 20_000
#: A set page's task table shows at most this many rows (the least reliable);
#: tasks.csv and report.json keep every task.
TABLE_ROWS = 500


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


def site_settings(title: str, description: str, k: int, confidence: float) -> dict[str, Any]:
    """What every template (and content page) sees as `site`: known from the config
    alone, so the content pages can be rendered before the inputs are read."""
    return {
        "title": title,
        "description": description,
        "k": k,
        "confidence": confidence,
        "level": percent(confidence),
    }


#: Content pages as read: page name -> (source path, Markdown text).
ContentTexts = dict[str, tuple[str, str]]


def read_content(theme: Theme) -> ContentTexts:
    """Every content page's source and text, read once per build."""
    texts = {}
    for name, path in theme.content_pages().items():
        try:
            texts[name] = (str(path), path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as error:
            raise UserError(
                f"{path}: not UTF-8 text (byte {error.start + 1}); save the page as UTF-8"
            ) from None
        except OSError as error:
            raise UserError(f"{path}: cannot read this content page: {os_reason(error)}") from None
    return texts


#: Rendered content pages of this process, by (text, site settings, source): their
#: worked examples take a while, and `serve` asks for the same pages again after
#: every edit to something else. A few entries, the oldest dropped first.
_CONTENT_MEMO: dict[tuple[str, tuple[tuple[str, Any], ...], str], tuple[str, dict[str, Any]]] = {}
_CONTENT_MEMO_SIZE = 16


def _content_page(text: str, site: dict[str, Any], source: str) -> tuple[str, dict[str, Any]]:
    memo_key = (text, tuple(site.items()), source)
    found = _CONTENT_MEMO.get(memo_key)
    if found is None:
        found = render_content(text, site, source)
        _remember_content(memo_key, found)
    html, meta = found
    return html, dict(meta)


def _remember_content(
    memo_key: tuple[str, tuple[tuple[str, Any], ...], str], page: tuple[str, dict[str, Any]]
) -> None:
    _CONTENT_MEMO[memo_key] = page
    while len(_CONTENT_MEMO) > _CONTENT_MEMO_SIZE:
        del _CONTENT_MEMO[next(iter(_CONTENT_MEMO))]


class ContentWorker:
    """Renders content pages alongside the rest of the build, into this process's memo.

    Their worked examples (simulations, exact tests, a large Jinja template to
    compile) are most of a small build's work and need only the site settings,
    so they start before the inputs are read: in a forked child process, which
    has a core of its own, or, where forking is not safe (another thread is
    running, as in `serve`, or no fork on this system), in a thread. Errors are
    left for the real rendering, which reports them with their place.
    """

    def __init__(self, content: ContentTexts, site: dict[str, Any], skip: Collection[str]) -> None:
        self.site = site
        self.todo = [
            (source, text)
            for name, (source, text) in content.items()
            if f"{name}.html" not in skip
            and (text, tuple(site.items()), source) not in _CONTENT_MEMO
        ]
        self.pid: int | None = None
        self.reader: int | None = None
        self.thread: threading.Thread | None = None
        if not self.todo:
            return
        # What the pages' worked examples use, loaded here before the fork: the child
        # inherits it, and this process needs scipy.special anyway to estimate.
        importlib.import_module("scipy.special")
        markdown_parser()
        for source, text in self.todo:  # parsed here for the navigation anyway
            with contextlib.suppress(UserError):
                front_matter(text, source)
        if hasattr(os, "fork") and threading.active_count() == 1:
            self._fork()
        else:
            self.thread = threading.Thread(target=self._render_here, daemon=True)
            self.thread.start()

    def _render_here(self) -> None:
        for source, text in self.todo:
            try:
                _content_page(text, self.site, source)
            except Exception:  # reported, with its place, by the rendering that follows
                return

    def _fork(self) -> None:
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: render, send the HTML as JSON, and leave at once
            status = 1
            try:
                os.close(reader)
                # Hold no copy of the parent's other pipes (the chart engine's input
                # among them): the chart engine must see its input end when the parent
                # closes it, not when this child exits.
                os.closerange(3, writer)
                os.closerange(writer + 1, _MAX_FD)
                pages: list[str | None] = []
                for source, text in self.todo:
                    try:
                        pages.append(render_content(text, self.site, source)[0])
                    except Exception:
                        pages.append(None)
                with os.fdopen(writer, "wb") as out:
                    out.write(json.dumps(pages).encode("utf-8"))
                status = 0
            finally:
                os._exit(status)
        os.close(writer)
        self.pid, self.reader = pid, reader

    def finish(self) -> None:
        """Wait for the pages and keep them in the memo (any that failed are rendered later)."""
        if self.thread is not None:
            self.thread.join()
            return
        if self.reader is None:
            return
        # A child that never answers (a lock another thread held at the fork, say)
        # must not hold the build: past the deadline it is stopped and the pages are
        # rendered here.
        deadline = time.monotonic() + CONTENT_WORKER_SECONDS
        chunks: list[bytes] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.reader], [], [], left)[0]:
                self.close()
                return
            chunk = os.read(self.reader, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(self.reader)
        self.reader = None
        data = b"".join(chunks)
        self._reap()
        try:
            pages = json.loads(data)
        except ValueError:
            return  # the child failed: the pages are rendered here instead
        if not isinstance(pages, list) or len(pages) != len(self.todo):
            return
        for (source, text), html in zip(self.todo, pages, strict=True):
            if isinstance(html, str):
                meta = front_matter(text, source)  # parsed once per text (memoised)
                _remember_content((text, tuple(self.site.items()), source), (html, meta))

    def close(self) -> None:
        """Stop the child if the build ends without its pages (an error, Ctrl-C)."""
        if self.reader is not None:
            os.close(self.reader)
            self.reader = None
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap()

    def _reap(self) -> None:
        if self.pid is not None:
            os.waitpid(self.pid, 0)
            self.pid = None


#: Descriptors a forked content worker closes (all but its own pipe).
_MAX_FD = 1 << 16
#: How long a build waits for the forked content worker (it needs a second or two).
CONTENT_WORKER_SECONDS = 120.0


def _depth_root(path: str) -> str:
    return "../" * path.count("/")


class Renderer:
    def __init__(
        self,
        report: Report,
        charts: SiteCharts | PendingCharts,
        theme: Theme,
        options: SiteOptions,
        reusable: Mapping[str, str] | None = None,
        content: ContentTexts | None = None,
        record_keys: bool = True,
        content_ready: Callable[[], None] | None = None,
    ) -> None:
        self.report = report
        self._charts = charts if isinstance(charts, PendingCharts) else PendingCharts.ready(charts)
        #: Called before the first content page: waits for a ContentWorker's pages.
        self._content_ready = content_ready
        self._orders: dict[str, list[int]] = {}
        self.theme = theme
        self.options = options
        self.env = environment(theme)
        #: Pages of the previous build that may be kept: path -> key.
        self.reusable = reusable or {}
        #: What each page was made from, as a key: filled while pages are made, unless
        #: record_keys is false (a build without the cache keeps none of them).
        self.keys: dict[str, str] = {}
        self.record_keys = record_keys or bool(self.reusable)
        #: The folder write_site stages the site in, once it has made it (set_staging):
        #: rendering workers then write their pages into it themselves.
        self.staging: str | None = None
        #: How many pages of the previous build were kept.
        self.kept = 0
        #: Each template's key (template_key), as far as pages asked for them.
        self._closures: dict[str, str | None] = {}
        #: Each page's template and the key of its data (None: always rendered), for a
        #: later build to tell which pages a template edit changes without the report.
        self.recipes: dict[str, tuple[str, str | None]] = {}
        #: Pages to record once the site is written (record_pages).
        self._to_record: list[tuple[str, str, dict[str, Any], bytes, str]] = []
        self.site = site_settings(report.title, report.description, report.k, report.confidence)
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
        self.with_pages = pages_by_set(report, options.task_pages)
        self.site_key = self._site_key()
        # A set's trend is computed from the earlier builds (in the site key) and
        # its own counts, so those cover it; the trend itself is not hashed (repr of
        # its arrays took a minute for 1,500 builds).
        self.set_keys = {
            s.id: digest(self.site_key, result_set_digest(s.result_set)) for s in report.sets
        }

    def template_keys(self) -> dict[str, str | None]:
        """The key of each template a page was made from (see template_key)."""
        return {
            name: self._closures[name] for name in sorted({t for t, _ in self.recipes.values()})
        }

    def set_staging(self, folder: str) -> None:
        self.staging = folder

    # -- helpers

    def _context(self, path: str, context: dict[str, Any]) -> dict[str, Any]:
        """What a page's template is given: the site's own values and the page's."""
        return {
            "site": self.site,
            "root": _depth_root(path),
            "path": path,
            "nav": self.nav,
            "options": self.options,
            "history": self.report.history,
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

    def _recorded_page(self, template: str, path: str, **context: Any) -> tuple[str, bytes]:
        """_page, and a record of what its template read (replay.py), for a later build
        to render an edit of the template from the record instead of the report."""
        made = self._page(template, path, **context)
        data_key = self.recipes.get(path, (template, None))[1]
        if data_key is not None:
            self._to_record.append((template, path, context, made[1], data_key))
        return made

    def record_pages(self) -> dict[str, tuple[str, Record]]:
        """The records _recorded_page asked for: path -> (the key of the page's data,
        the record). Called once the site is written: should a template change a
        value it reads, the second rendering cannot change a page written after it."""
        env = guard(environment(self.theme, ReplayEnvironment))
        records = {}
        for template, path, context, html, data_key in self._to_record:
            page = html.decode("utf-8")
            record = record_page(env, template, self._context(path, context), page)
            if record is not None:
                records[path] = (data_key, record)
        self._to_record.clear()
        return records

    def _folders(self) -> str:
        return ", ".join(str(p) for p in self.theme.templates)

    # -- what each page is made from, for rebuilds that redo only what changed

    def _site_key(self) -> str:
        """What every page shows: the site's settings, navigation and list of sets."""
        report = self.report
        history = report.history
        return digest(
            code.identity(),
            self.site,
            self.options,
            self.nav,
            [(s.id, s.result_set.name, s.page) for s in report.sets],
            [(c.id, c.page) for c in report.comparisons],
            # The overview and report.json list them; rare enough to redo every page.
            report.skipped,
            # The history as every page may show it: this build's label and the
            # earlier builds. This build's entry holds every set's numbers, so it
            # counts as those sets' data (set_keys), not the whole site's.
            None
            if history is None
            else (
                history.label,
                len(history.entries),
                [entry for entry in history.entries if entry.get("label") != history.label],
            ),
        )

    def _template_key(self, name: str) -> str | None:
        """A hash of a template and every template it extends, includes or imports."""
        if name not in self._closures:
            self._closures[name] = template_key(self.env, name)
        return self._closures[name]

    def _kept(self, template: str, path: str, *data: Any) -> tuple[str, Keep] | None:
        """Records the page's key; returns the previous build's file if it may be kept."""
        if not self.record_keys:
            return None
        template_key = self._template_key(template)
        if template_key is None:
            self.recipes[path] = (template, None)
            return None
        data_key = digest(*data)
        self.recipes[path] = (template, data_key)
        return self._kept_file(path, template_key, data_key)

    def _kept_file(self, path: str, *data: Any) -> tuple[str, Keep] | None:
        """_kept for a file made without a template (report.json, tasks.csv)."""
        if not self.record_keys:
            return None
        key = page_key(path, *data)
        self.keys[path] = key
        if self.reusable.get(path) == key:
            if path.endswith(".html"):
                self.kept += 1
            return path, KEEP
        return None

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
        if self.options.base_url:
            yield "sitemap.xml", sitemap(self.options.base_url, html_pages)

    def _files(self) -> Iterator[tuple[str, bytes | Written | Keep]]:
        """The pages without charts first, so that charts are drawn meanwhile; the
        order of files does not change them (the sitemap is sorted)."""
        report = self.report
        pooled = any(_worker_count(len(pages)) > 1 for pages in self.with_pages.values())
        if not pooled:
            # Otherwise the charts start once task-page workers are busy (_task_pages):
            # the workers are forked first, so they do not copy the chart specs.
            self._charts.start()
        yield self._kept("404.html", "404.html", self.site_key) or self._page(
            "404.html", "404.html"
        )
        yield self._kept("calculator.html", CALCULATOR_PAGE, self.site_key) or self._page(
            "calculator.html",
            CALCULATOR_PAGE,
            examples=worked_examples(report.k, report.confidence),
        )
        for s in report.sets:
            yield from self._set_files(s)
        if self._content_ready is not None:
            self._content_ready()
        for name, (source, text, _) in self.content.items():
            page = f"{name}.html"
            kept = self._kept("content.html", page, self.site_key, text)
            if kept is not None:
                yield kept
                continue
            body, meta = _content_page(text, self.site, source)
            yield self._page("content.html", page, body=body, meta=meta)
        charts = self._charts.get()
        yield self._kept("index.html", "index.html", self.set_keys) or self._recorded_page(
            "index.html", "index.html", report=report, charts=charts.overview
        )
        for s in report.sets:
            yield self._set_page(s, charts.by_set[s.id])
        for c in report.comparisons:
            yield self._kept(
                "compare.html", c.page, self.set_keys[c.a.id], self.set_keys[c.b.id]
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
                page = f"sets/{s.id}/trend.html"
                yield self._kept("trend.html", page, self.set_keys[s.id]) or self._page(
                    "trend.html",
                    page,
                    s=s,
                    points=report.history.trends[s.id],
                    charts=charts.by_trend[s.id],
                )
        # report.json holds what the overview shows: every set, the site and the history.
        yield self._kept_file("report.json", self.set_keys) or (
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

    def _least_reliable(self, s: SetReport) -> list[int]:
        """s.order_least_reliable(), sorted once per set (a large set takes a while)."""
        if s.id not in self._orders:
            self._orders[s.id] = s.order_least_reliable()
        return self._orders[s.id]

    def _set_page(self, s: SetReport, charts: list[Chart]) -> tuple[str, bytes | Keep]:
        order = self._least_reliable(s)
        return self._kept("set.html", s.page, self.set_keys[s.id]) or self._page(
            "set.html",
            s.page,
            s=s,
            task_rows=task_table_rows(s, order[:TABLE_ROWS], self.with_pages[s.id]),
            table_rows=TABLE_ROWS,
            task_pages=len(self.with_pages[s.id]),
            task_pages_setting=task_pages_text(self.options.task_pages),
            charts=charts,
            snippets=snippets(self.report, s, self.options.base_url),
            badge=badge_message(s),
            calculator=suite_link(s, s.estimates.k, s.estimates.confidence),
        )

    def _set_files(self, s: SetReport) -> Iterator[tuple[str, bytes | Written | Keep]]:
        """A result set's files other than its page: table, badges, task pages."""
        table = f"sets/{s.id}/tasks.csv"
        yield self._kept_file(table, self.set_keys[s.id]) or (table, _csv_bytes(task_csv_rows(s)))
        yield f"badges/{s.id}.json", badge_json(s)
        yield f"badges/{s.id}.svg", badge_svg(s)
        yield f"badges/{s.id}.md", snippets_markdown(self.report, s, self.options.base_url)
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


def page_key(path: str, *made_from: Any) -> str:
    """What a file of the site was made from, as a key: for a page, its path, its
    template's key and its data's (see Renderer._kept)."""
    return digest(path, *made_from)


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


def _bar(low: float, estimate: float, high: float, label: str) -> str:
    """A CSS interval bar on a [0, 1] track (the same markup as macros.html's `bar`)."""
    return (
        f'<span class="ibar" role="img" aria-label="{escape(label)}">'
        f'<span class="ibar-range" style="left: {low * 100:.1f}%; '
        f'width: {(high - low) * 100:.1f}%"></span>'
        f'<span class="ibar-point" style="left: {estimate * 100:.1f}%"></span></span>'
    )


def task_table_rows(s: SetReport, order: list[int], pages: Collection[int] | None = None) -> Markup:
    """The rows of a result set's task table, built here, not in a template loop.

    A suite of ten thousand tasks makes a ten-thousand-row table; as an f-string
    a row costs a few microseconds, as template code about a hundred times more.
    """
    est = s.estimates.tasks
    k = s.estimates.k
    rows = []
    for i in order:
        task = s.tasks[i]
        excluded = (
            f' <span class="excluded" title="runs not evaluated">+{task.excluded} excl.</span>'
            if task.excluded
            else ""
        )
        plugin = interval_text(est.plugin_low[i], est.plugin_high[i])
        label = f"pass^{k} {fixed(est.plugin[i])} {plugin}"
        name = (
            f'<a href="tasks/{s.task_slugs[i]}.html">{escape(task.id)}</a>'
            if pages is None or i in pages
            else escape(task.id)
        )
        rows.append(
            f'<tr><th scope="row">{name}'
            f'</th>\n<td class="num">{task.successes}/{task.runs}{excluded}</td>\n'
            f'<td class="num">{fixed(est.pass_rate[i])} '
            f"{interval_text(est.pass_rate_low[i], est.pass_rate_high[i])}</td>\n"
            f'<td class="num">{fixed(est.plugin[i])} {plugin}</td>\n'
            f'<td class="bar-col">'
            f"{_bar(est.plugin_low[i], est.plugin[i], est.plugin_high[i], label)}</td>\n"
            f'<td class="num">{fixed(est.unbiased[i])}</td>\n'
            f'<td class="num">{fixed(est.pass_at_k[i])}</td></tr>\n'
        )
    return Markup("".join(rows))


def _side(href: str | None, label: str) -> str:
    return f'<a href="../{href}">{label}</a>' if href is not None else label


def comparison_table_rows(
    c: ComparisonReport, with_pages: Mapping[str, Collection[int]] | None = None
) -> Markup:
    """Shared tasks, biggest regressions first (by the headline difference), linking to
    both task pages (those made)."""
    rows = []
    for row in _comparison_rows(c, with_pages):
        rows.append(
            f'<tr><th scope="row">{escape(row["id"])} <span class="meta">'
            f"({_side(row['href_a'], 'A')}, {_side(row['href_b'], 'B')})</span></th>"
            f'<td class="num">{row["a"]}</td><td class="num">{row["b"]}</td>'
            f'<td class="num">{signed(row["plugin"])}</td>'
            f'<td class="num">{signed(row["unbiased"])}</td>'
            f'<td class="num">{signed(row["pass_rate"])}</td></tr>\n'
        )
    return Markup("".join(rows))


def _comparison_rows(
    c: ComparisonReport, with_pages: Mapping[str, Collection[int]] | None = None
) -> list[dict[str, Any]]:
    """Shared tasks, biggest regressions (headline A - B most negative) first, with both pages
    (None for a task that has no page)."""
    cmp = c.comparison

    def pages(s: SetReport) -> dict[str, str | None]:
        made = None if with_pages is None else with_pages[s.id]
        return {
            t.id: s.task_page(i) if made is None or i in made else None
            for i, t in enumerate(s.tasks)
        }

    page_a, page_b = pages(c.a), pages(c.b)
    rows = []
    for i in cmp.ranked:
        task_id = cmp.shared[i]
        rows.append(
            {
                "id": task_id,
                "a": f"{int(cmp.a.successes[i])}/{int(cmp.a.runs[i])}",
                "b": f"{int(cmp.b.successes[i])}/{int(cmp.b.runs[i])}",
                "plugin": float(cmp.diff_plugin[i]),
                "unbiased": float(cmp.diff_unbiased[i]),
                "pass_rate": float(cmp.diff_pass_rate[i]),
                "href_a": page_a[task_id],
                "href_b": page_b[task_id],
            }
        )
    return rows


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


# One list item per run, built here rather than in a template loop: a task with
# hundreds of runs would otherwise dominate the build time and the page size.
_CELLS = {
    PASS: ("p", "✓", "passed"),
    FAIL: ("f", "✗", "failed"),
    EXCLUDED: ("x", "–", "not evaluated"),
}
# The symbol carries the outcome for sighted readers (not colour alone); the
# visually hidden word carries it for screen readers.
_PLAIN_CELLS = {
    code: f'<li class="{cls}">{symbol}<span class="sr"> {label}</span></li>'
    for code, (cls, symbol, label) in _CELLS.items()
}


def run_strip(task: TaskCounts) -> Markup:
    """The runs in order as <li> items: a symbol for each outcome, a link when there is one."""
    if task.codes is None:
        return Markup("")
    if not task.urls and not task.notes:
        return Markup("".join(map(_PLAIN_CELLS.__getitem__, task.codes)))
    parts = []
    for i, outcome in enumerate(task.codes):
        url = safe_url(task.urls.get(i))
        note = task.notes.get(i)
        if url is None and note is not None:
            cls, symbol, label = _CELLS[outcome]
            parts.append(
                f'<li class="{cls}" title="run {i + 1}: {escape(note)}">{symbol}'
                f'<span class="sr"> run {i + 1} {label}: {escape(note)}</span></li>'
            )
            continue
        if url is None:
            parts.append(_PLAIN_CELLS[outcome])
            continue
        cls, symbol, label = _CELLS[outcome]
        parts.append(
            f'<li class="{cls}"><a href="{escape(url)}" rel="nofollow noopener" '
            f'title="run {i + 1} transcript">{symbol}'
            f'<span class="sr"> run {i + 1} {label}, transcript</span></a></li>'
        )
    return Markup("".join(parts))


def result_set_digest(rs: ResultSet) -> str:
    """A hash of everything read for one result set: what its pages are made of."""
    digest = hashlib.blake2b(
        repr(
            (
                rs.suite,
                rs.model,
                rs.name,
                rs.format,
                rs.sources,
                sorted(rs.named_by.items()),
                rs.figures,
            )
        ).encode("utf-8"),
        digest_size=16,
    )
    for task in rs.tasks:
        digest.update(
            repr(
                (task.id, task.successes, task.runs, task.excluded, task.category, task.detail)
            ).encode("utf-8")
        )
        digest.update(b"-" if task.codes is None else bytes(task.codes))
        if task.urls:
            digest.update(repr(sorted(task.urls.items())).encode("utf-8"))
        if task.notes:
            digest.update(repr(sorted(task.notes.items())).encode("utf-8"))
    return digest.hexdigest()


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
    report: Report,
    charts: SiteCharts,
    theme: Theme,
    options: SiteOptions,
) -> Iterator[tuple[str, bytes | Written | Keep]]:
    return Renderer(report, charts, theme, options).pages()
