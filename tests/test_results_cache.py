"""The slow computations' results kept between builds (reportgen/results.py).

Read back, a result must be the computed one exactly (values and their Python or
numpy types); a damaged or foreign entry must be ignored and the site must stay
the clean build's.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen import build as build_module
from reportgen.cache import CACHE_DIR
from reportgen.config import Config
from reportgen.readers import Source
from reportgen.report import build_report
from reportgen.results import Results, Unfit, codec, result_key
from reportgen.stats.bootstrap import TwoStageBootstrap, two_stage_bootstrap
from reportgen.stats.coverage import CoverageCheck, check_coverage
from reportgen.stats.estimate import CurvePoint, SuiteInterval, curve_over_k
from reportgen.stats.population import fit_population
from reportgen.stats.task_tests import TaskTests, shared_task_tests

from .conftest import examples, first_fast
from .test_build_safety import tree


def same(a: Any, b: Any) -> bool:
    """Equal values of identical types, all the way down (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def round_trip(value: Any, hint: Any) -> Any:
    encode, decode = codec(hint)
    return decode(orjson.loads(orjson.dumps(encode(value))))


suites = st.integers(2, 12).flatmap(
    lambda tasks: st.lists(
        st.integers(1, 8).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
        min_size=tasks,
        max_size=tasks,
    )
)


@settings(max_examples=examples(25), deadline=None)
@given(suites, suites, st.integers(1, 4))
def test_every_kept_result_reads_back_exactly(
    a: list[tuple[int, int]], b: list[tuple[int, int]], k: int
) -> None:
    successes = np.array([c for c, _ in a], dtype=np.int64)
    runs = np.array([n for _, n in a], dtype=np.int64)
    bootstrap = two_stage_bootstrap(successes, runs, k, 0.95, replicates=200)
    assert same(round_trip(bootstrap, TwoStageBootstrap), bootstrap)
    coverage = check_coverage(runs, k, fit_population(successes, runs), 0.95, replicates=50)
    assert same(round_trip(coverage, CoverageCheck), coverage)
    curve = curve_over_k(successes, runs, 0.95)
    assert same(round_trip(curve, list[CurvePoint]), curve)
    counts_a = {f"t{i}": pair for i, pair in enumerate(a)}
    counts_b = {f"t{i + 3}": pair for i, pair in enumerate(b)}  # some shared, some not
    tests = shared_task_tests(counts_b, counts_a)
    assert same(round_trip(tests, TaskTests), tests)


def test_numbers_keep_their_exact_types() -> None:
    hint = tuple[float, float, float | None, int, int, float, float]
    value = (0.5, 2, None, 3, np.int64(4), np.float64(0.25), math.nan)
    back = round_trip(value, hint)
    assert [type(v) for v in back] == [float, int, type(None), int, np.int64, np.float64, float]
    assert same(back, value)
    array = np.array([[0.5, math.inf], [-math.inf, math.nan]])
    assert same(round_trip(array, np.ndarray[Any, np.dtype[np.float64]]), array)


@pytest.mark.parametrize(
    ("hint", "stored"),
    [
        (SuiteInterval, [0.5, 0.4, 0.6, 0.1, 2.0, "3"]),  # df is not an int
        (SuiteInterval, [0.5, 0.4, 0.6, 0.1, 2.0]),  # a field missing
        (SuiteInterval, [0.5, 0.4, 0.6, 0.1, 2.0, 3, 4]),  # one too many
        (SuiteInterval, {"estimate": 0.5}),
        (tuple[int, int], [1, True]),  # a bool is not an int
        (tuple[str, ...], [1]),
        (float, "NaN"),  # only the three spellings the codec writes
        (float, {"f8": 1.0, "x": 1}),
        (int, {"i8": 2**63}),
        (np.ndarray[Any, np.dtype[np.float64]], {"shape": [3], "values": [1.0, 2.0]}),
        (np.ndarray[Any, np.dtype[np.int64]], {"shape": [1], "values": [1.5]}),
        (np.ndarray[Any, np.dtype[np.int64]], {"shape": [-1], "values": []}),
    ],
)
def test_a_stored_value_that_does_not_fit_its_annotation_is_refused(hint: Any, stored: Any) -> None:
    with pytest.raises(Unfit):
        codec(hint)[1](stored)


def test_a_result_of_an_undeclared_type_is_computed_not_kept() -> None:
    results = Results()
    # A float64 array where a list of floats is declared: not stored, but returned.
    value = results.get("odd", list[float], lambda: np.zeros(2))
    assert isinstance(value, np.ndarray) and results.used == {}


def test_a_key_changes_with_each_argument() -> None:
    counts = np.array([1, 2, 3], dtype=np.int64)
    base = result_key("bootstrap", counts, 3, 0.95)
    assert base == result_key("bootstrap", counts.copy(), 3, 0.95)
    assert base != result_key("bootstrap", np.array([1, 2, 4], dtype=np.int64), 3, 0.95)
    assert base != result_key("bootstrap", counts.astype(np.int32), 3, 0.95)
    assert base != result_key("bootstrap", counts, 2, 0.95)
    assert base != result_key("coverage", counts, 3, 0.95)


def test_report_from_kept_results_is_the_computed_report() -> None:
    from reportgen.counts import ResultSet, TaskCounts

    def result_set(model: str, shift: int) -> ResultSet:
        tasks = [TaskCounts(f"t{i}", (i * 3 + shift) % 6, 5 + i % 2) for i in range(9)]
        return ResultSet(
            suite="s", model=model, name=model, format="jsonl", sources=[], tasks=tasks
        )

    sets = [result_set("a", 0), result_set("b", 2)]
    computed = build_report(sets, "T", "", 2, 0.9)
    first = Results()
    build_report(sets, "T", "", 2, 0.9, results=first)
    # Of each set: curve, bootstrap, coverage, outcome consistency and its coverage;
    # and one comparison's tests.
    assert len(first.used) == 11
    again = Results(orjson.loads(orjson.dumps(first.used)))
    kept = build_report(sets, "T", "", 2, 0.9, results=again)
    assert again.reused == 11
    for x, y in zip(computed.sets, kept.sets, strict=True):
        assert same(x.bootstrap, y.bootstrap) and same(x.coverage, y.coverage)
        assert same(x.curve, y.curve) and same(x.consistency, y.consistency)
        assert same(x.consistency_coverage, y.consistency_coverage)
    assert same(computed.comparisons[0].tests, kept.comparisons[0].tests)
    # Another k: the bootstrap and the coverage are made again; the curves, the
    # consistency and the task tests, which do not depend on k, are read back.
    other = Results(orjson.loads(orjson.dumps(first.used)))
    build_report(sets, "T", "", 3, 0.9, results=other)
    assert other.reused == 7


# ---------------------------------------------------------------- through build()


def write_two_models(path: Path) -> Path:
    lines = [
        json.dumps({"model": model, "task": f"t{t}", "run": r, "passed": (t * r + m) % 3 != 0})
        for m, model in enumerate(("alpha", "beta"))
        for t in range(6)
        for r in range(5)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path, Path]:
    from .conftest import ROOT

    results = write_two_models(tmp_path / "runs.jsonl")
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "set.html").write_text((ROOT / "templates" / "set.html").read_text())
    return results, theme, tmp_path / "site"


def build(config: Config, use_cache: bool = True) -> build_module.BuildResult:
    return build_module.build(config, use_cache=use_cache)


def config_for(results: Path, theme: Path, output: Path) -> Config:
    return Config(result_sets=[Source(path=results)], output=output, templates=theme)


def edit(theme: Path, marker: str) -> None:
    """An edit of the set pages' template: rendered from the report, which the build
    makes again from the stored results."""
    page = theme / "set.html"
    text = page.read_text().replace("{% block main %}", "{% block main %}" + marker, 1)
    page.write_text(text)


def test_set_page_edit_reads_the_results_back_and_matches_a_clean_build(
    project: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    results, theme, site = project
    build(config_for(results, theme, site))
    edit(theme, "<p>edited</p>")
    rebuilt = build(config_for(results, theme, site))
    assert "11 computed results" in rebuilt.reused
    clean = tmp_path / "clean"
    build(config_for(results, theme, clean), use_cache=False)
    assert tree(site) == tree(clean)
    pages = list(site.glob("sets/*/index.html"))
    assert pages and all("<p>edited</p>" in page.read_text() for page in pages)


def _other_keys(doc: dict[str, Any]) -> dict[str, Any]:
    # A well-formed entry with other numbers in it: plausible, but its keys no
    # longer name what was computed, so the build must not use it.
    return {key[::-1]: value for key, value in doc.items()}


def _wrong_field(doc: dict[str, Any]) -> dict[str, Any]:
    return {key: ["not", "a", "result"] for key in doc}


def _nested_garbage(doc: dict[str, Any]) -> dict[str, Any]:
    def spoil(value: Any) -> Any:
        if isinstance(value, list) and value and isinstance(value[0], (int, float)):
            return ["x", *value[1:]]
        if isinstance(value, list):
            return [spoil(v) for v in value]
        return value

    return {key: spoil(value) for key, value in doc.items()}


@pytest.mark.parametrize(
    "damage",
    first_fast(
        [
            lambda raw: raw[: len(raw) // 2],
            lambda raw: b"[]",
            lambda raw: b'{"not a key": 1}',
            lambda raw: json.dumps(_other_keys(json.loads(raw))).encode(),
            lambda raw: json.dumps(_wrong_field(json.loads(raw))).encode(),
            lambda raw: json.dumps(_nested_garbage(json.loads(raw))).encode(),
        ]
    ),
)
def test_damaged_results_entry_is_ignored_and_recomputed(
    project: tuple[Path, Path, Path], tmp_path: Path, damage: Any
) -> None:
    results, theme, site = project
    build(config_for(results, theme, site))
    entry = site.parent / CACHE_DIR / site.name / "results-last.json"
    entry.write_bytes(damage(entry.read_bytes()))
    edit(theme, "<p>after damage</p>")
    rebuilt = build(config_for(results, theme, site))
    assert "computed results" not in rebuilt.reused
    clean = tmp_path / "clean"
    build(config_for(results, theme, clean), use_cache=False)
    assert tree(site) == tree(clean)
    # The entry is whole again for the next build.
    edit(theme, "<p>and again</p>")
    assert "11 computed results" in build(config_for(results, theme, site)).reused
