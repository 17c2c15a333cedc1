"""reportgen.yaml: defaults, paths beside the file, located errors, and flags over the file."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from reportgen.cli import main
from reportgen.config import Config, load_config
from reportgen.errors import UserError
from reportgen.readers import FORMATS, Source


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def config_problems(path: Path) -> list[str]:
    with pytest.raises(UserError) as caught:
        load_config(path)
    return caught.value.problems


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with one small result file at results/a.jsonl."""
    lines = [
        {"task": "a", "passed": True},
        {"task": "a", "passed": True},
        {"task": "a", "passed": False},
        {"task": "b", "passed": True},
        {"task": "b", "passed": True},
        {"task": "b", "passed": True},
    ]
    write(tmp_path / "results" / "a.jsonl", "".join(json.dumps(r) + "\n" for r in lines))
    return tmp_path


def test_defaults(project: Path) -> None:
    path = write(project / "reportgen.yaml", "result_sets:\n  - results/a.jsonl\n")
    config = load_config(path)
    assert config.title == "Reliability report"
    assert config.description == ""
    assert config.confidence == 0.95
    assert config.k == 3
    assert config.base_path == "/"
    assert config.base_url is None
    assert config.path == path
    # The default output folder is beside the config, like every path in it.
    assert config.output == project / "site"
    assert config.result_sets == [Source(path=project / "results" / "a.jsonl")]


def test_config_object_defaults_without_a_file() -> None:
    config = Config()
    assert (config.confidence, config.k, config.output, config.path) == (
        0.95,
        3,
        Path("site"),
        None,
    )


def test_every_key_is_read_and_paths_are_relative_to_the_config(project: Path) -> None:
    path = write(
        project / "conf" / "reportgen.yaml",
        """\
title: My report
description: Two agents, one suite.
confidence: 0.9
k: 5
output: ../public
base_path: /repo/
base_url: https://example.org/repo/
templates: theme
content: pages
result_sets:
  - path: ../results/a.jsonl
    format: jsonl
    suite: support
    model: alpha
    name: Alpha on support
  - path: /abs/log.eval
    scorer: match
  - ../results/b.jsonl
""",
    )
    config = load_config(path)
    assert (config.title, config.description) == ("My report", "Two agents, one suite.")
    assert (config.confidence, config.k) == (0.9, 5)
    assert (config.base_path, config.base_url) == ("/repo/", "https://example.org/repo/")
    assert config.output == project / "public"
    assert config.templates == project / "conf" / "theme"
    assert config.content == project / "conf" / "pages"
    assert config.result_sets == [
        Source(
            path=project / "results" / "a.jsonl",
            format="jsonl",
            suite="support",
            model="alpha",
            name="Alpha on support",
        ),
        Source(path=Path("/abs/log.eval"), scorer="match"),
        Source(path=project / "results" / "b.jsonl"),
    ]


def test_a_byte_order_mark_and_crlf_are_fine(project: Path) -> None:
    text = "title: T\r\nk: 2\r\nresult_sets:\r\n  - results/a.jsonl\r\n"
    config = load_config(write(project / "reportgen.yaml", b"\xef\xbb\xbf" + text.encode()))
    assert (config.title, config.k) == ("T", 2)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("titel: x\n", r": unknown key 'titel' \(did you mean 'title'\?\)"),
        ("confidnce: 0.9\n", r": unknown key 'confidnce' \(did you mean 'confidence'\?\)"),
        ("outptu: x\n", r": unknown key 'outptu' \(did you mean 'output'\?\)"),
        ("base-path: /x/\n", r": unknown key 'base-path' \(did you mean 'base_path'\?\)"),
        ("zzz: 1\n", r": unknown key 'zzz'$"),
        ("2024-01-01: 1\n", r': unknown key "2024-01-01"$'),  # a date, not datetime.date(...)
        ("path: x\n", r": unknown key 'path' \(did you mean 'base_path'\?\)"),
        ("k: 0\n", r": k: expected a whole number of at least 1, got 0"),
        ("k: -2\n", r": k: expected a whole number of at least 1, got -2"),
        ("k: 2.5\n", r": k: expected a whole number of at least 1, got 2.5"),
        ("k: '3'\n", r': k: expected a whole number of at least 1, got "3"'),
        ("k: 2024-01-01\n", r': k: expected a whole number of at least 1, got "2024-01-01"'),
        (
            "confidence: {2024-01-01: 1}\n",
            r': confidence: expected a number strictly between 0 and 1, got \{"2024-01-01": 1\}',
        ),
        ("k: true\n", r": k: expected a whole number of at least 1, got true"),
        ("confidence: 1\n", r": confidence: expected a number strictly between 0 and 1, got 1"),
        ("confidence: 0\n", r": confidence: expected a number strictly between 0 and 1"),
        ("confidence: 95\n", r": confidence: expected a number strictly between 0 and 1"),
        ("confidence: .nan\n", r": confidence: expected a number strictly between 0 and 1"),
        ("confidence: high\n", r": confidence: expected a number strictly between 0 and 1"),
        ("title: [a, b]\n", r": title: expected text"),
        ("title: ''\n", r": title: empty; leave the key out for the default"),
        ("label: '  '\n", r": label: empty; leave the key out for the default"),
        ("output: {a: 1}\n", r": output: expected text"),
        # YAML reads these as a number and a date: refused, not kept as 1.1 or as a date.
        ("title: 1.10\n", r": title: 1\.1 was read as a number; put the text in quotes"),
        ("label: 2026-12-01\n", r': label: 2026-12-01 was read as a date; put it in quotes: "2026'),
    ],
)
def test_bad_top_level_value_is_named(project: Path, text: str, expected: str) -> None:
    path = write(project / "reportgen.yaml", text + "result_sets: [results/a.jsonl]\n")
    found = config_problems(path)
    assert len(found) == 1, found
    assert re.search(re.escape(str(path)) + expected, found[0]), found


def test_blank_result_set_values_are_refused(project: Path) -> None:
    path = write(
        project / "reportgen.yaml",
        "result_sets:\n  - {path: results/a.jsonl, model: '  ', suite: ''}\n  - {path: ''}\n",
    )
    assert config_problems(path) == [
        f"{path}: result_sets[0].model: empty; leave the key out for the default",
        f"{path}: result_sets[0].suite: empty; leave the key out for the default",
        f"{path}: result_sets[1].path: empty; leave the key out for the default",
    ]


@pytest.mark.parametrize(
    ("sets", "expected"),
    [
        ("result_sets: []\n", r": result_sets: expected a non-empty list"),
        ("result_sets: results/a.jsonl\n", r": result_sets: expected a non-empty list"),
        ("title: x\n", r": result_sets: missing; list the result files to report"),
        ("result_sets:\n  - format: jsonl\n", r": result_sets\[0\]\.path: missing"),
        ("result_sets:\n  - [a]\n", r": result_sets\[0\]: expected a mapping with at least path"),
        ("result_sets:\n  - {path: [a]}\n", r": result_sets\[0\]\.path: expected text"),
        (
            "result_sets:\n  - {path: a.jsonl, formt: jsonl}\n",
            r": result_sets\[0\]: unknown key 'formt' \(did you mean 'format'\?\)",
        ),
        (
            "result_sets:\n  - results/a.jsonl\n  - {path: x.xlsx, format: xlsx}\n",
            r": result_sets\[1\]\.format: unknown format 'xlsx'; "
            r"known formats: " + re.escape(", ".join(FORMATS)),
        ),
        (
            "result_sets:\n  - {path: x.json, format: tau_bench}\n",
            r": result_sets\[0\]\.format: unknown format 'tau_bench' "
            r"\(did you mean 'tau-bench'\?\)",
        ),
    ],
)
def test_bad_result_sets_are_named(project: Path, sets: str, expected: str) -> None:
    path = write(project / "reportgen.yaml", sets)
    found = config_problems(path)
    assert any(re.search(re.escape(str(path)) + expected, m) for m in found), found


def test_numbers_yaml_leaves_as_text_are_numbers(project: Path) -> None:
    """PyYAML reads 9.5e-1 and 1e-3 (an exponent, no point) as text."""
    path = write(
        project / "reportgen.yaml",
        "confidence: 9.5e-1\n"
        "result_sets:\n  - {path: results/a.jsonl, model: 4, threshold: 1e-3}\n",
    )
    config = load_config(path)
    assert config.confidence == 0.95 and config.result_sets[0].threshold == 0.001
    assert config.result_sets[0].model == "4"  # a whole number keeps its digits


def test_several_problems_are_reported_at_once(project: Path) -> None:
    path = write(
        project / "reportgen.yaml",
        "titel: x\nk: 0\nconfidence: 2\nresult_sets:\n  - {path: a, format: xlsx}\n",
    )
    found = config_problems(path)
    assert len(found) == 4
    assert all(m.startswith(f"{path}: ") for m in found)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- a\n- b\n", r": expected a mapping of settings at the top level"),
        ("title: x\nresult_sets: [\n", r":3: not valid YAML"),
        ("title: 'unclosed\n", r":\d+: not valid YAML"),
        (b"\xff\xfe\x00\x01junk", r": not UTF-8 text"),
        ("", r": result_sets: missing"),
    ],
)
def test_unreadable_config(project: Path, text: str | bytes, expected: str) -> None:
    path = write(project / "reportgen.yaml", text)
    found = config_problems(path)
    assert re.search(re.escape(str(path)) + expected, found[0]), found


def test_missing_config_and_directory(project: Path) -> None:
    missing = project / "nope.yaml"
    assert config_problems(missing) == [
        f"{missing}: no such file (give result files, or create reportgen.yaml)"
    ]
    assert config_problems(project) == [f"{project}: is a directory; expected reportgen.yaml"]


# ---------------------------------------------------------------- through the command line


def summary(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    status = main(argv, out=out)
    return status, out.getvalue()


def test_flags_override_the_config_only_when_given(project: Path) -> None:
    path = write(
        project / "reportgen.yaml", "k: 4\nconfidence: 0.8\nresult_sets:\n  - results/a.jsonl\n"
    )
    status, text = summary(["summary", "--config", str(path), "-k", "2", "--format", "json"])
    assert status == 0
    doc = json.loads(text)
    assert (doc["k"], doc["confidence"]) == (2, 0.8)

    status, text = summary(
        ["summary", "--config", str(path), "--confidence", "0.9", "--format", "json"]
    )
    assert status == 0
    doc = json.loads(text)
    assert (doc["k"], doc["confidence"]) == (4, 0.9)

    status, text = summary(["summary", "--config", str(path), "--format", "json"])
    doc = json.loads(text)
    assert (doc["k"], doc["confidence"]) == (4, 0.8)


def test_config_result_set_options_reach_the_summary(project: Path) -> None:
    path = write(
        project / "reportgen.yaml",
        "result_sets:\n  - {path: results/a.jsonl, suite: S, model: M, name: Named}\n",
    )
    status, text = summary(["summary", "--config", str(path), "--format", "json"])
    assert status == 0
    (rs,) = json.loads(text)["result_sets"]
    assert (rs["suite"], rs["model"], rs["name"], rs["format"]) == ("S", "M", "Named", "jsonl")
    assert [(t["id"], t["successes"], t["runs"]) for t in rs["tasks"]] == [("a", 2, 3), ("b", 3, 3)]


def test_config_found_from_another_folder(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(project / "sub" / "reportgen.yaml", "result_sets: [../results/a.jsonl]\n")
    monkeypatch.chdir(project / "results")
    status, _ = summary(["summary", "--config", str(path)])
    assert status == 0


def test_default_config_is_read_from_the_working_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project / "reportgen.yaml", "k: 2\nresult_sets: [results/a.jsonl]\n")
    monkeypatch.chdir(project)
    status, text = summary(["summary", "--format", "json"])
    assert status == 0
    assert json.loads(text)["k"] == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "titel: x\nresult_sets: [results/a.jsonl]\n",
            "unknown key 'titel' (did you mean 'title'?)",
        ),
        ("result_sets:\n  - {path: results/a.jsonl, format: xlsx}\n", "unknown format 'xlsx'"),
        ("result_sets: [results/missing.jsonl]\n", "missing.jsonl: no such file"),
    ],
)
def test_config_errors_exit_2_before_any_output(
    project: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    path = write(project / "reportgen.yaml", text)
    status, out = summary(["summary", "--config", str(path)])
    assert (status, out) == (2, "")
    err = capsys.readouterr().err
    assert err.startswith("reportgen: error: ")
    assert expected in err
    assert "Traceback" not in err


def test_missing_default_config_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert summary(["summary"]) == (2, "")
    assert "reportgen.yaml: no such file" in capsys.readouterr().err
