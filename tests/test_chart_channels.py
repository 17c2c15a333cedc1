"""Chart specs are built without Altair's shorthand lookup (website/chart_kit.py's docstring).

A bare "low:Q" string or alt.value(...) in an encoding makes Altair build a table
of every schema class (about 4 ms each time) to find the channel's class. Every
kind of chart the site draws is built here, counting those tables: none.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from altair.utils import schemapi
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.readers import Source, load_sources
from reportgen.report import build_report
from reportgen.website import chart, chart_kit

from .conftest import build_example


class _Spy:
    """A chart engine that keeps the specs and draws nothing."""

    def __init__(self) -> None:
        self.specs: list[dict[str, Any]] = []

    def send(self, specs: list[dict[str, Any]]) -> None:
        self.specs.extend(specs)

    def receive(self) -> list[str]:
        return ["<svg></svg>"] * len(self.specs)

    def close(self) -> None:
        pass


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made = [0]
    init: Callable[..., None] = schemapi._FromDict.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        made[0] += 1
        init(self, *args, **kwargs)

    monkeypatch.setattr(schemapi._FromDict, "__init__", counting)
    return made


def test_the_example_site_builds_its_charts_without_the_lookup(
    lookups: list[int], tmp_path: Path
) -> None:
    # The example has every chart of a small suite, comparisons and a trend.
    site = build_example(tmp_path / "site")
    assert lookups == [0]
    assert json.loads((site / "report.json").read_text())["comparisons"]


def test_large_suites_charts_are_built_without_the_lookup(
    lookups: list[int], tmp_path: Path
) -> None:
    # Past FOREST_ROWS tasks a set gets a histogram; past SCATTER_LIMIT the scatter
    # and the paired chart are binned.
    tasks = chart_kit.SCATTER_LIMIT + 50
    lines = [
        json.dumps(
            {
                "suite": "s",
                "model": model,
                "task": f"t{t}",
                "run": r,
                "passed": (t * 7 + r + m) % 5 > 1,
            }
        )
        for m, model in enumerate(("a", "b"))
        for t in range(tasks)
        for r in range(4)
    ]
    runs = tmp_path / "runs.jsonl"
    runs.write_text("\n".join(lines) + "\n")
    report = build_report(load_sources([Source(runs)]).result_sets, "Large", "", 3, 0.95)
    spy = _Spy()
    drawn = chart.begin_charts(report, spy)()  # type: ignore[arg-type]
    assert lookups == [0]
    marks = json.dumps(spy.specs)
    frames = len(chart_kit.FRAMES)
    assert '"bin": "binned"' in marks and frames * len(drawn.all()) == len(spy.specs) >= 10


@settings(max_examples=60, deadline=None)
@given(
    points=st.lists(
        st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0])),
        min_size=1,
        max_size=chart_kit.SCATTER_LIMIT + 40,
    )
)
def test_a_scatter_draws_each_point_once_sized_by_its_tasks(
    points: list[tuple[float, float]],
) -> None:
    """Tasks at the same point are one circle whose count is theirs: every task is
    counted once, and a circle's size follows its count only when counts differ."""
    datasets = chart_kit.Datasets()
    xs, ys = (np.array(values, dtype=float) for values in zip(*points, strict=True))
    layer = chart_kit.circles(datasets, "a", xs, "b", ys, opacity=0.6).to_dict(validate=False)
    (rows,) = datasets.rows.values()
    assert sum(row["tasks"] for row in rows) == len(points)
    assert len({(row["a"], row["b"]) for row in rows}) == len(rows)
    assert {(row["a"], row["b"]) for row in rows} == set(points)
    sized = layer["encoding"]["size"]
    if max(row["tasks"] for row in rows) == 1:
        assert sized == {"value": 40}
    else:
        assert sized["field"] == "tasks" and sized["scale"]["domain"][0] == 1


@given(
    words=st.lists(st.text(alphabet="abcdefghij@^()%,0123456789", min_size=1), max_size=12),
    limit=st.integers(min_value=5, max_value=40),
)
def test_a_long_title_breaks_between_words_into_lines_that_fit(
    words: list[str], limit: int
) -> None:
    """On a phone's drawing a title longer than the limit becomes lines, broken only
    between words; each line fits unless it is one word longer than the limit."""
    title = " ".join(words)
    spec = {"layer": [{"encoding": {"x": {"title": title}, "y": {"title": None}}}]}
    chart_kit._wrap_titles(spec, limit)
    wrapped = spec["layer"][0]["encoding"]["x"]["title"]
    assert spec["layer"][0]["encoding"]["y"]["title"] is None
    if len(title) <= limit or " " not in title:
        assert wrapped == title  # nothing to break, or nowhere to break it
    else:
        assert isinstance(wrapped, list) and " ".join(wrapped) == title
        assert all(len(line) <= limit or " " not in line for line in wrapped)
