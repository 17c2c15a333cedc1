"""Memory follows what counts, not what a file holds (issue 38, item 2).

Every stated limit on a document is tried at the limit, with the most costly shape
that is within it (`[{},{},…]`, members filled with `{}`), and just over it. Each
input is read by the real command in a child process whose peak memory, measured
by a small wrapper process as test_input_limits does, must stay under 300 MB: with
exit status 0 when the input is a result set, else 2 and located error lines, never
a traceback.
Timings are printed, never asserted.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from reportgen.json_scan import json_values
from reportgen.limits import (
    MAX_DOCUMENT_BYTES,
    MAX_JSON_VALUES,
    MAX_MEMBER_BYTES,
    MAX_RECORD_BYTES,
    MAX_YAML_BYTES,
    MAX_YAML_NODES,
    MiB,
)
from reportgen.readers.inspect import _read_member

from . import test_input_limits as input_limits
from .test_input_limits import PEAK_LIMIT_MB, Measured

ROOT = Path(__file__).resolve().parent.parent
INSPECT = ROOT / "tests" / "fixtures" / "inspect"


def measure(args: list[str], cwd: Path) -> Measured:
    """As test_input_limits measures a command (from a small wrapper process: one
    forked from a large process counts that one's size as its own peak), with time
    for documents of 256 MiB."""
    return input_limits.measure(args, cwd, timeout=600)


def assert_read(result: Measured) -> None:
    """A result set within the limits: read, within the memory bar."""
    assert result.status == 0, result.errors
    assert result.peak_mb < PEAK_LIMIT_MB, result


def assert_refused(result: Measured, name: str, *needles: str, lines: int = 1) -> None:
    """Exit 2 with at most `lines` error lines, each naming the file, no traceback,
    within the memory bar; the first line holds every needle."""
    assert result.status == 2, result.errors
    assert 1 <= len(result.errors) <= lines, result.errors
    assert not any("Traceback" in line for line in result.errors), result.errors
    located = [line for line in result.errors if "(stopped after" not in line]
    assert all(f"{name}:" in line for line in located), result.errors
    for needle in needles:
        assert needle in result.errors[0], result.errors
    assert result.peak_mb < PEAK_LIMIT_MB, result


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """tmp_path, emptied after the test: pytest keeps the last runs' folders, and these
    files are hundreds of megabytes."""
    yield tmp_path
    for path in tmp_path.iterdir():
        if path.is_file():
            path.unlink()


def write_filled(path: Path, head: bytes, fill: bytes, tail: bytes, size: int) -> Path:
    """head + as many `fill` as fit + spaces + tail, exactly `size` bytes, written a
    megabyte at a time (the test process stays small)."""
    count = (size - len(head) - len(tail)) // len(fill)
    spaces = size - len(head) - len(tail) - count * len(fill)
    block = fill * (MiB // len(fill))
    per_block = MiB // len(fill)
    with path.open("wb") as handle:
        handle.write(head)
        for _ in range(count // per_block):
            handle.write(block)
        handle.write(fill * (count % per_block))
        handle.write(b" " * spaces + tail)
    assert path.stat().st_size == size
    return path


def over(path: Path, size: int) -> Path:
    """A file one byte over `size`: sparse, as only its size is looked at."""
    with path.open("wb") as handle:
        handle.write(b"[")
        handle.truncate(size + 1)
    return path


# ---------------------------------------------------------------- JSON documents

#: τ-bench, τ²-bench and Inspect JSON logs: (name, options, head and tail around
#: the records, one valid record).
TAU2_INFO = {
    "info": {
        "agent_info": {"implementation": "llm_agent", "llm": "m"},
        "environment_info": {"domain_name": "airline"},
    }
}
INSPECT_HEAD = {
    "eval": {"task": "t", "model": "m"},
    "results": {"scores": [{"name": "match"}]},
}
DOCUMENTS = {
    "tau-bench": (["--input-format", "tau-bench"], b"[", b"]", {"task_id": 1, "reward": 1}),
    "tau2-bench": (
        ["--input-format", "tau2-bench"],
        json.dumps(TAU2_INFO).encode()[:-1] + b', "simulations": [',
        b"]}",
        {"task_id": 1, "trial": None, "reward_info": {"reward": 1}},
    ),
    "inspect": (
        ["--input-format", "inspect"],
        json.dumps(INSPECT_HEAD).encode()[:-1] + b', "samples": [',
        b"]}",
        {"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}}},
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("format_name", DOCUMENTS)
def test_document_of_empty_objects_at_the_limit(folder: Path, format_name: str) -> None:
    """256 MiB of `{},` (85 million records): the audit's 4 GB MemoryError."""
    options, head, tail, _ = DOCUMENTS[format_name]
    write_filled(folder / "runs.json", head + b"{}", b",{}", tail, MAX_DOCUMENT_BYTES)
    result = measure(["summary", "runs.json", *options], folder)
    assert_refused(result, "runs.json", lines=21)


@pytest.mark.slow
@pytest.mark.parametrize("format_name", DOCUMENTS)
def test_valid_document_at_the_limit_reads(folder: Path, format_name: str) -> None:
    """256 MiB of runs that each carry a megabyte of text (a trajectory, say)."""
    options, head, tail, record = DOCUMENTS[format_name]
    path = folder / "runs.json"
    with path.open("wb") as handle:
        handle.write(head)
        written, run = len(head), 0
        while True:
            # Distinct runs: an Inspect sample's epoch, a τ-bench or τ²-bench trial.
            run_key = "epoch" if format_name == "inspect" else "trial"
            text = {**record, run_key: run + 1, "pad": "x" * (MiB - 200)}
            data = (b"," if run else b"") + json.dumps(text).encode()
            if written + len(data) + len(tail) > MAX_DOCUMENT_BYTES:
                break
            handle.write(data)
            written, run = written + len(data), run + 1
        handle.write(b" " * (MAX_DOCUMENT_BYTES - written - len(tail)) + tail)
    assert path.stat().st_size == MAX_DOCUMENT_BYTES
    assert_read(measure(["summary", "runs.json", *options], folder))


@pytest.mark.parametrize("format_name", DOCUMENTS)
def test_document_over_the_limit_is_refused(folder: Path, format_name: str) -> None:
    options, *_ = DOCUMENTS[format_name]
    over(folder / "runs.json", MAX_DOCUMENT_BYTES)
    result = measure(["summary", "runs.json", *options], folder)
    assert_refused(result, "runs.json", "is 268,435,457 bytes", "read up to 256 MiB")


# ---------------------------------------------------------------- one record


def one_record(path: Path, values: int, size: int) -> Path:
    """A τ-bench array of one valid record holding `values` values (keys count) in a
    list of `{}`, padded with spaces to `size` bytes: the streamed path (over 4 MiB)."""
    head = b'[{"task_id": 1, "reward": 1, "x": ['
    tail = b"]}]"
    fill = values - 7  # the record, its 3 keys, 1, 1 and the list x; then one per {}
    path.write_bytes(head + b",".join([b"{}"] * fill) + tail)
    body = path.read_bytes()
    with path.open("wb") as handle:
        handle.write(body[: -len(tail)] + b" " * (size - len(body)) + tail)
    assert json_values(path.read_bytes()) == values + 1  # the top array too
    return path


@pytest.mark.slow
def test_record_at_the_value_limit_reads(folder: Path) -> None:
    one_record(folder / "runs.json", MAX_JSON_VALUES, 8 * MiB)
    assert_read(measure(["summary", "runs.json", "--input-format", "tau-bench"], folder))


@pytest.mark.slow
def test_record_over_the_value_limit_is_refused(folder: Path) -> None:
    one_record(folder / "runs.json", MAX_JSON_VALUES + 1, 8 * MiB)
    result = measure(["summary", "runs.json", "--input-format", "tau-bench"], folder)
    assert_refused(
        result, "runs.json", f"runs.json: [0]: holds more than {MAX_JSON_VALUES:,} JSON values"
    )


def record_of_size(path: Path, size: int) -> Path:
    """A τ-bench array of one valid record of exactly `size` bytes (a long string)."""
    head, tail = b'[{"task_id": 1, "reward": 1, "pad": "', b'"}]'
    return write_filled(path, head, b"x", tail, size + 2)


@pytest.mark.slow
def test_record_at_the_byte_limit_reads(folder: Path) -> None:
    record_of_size(folder / "runs.json", MAX_RECORD_BYTES)
    assert_read(measure(["summary", "runs.json", "--input-format", "tau-bench"], folder))


@pytest.mark.slow
def test_record_over_the_byte_limit_is_refused(folder: Path) -> None:
    record_of_size(folder / "runs.json", MAX_RECORD_BYTES + 1)
    result = measure(["summary", "runs.json", "--input-format", "tau-bench"], folder)
    assert_refused(result, "runs.json", "[0]: a record of 67,108,865 bytes", "up to 64 MiB")


@pytest.mark.slow
def test_rest_of_a_log_over_the_byte_limit_is_refused(folder: Path) -> None:
    """What is read whole beside the simulations (info, tasks) has a record's limit."""
    head = json.dumps(TAU2_INFO).encode()[:-1] + b', "tasks": "'
    tail = b'", "simulations": []}'
    write_filled(folder / "runs.json", head, b"x", tail, MAX_RECORD_BYTES + 200)
    result = measure(["summary", "runs.json", "--input-format", "tau2-bench"], folder)
    assert_refused(result, "runs.json", "outside simulations:", "read whole up to 64 MiB")


# ---------------------------------------------------------------- Inspect .eval


@dataclass(frozen=True)
class Member:
    name: str
    data: bytes


def write_eval(path: Path, members: list[Member]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for member in members:
            info = zipfile.ZipInfo(member.name)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, member.data)
    return path


def header() -> Member:
    """The header of a real log (a scorer named match)."""
    with zipfile.ZipFile(INSPECT / "mini_zstd.eval") as archive:
        return Member("header.json", _read_member(archive, archive.getinfo("header.json")))


def sample(values: int, size: int) -> bytes:
    """A valid sample holding `values` values (keys count), `{}` filled, `size` bytes."""
    head = b'{"id": "a", "epoch": 1, "scores": {"match": {"value": "C"}}, "x": ['
    # The sample, its 4 keys, "a", 1, scores' object, "match", its object, "value",
    # "C" and x's list: 13; then one for each {}.
    fill = values - 13
    body = head + b",".join([b"{}"] * fill)
    data = body + b" " * (size - len(body) - 2) + b"]}"
    assert len(data) == size and json_values(data) == values
    return data


@pytest.mark.slow
def test_member_of_empty_objects_at_the_limit(folder: Path) -> None:
    """The audit's 65 KB .eval: one 64 MiB member of `{}` (1.74 GB before)."""
    body = b'{"id": "a", "x": [' + b"{}," * ((MAX_MEMBER_BYTES - 30) // 3)
    body += b" " * (MAX_MEMBER_BYTES - len(body) - 4) + b"{}]}"
    write_eval(folder / "log.eval", [header(), Member("samples/a_epoch_1.json", body)])
    assert (folder / "log.eval").stat().st_size < 1 * MiB
    result = measure(["summary", "log.eval", "--scorer", "match"], folder)
    assert_refused(
        result, "log.eval", f"samples/a_epoch_1.json: holds more than {MAX_JSON_VALUES:,}"
    )


@pytest.mark.slow
def test_member_at_the_value_limit_reads(folder: Path) -> None:
    member = Member("samples/a_epoch_1.json", sample(MAX_JSON_VALUES, MAX_MEMBER_BYTES))
    write_eval(folder / "log.eval", [header(), member])
    assert_read(measure(["summary", "log.eval", "--scorer", "match"], folder))


@pytest.mark.slow
def test_member_over_the_value_limit_is_refused(folder: Path) -> None:
    member = Member("samples/a_epoch_1.json", sample(MAX_JSON_VALUES + 1, 8 * MiB))
    write_eval(folder / "log.eval", [header(), member])
    result = measure(["summary", "log.eval", "--scorer", "match"], folder)
    assert_refused(
        result, "log.eval", f"samples/a_epoch_1.json: holds more than {MAX_JSON_VALUES:,}"
    )


@pytest.mark.slow
def test_member_over_the_byte_limit_is_refused(folder: Path) -> None:
    member = Member("samples/a_epoch_1.json", sample(20, MAX_MEMBER_BYTES + 1))
    write_eval(folder / "log.eval", [header(), member])
    result = measure(["summary", "log.eval", "--scorer", "match"], folder)
    assert_refused(result, "log.eval", "decompresses to 67,108,865 bytes", "up to 64 MiB")


# ---------------------------------------------------------------- YAML


@pytest.mark.slow
def test_yaml_of_empty_mappings_at_the_limit(folder: Path) -> None:
    """16 MiB of `{}, `: the audit's 243 s and MemoryError."""
    write_filled(folder / "suite.yaml", b"tasks: [{}", b", {}", b"]\n", MAX_YAML_BYTES)
    result = measure(["summary", "suite.yaml"], folder)
    assert_refused(
        result, "suite.yaml", f"suite.yaml:1: not valid YAML: holds more than {MAX_YAML_NODES:,}"
    )


@pytest.mark.slow
def test_config_of_empty_mappings_at_the_limit(folder: Path) -> None:
    write_filled(folder / "reportgen.yaml", b"title: [{}", b", {}", b"]\n", MAX_YAML_BYTES)
    result = measure(["build"], folder)
    assert_refused(result, "reportgen.yaml", "reportgen.yaml:1: not valid YAML: holds more than")


@pytest.mark.slow
def test_valid_yaml_at_the_limit_reads(folder: Path) -> None:
    """16 MiB within the node limit: a suite file with a long comment reads in seconds."""
    head = b"suite: s\nmodel: m\ntasks:\n  - {id: a, successes: 1, runs: 2}\n# "
    write_filled(folder / "suite.yaml", head, b"x", b"\n", MAX_YAML_BYTES)
    assert_read(measure(["summary", "suite.yaml"], folder))


def test_yaml_over_the_limit_is_refused(folder: Path) -> None:
    over(folder / "suite.yaml", MAX_YAML_BYTES)
    result = measure(["summary", "suite.yaml"], folder)
    assert_refused(result, "suite.yaml", "is 16,777,217 bytes", "read up to 16 MiB")


def suite_of_nodes(path: Path, nodes: int) -> Path:
    """A valid suite file of exactly `nodes` YAML nodes: tasks given as outcomes."""
    # The mapping, tasks, its list, one task (mapping, id, a, outcomes, its list):
    # 8 nodes, and then one per outcome.
    outcomes = ", ".join(["true"] * (nodes - 8))
    path.write_text(f"tasks:\n  - {{id: a, outcomes: [{outcomes}]}}\n")
    return path


@pytest.mark.slow
def test_yaml_at_the_node_limit_reads(folder: Path) -> None:
    suite_of_nodes(folder / "suite.yaml", MAX_YAML_NODES)
    assert_read(measure(["summary", "suite.yaml"], folder))


def test_yaml_over_the_node_limit_is_refused(folder: Path) -> None:
    suite_of_nodes(folder / "suite.yaml", MAX_YAML_NODES + 1)
    result = measure(["summary", "suite.yaml"], folder)
    assert_refused(
        result, "suite.yaml", f"suite.yaml:2: not valid YAML: holds more than {MAX_YAML_NODES:,}"
    )


# ---------------------------------------------------------------- reportgen's own files


def test_report_and_history_over_the_value_limit_are_refused(folder: Path) -> None:
    """report.json and history.jsonl lines are counted before parsing, like results."""
    flood = b"[" + b",".join([b"{}"] * MAX_JSON_VALUES) + b"]"
    (folder / "report.json").write_bytes(flood)
    result = measure(["check", "report.json", "--min-reliability", "0.5"], folder)
    assert_refused(result, "report.json", f"holds more than {MAX_JSON_VALUES:,} JSON values")
    (folder / "history.jsonl").write_bytes(flood + b"\n")
    (folder / "r.jsonl").write_text('{"task": "t", "passed": true}\n')
    result = measure(["build", "r.jsonl", "--history", "history.jsonl"], folder)
    assert_refused(result, "history.jsonl", "history.jsonl:1: not a JSON history entry")


# ---------------------------------------------------------------- the same counts


@pytest.mark.parametrize(
    ("path", "format_name"),
    [
        (ROOT / "tests/fixtures/tau-bench/gpt-4o-airline-small.json", "tau-bench"),
        (ROOT / "tests/fixtures/tau2/results.json", "tau2-bench"),
        (ROOT / "tests/fixtures/tau2/dir_format/results.json", "tau2-bench"),
        (INSPECT / "mini.json", "inspect"),
        # The published τ-bench file (4 MB), where the shared data is beside the checkout.
        (ROOT.parent / "shared/data/tau-bench/gpt-4o-airline.json", "tau-bench"),
    ],
)
def test_records_read_in_batches_count_the_same(
    path: Path, format_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document read a record at a time, in batches as small as one byte (chunks of
    seven), gives the counts of the same document parsed whole."""
    from reportgen import json_scan
    from reportgen.readers import Source, documents, load_sources

    if not path.exists():
        pytest.skip(f"{path} is not on this machine")

    def counts() -> list[tuple[str, str | None, list[tuple[str, int, int, int]]]]:
        scorer = "match" if format_name == "inspect" else None
        loaded = load_sources([Source(path, format=format_name, scorer=scorer)])
        return [
            (rs.suite, rs.model, [(t.id, t.successes, t.runs, t.excluded) for t in rs.tasks])
            for rs in loaded.result_sets
        ]

    whole = counts()
    monkeypatch.setattr(documents, "WHOLE_JSON_BYTES", 0)
    # Chunks of 7 bytes on the small fixtures: every boundary case at a chunk's edge.
    small = 7 if path.stat().st_size < 100_000 else 4093
    for chunk, batch in ((MiB, MiB), (small, 1)):
        monkeypatch.setattr(json_scan, "JSON_CHUNK", chunk)
        monkeypatch.setattr(json_scan, "JSON_BATCH", batch)
        assert counts() == whole


# ---------------------------------------------------------------- JSONL lines

MAX_LINE = 16 * MiB  # readers.documents.MAX_LINE_BYTES, the README's "a JSONL line"


def test_jsonl_line_of_empty_objects_at_the_limit(folder: Path) -> None:
    # 16 MiB of {} on one line peaked at 618 MB.
    head, tail = b'{"task": "t", "passed": true, "pad": [', b"{}]}\n"
    path = write_filled(folder / "runs.jsonl", head, b"{},", tail, MAX_LINE)
    assert_refused(measure(["summary", str(path)], folder), str(path), "JSON values")


def test_valid_jsonl_line_at_the_limit_reads(folder: Path) -> None:
    head, tail = b'{"task": "t", "passed": true, "note": "', b'"}\n'
    path = write_filled(folder / "runs.jsonl", head, b"x", tail, MAX_LINE)
    assert_read(measure(["summary", str(path)], folder))


def test_jsonl_line_over_the_limit_is_refused(folder: Path) -> None:
    head, tail = b'{"task": "t", "passed": true, "note": "', b'"}\n'
    path = write_filled(folder / "runs.jsonl", head, b"x", tail, MAX_LINE + 2)
    assert_refused(measure(["summary", str(path)], folder), str(path), "longer than")
