"""Every cache key hashes the data itself (keys.py), and every setting says what it rebuilds."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.keys import canonical, digest, key
from reportgen.settings import PAGES, REPORT, BuildSettings

from .conftest import examples


@settings(max_examples=examples(100), deadline=None)
@given(size=st.integers(1, 5000), at=st.integers(0, 4999), by=st.integers(1, 5))
def test_arrays_that_differ_anywhere_have_different_keys(size: int, at: int, by: int) -> None:
    # repr() of a numpy array shows only its ends past 1,000 elements: a key made from
    # it missed a change in the middle.
    a = np.zeros(size)
    b = a.copy()
    b[at % size] += by
    assert key(a) != key(b)
    assert key(a) == key(a.copy())


def test_the_dtype_and_shape_are_part_of_an_array_key() -> None:
    assert key(np.zeros(4, dtype=np.int64)) != key(np.zeros(4, dtype=np.float64))
    assert key(np.zeros((2, 2))) != key(np.zeros(4))


@settings(max_examples=examples(100), deadline=None)
@given(st.dictionaries(st.text(max_size=5), st.integers(-(2**63), 2**64 - 1), max_size=8))
def test_a_mapping_key_ignores_insertion_order(mapping: dict[str, int]) -> None:
    reversed_order = dict(reversed(list(mapping.items())))
    assert key(mapping) == key(reversed_order)


def test_plain_parts_have_a_canonical_form() -> None:
    @dataclasses.dataclass(frozen=True)
    class Part:
        path: Path
        blob: bytes
        names: frozenset[str]

    one = Part(Path("a/b"), b"\x00\x01", frozenset({"y", "x"}))
    text = canonical(one)
    assert '"path"' in text and '"a/b"' in text and '"bytes"' in text
    assert text == canonical(Part(Path("a/b"), b"\x00\x01", frozenset({"x", "y"})))
    assert key(one) != key(Part(Path("a/c"), b"\x00\x01", frozenset({"x", "y"})))
    with pytest.raises(TypeError):
        canonical(object())
    with pytest.raises(TypeError):  # orjson's integers are 64-bit: said, not wrapped
        canonical(2**64)


def test_a_key_is_salted_with_the_code_and_a_digest_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    from reportgen import code

    before_key, before_digest = key("x"), digest("x")
    monkeypatch.setattr(code, "identity", lambda: "0.0.0+other")
    assert key("x") != before_key and digest("x") == before_digest


def test_every_setting_says_what_it_rebuilds() -> None:
    settings_ = BuildSettings()
    report, pages = settings_.affecting(REPORT), settings_.affecting(PAGES)
    names = {f.name for f in dataclasses.fields(BuildSettings)}
    assert report.keys() | pages.keys() == names and not report.keys() & pages.keys()
    # The numbers depend on k and the level alone; the title is the pages' business.
    assert set(report) == {"k", "confidence"}
