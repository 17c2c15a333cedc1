"""Replaying a page from a record of what its template read (website/replay.py).

The law: a template rendered from a record made with another template either
gives exactly what rendering it with the real values gives, or raises (Miss, or
an error such as `+` on a value the record stands in for). It
is tested on random pairs of templates built from snippets that read values in
every way the record knows (attributes, items, slices, loops, lengths, calls,
comparisons, filters, tests) and in ways it must refuse.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import jinja2
import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from reportgen.website.replay import (
    Miss,
    Record,
    ReplayEnvironment,
    Wrapped,
    guard,
    record_page,
    replay_page,
)

from .conftest import examples


@dataclass
class Interval:
    estimate: float | None
    low: float | None
    high: float | None


@dataclass
class Item:
    id: str
    score: float
    flags: list[str]
    lead: Interval
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.id} ({self.score:.2f})"

    def page(self, i: int) -> str:
        return f"items/{self.id}-{i}.html"


@dataclass
class Report:
    title: str
    items: list[Item]
    history: Any = None
    svg: Markup = field(default_factory=lambda: Markup("<svg><title>a &amp; b</title></svg>"))

    @property
    def count(self) -> int:
        return len(self.items)


def _report() -> Report:
    return Report(
        title="Suite <one>",
        items=[
            Item("a", 0.5, ["flaky"], Interval(0.4, 0.1, 0.7), {"why": "timeouts"}),
            Item("b", math.nan, [], Interval(None, None, None)),
            Item("c", 1.0, ["x", "y"], Interval(1.0, 1.0, 1.0), {"why": "<b>bold</b>"}),
        ],
    )


def _context() -> dict[str, Any]:
    return {
        "report": _report(),
        "site": {"title": "T", "k": 3, "level": "95%"},
        "nav": [{"title": "Overview", "href": "index.html"}, {"title": "FAQ", "href": "faq.html"}],
        "path": "index.html",
    }


#: Ways a template reads its values. All but the last few are recordable.
SNIPPETS = [
    "<h1>{{ report.title }}</h1>",
    "{{ site.title }} k={{ site.k }} {{ site['level'] }}",
    "{% for s in report.items %}<p>{{ s.id }} {{ s.score }} {{ s.label }}</p>{% endfor %}",
    "{{ report.items | length }} {{ report.count }}",
    "{% for s in report.items %}{% if s.lead.low is none %}none{% else %}"
    "{{ '%.3f' % s.lead.low }}{% endif %}{% endfor %}",
    "{% for s in report.items %}{{ s.page(loop.index) }}{% endfor %}",
    "{% for item in nav[1:] %}<a href='{{ item.href }}'>{{ item.title }}</a>{% endfor %}",
    "{{ report.items | map(attribute='id') | join(', ') }}",
    "{% for s in report.items | sort(attribute='id', reverse=true) %}{{ s.id }}{% endfor %}",
    "{% for s in report.items | selectattr('score', 'eq', 1.0) %}{{ s.id }}{% endfor %}",
    "{% if 'flaky' in report.items[0].flags %}flaky{% endif %}",
    "{{ report.svg }} {{ report.svg | safe }}",
    "{% for s in report.items %}{{ s.notes.why | default('-') }}{% endfor %}",
    "{% if report.items[1].notes %}notes{% else %}no notes{% endif %}",
    "{{ report.items[0].lead }}",
    "{% if report.history is none %}no history{% endif %}",
    "{% for key, value in report.items[0].notes.items() %}{{ key }}={{ value }}{% endfor %}",
    "{{ report.items[-1].id }} {{ report.items | first }}",
    "{% if report.items[0].missing is defined %}yes{% else %}no{% endif %}",
    "{{ report.items[0].lead.estimate == 0.4 }} {{ report.items[0].notes != none }}",
    # Refused: a filter that inspects types, a test that does, sorting into groups,
    # arithmetic on a wrapped value,
    # two wrapped values compared.
    "{{ report.items[0].notes | tojson }}",
    "{% if report.items is mapping %}mapping{% endif %}",
    "{{ report.items | groupby('score') | list | length }}",
    "{{ report.items[0].flags + ['z'] }}",
    "{{ report.items[0].lead == report.items[0].lead }}",
    # `%` decides by type whether to unpack a tuple or read a mapping.
    "{{ '%s' % report.items[0].flags }}",
    # Looked into at any depth (pprint sorts a real dict, not a wrapped one).
    "{{ [[[[report.items[0].notes]]]] | pprint }}",
    # A method called by its underscore name may change its object.
    "{{ report.items[0].flags.__len__() }}",
    # The sandbox hides underscore attributes that the pages' environment shows.
    "{{ report.title.__len__ is defined }} {{ 'abc'.__len__ is defined }}",
]
#: Where the refused snippets start.
REFUSED = len(SNIPPETS) - 9


def _environment() -> jinja2.Environment:
    return guard(ReplayEnvironment(autoescape=True, undefined=jinja2.StrictUndefined))


def _real(template: str) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(template).render(**_context())


def _record(template: str) -> Record | None:
    env = _environment()
    env.loader = jinja2.DictLoader({"page.html": template})
    return record_page(env, "page.html", _context(), _real(template))


def _replay(template: str, record: Record) -> str:
    env = _environment()
    env.loader = jinja2.DictLoader({"page.html": template})
    # Through JSON and back, as the cache stores it.
    stored = Record.from_json(orjson.loads(orjson.dumps(record.to_json())))
    return replay_page(env, "page.html", stored, 1 << 20)


@pytest.mark.parametrize("snippet", SNIPPETS[:REFUSED])
def test_a_page_replays_from_its_own_record(snippet: str) -> None:
    record = _record(snippet)
    assert record is not None
    assert _replay(snippet, record) == _real(snippet)


@pytest.mark.parametrize("snippet", SNIPPETS[REFUSED:])
def test_what_a_record_cannot_answer_faithfully_is_not_recorded(snippet: str) -> None:
    assert _record(snippet) is None


@settings(max_examples=examples(150), deadline=None)
@given(
    recorded=st.sets(st.integers(0, len(SNIPPETS) - 1), max_size=8),
    replayed=st.sets(st.integers(0, len(SNIPPETS) - 1), min_size=1, max_size=8),
)
def test_another_template_replays_exactly_or_misses(recorded: set[int], replayed: set[int]) -> None:
    old = "\n".join(SNIPPETS[i] for i in sorted(recorded)) or "empty"
    new = "\n".join(SNIPPETS[i] for i in sorted(replayed))
    record = _record(old)
    if record is None:
        return
    try:
        html = _replay(new, record)
    except Exception:  # replay_page's contract: a Miss, or any error
        # The build then renders the page the usual way. But a template that asks only
        # what was recorded, in ways a record answers, must replay.
        assert not set(replayed) <= set(recorded) or set(replayed) & set(
            range(REFUSED, len(SNIPPETS))
        )
        return
    assert html == _real(new)


def test_a_template_asking_what_was_not_recorded_misses() -> None:
    record = _record(SNIPPETS[0])
    assert record is not None
    with pytest.raises(Miss):
        _replay("{{ report.items | length }}", record)
    with pytest.raises(Miss):
        _replay("{{ report.title | upper | tojson }}{{ report | tojson }}", record)


def test_recording_refuses_calls_that_change_their_object() -> None:
    context = _context()
    template = "{% set _ = report.items[0].flags.append('changed') %}{{ report.title }}"
    env = _environment()
    env.loader = jinja2.DictLoader({"page.html": template})
    assert record_page(env, "page.html", context, "<h1>x</h1>") is None
    assert context["report"].items[0].flags == ["flaky"]  # the real value is untouched


@pytest.mark.parametrize(
    "value",
    [np.float64(0.5), np.int64(3), np.array([1.0, 2.0]), iter([1, 2]), 2**70],
    ids=["float64", "int64", "array", "iterator", "huge-int"],
)
def test_values_a_copy_would_not_keep_stop_the_recording(value: Any) -> None:
    env = _environment()
    env.loader = jinja2.DictLoader({"page.html": "{{ value }}"})
    real = jinja2.Environment(autoescape=True).from_string("{{ value }}")
    expected = real.render(value=value) if not isinstance(value, type(iter([]))) else ""
    assert record_page(env, "page.html", {"value": value}, expected) is None


def test_a_recording_that_renders_differently_is_dropped() -> None:
    env = _environment()
    env.loader = jinja2.DictLoader({"page.html": "{{ report.title }}"})
    assert record_page(env, "page.html", _context(), "something else") is None


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {"context": {}, "nodes": {}},
        {"context": [], "nodes": []},
        {"context": {}, "nodes": [[]]},
    ],
)
def test_a_record_of_the_wrong_shape_is_refused(doc: Any) -> None:
    with pytest.raises(ValueError):
        Record.from_json(doc)


@pytest.mark.parametrize(
    "answer",
    [
        ["n", 5],  # no such node
        ["n", -1],
        ["n", True],
        ["x", "SystemExit"],  # only the four lookup and value errors are raised again
        ["f", "1e999"],
        ["v", [1, 2]],
        ["m", 3],
        ["s", "not a list"],
        ["s", [["v", "a sequence where one value was asked for"]]],
        ["q", 1],
        "v",
        ["v"],
    ],
)
def test_a_damaged_answer_is_a_miss(answer: Any) -> None:
    record = Record.from_json({"context": {"report": ["n", 0]}, "nodes": [{".title": answer}]})
    env = _environment()
    env.loader = jinja2.DictLoader({"page.html": "{{ report.title }}"})
    with pytest.raises(Miss):
        replay_page(env, "page.html", record, 1 << 20)


def test_recorded_errors_are_raised_again() -> None:
    record = Record.from_json(
        {"context": {"report": ["n", 0]}, "nodes": [{".title": ["x", "KeyError"]}]}
    )
    with pytest.raises(KeyError):
        record.replaying_context()["report"].title  # noqa: B018


def test_a_wrapped_value_shows_only_the_real_objects_attributes() -> None:
    # Attributes with underscores are the wrapped object's, not the wrapper's.
    _, wrapped = Record.recording({"report": _report()})
    report = wrapped["report"]
    assert isinstance(report, Wrapped)
    assert str(report.__class__) == str(Report)
    with pytest.raises(AttributeError):
        report._record  # noqa: B018
    with pytest.raises(TypeError):
        hash(report)


def test_a_sequence_inside_a_sequence_is_a_miss() -> None:
    # Recording never writes one; a list printed as it is would not be escaped.
    record = Record.from_json(
        {
            "context": {"report": ["n", 0]},
            "nodes": [{"iter": ["s", [["s", [["v", "<script>"]]]]]}],
        }
    )
    env = _environment()
    env.loader = jinja2.DictLoader({"page.html": "{% for x in report %}{{ x }}{% endfor %}"})
    with pytest.raises(Miss):
        replay_page(env, "page.html", record, 1 << 20)


def test_a_page_past_its_limit_is_a_miss() -> None:
    # A record from elsewhere could repeat one value many times over: the page is
    # stopped at the limit instead of filling memory.
    template = "{% for x in report.items %}{{ x }}{% endfor %}"
    env = _environment()
    env.loader = jinja2.DictLoader({"page.html": template})
    context = {"report": Report(title="t", items=["x" * 100] * 1000)}  # type: ignore[list-item]
    record = record_page(env, "page.html", context, "x" * 100_000)
    assert record is not None
    assert len(replay_page(env, "page.html", record, 200_000)) == 100_000
    with pytest.raises(Miss):
        replay_page(env, "page.html", record, 50_000)


def test_one_nan_object_stays_one_object() -> None:
    # `x in [y]` holds for the same NaN object and not for another (Python checks
    # identity before ==): a replayed NaN must be the same object where the real
    # one was, and another where it was not.
    shared = math.nan
    context = {"a": [shared, shared, float("nan")], "b": Report(title="t", items=[])}
    reads = "{% for x in a %}{{ x }}{% endfor %}"
    asks = "{% for x in a %}{% for y in a %}{{ x in [y] }} {% endfor %}{% endfor %}"
    env = _environment()
    env.loader = jinja2.DictLoader({"old.html": reads, "new.html": asks})
    real = jinja2.Environment(autoescape=True)
    record = record_page(env, "old.html", context, real.from_string(reads).render(**context))
    assert record is not None
    stored = Record.from_json(orjson.loads(orjson.dumps(record.to_json())))
    expected = real.from_string(asks).render(**context)
    assert expected.split().count("True") == 5  # the shared pair both ways, and each itself
    assert replay_page(env, "new.html", stored, 1 << 20) == expected
