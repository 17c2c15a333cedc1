"""A seeded fuzzer for every reader and command, against the bad-input contract.

Each case writes a few files (a result file, a config, a history, a report.json)
built from a valid seed and then damaged: random and flipped bytes, truncation,
deep nesting, huge numbers, NaN and Infinity, a wrong type at a key path, a
hostile string in a text field, zip members renamed, duplicated, missing or
oversized, YAML tags and aliases; also XML in every declared encoding, input
folders with links out, dangling links, FIFOs and unreadable entries, histories
of thousands of builds, and inputs a byte under, at and over each size limit
(these as child processes held to 300 MB). It runs one command on them and checks:

* the exit status is 0 or 2 (1 too for `check`, whose gate may fail);
* nothing escapes `main` and stderr holds no traceback or stray line;
* a failure says where: an error line names the file (or the flag);
* a failed build leaves the previous site byte for byte, with no staging left;
* the case ends within TIME_LIMIT seconds; in the subprocess slice, also
  within MEMORY_LIMIT of peak memory.

Most cases call `reportgen.cli.main` in this process (milliseconds each); one in
SUBPROCESS_EVERY runs the real command in a child to measure time and memory.

    python -m tests.fuzz --cases 10000 --jobs 2     # what `make fuzz` runs
    python -m tests.fuzz --cases 200 --seed 7       # a quick look

Inputs that belong to part A of issue 12 are not generated (see EXCLUDED).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reportgen.cli import main
from reportgen.readers import Source
from reportgen.terminal import terminal_safe

#: Seconds one case may take, in process or as a child.
TIME_LIMIT = 30
#: Peak resident memory of one command, measured in the subprocess slice.
MEMORY_LIMIT = 1024 * 1024 * 1024
#: One case in this many runs as a child process (time and memory measured).
SUBPROCESS_EVERY = 100

#: Classes of input left to part A of issue 12, so not generated here:
#: - YAML alias bombs ("billion laughs"): part A's "YAML alias bombs" item; only
#:   small, harmless aliases are made below.
#: - zip bombs: part A's "zip bombs and document size caps"; an "oversized" member
#:   here is a few megabytes (size_case tries members at the 64 MiB limit).
#: - the pickle cache: part A's item; every build here runs with --no-cache.
#: - terminal escapes, RTL marks, Markdown and URL injection in what is shown:
#:   part A's items; the contract checked here does not look at page content.
EXCLUDED = ("yaml-alias-bomb", "zip-bomb", "cache", "escapes-in-output")

#: The lines stderr may hold: errors, the build's progress notes, and its warnings.
ALLOWED_STDERR = (
    "reportgen: error: ",
    "read ",
    "no history at ",
    "built ",
    "reportgen check: ",
    "warning: ",
)

HOSTILE_STRINGS = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\x01\x1b[31mred\x1b[0m",
    "line\nbreak",
    "cr\rlf",
    "\ud800",
    "x\udfffy",
    "\ufeffbom",
    "\ufffe",
    "\u202eevil\u202c",
    "e\u0301\u0301\u0301",
    "😀" * 3,
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "CON",
    "{{ 7 * 7 }}",
    "{% raw %}",
    "[x](javascript:alert(1))",
    "%s%n%x",
    "x" * 5000,
    "9" * 5000,
    "task-" + "1" * 4400,
    "²³",
    "ÿ" * 300,
]

WRONG_VALUES: list[Any] = [None, True, False, 0, -1, 1.5, "", "x", [], {}, [[]], {"a": 1}]
HUGE_NUMBERS = ["1" + "0" * 30, "-" + "9" * 25, "1e308", "1e400", "-1e400", "9" * 5000, "0.0"]
SPECIAL_NUMBERS = ["NaN", "Infinity", "-Infinity"]


@dataclass
class Case:
    """Files to write into a fresh folder, and one command to run on them.

    "{dir}" in argv and names stands for that folder.
    """

    kind: str
    files: dict[str, bytes]
    argv: list[str]
    #: An error line must contain one of these (a file or a flag).
    names: tuple[str, ...]
    #: A build: its output folder starts as a copy of a good site.
    build: bool = False
    statuses: tuple[int, ...] = (0, 2)
    extra: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------ valid seeds


def seed_jsonl() -> list[dict[str, Any]]:
    records = []
    for task in ("t1", "t2", "t3"):
        for run in range(4):
            records.append(
                {
                    "suite": "s",
                    "model": "m",
                    "task": task,
                    "run": run,
                    "passed": run % 2 == 0 if task != "t3" else None if run == 3 else True,
                    "category": "c",
                    "url": "https://example.com/t",
                }
            )
    return records


def seed_yaml() -> dict[str, Any]:
    return {
        "suite": "s",
        "model": "m",
        "tasks": [
            {"id": "a", "successes": 3, "runs": 5, "category": "c"},
            {"id": "b", "outcomes": [True, False, None, True]},
            {"id": 7, "successes": 0, "runs": 2, "excluded": 1},
        ],
    }


def seed_tau() -> list[dict[str, Any]]:
    return [
        {"task_id": t, "trial": i, "reward": float((t + i) % 2)} for t in range(3) for i in range(3)
    ]


def seed_tau2() -> dict[str, Any]:
    sims = [
        {"task_id": str(t), "trial": i, "reward_info": {"reward": float((t * i) % 2)}}
        for t in range(3)
        for i in range(3)
    ]
    sims.append({"task_id": "0", "trial": 9, "termination_reason": "infrastructure_error"})
    info = {"agent_info": {"llm": "gpt"}, "environment_info": {"domain_name": "airline"}}
    return {"info": info, "simulations": sims}


def seed_inspect() -> dict[str, Any]:
    samples = [
        {"id": s, "epoch": e, "scores": {"match": {"value": "C" if (e + len(str(s))) % 2 else "I"}}}
        for s in ("a", 2)
        for e in (1, 2, 3)
    ]
    return {
        "eval": {"task": "mini", "model": "mock", "scorers": [{"name": "match"}]},
        "results": {"scores": [{"name": "match"}]},
        "samples": samples,
    }


def seed_swe_bench() -> dict[str, Any]:
    ids = ["a__a-1", "b__b-2", "c__c-3"]
    return {
        "submitted_instances": 3,
        "resolved_instances": 1,
        "submitted_ids": ids,
        "resolved_ids": ids[:1],
        "unresolved_ids": ids[1:2],
        "empty_patch_ids": [],
        "error_ids": ids[2:],
        "infra_failure_ids": [],
        "schema_version": 2,
    }


def seed_terminal_bench() -> dict[str, Any]:
    trials = [
        {
            "trial_name": f"t{t}.{i}-of-3.run",
            "task_id": f"t{t}",
            "is_resolved": [True, False, None][(t + i) % 3],
            "failure_mode": ["none", "agent_timeout", "test_timeout"][(t * i) % 3],
        }
        for t in range(3)
        for i in range(1, 4)
    ]
    return {"id": "run", "results": trials}


def seed_harbor() -> dict[str, Any]:
    return {
        "task_name": "hello",
        "trial_name": "hello__abc",
        "source": "terminal-bench",
        "agent_info": {"name": "a", "version": "1", "model_info": {"name": "m", "provider": "p"}},
        "verifier_result": {"rewards": {"reward": 1.0}},
        "exception_info": None,
        "started_at": "2025-01-01T00:00:00",
    }


def seed_promptfoo() -> dict[str, Any]:
    results = [
        {
            "testIdx": r * 2 + t,
            "promptIdx": 0,
            "provider": {"id": "openai:gpt", "label": ""},
            "prompt": {"raw": "q", "label": "p"},
            "testCase": {"description": f"test {t}", "vars": {"x": t}},
            "success": (r + t) % 2 == 0,
            "score": 1,
            "failureReason": 0 if (r + t) % 2 == 0 else 1,
        }
        for r in range(3)
        for t in range(2)
    ]
    return {"evalId": "e", "results": {"version": 3, "results": results}}


def seed_junit() -> bytes:
    cases = "".join(
        f'<testcase classname="c" name="t{i}">{child}</testcase>'
        for i, child in enumerate(
            ["", "<failure message='x'>y</failure>", "<error/>", "<skipped/>"]
        )
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="pytest tests">'
        f'<testsuite name="pytest" tests="4">{cases}</testsuite></testsuites>\n'
    ).encode()


def seed_table_rows(counts: bool) -> list[list[Any]]:
    """Rows of a run table (task, run, passed) or a counts table, header first."""
    if counts:
        return [
            ["suite", "task", "successes", "runs", "excluded"],
            ["s", "t1", 2, 4, 0],
            ["s", "t2", 0, 3, 1],
            ["s", "t3", 0, 0, 2],
        ]
    rows: list[list[Any]] = [["suite", "model", "task", "run", "passed"]]
    for task in ("t1", "t2", "t3"):
        for run in range(4):
            rows.append(["s", "m", task, run, "" if task == "t3" and run == 3 else run % 2])
    return rows


def table_damage(rows: list[list[Any]], rng: random.Random) -> tuple[str, list[list[Any]]]:
    """One cell, header name or row of a table made wrong."""
    rows = [list(row) for row in rows]
    how = rng.choice(["cell", "header", "drop-column", "duplicate-row", "extra-column"])
    if how == "cell":
        row = rows[rng.randrange(1, len(rows))]
        value: Any = rng.choice(
            [*WRONG_VALUES, *HOSTILE_STRINGS, *HUGE_NUMBERS, *SPECIAL_NUMBERS, 7, -3, "true"]
        )
        row[rng.randrange(len(row))] = value
    elif how == "header":
        rows[0][rng.randrange(len(rows[0]))] = rng.choice([*HOSTILE_STRINGS, "task", "passed"])
    elif how == "drop-column":
        gone = rng.randrange(len(rows[0]))
        rows = [row[:gone] + row[gone + 1 :] for row in rows]
    elif how == "duplicate-row":
        rows.append(list(rows[rng.randrange(1, len(rows))]))
    else:
        rows[0].append(rng.choice(["success", "resolved", "score", "task_id", "x"]))
        for row in rows[1:]:
            row.append(rng.choice([1, 0.5, "", "x"]))
    return how, rows


def to_csv(rows: list[list[Any]], delimiter: str = ",") -> bytes:
    text = io.StringIO()
    writer = csv.writer(text, delimiter=delimiter, lineterminator="\n")
    for row in rows:
        writer.writerow(["" if value is None else value for value in row])
    return text.getvalue().encode("utf-8", "surrogatepass")


def to_parquet(rows: list[list[Any]]) -> bytes:
    """The rows as a Parquet file written by DuckDB, each column typed by its values
    (text where they are mixed)."""
    import duckdb

    header, body = rows[0], rows[1:]
    columns = []
    for i, _ in enumerate(header):
        values = [row[i] if i < len(row) else None for row in body]
        kinds = {type(v) for v in values if v is not None}
        if kinds <= {int} and all(abs(v) < 2**63 for v in values if v is not None):
            sql_type = "BIGINT"
        elif kinds <= {int, float, bool}:
            sql_type = "DOUBLE"
            values = [None if v is None else float(v) for v in values]
        else:
            sql_type = "VARCHAR"
            values = [None if v is None else str(v) for v in values]
        columns.append((sql_type, values))
    with tempfile.TemporaryDirectory() as tmp, duckdb.connect() as con:
        names = [f"c{i}" for i in range(len(header))]
        con.execute(
            "CREATE TABLE t ("
            + ", ".join(f"{n} {t}" for n, (t, _) in zip(names, columns, strict=True))
            + ")"
        )
        for r in range(len(body)):
            try:
                con.execute(
                    f"INSERT INTO t VALUES ({', '.join('?' * len(names))})",
                    [values[r] for _, values in columns],
                )
            except (duckdb.Error, UnicodeError, OverflowError):
                continue  # a value Parquet cannot hold: the row is left out
        renamed = ", ".join(
            f'{n} AS "{str(h).replace(chr(34), chr(34) * 2)}"'
            for n, h in zip(names, header, strict=True)
        )
        path = Path(tmp) / "t.parquet"
        try:
            con.execute(f"COPY (SELECT {renamed} FROM t) TO '{path}' (FORMAT parquet)")
        except (duckdb.Error, UnicodeError):
            # A column name Parquet refuses (or two alike): keep the plain names.
            con.execute(f"COPY t TO '{path}' (FORMAT parquet)")
        return path.read_bytes()


def eval_zip(header: Any, samples: list[Any], *, rename: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        members = [("header.json", header)] + [
            (f"samples/{i}_epoch_1.json", sample) for i, sample in enumerate(samples)
        ]
        for name, doc in members:
            name = (rename or {}).get(name, name)
            archive.writestr(name, doc if isinstance(doc, bytes) else to_json(doc))
    return buffer.getvalue()


def seed_config() -> dict[str, Any]:
    return {
        "title": "T",
        "description": "D",
        "k": 3,
        "confidence": 0.95,
        "output": "site",
        "base_url": "https://example.com/r/",
        "label": "v1",
        "result_sets": [{"path": "runs.jsonl", "name": "Runs", "suite": "s", "model": "m"}],
    }


def to_json(doc: Any) -> bytes:
    # allow_nan: NaN and Infinity are among the things to feed in.
    return json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")


def to_jsonl(records: list[Any]) -> bytes:
    return b"\n".join(to_json(r) for r in records) + b"\n"


# ------------------------------------------------------------ mutations


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path in a JSON-like document, the root included."""
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from paths(value, (*prefix, i))


def replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(doc))
    node = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return copy


def deleted(doc: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return None
    copy = json.loads(json.dumps(doc))
    node = copy
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return copy


def with_raw(doc: Any, path: tuple[Any, ...], raw: str) -> bytes:
    """doc as JSON with the value at path replaced by raw JSON text (a huge number, NaN)."""
    token = "\x02RAW\x02"
    text = to_json(replaced(doc, path, token)).decode("utf-8", "surrogatepass")
    return text.replace(json.dumps(token), raw, 1).encode("utf-8", "surrogatepass")


def nested(depth: int, rng: random.Random) -> str:
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
    return opener * depth + "1" + closer * depth


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 10)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def byte_damage(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """A random way of breaking a file at the byte level."""
    how = rng.choice(["random", "flip", "truncate", "insert", "empty-ish"])
    if how == "random":
        return how, rng.randbytes(rng.randint(1, 4096))
    if how == "flip":
        return how, flip_bytes(data, rng)
    if how == "truncate":
        return how, data[: rng.randrange(max(len(data), 1))]
    if how == "insert":
        at = rng.randrange(len(data) + 1)
        junk = rng.choice([b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\r", b"\n\n", b"\x1b[2J", b"}"])
        return how, data[:at] + junk + data[at:]
    return how, rng.choice([b"\n", b" ", b"\xef\xbb\xbf", b"\x00", b"[]", b"{}", b"null", b"---\n"])


def doc_damage(doc: Any, rng: random.Random) -> tuple[str, bytes]:
    """A random structural change to a JSON-like document, serialised as JSON."""
    all_paths = list(paths(doc))
    path = rng.choice(all_paths)
    how = rng.choice(
        ["wrong-type", "hostile-string", "huge-number", "nan", "deep", "delete", "dup"]
    )
    if how == "wrong-type":
        return how, to_json(replaced(doc, path, rng.choice(WRONG_VALUES)))
    if how == "hostile-string":
        strings = [p for p in all_paths if isinstance(get(doc, p), str)] or [path]
        return how, to_json(replaced(doc, rng.choice(strings), rng.choice(HOSTILE_STRINGS)))
    if how == "huge-number":
        numbers = [p for p in all_paths if isinstance(get(doc, p), int | float)] or [path]
        return how, with_raw(doc, rng.choice(numbers), rng.choice(HUGE_NUMBERS))
    if how == "nan":
        return how, with_raw(doc, path, rng.choice(SPECIAL_NUMBERS))
    if how == "deep":
        return how, with_raw(doc, path, nested(rng.choice([50, 900, 1100, 5000, 100_000]), rng))
    if how == "delete":
        return how, to_json(deleted(doc, path) if path else {})
    # A key given twice: the second copy of the last key of some object.
    text = to_json(doc)
    objects = [p for p in all_paths if isinstance(get(doc, p), dict) and get(doc, p)]
    if not objects:
        return how, text
    target = get(doc, rng.choice(objects))
    key = next(reversed(target))
    marker = to_json({key: target[key]})[1:-1]
    at = text.find(marker)
    if at < 0:
        return how, text
    end = at + len(marker)
    return how, text[:end] + b", " + to_json(key) + b": " + to_json(
        rng.choice(WRONG_VALUES)
    ) + text[end:]


def get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def yaml_damage(doc: Any, rng: random.Random) -> tuple[str, bytes]:
    """YAML-only trouble: tags, small aliases, merge keys, bad indentation, tabs."""
    how = rng.choice(["tag", "alias", "merge", "indent", "tab", "multi-doc", "struct"])
    text = json.dumps(doc, indent=2)
    if how == "tag":
        tag = rng.choice(
            [
                "!!python/object:os.system",
                "!!python/name:os.system",
                "!!binary",
                "!!timestamp",
                "!!float",
                "!!int",
                "!!set",
                "!!omap",
                "!custom",
                "!!str",
                "!!null",
                "!!bool",
            ]
        )
        value = rng.choice(['"x"', '"2020-13-45"', '"0x"', "[1, 2]", "{a: 1}", '"abc"', "yes"])
        lines = text.splitlines()
        i = rng.randrange(len(lines))
        if ": " in lines[i]:
            head, _, _ = lines[i].partition(": ")
            lines[i] = f"{head}: {tag} {value}" + ("," if lines[i].rstrip().endswith(",") else "")
        return how, "\n".join(lines).encode()
    if how == "alias":
        # Small, harmless reuse only: alias bombs are part A's (see EXCLUDED).
        return how, (
            b"suite: &s s\nmodel: *s\ntasks:\n  - &t {id: a, successes: 1, runs: 2}\n  - *t\n"
        )
    if how == "merge":
        return how, (
            b"base: &b {successes: 1, runs: 2}\n"
            b"tasks:\n  - {<<: *b, id: a}\n  - {<<: *missing, id: b}\n"
        )
    if how == "indent":
        return how, b"tasks:\n  - id: a\n   successes: 1\n    runs: 2\n"
    if how == "tab":
        return how, b"tasks:\n\t- {id: a, successes: 1, runs: 2}\n"
    if how == "multi-doc":
        return how, text.encode() + b"\n---\n" + text.encode()
    return doc_damage(doc, rng)


# ------------------------------------------------------------ case families


def reader_case(rng: random.Random) -> Case:
    """One damaged result file, read by summary (or, now and then, by build)."""
    reader = rng.choice(
        [
            "jsonl",
            "yaml",
            "tau-bench",
            "tau2-bench",
            "inspect-json",
            "inspect-eval",
            "swe-bench",
            "terminal-bench",
            "harbor",
            "promptfoo",
            "junit",
            "csv",
            "csv-counts",
            "tsv",
            "parquet",
            "parquet-counts",
            "jsonl-counts",
        ]
    )
    given_format = rng.random() < 0.5
    if reader == "jsonl":
        name, records = "runs.jsonl", seed_jsonl()
        if rng.random() < 0.5:
            i = rng.randrange(len(records))
            how, line = doc_damage(records[i], rng)
            lines = [to_json(r) for r in records]
            lines[i] = line.replace(b"\n", b" ")
            data = b"\n".join(lines) + b"\n"
        else:
            how, data = byte_damage(to_jsonl(records), rng)
        fmt = "jsonl"
    elif reader == "yaml":
        name, fmt = "suite.yaml", "yaml"
        roll = rng.random()
        if roll < 0.4:
            how, data = doc_damage(seed_yaml(), rng)
        elif roll < 0.7:
            how, data = yaml_damage(seed_yaml(), rng)
        else:
            how, data = byte_damage(json.dumps(seed_yaml(), indent=2).encode(), rng)
    elif reader in ("tau-bench", "tau2-bench", "inspect-json"):
        name = {"tau-bench": "tau.json", "tau2-bench": "tau2.json", "inspect-json": "log.json"}[
            reader
        ]
        fmt = reader.removesuffix("-json")
        seed = {"tau-bench": seed_tau, "tau2-bench": seed_tau2, "inspect-json": seed_inspect}[
            reader
        ]()
        if rng.random() < 0.7:
            how, data = doc_damage(seed, rng)
        else:
            how, data = byte_damage(to_json(seed), rng)
    elif reader in ("swe-bench", "terminal-bench", "harbor", "promptfoo"):
        name = {
            "swe-bench": "model.run1.json",
            "terminal-bench": "results.json",
            "harbor": "result.json",
            "promptfoo": "output.json",
        }[reader]
        fmt = reader
        seed = {
            "swe-bench": seed_swe_bench,
            "terminal-bench": seed_terminal_bench,
            "harbor": seed_harbor,
            "promptfoo": seed_promptfoo,
        }[reader]()
        if rng.random() < 0.7:
            how, data = doc_damage(seed, rng)
        else:
            how, data = byte_damage(to_json(seed), rng)
    elif reader == "junit":
        name, fmt = "run.xml", "junit"
        how, data = byte_damage(seed_junit(), rng)
    elif reader in ("csv", "csv-counts", "tsv", "parquet", "parquet-counts", "jsonl-counts"):
        fmt = reader.removesuffix("-counts")
        rows = seed_table_rows(counts=reader.endswith("-counts"))
        tabular = rng.random() < 0.7
        if tabular:
            how, rows = table_damage(rows, rng)
        if fmt == "parquet":
            name, data = "runs.parquet", to_parquet(rows)
        elif fmt == "jsonl":
            # Counts as JSONL: one object per task, keys from the header.
            name = "counts.jsonl"
            data = to_jsonl([dict(zip(rows[0], row, strict=False)) for row in rows[1:]])
        else:
            name = f"runs.{fmt}"
            data = to_csv(rows, "\t" if fmt == "tsv" else ",")
            fmt = "csv"
        if not tabular:
            how, data = byte_damage(data, rng)
    else:
        name, fmt = "log.eval", "inspect"
        how, data = eval_damage(rng)
    argv = ["summary", "{dir}/" + name]
    if given_format:
        argv += ["--input-format", fmt]
    build = rng.random() < 0.03
    if build:
        argv = ["build", "{dir}/" + name, "-o", "{dir}/site", "--no-cache"]
        if given_format:
            argv += ["--input-format", fmt]
    return Case(f"{reader}/{how}", {name: data}, argv, ("{dir}/" + name,), build=build)


def eval_damage(rng: random.Random) -> tuple[str, bytes]:
    seed = seed_inspect()
    header = {k: v for k, v in seed.items() if k != "samples"}
    samples: list[Any] = list(seed["samples"])
    how = rng.choice(
        ["header", "sample", "rename", "duplicate", "missing", "oversized", "bytes", "method"]
    )
    if how == "header":
        _, raw = doc_damage(header, rng)
        return how, eval_zip(raw, samples)
    if how == "sample":
        i = rng.randrange(len(samples))
        _, raw = doc_damage(samples[i], rng)
        samples[i] = raw
        return how, eval_zip(header, samples)
    if how == "rename":
        new = rng.choice(
            ["Header.json", "header.json/", "../header.json", "samples/x.txt", "\u202e"]
        )
        old = rng.choice(["header.json", "samples/0_epoch_1.json"])
        return how, eval_zip(header, samples, rename={old: new})
    if how == "duplicate":
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
            with zipfile.ZipFile(buffer, "w") as archive:
                archive.writestr("header.json", to_json(header))
                archive.writestr("header.json", to_json([1]))
                for i, s in enumerate(samples):
                    archive.writestr(f"samples/{i % 2}_epoch_1.json", to_json(s))
        return how, buffer.getvalue()
    if how == "missing":
        return how, eval_zip(header, []) if rng.random() < 0.5 else eval_zip(b"", samples)
    if how == "oversized":
        # A few megabytes, well inside any limit: zip bombs are part A's (EXCLUDED).
        big = {"id": "big", "epoch": 1, "scores": {"match": {"value": "C"}}, "pad": "x" * 4_000_000}
        return how, eval_zip(header, [*samples, big])
    if how == "method":
        data = bytearray(eval_zip(header, samples))
        at = data.find(b"PK\x03\x04")
        data[at + 8 : at + 10] = rng.choice(
            [b"\x5d\x00", b"\x0c\x00", b"\x63\x00"]
        )  # zstd, bz2, aes
        return how, bytes(data)
    return byte_damage(eval_zip(header, samples), rng)


def config_case(rng: random.Random) -> Case:
    runs = to_jsonl(seed_jsonl())
    roll = rng.random()
    if roll < 0.5:
        how, data = doc_damage(seed_config(), rng)
    elif roll < 0.75:
        how, data = yaml_damage(seed_config(), rng)
    else:
        how, data = byte_damage(json.dumps(seed_config(), indent=2).encode(), rng)
    files = {"reportgen.yaml": data, "runs.jsonl": runs}
    argv = ["summary", "--config", "{dir}/reportgen.yaml"]
    # A damaged path in the config is reported under that path: any file of the case counts.
    return Case(f"config/{how}", files, argv, ("{dir}/",))


def history_case(rng: random.Random, history: bytes) -> Case:
    lines = history.splitlines()
    if rng.random() < 0.7:
        i = rng.randrange(len(lines))
        how, line = doc_damage(json.loads(lines[i]), rng)
        lines[i] = line.replace(b"\n", b" ")
        data = b"\n".join(lines) + b"\n"
    else:
        how, data = byte_damage(history, rng)
    files = {"runs.jsonl": to_jsonl(seed_jsonl()), "history.jsonl": data}
    argv = ["build", "{dir}/runs.jsonl", "-o", "{dir}/site", "--no-cache"]
    argv += ["--history", "{dir}/history.jsonl", "--label", "next"]
    return Case(f"history/{how}", files, argv, ("{dir}/history.jsonl",), build=True)


def report_case(rng: random.Random, report: bytes) -> Case:
    if rng.random() < 0.75:
        how, data = doc_damage(json.loads(report), rng)
    else:
        how, data = byte_damage(report, rng)
    files = {"report.json": data, "good.json": report}
    command = rng.choice(["check", "check-baseline", "compare", "plan"])
    argv = {
        "check": ["check", "{dir}/report.json", "--min-reliability", "0.5"],
        "check-baseline": [
            "check",
            "{dir}/good.json",
            "--baseline",
            "{dir}/report.json",
            "--max-drop",
            "0.1",
            # A reading flag sometimes: a damaged report must still be named, not the flag
            # refused for a file that no longer looks like a report.
            *rng.choice([[], ["--input-format", "jsonl"], ["--columns", "task=id"]]),
        ],
        "compare": ["compare", "{dir}/report.json", "{dir}/good.json"],
        "plan": ["plan", "--target-halfwidth", "0.1", "--report", "{dir}/report.json"],
    }[command]
    statuses = (0, 1, 2) if command.startswith("check") else (0, 2)
    return Case(f"report-{command}/{how}", files, argv, ("{dir}/report.json",), statuses=statuses)


def flag_case(rng: random.Random) -> Case:
    """A hostile value for one command-line flag."""
    value = rng.choice(
        [
            *HOSTILE_STRINGS,
            *HUGE_NUMBERS,
            *SPECIAL_NUMBERS,
            "-1",
            "0",
            "1",
            "0.5",
            "1e-300",
            "0.9999999999999999",
            "3/2",
            "-1/5",
            "1/0",
            "a/b",
            "2/" + "9" * 30,
        ]
    )
    files = {"runs.jsonl": to_jsonl(seed_jsonl())}
    # Builds are the slow ones (a second or two each): fewer of them.
    command = rng.choices(["estimate", "plan", "summary", "compare", "build"], [3, 3, 2, 1, 1])[0]
    if command == "estimate":
        flag = rng.choice(["--successes", "--runs", "-k", "--confidence", "--suite"])
        argv = ["estimate", "--suite", "3/5", "4/5"] if flag != "--suite" else ["estimate"]
        if flag in ("--successes", "--runs"):
            argv = ["estimate", "--successes", "2", "--runs", "5"]
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    elif command == "plan":
        flag = rng.choice(
            [
                "--target-halfwidth",
                "--pass-rate",
                "--task-sd",
                "--correlation",
                "--tasks",
                "--confidence",
            ]
        )
        argv = ["plan", "--target-halfwidth", "0.1"]
        if flag == "--target-halfwidth":
            argv[2] = value
        else:
            argv += [flag, value]
    elif command in ("summary", "compare"):
        # And the reading flags, which compare applies to result files as summary does.
        flag = rng.choice(
            ["-k", "--confidence", "--columns", "--threshold", "--scorer", "--input-format"]
        )
        argv = ["summary", "{dir}/runs.jsonl", flag, value]
        if command == "compare":
            argv = ["compare", "{dir}/runs.jsonl", "{dir}/runs.jsonl", flag, value]
    else:
        flag = rng.choice(
            ["-k", "--confidence", "--title", "--description", "--label", "--base-path"]
        )
        argv = ["build", "{dir}/runs.jsonl", "-o", "{dir}/site", "--no-cache", flag, value]
        if flag == "--label":
            argv += ["--history", "{dir}/history.jsonl"]
    return Case(f"flag/{command}{flag}", files, argv, (flag,), build=command == "build")


def filename_case(rng: random.Random) -> Case:
    """A result file whose name is hostile (newline, escape, RTL mark, spaces)."""
    name = rng.choice(
        ["we\nird.jsonl", "e\x1b[31m.jsonl", "\u202etxt.jsonl", " .jsonl", "-k.jsonl"]
    )
    data = rng.choice([b'{"task": "a", "passed": "yes"}\n', to_jsonl(seed_jsonl()), b"\x00\x01"])
    return Case("filename", {name: data}, ["summary", "{dir}/" + name], ("{dir}/" + name,))


def serve_get_case(rng: random.Random) -> Case:
    path = rng.choice(
        [
            "/%00",
            "/%2e%2e/%2e%2e/etc/passwd",
            "/" + "a" * 5000,
            "/%ff%fe",
            "/index.html%00.x",
            "//",
            "/?%00",
        ]
    )
    return Case("serve-get", {}, [], (), extra={"path": path})


#: What a JUnit file may declare: encodings Python decodes (multi-byte ones that
#: expat refuses included), ones it has no codec for, and names that are no encoding.
XML_ENCODINGS = [
    "utf-8", "utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252", "koi8-r", "shift_jis",
    "cp932", "euc_jp", "gbk", "gb18030", "big5", "euc-kr", "utf-7", "cp500", "hz",
    "iso-2022-jp", "x-nonsense", "ebcdic-cp-us", "", "utf-8\"", "\u202e",
]  # fmt: skip


def encoding_case(rng: random.Random) -> Case:
    """A JUnit file that declares an encoding, written in it, in another, or cut short."""
    declared = rng.choice(XML_ENCODINGS)
    written = declared if rng.random() < 0.7 else rng.choice(XML_ENCODINGS)
    text = seed_junit().decode().replace('encoding="utf-8"', f'encoding="{declared}"')
    text = text.replace('name="t1"', 'name="テスト-é-测试"')
    try:
        data = text.encode(written)
    except (LookupError, UnicodeError):
        data = text.encode("utf-8", "surrogatepass")
    how = "as-declared" if written == declared else "mismatched"
    if rng.random() < 0.2:
        data = data[: rng.randrange(len(data))]
        how = "cut"
    argv = ["summary", "{dir}/run.xml"] + (
        ["--input-format", "junit"] if rng.random() < 0.5 else []
    )
    return Case(f"encoding/{how}", {"run.xml": data}, argv, ("{dir}/run.xml",))


#: Text in a file outside the input folder: no message may show it.
SECRET = "ghp_SECRET_TOKEN_fuzz"


def folder_case(rng: random.Random) -> Case:
    """An input folder of runs with entries that cannot or must not be read: links out
    of the folder, dangling and looping links, a FIFO, an unreadable file or folder."""
    records = seed_jsonl()
    files = {
        "runs/a/part1.jsonl": to_jsonl(records[:6]),
        "runs/b/part2.jsonl": to_jsonl(records[6:]),
        "outside/secret.jsonl": f"{SECRET}\n".encode(),
    }
    entries = {
        "link-out-file": ("link", "{dir}/outside/secret.jsonl"),
        "link-out-folder": ("link", "{dir}/outside"),
        "dangling": ("link", "{dir}/runs/nothing-here.jsonl"),
        "loop": ("link", "{dir}/runs/loop.jsonl"),
        "fifo": ("fifo", ""),
        "unreadable-file": ("unreadable", "runs/a/part1.jsonl"),
        "unreadable-folder": ("unreadable", "runs/b"),
        "link-inside": ("link", "{dir}/runs/a/part1.jsonl"),
    }
    chosen = rng.sample(sorted(entries), rng.randint(1, 3))
    extra: dict[str, Any] = {"links": {}, "fifos": [], "unreadable": [], "secret": SECRET}
    for name in chosen:
        kind, target = entries[name]
        if kind == "link":
            at = "runs/loop.jsonl" if name == "loop" else f"runs/{name}.jsonl"
            extra["links"][at] = target
        elif kind == "fifo":
            extra["fifos"].append("runs/pipe.jsonl")
        else:
            extra["unreadable"].append(target)
    argv = ["summary", "{dir}/runs"]
    if rng.random() < 0.3:
        argv.append("--skip-unreadable")
    if rng.random() < 0.1:
        argv = ["build", "{dir}/runs", "-o", "{dir}/site", "--no-cache", *argv[2:]]
    return Case(
        "folder/" + "+".join(chosen),
        files,
        argv,
        ("{dir}/runs",),
        build=argv[0] == "build",
        extra=extra,
    )


def long_history_case(rng: random.Random) -> Case:
    """A history of hundreds or thousands of earlier builds (a CI that builds per commit)."""
    builds = rng.choice([31, 301, rng.randint(32, 3000)])
    lines = []
    for i in range(builds):
        tasks = {t: [rng.randint(0, 4), 4] for t in ("t1", "t2", "t3")}
        entry = {"schema_version": 1, "label": f"c{i:05d}", "k": 3, "confidence": 0.95}
        rs = {"suite": "s", "model": "m", "name": "m · s", "tasks": tasks, "reliability_at_k": {}}
        lines.append(to_json({**entry, "result_sets": [rs]}))
    files = {"runs.jsonl": to_jsonl(seed_jsonl()), "history.jsonl": b"\n".join(lines) + b"\n"}
    argv = ["build", "{dir}/runs.jsonl", "-o", "{dir}/site", "--no-cache"]
    argv += ["--history", "{dir}/history.jsonl", "--label", "next"]
    return Case(f"long-history/{builds}", files, argv, ("{dir}/history.jsonl",), build=True)


def _filled(head: bytes, fill: bytes, tail: bytes, size: int) -> bytes:
    """head + as many `fill` as fit + spaces + tail: exactly `size` bytes."""
    count = (size - len(head) - len(tail)) // len(fill)
    return head + fill * count + b" " * (size - len(head) - len(tail) - count * len(fill)) + tail


def size_case(rng: random.Random) -> Case:
    """An input at a stated limit, a byte under or over it, in the costliest shape:
    `{}` wherever a value may go. Run as a child: its peak memory is measured."""
    from reportgen.limits import (
        MAX_DOCUMENT_BYTES,
        MAX_JSON_VALUES,
        MAX_MEMBER_BYTES,
        MAX_YAML_BYTES,
    )
    from reportgen.readers.documents import MAX_LINE_BYTES

    shape = rng.choices(["yaml", "jsonl-line", "record-values", "eval-member", "document"],
                        [3, 3, 3, 2, 1])[0]  # fmt: skip
    delta = rng.choice([-1, 0, 1])
    if shape == "yaml":
        name, data = "suite.yaml", _filled(b"[", b"{}, ", b"{}]\n", MAX_YAML_BYTES + delta)
    elif shape == "jsonl-line":
        head = b'{"task": "t", "passed": true, "pad": ['
        name, data = "runs.jsonl", _filled(head, b"{},", b"{}]}\n", MAX_LINE_BYTES + delta)
    elif shape == "record-values":
        # One τ-bench record holding MAX_JSON_VALUES values, one fewer or one more.
        count = MAX_JSON_VALUES - 9 + delta  # the record, its 4 keys and 4 values
        traj = b",".join([b"{}"] * count)
        record = b'{"task_id": 1, "trial": 0, "reward": 1, "traj": [' + traj + b"]}"
        name, data = "tau.json", b"[" + record + b"]"
    elif shape == "eval-member":
        member = _filled(
            b'{"id": "s", "epoch": 1, "pad": [', b"{},", b"{}]}", MAX_MEMBER_BYTES + delta
        )
        seed = seed_inspect()
        header = {k: v for k, v in seed.items() if k != "samples"}
        name, data = "log.eval", eval_zip(header, [*seed["samples"], member])
    else:
        name, data = "tau.json", _filled(b"[", b"{},", b"{}]", MAX_DOCUMENT_BYTES + delta)
    argv = ["summary", "{dir}/" + name]
    return Case(f"size/{shape}{delta:+d}", {name: data}, argv, ("{dir}/" + name,),
                extra={"child": True, "memory": 300 * 1024 * 1024})  # fmt: skip


def generate(seed: int, history: bytes, report: bytes) -> Iterator[Case]:
    """An endless, reproducible stream of cases."""
    rng = random.Random(seed)
    families: list[tuple[float, Callable[[random.Random], Case]]] = [
        (0.55, reader_case),
        (0.1, config_case),
        (0.03, lambda r: history_case(r, history)),  # mostly builds: slow
        (0.12, lambda r: report_case(r, report)),
        (0.12, flag_case),
        (0.02, filename_case),
        (0.02, serve_get_case),
        (0.02, encoding_case),
        (0.02, folder_case),
        (0.002, long_history_case),
        (0.004, size_case),
    ]
    weights = [w for w, _ in families]
    while True:
        make = rng.choices([f for _, f in families], weights)[0]
        yield make(rng)


# ------------------------------------------------------------ running and judging


class TooSlow(BaseException):
    """Raised by the alarm when a case runs past TIME_LIMIT."""


def _alarm(signum: int, frame: Any) -> None:
    raise TooSlow


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@dataclass
class Fixtures:
    """A good site (copied into place before each build case), its history and report."""

    site: Path
    history: bytes
    report: bytes


def make_fixtures(folder: Path) -> Fixtures:
    runs = folder / "runs.jsonl"
    runs.write_bytes(to_jsonl(seed_jsonl()))
    site = folder / "good-site"
    argv = ["build", str(runs), "-o", str(site), "--no-cache", "--history", str(folder / "h.jsonl")]
    with contextlib.redirect_stderr(io.StringIO()):
        assert main([*argv, "--label", "v1"], out=io.StringIO()) == 0
        # A second build, so the history holds two entries and a trend.
        argv[argv.index("--history") + 1] = str(site / "history.jsonl")
        assert main([*argv, "--label", "v2"], out=io.StringIO()) == 0
    return Fixtures(
        site, (site / "history.jsonl").read_bytes(), (site / "report.json").read_bytes()
    )


def judge(
    case: Case, folder: Path, status: int | None, err: str, before: dict[str, bytes] | None
) -> str | None:
    """What the case did wrong, or None."""
    if status not in case.statuses:
        return f"exit status {status}, expected one of {case.statuses}"
    if "Traceback" in err:
        return "a traceback on stderr"
    if case.extra.get("secret") and case.extra["secret"] in err:
        return "a message shows text of a file outside the input folder"
    lines = err.splitlines()
    stray = [line for line in lines if not line.startswith(ALLOWED_STDERR)]
    if stray:
        return f"stray stderr line {stray[0][:200]!r}"
    errors = [line for line in lines if line.startswith("reportgen: error: ")]
    if status == 2:
        if not errors:
            return "exit status 2 without an error line"
        # Messages spell control and bidi characters out (terminal_safe), and a
        # folder is named without its trailing slash.
        names = [
            terminal_safe(
                n.replace("{dir}", str(folder)).replace("\n", "\\n").replace("\r", "\\r")
            ).rstrip("/")
            for n in case.names
        ]
        if not any(name in line for line in errors for name in names):
            return f"no error line names {case.names[0]!r}: {errors[0][:200]!r}"
    if case.build:
        site = folder / "site"
        leftovers = [p.name for p in folder.iterdir() if p.name.startswith(".site.")]
        if leftovers:
            return f"left {leftovers[0]} beside the output"
        if status == 0 and not (site / "report.json").is_file():
            return "build said 0 but wrote no report.json"
        if status != 0 and before is not None and snapshot(site) != before:
            return "a failed build changed the previous site"
    return None


def run_in_process(case: Case, folder: Path, fixtures: Fixtures) -> str | None:
    write_files(case, folder)
    before = None
    if case.build:
        shutil.copytree(fixtures.site, folder / "site")
        before = snapshot(folder / "site")
    argv = [a.replace("{dir}", str(folder)) for a in case.argv]
    err = io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT)
    status: int | None = None
    try:
        with contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            status = main(argv, out=io.StringIO())
    except TooSlow:
        return f"took more than {TIME_LIMIT} s"
    except BaseException as error:  # anything escaping main is a violation
        trace = traceback.format_exception(error)
        return f"raised {type(error).__name__}: {error!s:.200} at {trace[-2].strip()[:300]}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return judge(case, folder, status, err.getvalue(), before)


# The command as the console script runs it, in a child of this small process, which
# writes the child's peak memory (its own and that of the chart converter it waited
# for) to the file named first and exits with its status. Measured here, not in the
# command itself: a process forked from a large one (this fuzzer, after a case of
# hundreds of megabytes) starts with that one's peak as its own.
_CHILD = """
import os, subprocess, sys
peak_file = sys.argv[1]
child = subprocess.Popen([sys.executable, "-m", "reportgen", *sys.argv[2:]])
_, status, usage = os.wait4(child.pid, 0)
with open(peak_file, "w") as f:
    f.write(str(usage.ru_maxrss * 1024))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_as_child(case: Case, folder: Path, fixtures: Fixtures) -> str | None:
    """The real command in a child process: its time and peak memory are measured."""
    write_files(case, folder)
    before = None
    if case.build:
        shutil.copytree(fixtures.site, folder / "site")
        before = snapshot(folder / "site")
    argv = [a.replace("{dir}", str(folder)) for a in case.argv]
    try:
        [os.fsencode(a) for a in argv]
    except UnicodeEncodeError:
        return None  # a lone surrogate cannot be an argument of a real process
    if any("\x00" in a for a in argv):
        return None  # nor can NUL: only main([...]) sees those
    peak_file = folder / ".peak"
    start = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(peak_file), *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        errors="backslashreplace",
        text=True,
    )
    try:
        _, err = child.communicate(timeout=TIME_LIMIT + 10)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return f"child took more than {TIME_LIMIT + 10} s"
    seconds = time.monotonic() - start
    peak = int(peak_file.read_text()) if peak_file.exists() else 0
    if seconds > TIME_LIMIT:
        return f"child took {seconds:.1f} s"
    if peak > case.extra.get("memory", MEMORY_LIMIT):
        return f"child peaked at {peak / 1e6:.0f} MB"
    return judge(case, folder, child.returncode, err, before)


_PREVIEW: Any = None


def run_serve_get(case: Case, folder: Path, fixtures: Fixtures) -> str | None:
    """One request to a preview server (one per worker, serving the good site)."""
    import urllib.error
    import urllib.request

    from reportgen.config import Config
    from reportgen.serve import PreviewServer

    global _PREVIEW
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        if _PREVIEW is None:
            site = fixtures.site.parent / "served"
            shutil.copytree(fixtures.site, site)
            runs = fixtures.site.parent / "runs.jsonl"
            config = Config(output=site, result_sets=[Source(runs)])
            _PREVIEW = PreviewServer(lambda: config, 0, io.StringIO())
            _PREVIEW.start()
        url = _PREVIEW.url.rstrip("/") + case.extra["path"]
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                code = answer.status
        except urllib.error.HTTPError as error:
            code = error.code
    if code not in (200, 301, 400, 404, 414):
        return f"GET {case.extra['path'][:50]!r} answered {code}"
    if "Traceback" in err.getvalue():
        return f"GET {case.extra['path'][:50]!r} printed a traceback"
    return None


def write_files(case: Case, folder: Path) -> None:
    for name, data in case.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    for name, target in case.extra.get("links", {}).items():
        (folder / name).symlink_to(target.replace("{dir}", str(folder)))
    for name in case.extra.get("fifos", []):
        os.mkfifo(folder / name)
    for name in case.extra.get("unreadable", []):
        (folder / name).chmod(0)  # root reads it anyway: then it is an ordinary entry


def _readable_again(folder: Path) -> None:
    """Modes back, so that the case's folder can be removed."""
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            with contextlib.suppress(OSError):
                path.chmod(0o755 if path.is_dir() else 0o644)


@dataclass
class Outcome:
    cases: int = 0
    children: int = 0
    seconds: float = 0.0
    kinds: dict[str, int] = field(default_factory=dict)
    #: Seconds spent per family, to see where the time goes.
    family_seconds: dict[str, float] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)


def run_cases(seed: int, count: int, first: int = 0) -> Outcome:
    """Cases first .. first + count - 1 of the stream for `seed`."""
    outcome = Outcome()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="reportgen-fuzz-") as tmp:
        root = Path(tmp)
        fixtures = make_fixtures(root)
        stream = generate(seed, fixtures.history, fixtures.report)
        for number, case in enumerate(stream):
            if number < first:
                continue
            if number >= first + count:
                break
            folder = root / f"case-{number}"
            folder.mkdir()
            child = case.extra.get("child", False) or (
                number % SUBPROCESS_EVERY == SUBPROCESS_EVERY - 1 and case.kind != "serve-get"
            )
            runner = (
                run_serve_get
                if case.kind == "serve-get"
                else run_as_child
                if child
                else run_in_process
            )
            began = time.monotonic()
            try:
                violation = runner(case, folder, fixtures)
            except OSError as error:
                # Writing the case itself failed (a file name the system refuses): not a case.
                violation = None if error.filename else f"fuzzer: {error}"
            outcome.cases += 1
            outcome.children += child
            family = case.kind.split("/")[0]
            outcome.kinds[family] = outcome.kinds.get(family, 0) + 1
            spent = outcome.family_seconds.get(family, 0.0) + time.monotonic() - began
            outcome.family_seconds[family] = spent
            if violation is not None:
                outcome.violations.append(f"case {number} (seed {seed}, {case.kind}): {violation}")
            _readable_again(folder)
            shutil.rmtree(folder, ignore_errors=True)
        global _PREVIEW
        if _PREVIEW is not None:
            _PREVIEW.stop()
            _PREVIEW = None
    outcome.seconds = time.monotonic() - start
    return outcome


def _shard(args: tuple[int, int, int]) -> Outcome:
    return run_cases(*args)


def main_fuzz(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fuzz", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    args = parser.parse_args(argv)
    start = time.monotonic()
    jobs = max(1, args.jobs)
    size = -(-args.cases // jobs)
    # Each worker takes one seed's stream, so the shards differ and stay reproducible.
    shards = [(args.seed + j, min(size, args.cases - j * size), 0) for j in range(jobs)]
    if jobs == 1:
        outcomes = [_shard(shards[0])]
    else:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            outcomes = pool.map(_shard, shards)
    total = Outcome()
    for o in outcomes:
        total.cases += o.cases
        total.children += o.children
        total.violations += o.violations
        for kind, n in o.kinds.items():
            total.kinds[kind] = total.kinds.get(kind, 0) + n
            spent = total.family_seconds.get(kind, 0.0) + o.family_seconds[kind]
            total.family_seconds[kind] = spent
    seconds = time.monotonic() - start
    for violation in total.violations:
        print(violation)
    kinds = ", ".join(
        f"{k} {n} ({total.family_seconds[k]:.0f} s)" for k, n in sorted(total.kinds.items())
    )
    print(
        f"fuzz: {total.cases} cases ({total.children} as child processes) in {seconds:.0f} s "
        f"with {jobs} job(s), seeds {args.seed}..{args.seed + jobs - 1}: "
        f"{len(total.violations)} contract violations\n  by family: {kinds}"
    )
    return 1 if total.violations else 0


if __name__ == "__main__":
    sys.exit(main_fuzz())
