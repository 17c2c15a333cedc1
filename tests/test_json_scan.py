"""json_scan.json_values and plan_json against an independent count, on any JSON.

The scanner reads structure from raw bytes, a chunk at a time, without parsing:
strings holding brackets, commas, quotes and runs of backslashes, and chunk
edges falling anywhere, must not change what it counts.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen import json_scan
from reportgen.json_scan import JsonProblem, json_values, plan_json

from .conftest import examples

#: Text made to confuse a scanner: structural characters, quotes and backslashes.
tricky = st.text(alphabet=st.sampled_from(list('[]{},:"\\ab é\n\t')), max_size=12)
documents = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | tricky,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(tricky, inner, max_size=5),
    max_leaves=40,
)


def reference_count(value: Any) -> int:
    """Each value once, each object key once: the scanner's definition."""
    if isinstance(value, list):
        return 1 + sum(reference_count(v) for v in value)
    if isinstance(value, dict):
        return 1 + sum(1 + reference_count(v) for v in value.values())
    return 1


def encoded(value: Any, indent: int | None, ascii_only: bool) -> bytes:
    return json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode()


@given(documents, st.sampled_from([None, 0, 2]), st.booleans(), st.integers(1, 9))
@settings(max_examples=examples(300), deadline=None)
def test_values_are_counted_as_a_parse_would(
    value: Any, indent: int | None, ascii_only: bool, chunk: int
) -> None:
    data = encoded(value, indent, ascii_only)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_scan, "JSON_CHUNK", chunk)  # edges anywhere, even mid-escape
        assert json_values(data) == reference_count(json.loads(data))


@given(st.lists(documents, max_size=8), st.sampled_from([None, 1]), st.integers(1, 9))
@settings(max_examples=examples(200), deadline=None)
def test_records_of_a_top_level_array_are_found(
    records: list[Any], indent: int | None, chunk: int
) -> None:
    data = encoded(records, indent, False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_scan, "JSON_CHUNK", chunk)
        plan = plan_json(lambda at, size: data[at : at + size], len(data), top=True)
    assert plan.count == len(records)
    assert plan.array is not None
    assert json.loads(data[plan.array[0] : plan.array[1] + 1]) == records


@given(documents, st.integers(1, 9))
@settings(max_examples=examples(200), deadline=None)
def test_a_document_cut_short_is_a_problem_not_a_count(value: Any, chunk: int) -> None:
    data = encoded([value, value], None, True)
    cut = data[: len(data) - 1]  # the closing bracket gone
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_scan, "JSON_CHUNK", chunk)
        with pytest.raises(JsonProblem):
            plan_json(lambda at, size: cut[at : at + size], len(cut), top=True)
