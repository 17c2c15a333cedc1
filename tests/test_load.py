"""Loaders: every input format to exact per-task counts, and every located input error.

Counts are compared as {task id: (successes, runs, excluded)}; errors are checked for the
file name plus the line, key path or zip member, and for what was expected.
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reportgen.counts import ResultSet
from reportgen.errors import MAX_PROBLEMS, UserError
from reportgen.readers import FORMATS, Loaded, Source, detect_format, load_sources
from reportgen.readers import jsonl as jsonl_reader
from reportgen.readers.jsonl import MAX_LINE_BYTES
from reportgen.stats.estimate import estimate_suite

from .conftest import ROOT, examples

FIXTURES = Path(__file__).parent / "fixtures"
INSPECT = FIXTURES / "inspect"
TAU2 = FIXTURES / "tau2"
TAU_BENCH_SMALL = FIXTURES / "tau-bench" / "gpt-4o-airline-small.json"
TAU_BENCH_REAL = Path("/work/shared/data/tau-bench/gpt-4o-airline.json")

Counts = dict[str, tuple[int, int, int]]


# ---------------------------------------------------------------- helpers


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def load(path: Path, **options: Any) -> Loaded:
    return load_sources([Source(path=path, **options)])


def counts(rs: ResultSet) -> Counts:
    return {t.id: (t.successes, t.runs, t.excluded) for t in rs.tasks}


def only_set(path: Path, **options: Any) -> ResultSet:
    loaded = load(path, **options)
    assert len(loaded.result_sets) == 1
    return loaded.result_sets[0]


def problems(*sources: Source) -> list[str]:
    with pytest.raises(UserError) as caught:
        load_sources(list(sources))
    return caught.value.problems


def problems_of(path: Path, **options: Any) -> list[str]:
    return problems(Source(path=path, **options))


def single_problem(path: Path, **options: Any) -> str:
    found = problems_of(path, **options)
    assert len(found) == 1, found
    return found[0]


# ---------------------------------------------------------------- canonical JSONL


def test_jsonl_counts_passes_failures_and_excluded_runs(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "runs.jsonl",
        jsonl(
            {"task": "t1", "passed": True},
            {"task": "t1", "passed": False},
            {"task": "t1", "passed": 1},
            {"task": "t1", "passed": None},
            {"task": "t2", "passed": 0},
            {"task": "t2", "passed": None},
            {"task": "t2", "passed": None},
            {"task": "t3", "passed": True},
        ),
    )
    loaded = load(path)
    assert loaded.formats == [(str(path), "jsonl")]
    rs = loaded.result_sets[0]
    assert counts(rs) == {"t1": (2, 3, 1), "t2": (0, 1, 2), "t3": (1, 1, 0)}
    assert (rs.excluded_runs, rs.runs) == (3, 5)
    assert rs.tasks[0].outcomes == [True, False, True, None]
    # Without suite/model keys the file name is the suite.
    # "runs.jsonl" says what the file is, not which suite: the folder names it.
    named = tmp_path.name
    assert (rs.suite, rs.model, rs.format, rs.name) == (named, "", "jsonl", named)
    assert rs.named_by == {"suite": "the folder's name", "model": ""}


def test_jsonl_accepts_task_id_and_reads_human_eval_results_as_is(tmp_path: Path) -> None:
    # The shape of human-eval's samples.jsonl_results.jsonl: task_id, completion, result, passed.
    records = [
        ("HumanEval/0", "    return x\n", "passed", True),
        ("HumanEval/0", "    return y\n", "failed: AssertionError", False),
        ("HumanEval/0", "    return x\n", "passed", True),
        ("HumanEval/1", "    pass\n", "timed out", False),
        ("HumanEval/1", "    return 1\n", "passed", True),
    ]
    text = jsonl(
        *(
            {"task_id": t, "completion": code, "result": result, "passed": passed}
            for t, code, result, passed in records
        )
    )
    path = write(tmp_path, "samples.jsonl_results.jsonl", text)
    assert detect_format(path) == "jsonl"
    rs = only_set(path)
    assert counts(rs) == {"HumanEval/0": (2, 3, 0), "HumanEval/1": (1, 2, 0)}


def test_jsonl_is_detected_from_content_without_the_suffix(tmp_path: Path) -> None:
    path = write(tmp_path, "results.txt", jsonl({"task": "a", "passed": True}))
    assert detect_format(path) == "jsonl"
    assert counts(only_set(path)) == {"a": (1, 1, 0)}


def test_jsonl_integer_task_ids_become_text(tmp_path: Path) -> None:
    path = write(tmp_path, "r.jsonl", jsonl({"task": 7, "passed": True}, {"task": 7, "passed": 0}))
    assert counts(only_set(path)) == {"7": (1, 2, 0)}


def test_jsonl_task_null_falls_back_to_task_id_whatever_passed_holds(tmp_path: Path) -> None:
    # A record with true/false/null takes the reader's short path, one with 1/0 or an
    # extra oddity its careful path: both must read "task": null the same way.
    records = [
        {"task": None, "task_id": "x", "passed": True},
        {"task": None, "task_id": "x", "passed": 0},
        {"task": None, "task_id": "x", "passed": None},
        {"task": None, "task_id": "x", "passed": 1, "suite": None},
    ]
    path = write(tmp_path, "r.jsonl", jsonl(*records))
    assert counts(only_set(path)) == {"x": (2, 3, 1)}


def test_jsonl_each_suite_and_model_pair_is_its_own_result_set(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "mixed.jsonl",
        jsonl(
            {"suite": "s1", "model": "m1", "task": "a", "passed": True},
            {"suite": "s1", "model": "m2", "task": "a", "passed": False},
            {"suite": "s2", "model": "m1", "task": "a", "passed": True},
            {"suite": "s1", "model": "m1", "task": "a", "passed": False},
            {"suite": "s1", "model": "m1", "task": "b", "passed": True, "run": 1},
            {"suite": "s1", "model": "m2", "task": "b", "passed": True, "run": 1},
        ),
    )
    sets = {(rs.suite, rs.model): rs for rs in load(path).result_sets}
    assert sorted(sets) == [("s1", "m1"), ("s1", "m2"), ("s2", "m1")]
    assert counts(sets["s1", "m1"]) == {"a": (1, 2, 0), "b": (1, 1, 0)}
    assert counts(sets["s1", "m2"]) == {"a": (0, 1, 0), "b": (1, 1, 0)}
    assert counts(sets["s2", "m1"]) == {"a": (1, 1, 0)}
    assert sets["s1", "m1"].name == "m1 · s1"


def test_jsonl_keeps_category_url_and_orders_runs_by_run_id(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "r.jsonl",
        jsonl(
            {"task": "a", "run": 3, "passed": False, "category": "billing"},
            {"task": "a", "run": 1, "passed": True, "url": "https://example.org/a/1"},
            {"task": "a", "run": 2, "passed": None, "url": "http://example.org/a/2"},
        ),
    )
    task = only_set(path).tasks[0]
    assert task.category == "billing"
    assert task.outcomes == [True, None, False]
    assert task.urls == {0: "https://example.org/a/1", 1: "http://example.org/a/2"}


def test_config_suite_and_model_override_the_files(tmp_path: Path) -> None:
    path = write(
        tmp_path, "r.jsonl", jsonl({"suite": "s", "model": "m", "task": "a", "passed": True})
    )
    rs = only_set(path, suite="S", model="M", name="Custom")
    assert (rs.suite, rs.model, rs.name) == ("S", "M", "Custom")


def test_jsonl_accepts_a_byte_order_mark(tmp_path: Path) -> None:
    text = jsonl({"task": "a", "passed": True}, {"task": "a", "passed": False})
    path = write(tmp_path, "bom.jsonl", b"\xef\xbb\xbf" + text.encode())
    assert counts(only_set(path)) == {"a": (1, 2, 0)}


def test_jsonl_accepts_crlf_line_ends(tmp_path: Path) -> None:
    text = '{"task": "a", "passed": true}\r\n\r\n{"task": "a", "passed": null}\r\n'
    text += '{"task": "b", "passed": false}\r\n'
    path = write(tmp_path, "crlf.jsonl", b"\xef\xbb\xbf" + text.encode())
    assert counts(only_set(path)) == {"a": (1, 1, 1), "b": (0, 1, 0)}


def test_jsonl_without_a_final_newline_is_fine(tmp_path: Path) -> None:
    path = write(tmp_path, "r.jsonl", '{"task": "a", "passed": true}')
    assert counts(only_set(path)) == {"a": (1, 1, 0)}


def test_jsonl_twenty_thousand_lines_load_to_the_right_counts(tmp_path: Path) -> None:
    rng = random.Random(7)
    expected: dict[str, list[int]] = {}
    lines = []
    for i in range(20_000):
        task = f"task-{rng.randrange(250)}"
        value = rng.choice([True, False, None])
        c, n, x = expected.setdefault(task, [0, 0, 0])
        expected[task] = [c + (value is True), n + (value is not None), x + (value is None)]
        lines.append(json.dumps({"task": task, "run": i, "passed": value}))
    path = write(tmp_path, "big.jsonl", "\n".join(lines) + "\n")
    rs = only_set(path)
    assert counts(rs) == {t: (c, n, x) for t, (c, n, x) in expected.items()}
    assert rs.runs + rs.excluded_runs == 20_000


@settings(max_examples=examples(40), deadline=None)
@given(
    st.dictionaries(
        st.text("abc123-", min_size=1, max_size=6),
        st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=8),
        min_size=1,
        max_size=6,
    ),
    st.randoms(use_true_random=False),
)
def test_jsonl_counts_match_the_runs_written_in_any_order(
    outcomes: dict[str, list[bool | None]], rng: random.Random
) -> None:
    # A result set with no evaluated run at all is an error (tested elsewhere).
    assume(any(v is not None for values in outcomes.values() for v in values))
    records = [
        {"task": task, "run": i, "passed": value}
        for task, values in outcomes.items()
        for i, value in enumerate(values)
    ]
    rng.shuffle(records)
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), "r.jsonl", jsonl(*records))
        rs = only_set(path)
    expected = {
        task: (values.count(True), values.count(True) + values.count(False), values.count(None))
        for task, values in outcomes.items()
    }
    assert counts(rs) == expected
    # Runs come back in run order, whatever order the lines were in.
    assert {t.id: t.outcomes for t in rs.tasks} == outcomes


# ---------------------------------------------------------------- JSONL errors


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"task": "a", "passed": "yes"}', r'"passed": "yes" is not true, false, 1, 0 or null'),
        ('{"task": "a", "passed": 2}', r'"passed": 2 is not true, false, 1, 0 or null'),
        ('{"task": "a", "passed": 0.5}', r'"passed": 0.5 is not'),
        ('{"task": "a", "passed": [true]}', r'"passed": \[true\] is not'),
        ('{"task": "a"}', r'"passed" is missing'),
        ('{"task": [1], "passed": true}', r"\[1\] is not a task id; expected a string or integer"),
        ('{"task": true, "passed": true}', r"true is not a task id"),
        ('{"task": "", "passed": true}', r'"" is not a task id'),
        ('{"task": 1.5, "passed": true}', r"1.5 is not a task id; expected a string or integer"),
        (
            '{"task": 99999999999999999999999999, "passed": true}',
            r"1e\+26 is not a task id; a whole number of 2\*\*64 or more is not read exactly; "
            "write it as a string",
        ),
        ('{"passed": true}', r'"task" \(or "task_id"\): missing'),
        ('{"task": "a", "passed": true, "suite": 3}', r'"suite" must be a non-empty string'),
        ('{"task": "a", "passed": true, "model": ""}', r'"model" must be a non-empty string'),
        ('{"task": "a", "passed": true, "category": []}', r'"category" must be a non-empty'),
        (
            '{"task": "a", "passed": true, "run": true}',
            r'"run" must be an integer below 2\*\*64 or a string, got true',
        ),
        (
            '{"task": "a", "passed": true, "run": 1.5}',
            r'"run" must be an integer below 2\*\*64 or a string, got 1.5',
        ),
        (
            '{"task": "a", "passed": true, "run": 99999999999999999999999999}',
            r'"run" must be an integer below 2\*\*64 or a string, got 1e\+26',
        ),
        ('{"task": "a", "passed": true, "url": "ftp://x.org/1"}', r'"url" must be an http'),
        ('{"task": "a", "passed": true, "url": "javascript:alert(1)"}', r'"url" must be an http'),
        ('{"task": "a", "passed": true, "url": "/local/path"}', r'"url" must be an http'),
        ('[{"task": "a", "passed": true}]', r"expected an object like"),
        ('"a"', r"expected an object like"),
        ('{"task": "a", "passed": NaN}', r"not valid JSON: NaN"),
        ('{"task": "a", "passed": Infinity}', r"not valid JSON: Infinity"),
        ('{"task": "a", "passed": -Infinity}', r"not valid JSON: -Infinity"),
        ('{"task": "a", "passed": true', r"not valid JSON: Expecting ',' delimiter"),
    ],
)
def test_jsonl_bad_line_is_reported_with_file_and_line(
    tmp_path: Path, line: str, expected: str
) -> None:
    good = '{"task": "a", "passed": true}\n'
    path = write(tmp_path, "bad.jsonl", good + "\n" + line + "\n" + good)
    message = single_problem(path)
    assert message.startswith(f"{path}:3: "), message
    assert re.search(expected, message), message


def test_jsonl_repeated_run_is_an_error_naming_the_second_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "dup.jsonl",
        jsonl(
            {"task": "a", "run": 1, "passed": True},
            {"task": "a", "run": 2, "passed": True},
            {"task": "a", "run": 1, "passed": False},
        ),
    )
    message = single_problem(path)
    assert message.startswith(f"{path}:3: ")
    assert "run 1 of task 'a' appears twice" in message


def test_jsonl_same_run_number_for_another_model_is_not_a_repeat(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "r.jsonl",
        jsonl(
            {"model": "m1", "task": "a", "run": 1, "passed": True},
            {"model": "m2", "task": "a", "run": 1, "passed": True},
        ),
    )
    assert len(load(path).result_sets) == 2


def test_jsonl_truncated_last_line_is_named(tmp_path: Path) -> None:
    text = jsonl({"task": "a", "passed": True}, {"task": "b", "passed": False})
    path = write(tmp_path, "cut.jsonl", text + '{"task": "c", "pas')
    message = single_problem(path)
    assert message.startswith(f"{path}:3: not valid JSON")
    assert "cut short" in message
    assert "at at" not in message


def test_jsonl_binary_junk_is_refused_line_by_line(tmp_path: Path) -> None:
    junk = b"\x89PNG\r\n\x1a\n" + random.Random(1).randbytes(4000)
    path = write(tmp_path, "junk.jsonl", junk)
    found = problems_of(path)
    assert found[0].startswith(f"{path}:1: ")
    assert all(re.match(re.escape(str(path)) + r":\d+: not (UTF-8|valid JSON)", m) for m in found)


def test_jsonl_line_over_the_limit_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    # 100 MB on one line, no newline: written in 1 MB chunks, read in MAX_LINE_BYTES pieces.
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        handle.write(b'{"task": "')
        chunk = b"x" * 1_000_000
        for _ in range(100):
            handle.write(chunk)
    assert path.stat().st_size > 5 * MAX_LINE_BYTES
    message = single_problem(path)
    assert message.startswith(f"{path}:1: ")
    assert "longer than 16 MiB" in message


def test_jsonl_long_line_is_skipped_and_later_lines_still_checked(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    with path.open("wb") as handle:
        handle.write(b'{"task": "a", "passed": true}\n')
        handle.write(b'{"task": "' + b"y" * (MAX_LINE_BYTES + 10) + b'", "passed": true}\n')
        handle.write(b'{"task": "c", "passed": "maybe"}\n')
    found = problems_of(path)
    assert len(found) == 2
    assert found[0].startswith(f"{path}:2: line is longer than")
    assert found[1].startswith(f"{path}:3: ")


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.integers(0, 30), min_size=1, max_size=12),
    st.integers(3, 12),
    st.booleans(),
)
def test_first_long_line_scans_blocks_as_the_line_reader_counts(
    lengths: list[int], limit: int, final_newline: bool
) -> None:
    """first_long_line reads blocks of the limit's size; with a small limit, lines
    of every length around it meet block edges anywhere."""
    text = b"\n".join(b"x" * n for n in lengths) + (b"\n" if final_newline else b"")
    expected = next((i + 1 for i, n in enumerate(lengths) if n > limit), None)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.jsonl"
        path.write_bytes(text)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(jsonl_reader, "MAX_LINE_BYTES", limit)
            assert jsonl_reader.first_long_line(path) == expected


@pytest.mark.parametrize("counts", [False, True])
def test_a_line_over_the_limit_is_refused_in_a_file_duckdb_would_read(
    tmp_path: Path, counts: bool
) -> None:
    """DuckDB reads lines up to 32 MiB whatever it is told, so the limit is checked first."""
    path = tmp_path / "big.jsonl"
    first = {"task": "a", "successes": 1, "runs": 2} if counts else {"task": "a", "passed": True}
    with path.open("w") as handle:
        handle.write(json.dumps(first) + "\n")
        long = dict(first, task="b", note="x" * (MAX_LINE_BYTES + 1000))
        handle.write(json.dumps(long) + "\n")
    assert path.stat().st_size >= jsonl_reader.DUCKDB_MIN_BYTES
    assert single_problem(path) == f"{path}:2: line is longer than 16 MiB"


def test_a_history_given_as_results_is_said_to_be_one(tmp_path: Path) -> None:
    """Not 'task missing' on each of its lines."""
    history = ROOT / "example" / "history.jsonl"
    assert single_problem(history) == (
        f"{history}:1: this is a build of a reportgen history (history.jsonl), not result "
        "runs; give it as --history, or as check's --baseline"
    )


def test_jsonl_only_blank_lines_has_no_tasks(tmp_path: Path) -> None:
    path = write(tmp_path, "blank.jsonl", "\n   \n\r\n\n")
    assert single_problem(path) == f"{path}: no tasks found"


def test_jsonl_all_runs_excluded_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "none.jsonl", jsonl({"task": "a", "passed": None}))
    with pytest.raises(UserError, match=r"no evaluated runs \(all 1 runs were excluded\)"):
        load(path)


def test_twenty_problems_are_reported_then_a_stopped_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.jsonl", jsonl(*({"task": "a", "passed": "yes"},) * 25))
    found = problems_of(path)
    assert len(found) == MAX_PROBLEMS + 1 == 21
    assert [m.split(": ", 1)[0] for m in found[:20]] == [f"{path}:{i}" for i in range(1, 21)]
    assert found[-1] == "(stopped after 20 problems)"


def test_exactly_twenty_problems_have_no_stopped_line(tmp_path: Path) -> None:
    text = jsonl(*({"task": "a", "passed": "yes"},) * 20) + jsonl({"task": "a", "passed": True})
    found = problems_of(write(tmp_path, "bad.jsonl", text))
    assert len(found) == 20
    assert not any("stopped" in m for m in found)


def test_twenty_five_unparseable_lines_also_stop_after_twenty(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.jsonl", '{"task": \n' * 25)
    found = problems_of(path)
    assert len(found) == 21
    assert found[-1] == "(stopped after 20 problems)"


# ---------------------------------------------------------------- YAML suite file


def test_yaml_counts_and_outcomes(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "suite.yaml",
        """\
suite: support
model: agent-a
tasks:
  - {id: refund, successes: 16, runs: 20, category: billing}
  - {id: 42, successes: 0, runs: 3}
  - id: flaky
    outcomes: [true, false, null, 1, 0]
  - {id: partial, successes: 2, runs: 4, excluded: 3}
""",
    )
    loaded = load(path)
    assert loaded.formats == [(str(path), "yaml")]
    rs = loaded.result_sets[0]
    assert (rs.suite, rs.model, rs.name, rs.format) == (
        "support",
        "agent-a",
        "agent-a · support",
        "yaml",
    )
    assert counts(rs) == {
        "refund": (16, 20, 0),
        "42": (0, 3, 0),
        "flaky": (2, 4, 1),
        "partial": (2, 4, 3),
    }
    assert rs.tasks[0].category == "billing"
    assert rs.tasks[2].outcomes == [True, False, None, True, False]
    assert rs.excluded_runs == 4


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_yaml_accepts_bom_crlf_and_either_suffix(tmp_path: Path, suffix: str) -> None:
    text = "suite: s\r\nmodel: m\r\ntasks:\r\n  - {id: a, successes: 1, runs: 2}\r\n"
    path = write(tmp_path, "suite" + suffix, b"\xef\xbb\xbf" + text.encode())
    assert counts(only_set(path)) == {"a": (1, 2, 0)}


def test_a_task_with_every_run_excluded_reads_alike_from_yaml_csv_and_jsonl(
    tmp_path: Path,
) -> None:
    yaml_text = (
        "suite: s\ntasks:\n  - {id: a, successes: 1, runs: 2}\n"
        "  - {id: b, successes: 0, runs: 0, excluded: 2}\n"
    )
    csv_text = "suite,task,successes,runs,excluded\ns,a,1,2,0\ns,b,0,0,2\n"
    runs = [("a", True), ("a", False), ("b", None), ("b", None)]
    lines = jsonl(*({"suite": "s", "task": t, "passed": p} for t, p in runs))
    expected = {"a": (1, 2, 0), "b": (0, 0, 2)}
    for name, text in (("r.yaml", yaml_text), ("r.csv", csv_text), ("r.jsonl", lines)):
        assert counts(only_set(write(tmp_path, name, text))) == expected, name


YAML_HEAD = "suite: s\nmodel: m\ntasks:\n  - {id: t0, successes: 1, runs: 2}\n"
YAML_HEAD += "  - {id: t1, successes: 1, runs: 2}\n  - {id: t2, successes: 1, runs: 2}\n"


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("{id: t3, successes: 5, runs: 3}", r"tasks\[3\]\.successes: 5 is more than runs \(3\)"),
        ("{id: t3, successes: -1, runs: 3}", r"tasks\[3\]\.successes: must not be negative"),
        (
            "{id: t3, successes: 0, runs: -3}",
            r"tasks\[3\]\.runs: must be at least 1 \(or excluded at least 1\), got -3",
        ),
        (
            "{id: t3, successes: 0, runs: 0}",
            r"tasks\[3\]\.runs: must be at least 1 \(or excluded at least 1\), got 0",
        ),
        ("{id: t3, successes: 1.5, runs: 3}", r"tasks\[3\]\.successes: expected a whole number"),
        (
            "{id: t3, successes: '1', runs: 3}",
            r'tasks\[3\]\.successes: expected a whole number, got "1"',
        ),
        ("{id: t3, successes: true, runs: 3}", r"tasks\[3\]\.successes: expected a whole number"),
        (
            "{id: t3, successes: 1, runs: .nan}",
            r"tasks\[3\]\.runs: expected a whole number, got nan",
        ),
        ("{id: t3, runs: 3}", r"tasks\[3\]\.successes: expected a whole number, got null"),
        (
            "{id: t3, successes: 1, runs: 3, excluded: -1}",
            r"tasks\[3\]\.excluded: expected a whole",
        ),
        ("{id: t3, successes: 1, runs: 3, excluded: x}", r"tasks\[3\]\.excluded: expected a whole"),
        ("{id: [1], successes: 1, runs: 3}", r"tasks\[3\]\.id: expected a string or integer"),
        ("{id: yes, successes: 1, runs: 3}", r"tasks\[3\]\.id: expected a string or integer"),
        ("{successes: 1, runs: 3}", r"tasks\[3\]\.id: expected a string or integer"),
        ("{id: t0, successes: 1, runs: 3}", r"tasks\[3\]\.id: 't0' already given at tasks\[0\]"),
        (
            "{id: t3, sucesses: 1, runs: 3}",
            r"tasks\[3\]: unknown key 'sucesses' \(did you mean 'successes'\?\)",
        ),
        (
            "{id: t3, outcomes: [true, yes please]}",
            r"tasks\[3\]\.outcomes\[1\]: \"yes please\" is not true",
        ),
        ("{id: t3, outcomes: [true, 0.5]}", r"tasks\[3\]\.outcomes\[1\]: 0.5 is not true"),
        ("{id: t3, outcomes: []}", r"tasks\[3\]\.outcomes: expected a non-empty list"),
        ("{id: t3, outcomes: [true], runs: 1}", r"tasks\[3\]: give either outcomes or successes"),
        ("{id: t3, outcomes: [true], excluded: 1}", r"tasks\[3\]\.excluded: with outcomes"),
        (
            "{id: t3, successes: 1, runs: 3, category: 7}",
            r"tasks\[3\]\.category: must be a non-empty",
        ),
        ("just-a-string", r"tasks\[3\]: expected a mapping"),
    ],
)
def test_yaml_bad_task_names_its_key_path(tmp_path: Path, task: str, expected: str) -> None:
    path = write(tmp_path, "suite.yaml", YAML_HEAD + f"  - {task}\n")
    found = problems_of(path)
    assert any(re.search(expected, m) for m in found), found
    assert all(m.startswith(f"{path}: ") for m in found), found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("suite: s\nmodel: m\ntasks: []\n", r": tasks: expected a non-empty list of tasks"),
        ("suite: s\nmodel: m\n", r": tasks: expected a non-empty list of tasks"),
        ("suite: s\ntasks: {a: 1}\n", r": tasks: expected a non-empty list of tasks"),
        ("# only a comment\n", r": the file is empty; expected suite, model and tasks"),
        ("- a\n- b\n", r": expected a mapping with a 'tasks' list at the top"),
        ("suite: [1]\nmodel: m\ntasks: [{id: a, successes: 1, runs: 1}]\n", r": suite: must be a"),
        (
            "suite: s\nmodel: {a: 1}\ntasks: [{id: a, successes: 1, runs: 1}]\n",
            r": model: must be a",
        ),
        (
            "sute: s\ntasks: [{id: a, successes: 1, runs: 1}]\n",
            r": unknown key 'sute' \(did you mean 'suite'\?\)",
        ),
        ("suite: s\ntasks:\n  - {id: a, successes: 1, runs: 1\n", r":4: not valid YAML"),
    ],
)
def test_yaml_bad_document_is_located(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, "suite.yaml", text)
    found = problems_of(path)
    assert any(re.search(re.escape(str(path)) + expected, m) for m in found), found


def test_yaml_binary_junk_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "suite.yaml", b"\xff\xfe\x00junk" + random.Random(2).randbytes(500))
    assert "not UTF-8 text" in single_problem(path)


def test_yaml_reports_several_problems_at_once(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "suite.yaml",
        "tasks:\n  - {id: a, successes: 3, runs: 2}\n  - {id: b, successes: -1, runs: 2}\n",
    )
    found = problems_of(path)
    assert [m.split(": ")[1] for m in found] == ["tasks[0].successes", "tasks[1].successes"]


# ---------------------------------------------------------------- τ-bench


TAU_BENCH_PUBLISHED = {1: 0.420, 2: 0.273, 3: 0.220, 4: 0.200}

tau_bench_files = pytest.mark.parametrize(
    "path",
    [
        pytest.param(TAU_BENCH_SMALL, id="small-fixture"),
        pytest.param(
            TAU_BENCH_REAL,
            id="real-file",
            marks=pytest.mark.skipif(
                not TAU_BENCH_REAL.exists(), reason=f"{TAU_BENCH_REAL} is not on this machine"
            ),
        ),
    ],
)


@tau_bench_files
def test_tau_bench_reproduces_the_published_pass_hat_k(path: Path) -> None:
    loaded = load(path)
    assert loaded.formats == [(str(path), "tau-bench")]
    rs = loaded.result_sets[0]
    assert len(rs.tasks) == 50
    assert all(t.runs == 4 and t.excluded == 0 for t in rs.tasks)
    assert rs.runs == 200
    successes = np.array([t.successes for t in rs.tasks])
    runs = np.array([t.runs for t in rs.tasks])
    for k, published in TAU_BENCH_PUBLISHED.items():
        estimate = estimate_suite(successes, runs, k, 0.95).unbiased.estimate
        assert estimate is not None
        assert round(estimate, 3) == published, k


def test_tau_bench_small_fixture_matches_the_real_file() -> None:
    if not TAU_BENCH_REAL.exists():
        pytest.skip(f"{TAU_BENCH_REAL} is not on this machine")
    assert counts(only_set(TAU_BENCH_SMALL)) == counts(only_set(TAU_BENCH_REAL))


def tau_bench(*rewards: Any, task: Any = 1) -> str:
    return json.dumps([{"task_id": task, "trial": i, "reward": r} for i, r in enumerate(rewards)])


def test_tau_bench_file_names_from_run_py_say_what_ran(tmp_path: Path) -> None:
    """τ-bench's records name no model; run.py's file name does. Files of two models in
    one folder are two sets (they were one, with no model), suited by the folder, as
    when given one by one. Two files of one configuration are refused, as before: the
    names do not say the domain, so they may hold airline and retail."""
    records = TAU_BENCH_SMALL.read_text()
    name = "tool-calling-{}-{}_range_0--1_user-gpt-4o-llm_{}.json"
    folder = tmp_path / "results"
    paths = [
        write(folder, name.format(model, temperature, "1205"), records)
        for model, temperature in (("gpt-4o-2024-08-06", "0.0"), ("o1", "1e-05"))
    ]
    for sources in ([Source(folder)], [Source(path) for path in paths]):
        sets = {rs.model: rs for rs in load_sources(sources).result_sets}
        assert sorted(sets) == [
            "tool-calling (gpt-4o-2024-08-06, temperature 0.0, user gpt-4o llm)",
            "tool-calling (o1, temperature 1e-05, user gpt-4o llm)",
        ]
        for rs in sets.values():
            assert rs.suite == "results" and counts(rs) == counts(only_set(TAU_BENCH_SMALL))
            assert rs.named_by["model"] == "the file's name, as τ-bench's run.py writes it"
    write(folder, name.format("o1", "1e-05", "1206"), records)
    assert any("run 0 of task" in p and "appears twice" in p for p in problems_of(folder))
    # A name of another shape says nothing: the set has no model, as before.
    assert only_set(TAU_BENCH_SMALL).model == ""


def test_tau_bench_pass_is_reward_one_within_one_millionth(tmp_path: Path) -> None:
    path = write(tmp_path, "tb.json", tau_bench(1.0, 1, 0.9999995, 1.0000005, 0.999, 0.99999, 0.0))
    assert counts(only_set(path)) == {"1": (4, 7, 0)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[{"task_id": 1, "trial": 0, "reward": 1.0},\n'
            ' {"task_id": 1, "trial": 1, "reward": NaN}]',
            r": \[1\]\.reward: NaN is not valid JSON",
        ),
        ('[{"task_id": 1, "trial": 0, "reward": Infinity}]', r": \[0\]\.reward: Infinity is not"),
        ('[{"task_id": 1, "trial": 0, "reward": -Infinity}]', r": \[0\]\.reward: -Infinity is not"),
        (tau_bench(1.0, "1"), r': \[1\]\.reward: expected a number, got "1"'),
        (tau_bench(1.0, True), r": \[1\]\.reward: expected a number, got true"),
        (tau_bench(1.0, None), r": \[1\]\.reward: expected a number, got null"),
        (tau_bench(1.0, task=[1]), r": \[0\]\.task_id: expected a string or integer"),
        ('[{"task_id": 1, "trial": "a", "reward": 1.0}]', r": \[0\]\.trial: expected an integer"),
        ('[{"task_id": 1, "trial": 0, "reward": 1.0}, 5]', r": \[1\]: expected an object"),
        (
            '[{"task_id": 1, "trial": 0, "reward": 1}, {"task_id": 1, "trial": 0, "reward": 0}]',
            r": \[1\]: run 0 of task '1' appears twice",
        ),
        ("[]", r": the array is empty"),
        ('[{"task_id": 1, "trial": 0, "reward": 1.0}', r":1: not valid JSON: Expecting"),
    ],
)
def test_tau_bench_errors_name_the_record(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, "tb.json", text)
    message = single_problem(path, format="tau-bench")
    assert re.match(re.escape(str(path)) + expected, message), message


def test_tau_bench_object_instead_of_array(tmp_path: Path) -> None:
    path = write(tmp_path, "tb.json", '{"task_id": 1}')
    assert "expected a JSON array" in single_problem(path, format="tau-bench")


def test_tau_bench_binary_junk_given_as_tau_bench(tmp_path: Path) -> None:
    path = write(tmp_path, "tb.json", b"\x89PNG" + random.Random(3).randbytes(2000))
    assert (
        single_problem(path, format="tau-bench")
        == f"{path}: not UTF-8 text (is this a binary file?)"
    )


def test_tau_bench_accepts_a_byte_order_mark(tmp_path: Path) -> None:
    path = write(tmp_path, "tb.json", b"\xef\xbb\xbf" + tau_bench(1.0, 0.0).encode())
    assert detect_format(path) == "tau-bench"
    assert counts(only_set(path)) == {"1": (1, 2, 0)}


def test_tau_bench_many_bad_records_stop_after_twenty(tmp_path: Path) -> None:
    path = write(tmp_path, "tb.json", tau_bench(*["x"] * 25))
    found = problems_of(path)
    assert len(found) == 21 and found[-1] == "(stopped after 20 problems)"


def test_many_nan_rewards_stop_after_twenty(tmp_path: Path) -> None:
    records = ",".join(f'{{"task_id": 1, "trial": {i}, "reward": NaN}}' for i in range(25))
    found = problems_of(write(tmp_path, "tb.json", f"[{records}]"))
    assert len(found) == 21
    assert found[0].endswith("[0].reward: NaN is not valid JSON; expected a number")


# ---------------------------------------------------------------- τ²-bench


TAU2_EXPECTED: Counts = {
    "0": (4, 4, 0),
    "1": (2, 4, 0),
    "2": (0, 4, 0),
    "3": (2, 3, 1),
    "4": (1, 2, 2),
    "5": (0, 0, 4),
}


def test_tau2_json_format_counts() -> None:
    path = TAU2 / "results.json"
    loaded = load(path)
    assert loaded.formats == [(str(path), "tau2-bench")]
    rs = loaded.result_sets[0]
    assert counts(rs) == TAU2_EXPECTED
    assert rs.suite == "airline"
    assert rs.model == "gpt-4.1-2025-04-14"
    assert (rs.runs + rs.excluded_runs, rs.excluded_runs, rs.runs) == (24, 7, 17)
    assert sum(t.successes for t in rs.tasks) == 9
    # Task "5" has no evaluated run: kept in the set, left out of the estimates.
    assert [t.id for t in rs.evaluated_tasks] == ["1", "0", "3", "2", "4"]


def test_tau2_dir_format_counts() -> None:
    path = TAU2 / "dir_format" / "results.json"
    assert detect_format(path) == "tau2-bench"
    rs = only_set(path)
    assert counts(rs) == {"3": (2, 3, 1), "4": (1, 2, 2)}
    assert rs.excluded_runs == 3


def test_tau2_task_ids_stay_text() -> None:
    rs = only_set(TAU2 / "results.json")
    assert all(isinstance(t.id, str) for t in rs.tasks)


def _tau2_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((TAU2 / "results.json").read_text(encoding="utf-8"))
    return doc


def test_tau2_nan_reward_is_located(tmp_path: Path) -> None:
    text = json.dumps(_tau2_doc())
    text = text.replace('"reward": 1.0', '"reward": NaN', 1)
    path = write(tmp_path, "results.json", text)
    message = single_problem(path)
    assert re.match(
        re.escape(str(path)) + r": simulations\[\d+\]\.reward_info\.reward: NaN is not valid JSON",
        message,
    ), message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda s: s.update(reward_info=None),
            r"simulations\[2\]\.reward_info\.reward: expected a number, got null",
        ),
        (
            lambda s: s["reward_info"].update(reward="1"),
            r'simulations\[2\]\.reward_info\.reward: expected a number, got "1"',
        ),
        (
            lambda s: s.update(task_id=None),
            r"simulations\[2\]\.task_id: expected a string or integer",
        ),
        (lambda s: s.update(trial=1.5), r"simulations\[2\]\.trial: expected an integer"),
    ],
)
def test_tau2_bad_simulation_is_located(tmp_path: Path, change: Any, expected: str) -> None:
    doc = _tau2_doc()
    sim = doc["simulations"][2]
    assert sim["termination_reason"] != "infrastructure_error"
    change(sim)
    path = write(tmp_path, "results.json", json.dumps(doc))
    assert re.search(expected, single_problem(path))


def test_tau2_empty_simulations(tmp_path: Path) -> None:
    doc = _tau2_doc()
    doc["simulations"] = []
    path = write(tmp_path, "results.json", json.dumps(doc))
    assert "simulations: the list is empty" in single_problem(path)


def test_tau2_repeated_trial_is_an_error(tmp_path: Path) -> None:
    doc = _tau2_doc()
    doc["simulations"].append(doc["simulations"][0])
    path = write(tmp_path, "results.json", json.dumps(doc))
    assert "appears twice" in single_problem(path)


# ---------------------------------------------------------------- Inspect AI logs


INSPECT_EXPECTED: Counts = {"a": (3, 3, 0), "b": (0, 3, 0), "3": (2, 3, 0), "d": (0, 3, 0)}
INSPECT_ERRORED: Counts = {"a": (3, 3, 0), "b": (0, 2, 1), "3": (2, 3, 0), "d": (0, 3, 0)}
SCORERS = ["match", "numeric", "boolean"]


@pytest.mark.parametrize("scorer", SCORERS)
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mini_zstd.eval", INSPECT_EXPECTED),
        ("mini_deflate.eval", INSPECT_EXPECTED),
        ("mini.json", INSPECT_EXPECTED),
        ("mini_error.eval", INSPECT_ERRORED),
        ("mini_error_failed.eval", INSPECT_ERRORED),
    ],
)
def test_inspect_logs_counts(name: str, expected: Counts, scorer: str) -> None:
    path = INSPECT / name
    loaded = load(path, scorer=scorer)
    assert loaded.formats == [(str(path), "inspect")]
    rs = loaded.result_sets[0]
    assert counts(rs) == expected
    assert rs.model == "mockllm/model"
    assert rs.suite  # the task name from the header


def test_inspect_zstd_deflate_and_json_give_identical_counts() -> None:
    results = [
        counts(only_set(INSPECT / name, scorer="match"))
        for name in ("mini_zstd.eval", "mini_deflate.eval", "mini.json")
    ]
    assert results[0] == results[1] == results[2] == INSPECT_EXPECTED


def test_inspect_runs_are_in_epoch_order() -> None:
    rs = only_set(INSPECT / "mini.json", scorer="match")
    assert {t.id: t.outcomes for t in rs.tasks}["3"] == [True, False, True]


@pytest.mark.parametrize("name", ["mini_zstd.eval", "mini_deflate.eval", "mini.json"])
def test_inspect_several_scorers_need_a_choice(name: str) -> None:
    path = INSPECT / name
    message = single_problem(path)
    assert message.startswith(f"{path}: ")
    assert "several scorers (match, numeric, boolean)" in message


@pytest.mark.parametrize("name", ["mini_zstd.eval", "mini.json", "mini_error_failed.eval"])
def test_inspect_unknown_scorer_lists_the_ones_there(name: str) -> None:
    path = INSPECT / name
    message = single_problem(path, scorer="accuracy")
    assert (
        message == f"{path}: scorer 'accuracy' is not in this log; it has match, numeric, boolean"
    )


def inspect_log(values: list[Any], error_at: int | None = None) -> dict[str, Any]:
    """A minimal Inspect .json log with one scorer 's' and one sample per value."""
    samples = [
        {"id": f"t{i}", "epoch": 1, "scores": {"s": {"value": v}}} for i, v in enumerate(values)
    ]
    if error_at is not None:
        samples[error_at] = {"id": f"t{error_at}", "epoch": 1, "scores": {}, "error": {"m": "x"}}
    return {
        "version": 2,
        "status": "success",
        "eval": {"task": "tiny", "model": "m", "scorers": [{"name": "s"}]},
        "results": {"scores": [{"name": "s"}]},
        "samples": samples,
    }


def test_inspect_which_score_values_pass(tmp_path: Path) -> None:
    values: list[Any] = ["C", 1, 1.0, True, "I", "P", "N", 0, 0.5, False, "c", "1", 2]
    path = write(tmp_path, "log.json", json.dumps(inspect_log(values)))
    assert detect_format(path) == "inspect"
    rs = only_set(path)
    assert (rs.suite, rs.model) == ("tiny", "m")
    passed = [t.successes for t in rs.tasks]
    assert passed == [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]


def test_inspect_errored_sample_is_excluded(tmp_path: Path) -> None:
    path = write(tmp_path, "log.json", json.dumps(inspect_log(["C", "C"], error_at=1)))
    assert counts(only_set(path)) == {"t0": (1, 1, 0), "t1": (0, 0, 1)}


def test_inspect_missing_score_without_error_is_an_error(tmp_path: Path) -> None:
    doc = inspect_log(["C", "C"])
    doc["samples"][1]["scores"] = {}
    path = write(tmp_path, "log.json", json.dumps(doc))
    assert single_problem(path).startswith(f"{path}: samples[1].scores.s: missing")


def write_eval(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_inspect_eval_bad_member_is_named(tmp_path: Path) -> None:
    header = json.dumps({k: v for k, v in inspect_log([]).items() if k != "samples"}).encode()
    good = json.dumps({"id": "a", "epoch": 1, "scores": {"s": {"value": "C"}}}).encode()
    path = write_eval(
        tmp_path / "log.eval",
        {
            "header.json": header,
            "samples/a_epoch_1.json": good,
            "samples/b_epoch_1.json": b'{"id": "b", "epoch": 1, "scores": {"s": {"value": NaN}}}',
            "samples/c_epoch_1.json": b"\x00\xff not json",
        },
    )
    found = problems_of(path)
    assert len(found) == 2
    assert found[0].startswith(f"{path}: samples/b_epoch_1.json: not valid JSON")
    assert "NaN" in found[0]
    assert found[1].startswith(f"{path}: samples/c_epoch_1.json: not valid JSON")


def test_inspect_eval_without_header_is_an_error(tmp_path: Path) -> None:
    path = write_eval(tmp_path / "log.eval", {"_journal/start.json": b"{}"})
    assert "header.json is missing" in single_problem(path)


def test_inspect_damaged_zip_is_an_error(tmp_path: Path) -> None:
    data = (INSPECT / "mini_deflate.eval").read_bytes()
    path = write(tmp_path, "cut.eval", data[: len(data) // 2])
    message = single_problem(path, scorer="match")
    assert message.startswith(f"{path}: ")


def test_inspect_json_without_eval_header(tmp_path: Path) -> None:
    path = write(tmp_path, "log.json", '{"samples": []}')
    assert "not an Inspect log" in single_problem(path, format="inspect")


# ---------------------------------------------------------------- files and formats


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (INSPECT / "mini_zstd.eval", "inspect"),
        (INSPECT / "mini_deflate.eval", "inspect"),
        (INSPECT / "mini.json", "inspect"),
        (TAU2 / "results.json", "tau2-bench"),
        (TAU2 / "dir_format" / "results.json", "tau2-bench"),
        (TAU_BENCH_SMALL, "tau-bench"),
    ],
)
def test_detect_format_of_the_fixtures(path: Path, expected: str) -> None:
    assert detect_format(path) == expected


def test_inspect_zip_detected_from_content_under_another_name(tmp_path: Path) -> None:
    path = write(tmp_path, "log.bin", (INSPECT / "mini_deflate.eval").read_bytes())
    assert detect_format(path) == "inspect"
    assert counts(only_set(path, scorer="match")) == INSPECT_EXPECTED


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("junk.json", b"\x89PNG\r\n" + random.Random(4).randbytes(3000)),
        ("notes.txt", b"hello, these are not results\n"),
        ("object.json", b'{"hello": "world"}'),
    ],
)
def test_undetectable_format_lists_the_known_formats(
    tmp_path: Path, name: str, data: bytes
) -> None:
    path = write(tmp_path, name, data)
    message = single_problem(path)
    assert message.startswith(f"{path}: cannot tell the format")
    assert ", ".join(FORMATS) in message
    assert "--input-format" in message


def test_unknown_format_lists_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "r.jsonl", jsonl({"task": "a", "passed": True}))
    message = single_problem(path, format="xlsx")
    assert message.startswith(f"{path}: unknown format 'xlsx'")
    assert f"known formats: {', '.join(FORMATS)}" in message
    assert {"jsonl", "inspect", "junit", "csv", "parquet"} <= set(FORMATS)
    assert "did you mean 'jsonl'" in single_problem(path, format="jsonn")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.jsonl"
    assert single_problem(path) == f"{path}: no such file"


def test_empty_directory(tmp_path: Path) -> None:
    # A folder is an input of its own now (tests/test_harness_readers.py); an empty one
    # says so.
    assert single_problem(tmp_path) == (
        f"{tmp_path}: the folder holds no files to read (hidden ones are passed over)"
    )


@pytest.mark.parametrize("name", ["empty.jsonl", "empty.yaml", "empty.json", "empty.eval"])
def test_empty_file(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, name, b"")
    assert single_problem(path) == f"{path}: the file is empty: no runs to count"


def test_problems_from_several_files_are_reported_together(tmp_path: Path) -> None:
    good = write(tmp_path, "good.jsonl", jsonl({"task": "a", "passed": True}))
    bad = write(tmp_path, "bad.jsonl", jsonl({"task": "a", "passed": "no"}))
    found = problems(Source(bad), Source(tmp_path / "missing.jsonl"), Source(good))
    # Inputs that cannot be opened are found before any is read.
    assert found == [
        f"{tmp_path / 'missing.jsonl'}: no such file",
        f'{bad}:1: "passed": "no" is not true, false, 1, 0 or null',
    ]


def test_files_sharing_suite_and_model_are_merged(tmp_path: Path) -> None:
    first = write(tmp_path, "one.jsonl", jsonl({"suite": "s", "task": "a", "passed": True}))
    second = write(tmp_path, "two.jsonl", jsonl({"suite": "s", "task": "b", "passed": False}))
    loaded = load_sources([Source(first), Source(second)])
    assert len(loaded.result_sets) == 1
    rs = loaded.result_sets[0]
    assert counts(rs) == {"a": (1, 1, 0), "b": (0, 1, 0)}
    assert rs.sources == [str(first), str(second)]


def test_a_task_split_over_two_files_read_differently_is_an_error(tmp_path: Path) -> None:
    """Read with other settings, a copy of a file could not be told from more runs."""
    first = write(tmp_path, "one.jsonl", jsonl({"suite": "s", "task": "a", "passed": True}))
    second = write(tmp_path, "two.jsonl", jsonl({"suite": "s", "task": "a", "passed": False}))
    message = problems(Source(first), Source(second, errors="fail"))[0]
    assert message.startswith(f"{second}: task 'a'")
    assert str(first) in message and "read with other settings" in message


@pytest.mark.parametrize("fixture", ["inspect/mini.json", "tau2/results.json"])
def test_a_json_log_cut_short_says_so_where_its_format_cannot_be_told(
    tmp_path: Path, fixture: str
) -> None:
    # Cut at 300 bytes, before the keys that tell these formats apart.
    head = (Path(__file__).parent / "fixtures" / fixture).read_bytes()[:300]
    path = write(tmp_path, "cut.json", head)
    message = single_problem(path)
    line = head.rstrip().count(b"\n") + 1  # the last line with text
    assert message.startswith(
        f"{path}: line {line}: the JSON is cut short (a {{ or [ is never closed), so its "
        "format cannot be told; set format: (or --input-format)"
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"results": [{"task": "a", "note": "cut',  # inside a string
        '{"results": [{"task": "\u00e9", "x": 1}, {"task": "b",',  # after non-ASCII text
    ],
)
def test_json_cut_short_is_told_wherever_the_cut_falls(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "cut.json", text)
    assert single_problem(path).startswith(f"{path}: line 1: the JSON is cut short")


def test_json_lines_no_format_claims_are_not_called_cut_short(tmp_path: Path) -> None:
    path = write(tmp_path, "other.json", b'{"a": 1}\n{"b": 2}\n')
    assert single_problem(path).startswith(f"{path}: cannot tell the format; ")


def test_an_input_given_twice_is_refused_not_counted_twice(tmp_path: Path) -> None:
    path = write(tmp_path, "r.jsonl", jsonl({"task": "a", "passed": True}))
    link = tmp_path / "link.jsonl"
    link.symlink_to(path)
    for again in (path, path.absolute(), link):
        with pytest.raises(UserError) as caught:
            load_sources([Source(path=path), Source(path=again)])
        (problem,) = caught.value.problems
        also = "" if again == path else f" (as {path})"
        assert problem == f"{again}: given twice{also}: its runs would count twice"


def test_one_file_read_twice_with_different_settings_makes_two_sets(tmp_path: Path) -> None:
    path = write(tmp_path, "r.jsonl", jsonl({"task": "a", "passed": True}))
    loaded = load_sources([Source(path=path, model="x"), Source(path=path, model="y")])
    assert [rs.model for rs in loaded.result_sets] == ["x", "y"]


def test_files_given_one_by_one_are_read_as_their_folder_is(tmp_path: Path) -> None:
    """One report per run, given one by one: a task's runs in two files are its runs."""
    one = write(tmp_path / "runs", "1.jsonl", jsonl({"task": "a", "passed": True, "suite": "s"}))
    two = write(tmp_path / "runs", "2.jsonl", jsonl({"task": "a", "passed": False, "suite": "s"}))
    (rs,) = load_sources([Source(path=one), Source(path=two)]).result_sets
    assert [(t.id, t.successes, t.runs) for t in rs.tasks] == [("a", 1, 2)]
    assert rs.sources == [str(one), str(two)]
    (folder,) = load_sources([Source(path=tmp_path / "runs")]).result_sets
    assert [(t.id, t.successes, t.runs) for t in folder.tasks] == [("a", 1, 2)]
    # Runs that carry ids are checked for repeats across the files, as in a folder.
    same = write(tmp_path / "ids", "1.jsonl", jsonl({"task": "a", "passed": True, "run": 1}))
    again = write(tmp_path / "ids", "2.jsonl", jsonl({"task": "a", "passed": False, "run": 1}))
    with pytest.raises(UserError, match="run 1 of task 'a' appears twice"):
        load_sources([Source(path=same, suite="s"), Source(path=again, suite="s")])


def test_large_files_of_one_set_merge_runs_as_small_ones_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file large enough for DuckDB is counted on its own; beside other files it is
    read line by line, so a task's runs in two files merge and their ids are checked
    against each other whatever the files' sizes (a large file once refused a task
    that another file also held, and a small file's runs of it went uncounted)."""
    one = write(tmp_path / "runs", "1.jsonl", jsonl({"task": "a", "passed": True, "run": 1}))
    write(tmp_path / "runs", "2.jsonl", jsonl({"task": "a", "passed": False, "run": 2}))
    small = counts(only_set(tmp_path / "runs"))
    monkeypatch.setattr(jsonl_reader, "DUCKDB_MIN_BYTES", 0)
    assert counts(only_set(tmp_path / "runs")) == small == {"a": (1, 2, 0)}
    write(tmp_path / "runs", "3.jsonl", jsonl({"task": "a", "passed": False, "run": 1}))
    assert any("run 1 of task 'a' appears twice" in p for p in problems_of(tmp_path / "runs"))
    # Alone, a large file still goes to DuckDB (its counts come without run ids).
    (task,) = only_set(one).tasks
    assert (task.successes, task.runs) == (1, 1)


@pytest.mark.parametrize(
    ("counted", "ran"),
    [
        (
            ("a.yaml", "suite: s\ntasks:\n  - {id: t1, successes: 1, runs: 2}\n"),
            ("b.yaml", "suite: s\ntasks:\n  - {id: t1, outcomes: [false, false, false]}\n"),
        ),
        (
            ("a.jsonl", jsonl({"task": "t1", "successes": 1, "runs": 2, "suite": "s"})),
            ("b.jsonl", jsonl({"task": "t1", "passed": False, "suite": "s"})),
        ),
    ],
    ids=["yaml", "jsonl"],
)
def test_a_task_given_as_counts_takes_no_runs_from_another_file(
    tmp_path: Path, counted: tuple[str, str], ran: tuple[str, str]
) -> None:
    """Counts hold all of a task's runs: runs of it in another file are an error, said
    once, in either order (runs after counts were once dropped without a word)."""
    for first, second in ((counted, ran), (ran, counted)):
        folder = tmp_path / first[0].replace(".", "-first-")
        write(folder, "1-" + first[0], first[1])
        write(folder, "2-" + second[0], second[1])
        found = problems_of(folder)
        assert len(found) == 1 and "task 't1' is given more than once" in found[0], found
        assert str(folder / ("2-" + second[0])) in found[0], found


def test_a_file_inside_a_folder_also_given_is_refused_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    inner = write(folder, "a.jsonl", jsonl({"task": "a", "passed": True}))
    for order in ([folder, inner], [inner, folder]):
        with pytest.raises(UserError) as caught:
            load_sources([Source(path=p) for p in order])
        assert caught.value.problems == [f"{inner}: already read as part of {folder}, also given"]
