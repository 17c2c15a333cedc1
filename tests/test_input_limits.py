"""Small hostile inputs must not cost gigabytes or minutes (issue 12, items 6 to 8).

Each bomb runs the real command in a child process, through a small wrapper that
reports the child's peak memory (ru_maxrss of its own children, so earlier
children of the test process do not count), and must end within seconds with
exit status 2 and one located message.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
import zstandard

from reportgen.errors import UserError
from reportgen.limits import (
    MAX_ALIAS_NODES,
    MAX_ARCHIVE_BYTES,
    MAX_CHART_LABEL,
    MAX_DEPTH,
    MAX_MEMBER_BYTES,
    MAX_YAML_BYTES,
    load_yaml,
)
from reportgen.readers import Source, load_sources
from reportgen.readers.inspect import ZIP_ZSTANDARD, _read_member
from reportgen.website.chart import chart_labels

INSPECT = Path(__file__).parent / "fixtures" / "inspect"

#: The issue's bar for every bomb: the command's peak resident memory.
PEAK_LIMIT_MB = 300

# Runs argv as a child and prints its exit status and peak RSS in MB. Linux reports
# ru_maxrss in kilobytes; the largest of the child and its own children counts.
_MEASURE = """
import resource, subprocess, sys
status = subprocess.run(sys.argv[1:]).returncode
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{status} {peak:.1f}", file=sys.stderr)
"""


@dataclass(frozen=True)
class Measured:
    status: int
    peak_mb: float
    seconds: float
    errors: list[str]


def measure(args: list[str], cwd: Path, timeout: float = 120) -> Measured:
    """`reportgen ARGS` in a child: its status, peak memory, time and error lines."""
    reportgen = [sys.executable, "-m", "reportgen", *args]
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *reportgen],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    seconds = time.monotonic() - start
    *lines, last = done.stderr.strip().splitlines()
    status, peak = last.split()
    print(f"{' '.join(args)}: exit {status}, peak {float(peak):.0f} MB, {seconds:.1f} s")
    return Measured(int(status), float(peak), seconds, lines)


def assert_refused(result: Measured, *needles: str) -> None:
    """Exit 2, one located line naming the problem, no traceback, within the limits."""
    assert result.status == 2, result.errors
    assert len(result.errors) == 1, result.errors
    assert "Traceback" not in result.errors[0]
    for needle in needles:
        assert needle in result.errors[0]
    assert result.peak_mb < PEAK_LIMIT_MB, result
    # No time limit is asserted (shared machines are noisy); a bomb that made the
    # build hang would hit measure()'s timeout instead.
    print(f"peak {result.peak_mb:.0f} MB in {result.seconds:.1f} s: {result.errors[0]}")


# ---------------------------------------------------------------- item 6: YAML


def alias_bomb(levels: int = 9) -> str:
    """The billion laughs in YAML: each anchor a list of nine aliases of the one before."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        items = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{items}]")
    return "\n".join(lines) + "\n"


def test_yaml_alias_bomb_in_config_is_refused_quickly(tmp_path: Path) -> None:
    bomb = alias_bomb() + f"confidence: *a{8}\nresult_sets: [r.jsonl]\n"
    (tmp_path / "reportgen.yaml").write_text(bomb)
    result = measure(["build"], tmp_path)
    assert_refused(result, "reportgen.yaml:", "aliases expand to more than")


def test_yaml_alias_bomb_in_suite_file_is_refused_quickly(tmp_path: Path) -> None:
    bomb = "suite: s\ntasks:\n" + "".join(f"  - {{id: t{i}, outcomes: *a8}}\n" for i in range(3))
    (tmp_path / "suite.yaml").write_text(alias_bomb().replace("a0:", "x0:", 1) + bomb)
    result = measure(["summary", "suite.yaml"], tmp_path)
    assert_refused(result, "suite.yaml:", "aliases expand")


def test_yaml_aliases_within_the_budget_still_load() -> None:
    # PyYAML's own dump writes an alias for an object that appears twice.
    outcomes = [True, False, True]
    text = yaml.safe_dump(
        {"tasks": [{"id": "a", "outcomes": outcomes}, {"id": "b", "outcomes": outcomes}]}
    )
    assert "*id001" in text
    assert load_yaml(text) == {
        "tasks": [{"id": "a", "outcomes": outcomes}, {"id": "b", "outcomes": outcomes}]
    }
    shared = "base: &b [" + ", ".join(["1"] * 1000) + "]\n"
    uses = "".join(f"u{i}: *b\n" for i in range(MAX_ALIAS_NODES // 1001))
    assert len(load_yaml(shared + uses)) == 1 + MAX_ALIAS_NODES // 1001


def test_yaml_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(yaml.YAMLError, match="inside its own anchor"):
        load_yaml("a: &a [1, *a]\n")


def test_a_yaml_key_given_twice_is_refused_at_its_line(tmp_path: Path) -> None:
    """PyYAML keeps the last of two equal keys: a second result_sets: list silently
    dropped the first. Keys merged in with << may still be overridden."""
    with pytest.raises(yaml.YAMLError, match=r"key 'k' is given twice \(first on line 2\)"):
        load_yaml("result_sets: [a.jsonl]\nk: 3\nk: 5\n")
    with pytest.raises(yaml.YAMLError, match="key 'runs' is given twice"):
        load_yaml("tasks:\n  - {id: a, successes: 1, runs: 2, runs: 3}\n")
    merged = load_yaml("a: &base {path: a.jsonl, suite: s}\nb:\n  <<: *base\n  path: b.jsonl\n")
    assert merged["b"] == {"path": "b.jsonl", "suite": "s"}
    (tmp_path / "r.jsonl").write_text('{"task": "a", "passed": true}\n')
    (tmp_path / "reportgen.yaml").write_text(
        "result_sets:\n  - path: r.jsonl\nresult_sets:\n  - path: r.jsonl\n    model: m\n"
    )
    result = measure(["build"], tmp_path)
    assert_refused(result, "reportgen.yaml:3: ", "key 'result_sets' is given twice")


def test_yaml_nesting_is_limited(tmp_path: Path) -> None:
    deep = "x: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"
    with pytest.raises(yaml.YAMLError, match=f"deeper than {MAX_DEPTH}"):
        load_yaml(deep)
    # Also when only the aliases make it deep.
    chain = "a0: &a0 " + "[" * 60 + "]" * 60 + "\n" + "a1: &a1 " + "[" * 50 + "*a0" + "]" * 50
    with pytest.raises(yaml.YAMLError, match=f"deeper than {MAX_DEPTH}"):
        load_yaml(chain + "\n")
    path = tmp_path / "deep.yaml"
    path.write_text(deep)
    with pytest.raises(UserError, match=r"deep.yaml:1: not valid YAML: nested deeper"):
        load_sources([Source(path)])


# ---------------------------------------------------------------- item 7: zip bombs and big files


@dataclass(frozen=True)
class Member:
    name: str
    method: int  # zipfile.ZIP_DEFLATED, ZIP_STORED or ZIP_ZSTANDARD
    data: bytes  # as stored (compressed)
    size: int  # the decompressed size the archive states
    crc: int = 0


def write_zip(path: Path, members: list[Member], repeat_last: int = 1) -> Path:
    """A zip written field by field, so stated sizes can differ from the data and the
    last member's directory entry can be repeated (entries sharing one stored body)."""
    out = bytearray()
    entries = []
    for m in members:
        name = m.name.encode()
        entries.append((m, len(out)))
        out += struct.pack(
            "<4s2B4HL2L2H",
            b"PK\x03\x04",
            20,
            0,
            0,
            m.method,
            0,
            0x21,
            m.crc,
            len(m.data),
            m.size,
            len(name),
            0,
        )
        out += name + m.data
    entries += [(entries[-1][0], entries[-1][1])] * (repeat_last - 1)
    directory = len(out)
    for i, (m, offset) in enumerate(entries):
        name = (m.name if i < len(members) else m.name.replace(".json", f"_{i}.json")).encode()
        out += struct.pack(
            "<4s4B4HL2L5H2L",
            b"PK\x01\x02",
            20,
            3,
            20,
            0,
            0,
            m.method,
            0,
            0x21,
            m.crc,
            len(m.data),
            m.size,
            len(name),
            0,
            0,
            0,
            0,
            0,
            offset,
        )
        out += name
    out += struct.pack(
        "<4s4H2LH",
        b"PK\x05\x06",
        0,
        0,
        len(entries),
        len(entries),
        len(out) - directory,
        directory,
        0,
    )
    path.write_bytes(bytes(out))
    return path


def inspect_header() -> Member:
    with zipfile.ZipFile(INSPECT / "mini_zstd.eval") as archive:
        header = _read_member(archive, archive.getinfo("header.json"))
    return Member("header.json", zipfile.ZIP_STORED, header, len(header), zlib.crc32(header))


SAMPLE_HEAD = b'{"id": "a", "epoch": 1, "scores": {"match": {"value": "C"}}'


def spaces_bomb(total: int) -> bytes:
    """A sample that is valid JSON once decompressed: a few fields, then `total` spaces,
    as repeated zstd frames of 64 MiB of spaces (a few dozen bytes each)."""
    chunk = 64 * 1024 * 1024
    compress = zstandard.ZstdCompressor().compress
    head = compress(SAMPLE_HEAD) + compress(b" " * chunk) * (total // chunk)
    return head + compress(b" " * (total % chunk)) + compress(b"}")


@pytest.mark.parametrize("stated", ["honest", "lying"])
def test_zip_bomb_eval_is_refused_within_memory(tmp_path: Path, stated: str) -> None:
    total = 4_000_000_000  # about 3.7 GiB of spaces from a file of a few kilobytes
    bomb = spaces_bomb(total)
    size = total if stated == "honest" else 1000
    path = write_zip(
        tmp_path / "bomb.eval",
        [inspect_header(), Member("samples/a_epoch_1.json", ZIP_ZSTANDARD, bomb, size)],
    )
    assert path.stat().st_size < 200_000
    result = measure(["summary", "bomb.eval", "--scorer", "match"], tmp_path)
    if stated == "honest":
        assert_refused(result, "bomb.eval: samples/a_epoch_1.json:", "members are read up to")
    else:
        assert_refused(result, "bomb.eval: samples/a_epoch_1.json:", "more than its stated")


def test_deflate_member_is_held_to_its_stated_size(tmp_path: Path) -> None:
    data = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = data.compress(b" " * (512 * 1024 * 1024)) + data.flush()
    write_zip(
        tmp_path / "bomb.eval",
        [inspect_header(), Member("samples/a_epoch_1.json", zipfile.ZIP_DEFLATED, body, 1000)],
    )
    result = measure(["summary", "bomb.eval", "--scorer", "match"], tmp_path)
    assert_refused(result, "bomb.eval: samples/a_epoch_1.json:")


def test_many_entries_sharing_one_body_are_refused_by_total(tmp_path: Path) -> None:
    body = spaces_bomb(60 * 1024 * 1024)
    count = MAX_ARCHIVE_BYTES // (60 * 1024 * 1024) + 2
    write_zip(
        tmp_path / "bomb.eval",
        [inspect_header(), Member("samples/a_epoch_1.json", ZIP_ZSTANDARD, body, 60 * 2**20)],
        repeat_last=count,
    )
    result = measure(["summary", "bomb.eval", "--scorer", "match"], tmp_path)
    assert_refused(result, "bomb.eval: decompresses to", "archives are read up to")


def test_member_at_the_limit_reads_within_memory(tmp_path: Path) -> None:
    spaces = MAX_MEMBER_BYTES - len(SAMPLE_HEAD) - 1
    content = SAMPLE_HEAD + b" " * spaces + b"}"
    member = Member(
        "samples/a_epoch_1.json",
        ZIP_ZSTANDARD,
        spaces_bomb(spaces),
        MAX_MEMBER_BYTES,
        zlib.crc32(content),
    )
    write_zip(tmp_path / "big.eval", [inspect_header(), member])
    result = measure(["summary", "big.eval", "--scorer", "match"], tmp_path)
    assert result.status == 0, result.errors
    assert result.peak_mb < PEAK_LIMIT_MB, result
    print(f"peak {result.peak_mb:.0f} MB in {result.seconds:.1f} s for a member at the limit")


@pytest.mark.parametrize(
    ("name", "option", "limit"),
    [
        ("runs.json", ["--input-format", "tau-bench"], "256 MiB"),
        ("log.json", ["--input-format", "inspect"], "256 MiB"),
        ("suite.yaml", [], f"{MAX_YAML_BYTES // 2**20} MiB"),
    ],
)
def test_sparse_two_gigabyte_document_is_refused_before_reading(
    tmp_path: Path, name: str, option: list[str], limit: str
) -> None:
    path = tmp_path / name
    with path.open("wb") as handle:
        handle.write(b"[")
        handle.truncate(2 * 1024**3)  # sparse: no disk space used
    result = measure(["summary", name, *option], tmp_path)
    assert_refused(result, f"{name}: is 2048 MiB", limit)


def test_config_beyond_the_yaml_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "reportgen.yaml"
    with path.open("wb") as handle:
        handle.truncate(MAX_YAML_BYTES + 1)
    result = measure(["build"], tmp_path)
    assert_refused(result, "reportgen.yaml: is", "read up to 16 MiB")


def test_member_within_limits_still_reads(tmp_path: Path) -> None:
    # A legitimate zstd member written by this test's own zip writer reads as before,
    # so the refusals above are about the sizes, not the writer.
    sample = b'{"id": "a", "epoch": 1, "scores": {"match": {"value": "C"}}}'
    path = write_zip(
        tmp_path / "ok.eval",
        [
            inspect_header(),
            Member(
                "samples/a_epoch_1.json",
                ZIP_ZSTANDARD,
                zstandard.ZstdCompressor().compress(sample),
                len(sample),
                zlib.crc32(sample),
            ),
        ],
    )
    loaded = load_sources([Source(path, scorer="match")])
    assert [(t.id, t.successes, t.runs) for t in loaded.result_sets[0].tasks] == [("a", 1, 1)]
    assert MAX_MEMBER_BYTES < PEAK_LIMIT_MB * 2**20


def sparse(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


def test_sparse_report_and_history_are_refused_before_reading(tmp_path: Path) -> None:
    sparse(tmp_path / "report.json", 2 * 1024**3)
    result = measure(["check", "report.json", "--min-reliability", "0.5"], tmp_path)
    assert_refused(result, "report.json: is 2048 MiB", "read up to 256 MiB")
    sparse(tmp_path / "history.jsonl", 2 * 1024**3)
    (tmp_path / "r.jsonl").write_text('{"task": "t", "passed": true}\n')
    result = measure(["build", "r.jsonl", "--history", "history.jsonl"], tmp_path)
    assert_refused(result, "history.jsonl: is 2048 MiB")


# ---------------------------------------------------------------- item 8: long labels


def test_long_task_ids_are_shortened_in_charts_only(tmp_path: Path) -> None:
    ids = [f"{i:03d}-" + "x" * 9_996 for i in range(100)]
    results = tmp_path / "r.jsonl"
    results.write_text(
        "".join(
            f'{{"task": "{task}", "passed": {str((i + r) % 3 != 0).lower()}}}\n'
            for i, task in enumerate(ids)
            for r in range(3)
        )
    )
    start = time.monotonic()
    result = measure(["build", "r.jsonl", "-o", "site"], tmp_path)
    assert result.status == 0, result.errors
    seconds = time.monotonic() - start
    # The time is reported, not asserted: shared machines are too noisy for that.
    print(f"100 ids of 10,000 characters: built in {seconds:.1f} s, peak {result.peak_mb:.0f} MB")
    site = tmp_path / "site"
    (set_page,) = site.glob("sets/*/index.html")
    page = set_page.read_text()
    charts = re.findall(r"<svg.*?</svg>", page, flags=re.DOTALL)
    assert charts and not any("x" * MAX_CHART_LABEL in svg for svg in charts)
    tables = re.sub(r"<svg.*?</svg>", "", page, flags=re.DOTALL)
    assert all(task in tables for task in ids)


def test_chart_labels_stay_unique_short_and_printable() -> None:
    labels = chart_labels(["a" * 200, "a" * 199 + "b", "a" * 200 + "c", "t\x1b[2J", "short"])
    assert len(set(labels)) == 5
    assert all(len(label) <= MAX_CHART_LABEL for label in labels)
    assert labels[3] == "t\\u001b[2J" and labels[4] == "short"
