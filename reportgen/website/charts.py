"""The charts of a site, drawn or taken from the cache: what pages and the cache need.

Apart from chart.py, which draws them with Altair, so that a build whose charts
all come from the cache does not import Altair.
"""

from __future__ import annotations

import resource
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import UserError

if TYPE_CHECKING:
    from ..report import Report
    from .chart_engine import EngineFailed


#: The forest plot draws at most this many tasks, the least reliable (each row is
#: 16 px: 60 fill a screen); the set page's table lists the others, and a
#: histogram shows where all of them lie.
FOREST_ROWS = 60


@dataclass
class Chart:
    """A chart: an id for the page, its title and description, the specs to draw
    (one per frame of chart_kit.FRAMES), and once drawn its SVG for a wide column and
    for a phone."""

    id: str
    title: str
    description: str
    specs: list[dict[str, Any]] = field(default_factory=list)
    svg: str = ""
    narrow_svg: str = ""


@dataclass(frozen=True)
class SiteCharts:
    overview: list[Chart]
    by_set: dict[str, list[Chart]]
    by_comparison: dict[str, list[Chart]]
    by_trend: dict[str, list[Chart]]

    def place(self, chart: Chart) -> str:
        """Which page a chart is drawn for, as an error message names it."""
        if any(chart is c for c in self.overview):
            return "the overview"
        for kind, groups in (
            ("result set", self.by_set),
            ("comparison", self.by_comparison),
            ("trend of result set", self.by_trend),
        ):
            for name, group in groups.items():
                if any(chart is c for c in group):
                    return f"{kind} {name}"
        return "a page"

    def all(self) -> list[Chart]:
        groups = [self.overview, *self.by_set.values(), *self.by_comparison.values()]
        return [chart for group in [*groups, *self.by_trend.values()] for chart in group]

    @property
    def count(self) -> int:
        return len(self.all())

    def fit(self, report: Report) -> bool:
        """Whether these charts cover exactly the report's pages (for a cached set)."""
        trends = report.history.trends if report.history is not None else {}
        costs = [
            s
            for s in report.sets
            if s.resources is not None and s.resources.cost and not s.result_set.condition
        ]
        return (
            len(self.overview) == (len(report.sets) > 1) + (len(costs) > 1)
            and self.by_set.keys() == {s.id for s in report.sets}
            and self.by_comparison.keys() == {c.id for c in report.comparisons}
            and self.by_trend.keys() == trends.keys()
        )


class PendingCharts:
    """The site's charts, drawn while the pages without charts are rendered.

    `begin` makes the specs and hands them to the chart engine, returning the
    function that waits for the drawings. The renderer calls `start` when this
    process is free to make specs (once workers are busy with task pages) and
    `get` when a page needs its charts.
    """

    def __init__(
        self,
        begin: Callable[[], Callable[[], SiteCharts]] | None,
        charts: SiteCharts | None = None,
    ) -> None:
        self._begin = begin
        self._finish: Callable[[], SiteCharts] | None = None
        self._charts = charts

    @classmethod
    def ready(cls, charts: SiteCharts) -> PendingCharts:
        """Charts already drawn (from the cache, or by the caller)."""
        return cls(None, charts)

    def start(self) -> None:
        if self._begin is not None:
            begin, self._begin = self._begin, None
            self._finish = begin()

    def get(self) -> SiteCharts:
        if self._charts is None:
            self.start()
            assert self._finish is not None
            self._charts = self._finish()
        return self._charts


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


# ---------------------------------------------------------------- per result set
