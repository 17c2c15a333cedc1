"""Chart: Altair specs rendered at build time to inline SVG with vl-convert.

Pages need no JavaScript and load nothing: each chart becomes two <svg>s, one
drawn for a wide column and one for a phone (see chart_kit.Frame), each with
role="img", a <title> and a <desc>, and element ids made unique per drawing so
several charts can share a page. Every chart's numbers are also given in a table
beside it by the templates.

This module draws the charts of a set, a comparison and a trend, and the
overview's comparison chart, and hands every chart of the site to the chart
engine (begin_charts); profile_charts.py draws the reliability profile's.
"""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import numpy as np

from ..history import TrendPoint
from ..numbers import percent, signed, signed_bracket
from ..report import ComparisonReport, Report, SetReport
from ..stats.estimate import MAX_CURVE_K
from ..stats.plain import counted
from .chart_engine import Converter, EngineFailed
from .chart_kit import (
    BLUE,
    FRAMES,
    GREEN,
    GREY,
    ORANGE,
    VERMILLION,
    WIDE,
    Datasets,
    accessible,
    chart_labels,
    circles,
    interval_band,
    render_chart,
    scale01,
)
from .charts import FOREST_ROWS, Chart, SiteCharts, chart_error
from .profile_charts import calibration_chart, cost_chart, cost_sets, profile_chart


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
            svg = accessible(svg_id, chart.title, chart.description, svg, frame.max_scale)
            if frame is WIDE:
                chart.svg = svg
            else:
                chart.narrow_svg = svg
        for chart in charts.all():
            chart.specs = []
        return charts

    return receive


def forest_chart(s: SetReport, chart_id: str) -> Chart:
    """Per-task plug-in pass^k with its interval, least reliable first."""
    datasets = Datasets()
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
        .encode(y=y, x=alt.X("low:Q", scale=scale01(x_title), title=x_title), x2=alt.X2("high"))
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
    return render_chart(chart_id, title, description, chart, datasets)


def distribution_chart(s: SetReport, chart_id: str) -> Chart:
    """Histogram of per-task plug-in pass^k (used when there are too many tasks to list)."""
    datasets = Datasets()
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
            x=alt.X("from:Q", scale=scale01(""), title=f"pass^{k} (plug-in)", bin="binned"),
            x2=alt.X2("to"),
            y=alt.Y("tasks:Q", title="tasks"),
        )
        .properties(height=180)
    )
    title = f"Distribution of pass^{k} over all {len(s.tasks):,} tasks"
    description = f"Histogram: number of tasks in each 0.05-wide range of plug-in pass^{k}."
    return render_chart(chart_id, title, description, chart, datasets)


def curve_chart(s: SetReport, chart_id: str) -> Chart:
    """reliability@k (plug-in, unbiased) and mean pass@k over k, with interval bands."""
    datasets = Datasets()
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
    band = interval_band(data, x, colour)
    line = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("estimate:Q", scale=scale01("")),
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
    return render_chart(chart_id, title, description, chart, datasets)


def gap_chart(s: SetReport, chart_id: str) -> Chart:
    """Single-run pass rate against plug-in pass^k per task: the reliability gap."""
    datasets = Datasets()
    est = s.estimates.tasks
    k = s.estimates.k
    grid = np.linspace(0, 1, 41)
    reference = [{"p": float(p), "diag": float(p), "power": float(p**k)} for p in grid]
    ref = alt.Chart(datasets.add(reference))
    diagonal = ref.mark_line(color=GREY, strokeDash=[4, 4]).encode(
        x=alt.X("p:Q", scale=scale01(""), title="single-run pass rate"),
        y=alt.Y("diag:Q", scale=scale01(""), title=f"pass^{k} (plug-in)"),
    )
    power = ref.mark_line(color=ORANGE).encode(x=alt.X("p:Q"), y=alt.Y("power:Q"))
    points = circles(datasets, "p", est.pass_rate, "pk", est.plugin, opacity=0.7)
    chart = (diagonal + power + points).properties(height=320)
    title = f"Pass rate against pass^{k}"
    description = (
        f"Each circle is a task, or tasks with the same values (its area grows with their "
        f"number): across, the single-run pass rate; up, the plug-in pass^{k}. "
        f"The dashed diagonal is where they would be equal; the solid curve is x^{k}. "
        "The vertical distance to the diagonal is what a single pass rate hides."
    )
    return render_chart(chart_id, title, description, chart, datasets)


def paired_chart(c: ComparisonReport, chart_id: str) -> Chart:
    """Each shared task's plug-in pass^k under A (across) and B (up)."""
    datasets = Datasets()
    cmp = c.comparison
    k, level = cmp.k, percent(cmp.confidence)
    a_name, b_name = c.a.result_set.name, c.b.result_set.name
    pa, pb = cmp.a.plugin, cmp.b.plugin
    diagonal = (
        alt.Chart(datasets.add([{"v": 0.0}, {"v": 1.0}]))
        .mark_line(color=GREY, strokeDash=[4, 4])
        .encode(
            x=alt.X("v:Q", scale=scale01(""), title=f"A: pass^{k} (plug-in)"),
            y=alt.Y("v:Q", scale=scale01(""), title=f"B: pass^{k} (plug-in)"),
        )
    )
    points = circles(datasets, "a", pa, "b", pb, opacity=0.6)
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
    return render_chart(chart_id, title, description, chart, datasets)


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
    datasets = Datasets()
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
            y=alt.Y("low:Q", scale=scale01(""), title="value"),
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
    return render_chart(chart_id, title, description, chart, datasets)


def drawn_builds(count: int) -> list[int]:
    """The indices of the builds a long trend draws: all, or TREND_DRAWN evenly spaced."""
    if count <= TREND_DRAWN:
        return list(range(count))
    return sorted({round(i * (count - 1) / (TREND_DRAWN - 1)) for i in range(TREND_DRAWN)})


def _long_trend_chart(points: list[TrendPoint], k: int, level: str, chart_id: str) -> Chart:
    """The trend of many builds: lines with interval bands over the build number."""
    datasets = Datasets()
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
    band = interval_band(data, x, colour)
    line = (
        alt.Chart(data)
        .mark_line()
        .encode(x=x, y=alt.Y("estimate:Q", scale=scale01("")), color=colour, strokeDash=dash)
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
    return render_chart(chart_id, title, description, chart, datasets)


# ---------------------------------------------------------------- overview


def comparison_chart(report: Report, chart_id: str) -> Chart:
    """reliability@k of every result set with its interval."""
    datasets = Datasets()
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
        .encode(y=y, x=alt.X("low:Q", scale=scale01(""), title=x_title), x2=alt.X2("high"))
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
    return render_chart(chart_id, title, description, chart, datasets)


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
