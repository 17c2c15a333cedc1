"""The reliability profile's charts: reliability@k against cost across sets (with the
Pareto frontier), each set's profile as a dot plot, and the reliability diagram of
stated confidence against outcome.
"""

from __future__ import annotations

from typing import Any

import altair as alt

from ..numbers import percent
from ..report import Report, SetReport
from .chart_kit import BLUE, GREY, OKABE_ITO, Datasets, chart_labels, render_chart, scale01
from .charts import Chart


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
    datasets = Datasets()
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
        scale=scale01(""),
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
        .encode(x=x, y=alt.Y("low:Q", scale=scale01("")), y2=alt.Y2("high"), color=colour)
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
            .encode(x=alt.X("cost:Q", scale=x_scale), y=alt.Y("estimate:Q", scale=scale01("")))
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
    return render_chart(chart_id, f"reliability@{k} against cost", description, chart, datasets)


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
        ratios = (
            (f"robustness: reliability@{k} ratio", s.robustness.reliability),
            ("robustness: pass-rate ratio", s.robustness.pass_rate),
        )
        # An unbounded ratio has no interval to draw: the table says so.
        rows.extend((label, ratio) for label, ratio in ratios if not ratio.unbounded)
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
    datasets = Datasets()
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
    return render_chart(
        chart_id, f"Reliability profile, {level} intervals", description, chart, datasets
    )


def calibration_chart(s: SetReport, chart_id: str) -> Chart:
    """The reliability diagram: per bin of stated confidence, the share of runs that
    passed against their mean confidence; on the diagonal, the agent is calibrated."""
    assert s.predictability is not None
    datasets = Datasets()
    bins = [b for b in s.predictability.bins if b.runs]
    rows: list[dict[str, Any]] = [
        {"confidence": b.confidence, "passed": b.passed, "runs": b.runs} for b in bins
    ]
    diagonal = (
        alt.Chart(datasets.add([{"x": 0.0, "y": 0.0}, {"x": 1.0, "y": 1.0}]))
        .mark_line(color=GREY, strokeDash=[4, 4])
        .encode(
            x=alt.X("x:Q", scale=scale01(""), title="mean stated confidence in the bin"),
            y=alt.Y("y:Q", scale=scale01(""), title="share of runs passed"),
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
    return render_chart(chart_id, "Stated confidence against outcome", description, chart, datasets)
