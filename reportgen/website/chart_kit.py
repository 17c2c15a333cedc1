"""What every chart is built from: the palette, the two frames (a wide column and a
phone), the theme, named datasets, axis labels, the SVG's title and description,
and the layers several charts share. chart.py and profile_charts.py draw with these.

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
from collections import Counter
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np

from ..limits import MAX_CHART_LABEL
from ..stats.estimate import FloatArray
from ..terminal import terminal_safe
from .charts import Chart

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


class Datasets:
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


def accessible(chart_id: str, title: str, description: str, svg: str, max_scale: float) -> str:
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


def render_chart(
    chart_id: str, title: str, description: str, chart: alt.TopLevelMixin, data: Datasets
) -> Chart:
    """A chart with its specs, one per frame; `make_charts` turns every spec into SVG
    in one batch."""
    specs = [_theme(chart, frame) for frame in FRAMES]
    for spec in specs:
        spec["datasets"] = data.rows  # the same rows: the frames differ in layout alone
    return Chart(chart_id, title, description, specs=specs)


def scale01(title: str) -> alt.Scale:
    return alt.Scale(domain=[0, 1], nice=False)


def interval_band(data: alt.Data, x: alt.X, colour: alt.Color) -> alt.Chart:
    """Each series' interval, low to high, as a pale band on a 0-1 scale."""
    band: alt.Chart = (
        alt.Chart(data)
        .mark_area(opacity=0.15)
        .encode(
            x=x,
            y=alt.Y("low:Q", scale=scale01(""), title="value"),
            y2=alt.Y2("high"),
            color=colour,
        )
    )
    return band


def circles(
    datasets: Datasets, x: str, xs: FloatArray, y: str, ys: FloatArray, opacity: float
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
