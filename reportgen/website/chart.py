"""Chart: Altair specs rendered at build time to inline SVG with vl-convert.

Pages need no JavaScript and load nothing: each chart becomes two <svg>s, one
drawn for a wide column and one for a phone (see Frame), each with role="img",
a <title> and a <desc>, and element ids made unique per drawing so several
charts can share a page. Every chart's numbers are also given in a table beside
it by the templates.

Colours are from the Okabe-Ito palette, which stays distinguishable for the
common forms of colour blindness; series also differ by shape or dash.

Every encoding is given as a channel object (alt.X("low:Q"), alt.X2("high"),
alt.SizeValue(40)), never as a bare "low:Q" string or alt.value(...): Altair
turns those into channels through a table of every schema class, which it
builds anew each time (about 4 ms a call; 35 calls in the example's build).
The spec is the same either way.
"""

from __future__ import annotations

import html
import re
import resource
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np

from ..errors import UserError
from ..history import TrendPoint
from ..limits import MAX_CHART_LABEL
from ..numbers import percent, signed, signed_bracket
from ..report import ComparisonReport, Report, SetReport
from ..stats.estimate import MAX_CURVE_K, FloatArray
from ..stats.plain import counted
from ..terminal import terminal_safe
from .chart_engine import Converter, EngineFailed
from .charts import FOREST_ROWS, Chart, SiteCharts

BLUE, ORANGE, GREEN, VERMILLION, GREY = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#666666"
#: One colour a series, in order, where series are many (the cost chart's sets).
OKABE_ITO = [BLUE, ORANGE, GREEN, VERMILLION, "#CC79A7", "#56B4E9", "#000000", "#F0E442"]
#: Beyond this many tasks the scatter is binned so the SVG stays small.
SCATTER_LIMIT = 400


@dataclass(frozen=True)
class Frame:
    """A width a chart is drawn for, labels and padding included.

    Each chart is drawn twice: for a wide column and for a phone. One drawing
    scaled to both would put 4 px text on a phone or 30 px text on a desktop;
    the page shows the one that fits (style.css, at 60rem).
    """

    name: str
    width: int
    #: How wide a band axis' label (a task's or a set's name) may be drawn.
    label_limit: int
    legend_columns: int
    #: How far past its drawn size the page may stretch the drawing: beyond it
    #: its text would outgrow the page's headings.
    max_scale: float
    #: Ticks on a quantitative axis.
    tick_count: int
    #: Axis titles longer than this many characters break into lines (None: never).
    #: About the characters of a bold 12 px title that fit across a phone's chart.
    title_chars: int | None


#: About the chart column at 1,280 px (72rem less the card's padding), so text is
#: drawn at close to its size; it shrinks to 10 px at the 60rem switch.
WIDE = Frame("wide", 1080, 260, 3, 1.3, tick_count=5, title_chars=None)
#: A 360-390 px phone's column; up to 1.5 times it on a tablet.
NARROW = Frame("narrow", 340, 130, 1, 1.5, tick_count=4, title_chars=38)
FRAMES = (WIDE, NARROW)


def _theme(chart: alt.TopLevelMixin, frame: Frame) -> dict[str, Any]:
    # Validation against the Vega-Lite schema costs up to a second on a large data set;
    # these specs are fixed by this module and covered by tests.
    spec: dict[str, Any] = chart.to_dict(validate=False)
    spec["padding"] = {"left": 8, "right": 24, "top": 8, "bottom": 8}
    # The whole drawing, axes and labels included, is the frame's width.
    spec["width"] = frame.width
    spec["autosize"] = {"type": "fit-x", "contains": "padding"}
    spec["config"] = {
        # The generic family, so the browser draws text in about the width that
        # vl-convert measured it (a named UI font may be much wider or missing).
        "font": "sans-serif",
        "axis": {"labelFontSize": 12, "titleFontSize": 12, "gridColor": "#e5e5e5"},
        "axisQuantitative": {"tickCount": frame.tick_count},
        # A band axis names tasks, sets or builds: cut long names to the frame, and
        # drop the labels that would overlap (the table beside names every one).
        "axisBand": {"labelLimit": frame.label_limit, "labelOverlap": True},
        # Labels are measured with vl-convert's Liberation Sans (its own copy:
        # chart_engine.FONTS_CONF), not the browser's fonts, so columns keep a gap
        # wide enough for a page that renders them wider.
        "legend": {
            "labelFontSize": 12,
            "titleFontSize": 12,
            "orient": "bottom",
            "columns": frame.legend_columns,
            "columnPadding": 24,
            "labelLimit": frame.width - 60,
            # A band's pale fill would otherwise stand for its series.
            "symbolOpacity": 1,
        },
        # Text marks (the overview's set names) stop at the frame's edge.
        "text": {"limit": frame.width - 40},
        "view": {"stroke": None},
    }
    if frame.title_chars is not None:
        _wrap_titles(spec, frame.title_chars)
    return spec


def _wrap_titles(node: Any, limit: int) -> None:
    """Break every title longer than `limit` characters into lines (Vega draws a list
    of strings as lines): a phone's chart would otherwise cut it or run off the side."""
    if isinstance(node, list):
        for item in node:
            _wrap_titles(item, limit)
    elif isinstance(node, dict):
        for name, value in node.items():
            if name == "title" and isinstance(value, str):
                node[name] = _lines(value, limit)
            else:
                _wrap_titles(value, limit)


def _lines(text: str, limit: int) -> str | list[str]:
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= limit:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines if len(lines) > 1 else text


class _Datasets:
    """Rows kept out of Altair's object tree and put into the spec as named datasets.

    Altair wraps and walks every value it is given (about a tenth of a
    millisecond a row); a binned scatter of ten thousand tasks would spend most
    of a second there. Named datasets skip that, and the spec is the same.
    """

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {}

    def add(self, rows: list[dict[str, Any]]) -> alt.Data:
        name = f"data-{len(self.rows)}"
        self.rows[name] = rows
        return alt.Data(name=name)


def chart_labels(texts: list[str]) -> list[str]:
    """Labels for a chart's axis: short, printable and still one per text.

    The renderer takes seconds to lay out a label of thousands of characters,
    and aborts on control characters, so a label keeps MAX_CHART_LABEL
    characters with the controls spelled out (tables show the whole text).
    Texts that shorten to the same label get a number, so their rows stay apart.
    """
    labels: list[str] = []
    seen: set[str] = set()
    for text in texts:
        label = terminal_safe(text)
        if len(label) > MAX_CHART_LABEL:
            label = label[: MAX_CHART_LABEL - 1] + "…"
        candidate, n = label, 1
        while candidate in seen:
            n += 1
            candidate = f"{label[: MAX_CHART_LABEL - 8]}… ({n})"
        seen.add(candidate)
        labels.append(candidate)
    return labels


_ID_ATTR = re.compile(r'\bid="([^"]+)"')
_WIDTH_ATTR = re.compile(r'\swidth="(\d+(?:\.\d+)?)"')


def _accessible(chart_id: str, title: str, description: str, svg: str, max_scale: float) -> str:
    """vl-convert's SVG with role, title and description, and ids prefixed by `chart_id`."""
    for old in sorted(set(_ID_ATTR.findall(svg)), key=len, reverse=True):
        new = f"{chart_id}-{old}"
        svg = svg.replace(f'id="{old}"', f'id="{new}"').replace(f"url(#{old})", f"url(#{new})")
    title_id, desc_id = f"{chart_id}-title", f"{chart_id}-desc"
    svg = svg.replace(
        "<svg ",
        f'<svg role="img" aria-labelledby="{title_id} {desc_id}" focusable="false" ',
        1,
    )
    head_end = svg.index(">") + 1
    drawn = _WIDTH_ATTR.search(svg, 0, head_end)
    if drawn is not None:
        # The page's style lets a chart fill its card; past this its labels outgrow the
        # page's headings (a 563 px chart in a 1,100 px card doubled its text).
        limit = f"max-width: {float(drawn[1]) * max_scale:.0f}px"
        style = svg.find(' style="', 0, head_end)
        if style < 0:
            svg = f'{svg[: head_end - 1]} style="{limit}"{svg[head_end - 1 :]}'
        else:  # a second style attribute would be ignored
            at = style + len(' style="')
            svg = f"{svg[:at]}{limit}; {svg[at:]}"
        head_end = svg.index(">") + 1
    accessible = (
        f'<title id="{title_id}">{html.escape(title)}</title>'
        f'<desc id="{desc_id}">{html.escape(description)}</desc>'
    )
    return svg[:head_end] + accessible + svg[head_end:]


def _render(
    chart_id: str, title: str, description: str, chart: alt.TopLevelMixin, data: _Datasets
) -> Chart:
    """A chart with its specs, one per frame; `make_charts` turns every spec into SVG
    in one batch."""
    specs = [_theme(chart, frame) for frame in FRAMES]
    for spec in specs:
        spec["datasets"] = data.rows  # the same rows: the frames differ in layout alone
    return Chart(chart_id, title, description, specs=specs)


def _send_all(charts: SiteCharts, converter: Converter | None) -> Callable[[], SiteCharts]:
    """Hand every chart's spec to the chart engine, a separate process, and return
    the function that waits for the SVGs, fills them in and returns the charts.

    The engine draws while this process renders the pages that have no chart.
    vl-convert runs a JavaScript engine that holds on to a hundred megabytes or
    more; in a child process that memory is returned as soon as the charts are
    drawn, instead of adding to the peak of a build that also holds a large
    suite's runs and pages.
    """
    # A chart made here has a spec per frame; one from the cache has none (drawn).
    pending = [
        (c, frame, spec) for c in charts.all() for frame, spec in zip(FRAMES, c.specs, strict=False)
    ]
    engine = converter or Converter()
    engine.send([spec for _, _, spec in pending])

    def receive() -> SiteCharts:
        try:
            drawn = engine.receive()
        except EngineFailed as failed:
            which = None if failed.index is None else pending[failed.index][0]
            raise chart_error(failed, which, charts) from None
        finally:
            engine.close()
        for (chart, frame, _), svg in zip(pending, drawn, strict=True):
            svg_id = chart.id if frame is WIDE else f"{chart.id}-{frame.name}"
            svg = _accessible(svg_id, chart.title, chart.description, svg, frame.max_scale)
            if frame is WIDE:
                chart.svg = svg
            else:
                chart.narrow_svg = svg
        for chart in charts.all():
            chart.specs = []
        return charts

    return receive


def chart_error(failed: EngineFailed, chart: Chart | None, charts: SiteCharts) -> UserError:
    """The engine's failure as one located line and what to do about it."""
    if chart is None:
        problem = f"the chart engine (vl-convert) stopped: {failed.reason}"
    else:
        problem = (
            f"{charts.place(chart)}: drawing the chart {chart.title!r} failed: {failed.reason}"
        )
    if not failed.out_of_memory:
        return UserError(problem)
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    hint = (
        "the chart engine ran out of memory. Its JavaScript engine (V8) reserves about "
        "64 GiB of address space when it starts, much more than it uses, so a "
        "`ulimit -v` below about 128 GiB stops it"
        + (
            f" (the limit here is {limit / 2**30:.1f} GiB)"
            if limit != resource.RLIM_INFINITY
            else ""
        )
        + ": lift that limit and cap memory another way (a container's or cgroup's "
        "memory limit counts only what is used)"
    )
    return UserError(problem, hint=hint)


def _scale01(title: str) -> alt.Scale:
    return alt.Scale(domain=[0, 1], nice=False)


def _interval_band(data: alt.Data, x: alt.X, colour: alt.Color) -> alt.Chart:
    """Each series' interval, low to high, as a pale band on a 0-1 scale."""
    band: alt.Chart = (
        alt.Chart(data)
        .mark_area(opacity=0.15)
        .encode(
            x=x,
            y=alt.Y("low:Q", scale=_scale01(""), title="value"),
            y2=alt.Y2("high"),
            color=colour,
        )
    )
    return band


# ---------------------------------------------------------------- per result set


def forest_chart(s: SetReport, chart_id: str) -> Chart:
    """Per-task plug-in pass^k with its interval, least reliable first."""
    datasets = _Datasets()
    est = s.estimates.tasks
    k, level = s.estimates.k, percent(s.estimates.confidence)
    order = s.order_least_reliable()
    shown = order[:FOREST_ROWS]
    labels = chart_labels([s.tasks[i].id for i in shown])
    rows = [
        {
            "task": labels[rank],
            "rank": rank,
            "estimate": float(est.plugin[i]),
            "low": float(est.plugin_low[i]),
            "high": float(est.plugin_high[i]),
        }
        for rank, i in enumerate(shown)
    ]
    data = datasets.add(rows)
    y = alt.Y(
        "task:N",
        sort=alt.EncodingSortField("rank", order="ascending"),
        title=None,
    )
    x_title = f"pass^{k} (plug-in), {level} interval"
    rules = (
        alt.Chart(data)
        .mark_rule(color=BLUE, strokeWidth=2)
        .encode(y=y, x=alt.X("low:Q", scale=_scale01(x_title), title=x_title), x2=alt.X2("high"))
    )
    points = (
        alt.Chart(data)
        .mark_point(color=BLUE, filled=True, size=60, shape="diamond")
        .encode(y=y, x=alt.X("estimate:Q"))
    )
    # 16 px a row: its label (12 px) never meets the next, and is never shrunk to fit.
    chart = (rules + points).properties(height=max(60, 16 * len(rows)))
    if len(shown) < len(order):
        title = f"The {len(shown)} least reliable of {len(order):,} tasks: pass^{k}, {level}"
    else:
        title = f"pass^{k} per task with {level} intervals, least reliable first"
    which = (
        counted(len(rows), "task", "tasks")
        if len(shown) == len(order)
        else f"the {len(shown)} least reliable of {len(order):,} tasks"
    )
    description = (
        f"Forest plot of {which}. Each row is a task; the diamond "
        f"is its plug-in pass^{k} and the bar its {level} interval. The same numbers are in the "
        "task table."
    )
    return _render(chart_id, title, description, chart, datasets)


def distribution_chart(s: SetReport, chart_id: str) -> Chart:
    """Histogram of per-task plug-in pass^k (used when there are too many tasks to list)."""
    datasets = _Datasets()
    k = s.estimates.k
    counts, edges = np.histogram(s.estimates.tasks.plugin, bins=20, range=(0.0, 1.0))
    rows = [
        {"from": float(edges[i]), "to": float(edges[i + 1]), "tasks": int(counts[i])}
        for i in range(len(counts))
    ]
    chart = (
        alt.Chart(datasets.add(rows))
        .mark_bar(color=BLUE, stroke="white")
        .encode(
            x=alt.X("from:Q", scale=_scale01(""), title=f"pass^{k} (plug-in)", bin="binned"),
            x2=alt.X2("to"),
            y=alt.Y("tasks:Q", title="tasks"),
        )
        .properties(height=180)
    )
    title = f"Distribution of pass^{k} over all {len(s.tasks):,} tasks"
    description = f"Histogram: number of tasks in each 0.05-wide range of plug-in pass^{k}."
    return _render(chart_id, title, description, chart, datasets)


def curve_chart(s: SetReport, chart_id: str) -> Chart:
    """reliability@k (plug-in, unbiased) and mean pass@k over k, with interval bands."""
    datasets = _Datasets()
    level = percent(s.estimates.confidence)
    rows = []
    for p in s.curve:
        for series, interval in (
            ("reliability@k plug-in", p.plugin),
            ("reliability@k unbiased", p.unbiased),
            ("pass@k (mean)", p.pass_at_k),
        ):
            if interval.estimate is None:
                continue
            rows.append(
                {
                    "k": p.k,
                    "series": series,
                    "estimate": interval.estimate,
                    "low": interval.estimate if interval.low is None else interval.low,
                    "high": interval.estimate if interval.high is None else interval.high,
                }
            )
    data = datasets.add(rows)
    names = ["reliability@k plug-in", "reliability@k unbiased", "pass@k (mean)"]
    colour = alt.Color(
        "series:N",
        scale=alt.Scale(domain=names, range=[BLUE, GREEN, ORANGE]),
        title=None,
    )
    dash = alt.StrokeDash(
        "series:N", scale=alt.Scale(domain=names, range=[[1, 0], [6, 3], [2, 2]]), title=None
    )
    x = alt.X(
        "k:Q",
        title="k (runs that must all pass, or of which one must)",
        # Whole k only: with two points the axis would otherwise mark k = 1.5.
        axis=alt.Axis(values=[p.k for p in s.curve], format="d")
        if len(s.curve) <= 12
        else alt.Axis(tickMinStep=1, format="d"),
    )
    band = _interval_band(data, x, colour)
    line = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("estimate:Q", scale=_scale01("")),
            color=colour,
            strokeDash=dash,
            shape=alt.Shape(
                "series:N",
                scale=alt.Scale(domain=names, range=["circle", "square", "triangle-up"]),
                title=None,
            ),
        )
    )
    chart = (band + line).properties(height=240)
    bands = f", {level} bands" if len(s.tasks) > 1 else ""  # one task has no interval
    # The unbiased values need k runs of every task: the curve stops at the fewest.
    short = len(s.curve) < min(s.estimates.k, MAX_CURVE_K)
    last = f"{len(s.curve)} (the fewest runs of any task)" if short else str(len(s.curve))
    title = f"reliability@k and pass@k for k = 1 to {last}{bands}"
    values = {(p.plugin.estimate, p.pass_at_k.estimate) for p in s.curve}
    trend = (
        "falls as k grows, mean pass@k rises"
        if len(values) > 1 or len(s.curve) < 2
        else "and mean pass@k are the same at every k, as every run of every task agrees"
    )
    description = (
        f"Lines over k: reliability@k (mean pass^k over tasks, plug-in and unbiased) {trend}"
        + ("; shaded bands are Student-t intervals across tasks." if bands else ".")
    )
    if short:
        description += (
            f" It stops at k = {len(s.curve)}, the fewest runs of any task, before this "
            f"page's k = {s.estimates.k}: beyond it the unbiased values are undefined."
        )
    return _render(chart_id, title, description, chart, datasets)


def gap_chart(s: SetReport, chart_id: str) -> Chart:
    """Single-run pass rate against plug-in pass^k per task: the reliability gap."""
    datasets = _Datasets()
    est = s.estimates.tasks
    k = s.estimates.k
    grid = np.linspace(0, 1, 41)
    reference = [{"p": float(p), "diag": float(p), "power": float(p**k)} for p in grid]
    ref = alt.Chart(datasets.add(reference))
    diagonal = ref.mark_line(color=GREY, strokeDash=[4, 4]).encode(
        x=alt.X("p:Q", scale=_scale01(""), title="single-run pass rate"),
        y=alt.Y("diag:Q", scale=_scale01(""), title=f"pass^{k} (plug-in)"),
    )
    power = ref.mark_line(color=ORANGE).encode(x=alt.X("p:Q"), y=alt.Y("power:Q"))
    points = _circles(datasets, "p", est.pass_rate, "pk", est.plugin, opacity=0.7)
    chart = (diagonal + power + points).properties(height=320)
    title = f"Pass rate against pass^{k}"
    description = (
        f"Each circle is a task, or tasks with the same values (its area grows with their "
        f"number): across, the single-run pass rate; up, the plug-in pass^{k}. "
        f"The dashed diagonal is where they would be equal; the solid curve is x^{k}. "
        "The vertical distance to the diagonal is what a single pass rate hides."
    )
    return _render(chart_id, title, description, chart, datasets)


def _circles(
    datasets: _Datasets, x: str, xs: FloatArray, y: str, ys: FloatArray, opacity: float
) -> alt.Chart:
    """One circle per point, its area growing with the tasks there. Tasks often share
    a point (every task that always passed sits at 1, 1): drawn one by one, 78 tasks
    looked like 6. Beyond SCATTER_LIMIT tasks, points are rounded to a 0.02 grid
    first: ten thousand circles would make a huge SVG."""
    if len(xs) > SCATTER_LIMIT:
        xs, ys = np.round(xs * 50) / 50, np.round(ys * 50) / 50
    cells = Counter(zip(xs.tolist(), ys.tolist(), strict=True))
    rows = [{x: a, y: b, "tasks": n} for (a, b), n in sorted(cells.items())]
    most = max(cells.values(), default=1)
    size: Any = (
        alt.SizeValue(40)
        if most == 1
        else alt.Size(
            "tasks:Q",
            title="tasks",
            scale=alt.Scale(domain=[1, most], range=[40, 400]),
            legend=alt.Legend(values=sorted({1, (1 + most) // 2, most}), format="d"),
        )
    )
    circles: alt.Chart = (
        alt.Chart(datasets.add(rows))
        .mark_circle(color=BLUE, opacity=opacity)
        .encode(x=alt.X(f"{x}:Q"), y=alt.Y(f"{y}:Q"), size=size)
    )
    return circles


def paired_chart(c: ComparisonReport, chart_id: str) -> Chart:
    """Each shared task's plug-in pass^k under A (across) and B (up)."""
    datasets = _Datasets()
    cmp = c.comparison
    k, level = cmp.k, percent(cmp.confidence)
    a_name, b_name = c.a.result_set.name, c.b.result_set.name
    pa, pb = cmp.a.plugin, cmp.b.plugin
    diagonal = (
        alt.Chart(datasets.add([{"v": 0.0}, {"v": 1.0}]))
        .mark_line(color=GREY, strokeDash=[4, 4])
        .encode(
            x=alt.X("v:Q", scale=_scale01(""), title=f"A: pass^{k} (plug-in)"),
            y=alt.Y("v:Q", scale=_scale01(""), title=f"B: pass^{k} (plug-in)"),
        )
    )
    points = _circles(datasets, "a", pa, "b", pb, opacity=0.6)
    d = cmp.lead
    lead_name = "unbiased" if cmp.headline == "unbiased" else "plug-in"
    title = f"Plug-in pass^{k} per shared task, A against B"
    description = (
        f"The {counted(len(cmp.shared), 'shared task', 'shared tasks')} as circles, one for "
        "each pair of values (its area grows with the tasks that share it): across, a task's "
        f"plug-in pass^{k} for A ({a_name}); up, for B ({b_name}). Circles below the dashed "
        "diagonal favour A. "
        f"Mean difference A − B ({lead_name}): {signed(d.estimate)}, {level} interval "
        f"{signed_bracket(d.low, d.high)}."
    )
    chart = (diagonal + points).properties(height=320)
    return _render(chart_id, title, description, chart, datasets)


#: How the trend chart marks each point: by what the step to it was found to be.
_TREND_MARKS = {
    "within noise": "circle",
    "changed beyond noise": "diamond",
    "change not tested": "square",
}


#: Up to this many builds the trend chart names each build on its axis; beyond,
#: it draws lines over the build number (a CI that builds per commit gets there).
TREND_NAMED = 30
#: Builds drawn at most, evenly spaced with the first and the last: a line of
#: 10,000 builds would be ten times wider than a screen has pixels, and Vega's
#: layout of one point per build ran out of stack at 1,500. The table keeps all.
TREND_DRAWN = 300


def trend_chart(points: list[TrendPoint], k: int, level: str, chart_id: str) -> Chart:
    """reliability@k (plug-in, unbiased) and the pass rate at each build, with intervals."""
    if len(points) > TREND_NAMED:
        return _long_trend_chart(points, k, level, chart_id)
    datasets = _Datasets()
    names = ["reliability@k plug-in", "reliability@k unbiased", "pass rate"]
    tested_series = {"plugin": names[0], "unbiased": names[1]}
    labels = chart_labels([p.label for p in points])
    rows = []
    for order, p in enumerate(points):
        # Only the followed estimate's change was tested: the other series say so.
        tested = tested_series.get(p.change_estimator or "")
        for series, interval in zip(names, (p.plugin, p.unbiased, p.pass_rate), strict=True):
            if interval.estimate is None:
                continue
            if series != tested:
                marked = "change not tested"
            else:
                marked = "changed beyond noise" if p.significant else "within noise"
            rows.append(
                {
                    "build": labels[order],
                    "order": order,
                    "series": series,
                    "estimate": interval.estimate,
                    "low": interval.estimate if interval.low is None else interval.low,
                    "high": interval.estimate if interval.high is None else interval.high,
                    "marked": marked,
                }
            )
    data = datasets.add(rows)
    # Only the marks this chart has in its legend: a first build has no change to mark.
    marks = [m for m in _TREND_MARKS if any(r["marked"] == m for r in rows)]
    x = alt.X("build:N", sort=labels, title="build", axis=alt.Axis(labelAngle=0, labelLimit=90))
    colour = alt.Color(
        "series:N", scale=alt.Scale(domain=names, range=[BLUE, GREEN, ORANGE]), title=None
    )
    offset = alt.XOffset("series:N", scale=alt.Scale(domain=names))
    bars = (
        alt.Chart(data)
        .mark_rule(strokeWidth=2)
        .encode(
            x=x,
            xOffset=offset,
            y=alt.Y("low:Q", scale=_scale01(""), title="value"),
            y2=alt.Y2("high"),
            color=colour,
        )
    )
    dots = (
        alt.Chart(data)
        .mark_point(filled=True, size=60)
        .encode(
            x=x,
            xOffset=offset,
            y=alt.Y("estimate:Q"),
            color=colour,
            shape=alt.Shape(
                "marked:N",
                scale=alt.Scale(domain=marks, range=[_TREND_MARKS[m] for m in marks]),
                title=None,
            ),
        )
    )
    chart = (bars + dots).properties(height=240)
    title = f"reliability@{k} and pass rate by build, {level} intervals"
    count = len(points)
    which = "For one build" if count == 1 else f"For each of {count} builds, oldest first"
    description = (
        f"{which}: reliability@{k} (plug-in and "
        "unbiased) and the mean pass rate, each with its interval. "
        + (
            "A diamond marks a build whose change from the previous one, in the estimate "
            "the trend follows (the headline), is larger than the noise (its paired "
            "interval excludes zero); the other series' changes are not tested. "
            if count > 1
            else ""
        )
        + "The table below has the same numbers."
    )
    return _render(chart_id, title, description, chart, datasets)


def drawn_builds(count: int) -> list[int]:
    """The indices of the builds a long trend draws: all, or TREND_DRAWN evenly spaced."""
    if count <= TREND_DRAWN:
        return list(range(count))
    return sorted({round(i * (count - 1) / (TREND_DRAWN - 1)) for i in range(TREND_DRAWN)})


def _long_trend_chart(points: list[TrendPoint], k: int, level: str, chart_id: str) -> Chart:
    """The trend of many builds: lines with interval bands over the build number."""
    datasets = _Datasets()
    names = ["reliability@k plug-in", "reliability@k unbiased", "pass rate"]
    drawn = drawn_builds(len(points))
    rows = []
    for index in drawn:
        p = points[index]
        for series, interval in zip(names, (p.plugin, p.unbiased, p.pass_rate), strict=True):
            if interval.estimate is None:
                continue
            rows.append(
                {
                    "build": index + 1,
                    "series": series,
                    "estimate": interval.estimate,
                    "low": interval.estimate if interval.low is None else interval.low,
                    "high": interval.estimate if interval.high is None else interval.high,
                }
            )
    changes = [
        {"build": i + 1, "estimate": points[i].lead.estimate}
        for i in drawn
        if points[i].significant and points[i].lead.estimate is not None
    ]
    colour = alt.Color(
        "series:N", scale=alt.Scale(domain=names, range=[BLUE, GREEN, ORANGE]), title=None
    )
    dash = alt.StrokeDash(
        "series:N", scale=alt.Scale(domain=names, range=[[1, 0], [6, 3], [2, 2]]), title=None
    )
    x = alt.X("build:Q", title="build (1 is the oldest)", axis=alt.Axis(format="d"))
    data = datasets.add(rows)
    band = _interval_band(data, x, colour)
    line = (
        alt.Chart(data)
        .mark_line()
        .encode(x=x, y=alt.Y("estimate:Q", scale=_scale01("")), color=colour, strokeDash=dash)
    )
    layers = band + line
    if changes:
        layers += (
            alt.Chart(datasets.add(changes))
            .mark_point(shape="diamond", filled=True, size=50, color=VERMILLION)
            .encode(x=x, y=alt.Y("estimate:Q"))
        )
    chart = layers.properties(height=240)
    count = len(points)
    title = f"reliability@{k} and pass rate over {count:,} builds, {level} bands"
    which = (
        f"For each of {count:,} builds"
        if len(drawn) == count
        else f"For {len(drawn)} of the {count:,} builds, evenly spaced from the first to this one"
    )
    description = (
        f"{which}, by build number (1 is the oldest): reliability@{k} (plug-in and unbiased) "
        "and the mean pass rate as lines, each with its interval as a band. A diamond marks "
        "a drawn build whose change from the previous one, in the estimate the trend follows "
        "(the headline), is larger than the noise. The table below has every build."
    )
    return _render(chart_id, title, description, chart, datasets)


# ---------------------------------------------------------------- overview


def comparison_chart(report: Report, chart_id: str) -> Chart:
    """reliability@k of every result set with its interval."""
    datasets = _Datasets()
    k, level = report.k, percent(report.confidence)
    rows = []
    labels = chart_labels([s.result_set.name for s in report.sets])
    # Every set on one estimator (Report.shared_estimator): like beside like.
    shared = report.shared_estimator
    shared_label = "unbiased" if shared == "unbiased" else "plug-in"
    undefined = []
    for s, label in zip(report.sets, labels, strict=True):
        p = s.on(shared)
        if p.estimate is None:
            undefined.append(s.result_set.name)
            continue
        own = f"; its headline is the {s.lead_label}" if s.headline.estimator != shared else ""
        rows.append(
            {
                "set": f"{label} ({s.label(shared)}{own})",
                "estimate": p.estimate,
                "low": p.estimate if p.low is None else p.low,
                "high": p.estimate if p.high is None else p.high,
            }
        )
    data = datasets.add(rows)
    # Each set's name above its bar, across the whole width: beside the axis a phone
    # had room for a third of "claude-sonnet · terminal-bench-40 (unbiased)".
    y = alt.Y("set:N", title=None, sort=None, axis=None)
    x_title = (
        f"reliability@{k} ({shared_label}, for every set), {level} interval"
        if report.leads_differ
        else f"reliability@{k} (headline estimate), {level} interval"
    )
    rules = (
        alt.Chart(data)
        .mark_rule(color=BLUE, strokeWidth=3)
        .encode(y=y, x=alt.X("low:Q", scale=_scale01(""), title=x_title), x2=alt.X2("high"))
    )
    points = (
        alt.Chart(data)
        .mark_point(color=BLUE, filled=True, size=70, shape="diamond")
        .encode(y=y, x=alt.X("estimate:Q"))
    )
    names = (
        alt.Chart(data)
        .mark_text(align="left", baseline="bottom", dy=-7, fontSize=12)
        .encode(y=y, x=alt.XValue(0), text=alt.Text("set:N"))
    )
    chart = (rules + points + names).properties(height=max(60, 44 * len(rows)))
    title = f"reliability@{k} by result set, {level} intervals"
    shown = (
        f"its {shared_label} reliability@{k}, the estimate most sets lead with (a set that "
        "leads with the other says so)"
        if report.leads_differ
        else f"its headline reliability@{k} (the estimator is named with the set)"
    )
    missing = (
        f" No row for {', '.join(undefined)}: its {shared_label} value is undefined (some "
        "task has fewer than k runs); the table gives its other estimate."
        if undefined and report.leads_differ
        else ""
    )
    description = (
        f"One row per result set: the diamond is {shown}, the bar its "
        f"{level} Student-t interval across tasks. The same numbers are in the table.{missing}"
    )
    return _render(chart_id, title, description, chart, datasets)


def cost_sets(report: Report) -> list[SetReport]:
    """The sets whose runs recorded a cost: the cost chart's points. Only baseline
    sets: runs made under a perturbation are not an alternative to choose between."""
    return [
        s
        for s in report.sets
        if s.resources is not None and s.resources.cost is not None and not s.result_set.condition
    ]


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats (costs no more and is at least as
    reliable, better in one), cheapest first: the sets worth paying for."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1]))
    front, best = [], -1.0
    for i in order:
        if points[i][1] > best:
            front.append(i)
            best = points[i][1]
    return front


def cost_chart(report: Report, chart_id: str) -> Chart:
    """reliability@k against the mean cost of a run, a point per set with both its
    intervals, and the Pareto frontier through the sets no other beats."""
    datasets = _Datasets()
    k, level = report.k, percent(report.confidence)
    shared = report.shared_estimator
    sets = [s for s in cost_sets(report) if s.on(shared).estimate is not None]
    labels = chart_labels([s.result_set.name for s in sets])
    rows: list[dict[str, Any]] = []
    for s, label in zip(sets, labels, strict=True):
        cost = s.resources.cost if s.resources is not None else None
        assert cost is not None and cost.per_run.estimate is not None
        value = s.on(shared)
        rows.append(
            {
                "set": label,
                "cost": cost.per_run.estimate,
                "cost_low": cost.per_run.estimate if cost.per_run.low is None else cost.per_run.low,
                "cost_high": cost.per_run.estimate
                if cost.per_run.high is None
                else cost.per_run.high,
                "estimate": value.estimate,
                "low": value.estimate if value.low is None else value.low,
                "high": value.estimate if value.high is None else value.high,
            }
        )
    front = pareto_front([(r["cost"], r["estimate"]) for r in rows])
    costs = [r["cost_low"] for r in rows] + [r["cost_high"] for r in rows]
    # Costs of different models differ by orders of magnitude: a log axis then.
    spread = min(costs) > 0 and max(costs) / min(costs) >= 10
    x_scale = alt.Scale(type="log") if spread else alt.Scale(zero=True)
    data = datasets.add(rows)
    colour = alt.Color(
        "set:N",
        title="result set",
        sort=None,
        scale=alt.Scale(range=OKABE_ITO),
        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=0),
    )
    x = alt.X("cost:Q", scale=x_scale, title="mean cost of a run, " + level + " interval")
    y = alt.Y(
        "estimate:Q",
        scale=_scale01(""),
        title=f"reliability@{k} ({'unbiased' if shared == 'unbiased' else 'plug-in'}), "
        f"{level} interval",
    )
    across = (
        alt.Chart(data)
        .mark_rule(strokeWidth=2)
        .encode(x=alt.X("cost_low:Q", scale=x_scale), x2=alt.X2("cost_high"), y=y, color=colour)
    )
    up = (
        alt.Chart(data)
        .mark_rule(strokeWidth=2)
        .encode(x=x, y=alt.Y("low:Q", scale=_scale01("")), y2=alt.Y2("high"), color=colour)
    )
    points = alt.Chart(data).mark_point(filled=True, size=90).encode(x=x, y=y, color=colour)
    layers = across + up + points
    if len(front) > 1:
        line = datasets.add(
            [{"cost": rows[i]["cost"], "estimate": rows[i]["estimate"]} for i in front]
        )
        layers = (
            alt.Chart(line)
            .mark_line(color=GREY, strokeDash=[4, 3])
            .encode(x=alt.X("cost:Q", scale=x_scale), y=alt.Y("estimate:Q", scale=_scale01("")))
        ) + layers
    chart = layers.properties(height=320)
    on_front = ", ".join(sets[i].result_set.name for i in front)
    description = (
        f"One point per result set whose runs recorded a cost: across, the mean cost of a "
        f"run with its {level} bootstrap interval over tasks{' (log scale)' if spread else ''}; "
        f"up, reliability@{k} with its {level} Student-t interval. The dashed line joins the "
        f"sets no other set beats on both (the Pareto frontier): {on_front}. The same numbers "
        "are in the profile table."
    )
    return _render(chart_id, f"reliability@{k} against cost", description, chart, datasets)


def profile_rows(s: SetReport) -> list[dict[str, Any]]:
    """The profile's measures that live on a 0-1 scale (or near it: a robustness ratio
    may pass 1), each with its interval where it has one, in the profile table's order."""
    k = s.estimates.k
    rows: list[tuple[str, Any]] = [(f"reliability@{k} ({s.lead_label})", s.lead)]
    if s.consistency.tasks:
        rows.append(("outcome consistency (unbiased)", s.consistency.unbiased))
    if s.resources is not None and s.resources.consistency is not None:
        rows.append(("resource consistency", s.resources.consistency.value))
    if s.predictability is not None:
        rows.append(("calibration error (lower is better)", s.predictability.calibration_error))
        rows.append(("AUROC", s.predictability.auroc))
        rows.append(("Brier score (lower is better)", s.predictability.brier))
    if s.robustness is not None:
        rows.append((f"robustness: reliability@{k} ratio", s.robustness.reliability))
        rows.append(("robustness: pass-rate ratio", s.robustness.pass_rate))
    return [
        {
            "measure": label,
            "rank": rank,
            "estimate": value.estimate,
            "low": value.estimate if value.low is None else value.low,
            "high": value.estimate if value.high is None else value.high,
        }
        for rank, (label, value) in enumerate(rows)
        if value.estimate is not None
    ]


def profile_chart(s: SetReport, chart_id: str) -> Chart:
    """A dot plot of the profile: each measure's value and its interval on one axis."""
    datasets = _Datasets()
    level = percent(s.estimates.confidence)
    rows = profile_rows(s)
    top = max([1.0, *(r["high"] for r in rows)])
    data = datasets.add(rows)
    y = alt.Y("measure:N", sort=alt.EncodingSortField("rank", order="ascending"), title=None)
    x_title = f"value, {level} interval"
    scale = alt.Scale(domain=[0, top], nice=False)
    rules = (
        alt.Chart(data)
        .mark_rule(color=BLUE, strokeWidth=2)
        .encode(y=y, x=alt.X("low:Q", scale=scale, title=x_title), x2=alt.X2("high"))
    )
    points = (
        alt.Chart(data)
        .mark_point(color=BLUE, filled=True, size=70)
        .encode(y=y, x=alt.X("estimate:Q"))
    )
    chart = (rules + points).properties(height=max(60, 22 * len(rows)))
    description = (
        f"Dot plot of the set's reliability profile: each row a measure, the dot its value "
        f"and the bar its {level} interval. The table below gives the numbers, each "
        "interval's kind, and whether its coverage was checked."
    )
    return _render(
        chart_id, f"Reliability profile, {level} intervals", description, chart, datasets
    )


def calibration_chart(s: SetReport, chart_id: str) -> Chart:
    """The reliability diagram: per bin of stated confidence, the share of runs that
    passed against their mean confidence; on the diagonal, the agent is calibrated."""
    assert s.predictability is not None
    datasets = _Datasets()
    bins = [b for b in s.predictability.bins if b.runs]
    rows: list[dict[str, Any]] = [
        {"confidence": b.confidence, "passed": b.passed, "runs": b.runs} for b in bins
    ]
    diagonal = (
        alt.Chart(datasets.add([{"x": 0.0, "y": 0.0}, {"x": 1.0, "y": 1.0}]))
        .mark_line(color=GREY, strokeDash=[4, 4])
        .encode(
            x=alt.X("x:Q", scale=_scale01(""), title="mean stated confidence in the bin"),
            y=alt.Y("y:Q", scale=_scale01(""), title="share of runs passed"),
        )
    )
    most = max(b.runs for b in bins)
    size: Any = (
        alt.SizeValue(80)
        if all(b.runs == most for b in bins)
        else alt.Size(
            "runs:Q",
            title="runs",
            scale=alt.Scale(domain=[1, most], range=[30, 400]),
            legend=alt.Legend(values=sorted({1, (1 + most) // 2, most}), format=",d"),
        )
    )
    points = (
        alt.Chart(datasets.add(rows))
        .mark_circle(color=BLUE, opacity=0.8)
        .encode(x=alt.X("confidence:Q"), y=alt.Y("passed:Q"), size=size)
    )
    chart = (diagonal + points).properties(height=320)
    ece = s.predictability.calibration_error.estimate
    description = (
        f"Reliability diagram over {s.predictability.runs:,} runs that stated a confidence, in "
        f"ten equal-width bins: each circle is a bin, across its runs' mean confidence, up the "
        f"share of them that passed, its area growing with its runs. On the dashed diagonal "
        f"the agent is calibrated; below it, overconfident. The calibration error (ECE) is "
        f"{'undefined' if ece is None else f'{ece:.3f}'}; the bins table gives the numbers."
    )
    return _render(chart_id, "Stated confidence against outcome", description, chart, datasets)


def set_charts(s: SetReport) -> list[Chart]:
    charts = [forest_chart(s, "forest")]
    if len(s.tasks) > FOREST_ROWS:
        charts.append(distribution_chart(s, "distribution"))
    charts.append(curve_chart(s, "curve"))
    charts.append(gap_chart(s, "gap"))
    charts.append(profile_chart(s, "profile"))
    if s.predictability is not None and any(b.runs for b in s.predictability.bins):
        charts.append(calibration_chart(s, "calibration"))
    return charts


def begin_charts(report: Report, converter: Converter | None = None) -> Callable[[], SiteCharts]:
    """Make every chart's spec (a few per result set, none per task) and start
    drawing them; the function returned waits for the drawings."""
    overview = [comparison_chart(report, "comparison")] if len(report.sets) > 1 else []
    if len(cost_sets(report)) > 1:
        overview.append(cost_chart(report, "cost"))
    by_trend = {}
    if report.history is not None:
        level = percent(report.confidence)
        by_trend = {
            set_id: [trend_chart(points, report.k, level, "trend")]
            for set_id, points in report.history.trends.items()
        }
    charts = SiteCharts(
        overview=overview,
        by_set={s.id: set_charts(s) for s in report.sets},
        by_comparison={c.id: [paired_chart(c, "paired")] for c in report.comparisons},
        by_trend=by_trend,
    )
    return _send_all(charts, converter)


def make_charts(report: Report, converter: Converter | None = None) -> SiteCharts:
    """Every chart of the site, drawn."""
    return begin_charts(report, converter)()
