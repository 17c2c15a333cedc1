"""HTML fragments built in Python rather than in template loops: the task and
comparison table rows and a task's run strip. A suite of ten thousand tasks makes
a ten-thousand-row table; as an f-string a row costs a few microseconds, as
template code about a hundred times more.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from markupsafe import Markup, escape

from ..counts import EXCLUDED, FAIL, PASS, TaskCounts
from ..numbers import fixed, signed
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
