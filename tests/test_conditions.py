"""Runs made under a condition (a perturbation): read apart from the baseline runs of
the same suite and model, never pooled with them, and compared with them on the pages.

A condition comes from the runs (`condition` in JSONL records and table columns) or
from the config (`condition:` of an input) and the command line (--condition); runs
without one, and runs whose condition is `baseline`, are the baseline.
"""

from __future__ import annotations

import csv
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from reportgen.build import build
from reportgen.cli import main
from reportgen.config import load_config
from reportgen.counts import identity
from reportgen.errors import UserError
from reportgen.history import trend
from reportgen.readers import Source, jsonl, load_sources
from reportgen.report import build_report

from .conftest import ROOT
from .test_incremental import _clean_files, _files


def runs_of(seed: int, conditions: dict[str | None, float], tasks: int = 12) -> list[dict]:
    """Records of one agent: each condition scales every task's pass rate."""
    rng = random.Random(seed)
    records = []
    rates = [rng.random() for _ in range(tasks)]
    for condition, scale in conditions.items():
        for t, rate in enumerate(rates):
            for run in range(4):
                record: dict[str, Any] = {
                    "suite": "desk",
                    "model": "alpha",
                    "task": f"t{t}",
                    "run": run,
                    "passed": rng.random() < rate * scale,
                }
                if condition is not None:
                    record["condition"] = condition
                records.append(record)
    return records


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def summary(sets: list) -> dict[tuple[str, str, str], tuple[int, int, int]]:
    return {
        rs.identity: (len(rs.tasks), rs.runs, sum(t.successes for t in rs.tasks)) for rs in sets
    }


def expected(records: list[dict]) -> dict[tuple[str, str, str], tuple[int, int, int]]:
    """Per (suite, model, condition) from the records themselves: baseline as ""."""
    found: dict[tuple[str, str, str], list[dict]] = {}
    for r in records:
        condition = r.get("condition") or ""
        key = (r["suite"], r["model"], "" if condition == "baseline" else condition)
        found.setdefault(key, []).append(r)
    return {
        key: (len({r["task"] for r in rs}), len(rs), sum(r["passed"] for r in rs))
        for key, rs in found.items()
    }


def test_each_condition_is_a_set_of_its_own_and_baseline_is_no_condition(tmp_path):
    records = runs_of(1, {None: 1.0, "typos": 0.6, "faults": 0.3})
    # Some baseline runs say so: they are the same runs as those that name none.
    for r in records[:20]:
        if "condition" not in r:
            r["condition"] = "baseline"
    path = write_jsonl(tmp_path / "runs.jsonl", records)
    sets = load_sources([Source(path)]).result_sets
    assert summary(sets) == expected(records)
    assert {rs.name for rs in sets} == {
        "alpha · desk",
        "alpha · desk · typos",
        "alpha · desk · faults",
    }


def test_large_jsonl_through_duckdb_reads_conditions_as_the_python_reader(tmp_path, monkeypatch):
    records = runs_of(2, {None: 1.0, "typos": 0.5, "baseline": 1.0})
    random.Random(3).shuffle(records)
    for i, r in enumerate(records):
        r["run"] = i  # unique ids: baseline runs come from two "conditions"
    path = write_jsonl(tmp_path / "runs.jsonl", records)
    slow = load_sources([Source(path)]).result_sets
    monkeypatch.setattr(jsonl, "DUCKDB_MIN_BYTES", 0)
    fast = load_sources([Source(path)]).result_sets
    assert summary(fast) == summary(slow) == expected(records)
    assert [(t.id, t.codes) for rs in fast for t in rs.tasks] == [
        (t.id, t.codes) for rs in slow for t in rs.tasks
    ]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_table_reads_a_condition_column(tmp_path, suffix):
    records = runs_of(4, {"baseline": 1.0, "typos": 0.5})
    path = tmp_path / "runs.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["suite", "model", "task", "run", "passed", "variant"])
        writer.writeheader()
        for r in records:
            writer.writerow(
                {**{k: v for k, v in r.items() if k != "condition"}, "variant": r["condition"]}
            )
    if suffix == ".parquet":
        import duckdb

        parquet = tmp_path / "runs.parquet"
        duckdb.sql(f"COPY (SELECT * FROM '{path}') TO '{parquet}' (FORMAT parquet)")
        path = parquet
    source = Source(path, columns=(("condition", "variant"),))
    assert summary(load_sources([source]).result_sets) == expected(records)


def test_the_config_maps_separate_inputs_to_conditions(tmp_path):
    records = runs_of(5, {None: 1.0})
    perturbed = runs_of(5, {None: 0.5})
    write_jsonl(tmp_path / "base.jsonl", records)
    write_jsonl(tmp_path / "noisy.jsonl", perturbed)
    (tmp_path / "reportgen.yaml").write_text(
        "result_sets:\n  - path: base.jsonl\n  - path: noisy.jsonl\n    condition: noise\n"
    )
    config = load_config(tmp_path / "reportgen.yaml")
    sets = load_sources(config.result_sets).result_sets
    assert [(rs.identity, rs.runs) for rs in sets] == [
        (("desk", "alpha", ""), 48),
        (("desk", "alpha", "noise"), 48),
    ]
    # The same files with no condition: one agent's runs twice, refused as repeats.
    (tmp_path / "reportgen.yaml").write_text(
        "result_sets:\n  - path: base.jsonl\n  - path: noisy.jsonl\n"
    )
    with pytest.raises(UserError, match="appears twice"):
        load_sources(load_config(tmp_path / "reportgen.yaml").result_sets)


def test_a_bad_condition_is_located(tmp_path, capsys):
    path = write_jsonl(
        tmp_path / "runs.jsonl",
        [
            {"task": "a", "passed": True},
            {"task": "a", "passed": True, "condition": 3},
            {"task": "a", "passed": True, "condition": "  "},
            {"task": "a", "passed": True, "condition": "tab\there"},
        ],
    )
    assert main(["summary", str(path)]) == 2
    err = capsys.readouterr().err
    assert f'{path}:2: "condition" must be a non-empty string' in err
    assert f'{path}:3: "condition" must be a non-empty string' in err
    assert f"{path}:4: condition 'tab\\there'" in err


def test_condition_on_the_command_line_names_every_input(tmp_path, capsys):
    path = write_jsonl(tmp_path / "runs.jsonl", runs_of(6, {"typos": 0.5}))
    assert main(["summary", str(path), "--condition", "faults", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(rs["condition"], rs["name"]) for rs in doc["result_sets"]] == [
        ("faults", "alpha · desk · faults")
    ]
    assert main(["summary", str(path), "--condition", " "]) == 2
    assert "--condition: empty" in capsys.readouterr().err


def test_the_report_compares_each_condition_with_its_baseline_only(tmp_path):
    records = runs_of(7, {None: 1.0, "typos": 0.5})
    other = [{**r, "model": "beta"} for r in runs_of(8, {"faults": 0.5})]
    path = write_jsonl(tmp_path / "runs.jsonl", records + other)
    report = build_report(load_sources([Source(path)]).result_sets, "t", "", 2, 0.95)
    by_name = {s.result_set.name: s for s in report.sets}
    base, typos = by_name["alpha · desk"], by_name["alpha · desk · typos"]
    assert base.robustness is None and base.perturbed == [typos.id]
    assert typos.robustness is not None and typos.robustness.baseline == base.id
    assert typos.robustness.shared == 12
    # beta has no baseline runs: no robustness, and alpha's baseline is not taken.
    faults = by_name["beta · desk · faults"]
    assert faults.robustness is None and faults.related == []


def test_trends_and_checks_match_sets_by_condition_too():
    entry = {
        "label": "b1",
        "result_sets": [
            {"suite": "s", "model": "m", "name": "m · s", "tasks": {"a": [4, 4], "b": [3, 4]}},
            {
                "suite": "s",
                "model": "m",
                "condition": "typos",
                "name": "m · s · typos",
                "tasks": {"a": [0, 4], "b": [1, 4]},
            },
        ],
    }
    [base] = trend([entry], ("s", "m", ""), 1, 0.95)
    [typos] = trend([entry], ("s", "m", "typos"), 1, 0.95)
    assert (base.plugin.estimate, typos.plugin.estimate) == (0.875, 0.125)
    assert [identity(rs) for rs in entry["result_sets"]] == [("s", "m", ""), ("s", "m", "typos")]
    assert identity({"suite": "s", "model": "m", "condition": "baseline"}) == ("s", "m", "")


def test_editing_only_the_baseline_rebuilds_the_perturbed_page(tmp_path):
    project = tmp_path / "project"
    (project / "results").mkdir(parents=True)
    write_jsonl(project / "results" / "base.jsonl", runs_of(9, {None: 1.0}))
    write_jsonl(project / "results" / "typos.jsonl", runs_of(9, {None: 0.5}))
    shutil.copytree(ROOT / "templates", project / "templates")
    shutil.copytree(ROOT / "content", project / "content")
    config_path = project / "reportgen.yaml"
    config_path.write_text(
        "title: Conditions\nk: 2\noutput: site\ntemplates: templates\ncontent: content\n"
        "result_sets:\n  - path: results/base.jsonl\n"
        "  - path: results/typos.jsonl\n    condition: typos\n"
    )
    build(load_config(config_path))
    page = project / "site" / "sets" / "alpha-desk-typos" / "index.html"
    before = page.read_text()
    base = project / "results" / "base.jsonl"
    base.write_text(base.read_text().replace('"passed": false', '"passed": true'))
    build(load_config(config_path))
    assert page.read_text() != before
    assert _files(project / "site") == _clean_files(project, tmp_path / "clean")


def test_sql_counts_keep_conditions_apart(tmp_path, capsys):
    """`reportgen sql` with condition mapped: the counts it gives, read back, are the
    runs' own sets, baseline and perturbed apart."""
    import duckdb

    records = runs_of(10, {None: 1.0, "baseline": 1.0, "typos": 0.5})
    for i, r in enumerate(records):
        r["run"] = i
    path = write_jsonl(tmp_path / "runs.jsonl", records)
    assert (
        main(
            [
                "sql",
                "--dialect",
                "duckdb",
                "--table",
                str(path),
                "--columns",
                "suite=suite,model=model,condition=condition",
            ]
        )
        == 0
    )
    query = capsys.readouterr().out
    counts = tmp_path / "counts.parquet"
    duckdb.connect().execute(f"COPY ({query}) TO '{counts}' (FORMAT parquet)")
    from_counts = load_sources([Source(counts)]).result_sets
    assert summary(from_counts) == summary(load_sources([Source(path)]).result_sets)
    assert summary(from_counts) == expected(records)


def test_models_are_compared_under_the_same_condition_only(tmp_path):
    alpha = runs_of(11, {None: 1.0, "typos": 0.5})
    beta = [{**r, "model": "beta"} for r in runs_of(12, {None: 0.9, "typos": 0.4})]
    path = write_jsonl(tmp_path / "runs.jsonl", alpha + beta)
    report = build_report(load_sources([Source(path)]).result_sets, "t", "", 2, 0.95)
    pairs = sorted(
        tuple(sorted((c.a.result_set.name, c.b.result_set.name))) for c in report.comparisons
    )
    assert pairs == [
        ("alpha · desk", "beta · desk"),
        ("alpha · desk · typos", "beta · desk · typos"),
    ]


def test_check_never_takes_a_baseline_of_another_condition(tmp_path, capsys):
    """`check --baseline FILE` takes a lone set of the same model as the report's own
    set even when the file's name differs; not when the runs were made under another
    condition, and the message then names the condition."""
    write_jsonl(tmp_path / "now.jsonl", runs_of(13, {None: 0.5}))
    write_jsonl(tmp_path / "main-now.jsonl", runs_of(13, {None: 1.0}))
    for r in (tmp_path / "now.jsonl", tmp_path / "main-now.jsonl"):
        r.write_text(r.read_text().replace('"suite": "desk", ', ""))  # suites from file names
    site = tmp_path / "site"
    build_args = ["build", str(tmp_path / "now.jsonl"), "-o", str(site), "--condition", "typos"]
    assert main(build_args) == 0
    capsys.readouterr()
    check = ["check", str(site), "--baseline", str(tmp_path / "main-now.jsonl")]
    assert main([*check, "--max-drop", "0.01"]) == 1
    out, err = capsys.readouterr()
    assert "taken as the report's" not in out
    assert "now / alpha / typos" in out + err and "main-now / alpha" in out + err


def test_a_related_set_s_new_id_renders_the_page_that_links_to_it_again(tmp_path):
    """The baseline's page links to the perturbed set's page: when another set takes the
    perturbed set's id, the rebuilt baseline page links to its new one."""
    project = tmp_path / "project"
    (project / "results").mkdir(parents=True)
    write_jsonl(project / "results" / "base.jsonl", runs_of(14, {None: 1.0}))
    write_jsonl(project / "results" / "typos.jsonl", runs_of(14, {"typos": 0.5}))
    write_jsonl(
        project / "results" / "other.jsonl",
        [{**r, "model": "other"} for r in runs_of(15, {None: 1.0})],
    )
    sets = "  - path: results/base.jsonl\n  - path: results/typos.jsonl\n"
    config = project / "reportgen.yaml"
    config.write_text(f"title: Ids\nk: 2\noutput: site\nresult_sets:\n{sets}")
    build(load_config(config))
    assert (project / "site" / "sets" / "alpha-desk-typos" / "index.html").is_file()
    taker = "  - path: results/other.jsonl\n    name: Alpha · Desk · Typos\n"
    config.write_text(f"title: Ids\nk: 2\noutput: site\nresult_sets:\n{taker}{sets}")
    build(load_config(config))
    assert _files(project / "site") == _clean_files(project, tmp_path / "clean")
