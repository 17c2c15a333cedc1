"""The reader contract: one registry that everything listing formats follows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reportgen.readers import FORMATS, READERS, Reader, detect_format

from .conftest import ROOT


def test_schema_format_enum_is_the_registry() -> None:
    schema = json.loads((ROOT / "reportgen" / "report.schema.json").read_text())
    enum = schema["$defs"]["result_set"]["properties"]["format"]["enum"]
    assert enum == list(FORMATS)


def test_readme_format_table_lists_every_reader() -> None:
    readme = (ROOT / "README.md").read_text()
    listed = re.findall(r"^\| `([a-z0-9-]+)` \|", readme, flags=re.M)
    assert listed == list(FORMATS)


def test_every_reader_keeps_the_contract() -> None:
    assert len({r.name for r in READERS}) == len(READERS)
    for reader in READERS:
        assert isinstance(reader, Reader)
        assert all(s.startswith(".") and s == s.lower() for s in reader.suffixes)
        assert reader.sniff(b"") is False
        assert callable(reader.read) and reader.summary
    suffixes = [s for r in READERS for s in r.suffixes]
    assert len(suffixes) == len(set(suffixes))


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        ("r.eval", b"anything", "inspect"),
        ("r.yml", b"suite: s", "yaml"),
        ("r.JSONL", b"{}", "jsonl"),
        ("r.json", b'{"task": "t1", "passed": true}\n', "jsonl"),
        ("r.json", b'\xef\xbb\xbf  [{"task_id": 1, "trial": 0, "reward": 1}]', "tau-bench"),
        ("r.json", b'{"info": {}, "tasks": [], "simulations": []}', "tau2-bench"),
        ("r.json", b'{"info": {}, "tasks": []}', "tau2-bench"),
        ("r.json", b'{"eval": {}, "samples": [], "tasks": [], "info": {}}', "inspect"),
        ("r.json", b"PK\x03\x04rest", "inspect"),
        ("r.json", b'{"something": "else"}', None),
        ("r.txt", b"plain text", None),
    ],
)
def test_detection_follows_the_registry(
    tmp_path: Path, name: str, head: bytes, expected: str | None
) -> None:
    path = tmp_path / name
    path.write_bytes(head)
    assert detect_format(path) == expected
