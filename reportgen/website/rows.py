"""HTML fragments built in Python rather than in template loops: the task and
comparison table rows, a task's run strip and a set's run grid; and tasks.csv's rows. A suite of ten
thousand tasks makes a ten-thousand-row table; as an f-string a row costs a few
microseconds, as template code about a hundred times more.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from ..counts import EXCLUDED, FAIL, PASS, TaskCounts
from ..numbers import fixed, number, signed
from ..report import ComparisonReport, SetReport
from .theme import interval_text, safe_url


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
        # What the table's script sorts c/n by (sort.js); other cells sort by their text.
        ratio = f' data-value="{task.successes / task.runs:.6f}"' if task.runs else ""
        plugin = interval_text(est.plugin_low[i], est.plugin_high[i])
        label = f"pass^{k} {fixed(est.plugin[i])} {plugin}"
        name = (
            f'<a href="tasks/{s.task_slugs[i]}.html">{escape(task.id)}</a>'
            if pages is None or i in pages
            else escape(task.id)
        )
        rows.append(
            f'<tr><th scope="row">{name}'
            f'</th>\n<td class="num"{ratio}>{task.successes}/{task.runs}{excluded}</td>\n'
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


# Pass and fail carry their symbol alone (the grid's caption spells them out, and each
# column is headed by its run number): a word for each of 50,000 cells would double
# the page. An excluded run, rare, says so in words, with its reason where known.
_GRID_CELLS = {
    PASS: '<td class="p">✓</td>',
    FAIL: '<td class="f">✗</td>',
    EXCLUDED: '<td class="x">–<span class="sr"> not evaluated</span></td>',
}


@dataclass(frozen=True)
class RunGrid:
    """A result set's task × run grid: the <thead> and <tbody> of its table, and what
    the page says around it."""

    head: Markup
    body: Markup
    #: Run columns drawn (at most max_runs).
    runs: int
    #: Rows shown, and how many of them were given as counts only (no cells).
    rows: int
    counts_only: int
    #: Rows with more runs than max_runs, cut to their first max_runs.
    capped: int
    #: Whether any task of the set kept its run order; without, the page draws no grid.
    ordered: bool


def _grid_cells(task: TaskCounts, codes: bytes) -> str:
    if not task.notes:
        return "".join(map(_GRID_CELLS.__getitem__, codes))
    cells = []
    for i, code in enumerate(codes):
        note = task.notes.get(i) if code == EXCLUDED else None
        if note is None:
            cells.append(_GRID_CELLS[code])
        else:
            reason = escape(note)
            cells.append(
                f'<td class="x" title="run {i + 1}: {reason}">–'
                f'<span class="sr"> not evaluated: {reason}</span></td>'
            )
    return "".join(cells)


def run_grid(
    s: SetReport, order: list[int], max_runs: int, pages: Collection[int] | None = None
) -> RunGrid:
    """One row per task of `order`, one cell per run in run order (the first `max_runs`):
    ✓ passed, ✗ failed, – not evaluated (its reason in a title). A task given as counts
    only says so in its row. Built here, not in a template loop, as the table rows are."""
    tasks = [s.tasks[i] for i in order]
    longest = max((len(t.codes) for t in tasks if t.codes is not None), default=0)
    runs = min(longest, max_runs)
    more = longest > max_runs
    width = max(runs + int(more), 1)  # the cells' columns, the "more" one included
    head = ['<tr><th scope="col">Task</th>']
    head.extend(f'<th scope="col">{r}</th>' for r in range(1, runs + 1))
    if more:
        head.append('<th scope="col" class="more">more</th>')
    head.append("</tr>")
    rows = []
    counts_only = capped = 0
    for i, task in zip(order, tasks, strict=True):
        page = f"tasks/{s.task_slugs[i]}.html" if pages is None or i in pages else None
        name = escape(task.id) if page is None else f'<a href="{page}">{escape(task.id)}</a>'
        if task.codes is None:
            counts_only += 1
            excluded = f", {task.excluded} not evaluated" if task.excluded else ""
            cells = (
                f'<td class="counts-only" colspan="{width}">counts only: {task.successes} of '
                f"{task.runs} passed{excluded}; no run order</td>"
            )
        else:
            codes = task.codes[:max_runs]
            cells = _grid_cells(task, codes)
            if len(task.codes) > max_runs:
                capped += 1
                left = f'+{len(task.codes) - max_runs:,}<span class="sr"> more runs</span>'
                if page is not None:  # where every run is shown
                    left = f'<a href="{page}" title="every run of {escape(task.id)}">{left}</a>'
                cells += f'<td class="more">{left}</td>'
            elif len(codes) < width:
                span = width - len(codes)
                cells += f'<td colspan="{span}"></td>' if span > 1 else "<td></td>"
        rows.append(f'<tr><th scope="row">{name}</th>{cells}</tr>\n')
    return RunGrid(
        head=Markup("".join(head)),
        body=Markup("".join(rows)),
        runs=runs,
        rows=len(tasks),
        counts_only=counts_only,
        capped=capped,
        ordered=any(t.codes is not None for t in s.tasks),
    )


def task_csv_rows(s: SetReport) -> list[list[Any]]:
    """Header and one row per task (least reliable first), full precision."""
    t = s.estimates.tasks
    k = s.estimates.k
    header = [
        "task",
        "successes",
        "runs",
        "excluded_runs",
        "pass_rate",
        "pass_rate_low",
        "pass_rate_high",
        f"pass_hat_{k}_plugin",
        f"pass_hat_{k}_plugin_low",
        f"pass_hat_{k}_plugin_high",
        f"pass_hat_{k}_unbiased",
        f"pass_at_{k}",
    ]
    rows: list[list[Any]] = [header]
    for i in s.order_least_reliable():
        task = s.tasks[i]
        values = [
            t.pass_rate[i],
            t.pass_rate_low[i],
            t.pass_rate_high[i],
            t.plugin[i],
            t.plugin_low[i],
            t.plugin_high[i],
            t.unbiased[i],
            t.pass_at_k[i],
        ]
        rows.append(
            [task.id, task.successes, task.runs, task.excluded]
            + ["" if number(v) is None else repr(float(v)) for v in values]
        )
    return rows
