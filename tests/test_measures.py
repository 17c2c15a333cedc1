"""Per-run measures (cost, duration, tokens, confidence): read beside each run's
outcome, kept in run order, checked where they are read and where they are cached."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from reportgen.errors import UserError
from reportgen.readers import Source, load_sources


def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def measures_of(path: Path) -> dict[str, dict[str, list[float]]]:
    [rs] = load_sources([Source(path)]).result_sets
    return {t.id: {name: list(t.measure(name) or []) for name in t.measures} for t in rs.tasks}


def same(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(
        (math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b, strict=True)
    )


def test_measures_follow_the_run_order_with_gaps_as_nan(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "runs.jsonl",
        [
            {"task": "a", "run": 2, "passed": True, "cost": 0.5, "duration": 3},
            {"task": "a", "run": 1, "passed": False, "cost": 0.25, "tokens": None},
            {"task": "a", "run": 3, "passed": None},
            {"task": "b", "passed": True},
            {"task": "b", "passed": True, "confidence": 0.9, "tokens": 1200},
        ],
    )
    got = measures_of(path)
    nan = math.nan
    assert set(got) == {"a", "b"}
    assert same(got["a"]["cost"], [0.25, 0.5, nan])  # runs 1, 2, 3
    assert same(got["a"]["duration"], [nan, 3.0, nan])
    assert set(got["a"]) == {"cost", "duration"}  # "tokens": null records nothing
    assert same(got["b"]["confidence"], [nan, 0.9]) and same(got["b"]["tokens"], [nan, 1200.0])


def test_runs_without_measures_have_none(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "runs.jsonl", [{"task": "a", "passed": True}] * 3)
    assert measures_of(path) == {"a": {}}


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("cost", -0.01, "a number of at least 0"),
        ("duration", "12s", "a number of at least 0"),
        ("tokens", True, "a number of at least 0"),
        ("confidence", 1.5, "a number from 0 to 1"),
        ("cost", 10**400, "a number of at least 0"),
    ],
)
def test_a_bad_measure_is_named_with_its_line(
    tmp_path: Path, field: str, value: object, rule: str
) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(
        json.dumps({"task": "a", "passed": True})
        + "\n"
        + json.dumps({"task": "a", "passed": False}).replace(
            "}", f', "{field}": {json.dumps(value)}}}'
        )
        + "\n"
    )
    with pytest.raises(UserError) as error:
        load_sources([Source(path)])
    assert f'{path}:2: "{field}": ' in str(error.value) and rule in str(error.value)


def test_a_rebuild_from_the_cache_keeps_the_measures(tmp_path: Path) -> None:
    """Parsed inputs come back from the cache with their measures: a rebuild after a
    template edit equals a clean build, resources included; a damaged cached measure
    makes the input be read again."""
    from reportgen.cache import CACHE_DIR

    from .test_results_cache import build, config_for, edit, tree

    records = [
        {"task": f"t{t}", "run": r, "passed": (t + r) % 3 > 0, "cost": 0.01 * (t + 1) * (r + 2)}
        for t in range(8)
        for r in range(4)
    ]
    results = write_lines(tmp_path / "runs.jsonl", records)
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "set.html").write_text(
        (Path(__file__).parent.parent / "templates" / "set.html").read_text()
    )
    site = tmp_path / "site"
    build(config_for(results, theme, site))
    edit(theme, "<p>edited</p>")
    assert "parsed inputs" in build(config_for(results, theme, site)).reused
    clean = tmp_path / "clean"
    build(config_for(results, theme, clean), use_cache=False)
    assert tree(site) == tree(clean)
    doc = json.loads((site / "report.json").read_text())
    cost = doc["result_sets"][0]["resources"]["cost"]
    assert cost["runs"] == 32
    assert cost["per_run"]["estimate"] == pytest.approx(sum(r["cost"] for r in records) / 32)
    # Damage: two characters more in each task's packed costs, so no longer 8 bytes a run.
    entries = list((site.parent / CACHE_DIR / site.name).glob("*"))
    damaged = 0
    for entry in entries:
        raw = entry.read_bytes()
        if b'"measures"' in raw:
            entry.write_bytes(raw.replace(b'"measures":{"cost":"', b'"measures":{"cost":"//', 1))
            damaged += 1
    assert damaged
    edit(theme, "<p>again</p>")
    again = build(config_for(results, theme, site))
    assert "parsed inputs" not in again.reused
    assert (
        json.loads((site / "report.json").read_text())["result_sets"][0]["resources"]
        == (doc["result_sets"][0]["resources"])
    )


@pytest.mark.parametrize(
    ("name", "values", "runs"),
    [
        ("cost", [-1.0, 2.0], 2),  # below 0
        ("confidence", [0.5, 1.5], 2),  # above 1
        ("speed", [1.0, 2.0], 2),  # no such measure
        ("cost", [1.0], 2),  # not one value a run
    ],
)
def test_the_cache_refuses_measures_no_reader_would_give(
    name: str, values: list[float], runs: int
) -> None:
    from array import array

    from reportgen.cache import Damaged, _check_task
    from reportgen.counts import TaskCounts

    fine = TaskCounts(
        "t", 1, 2, codes=bytes([1, 0]), measures={"cost": array("d", [0.5, math.nan]).tobytes()}
    )
    _check_task(fine)
    bad = TaskCounts(
        "t", 1, runs, codes=bytes([1, 0]), measures={name: array("d", values).tobytes()}
    )
    with pytest.raises(Damaged):
        _check_task(bad)


def test_a_large_file_with_measures_reads_the_same_through_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files past jsonl.DUCKDB_MIN_BYTES are grouped in DuckDB: with runs out of order,
    a task whose runs have ids only in part, two models and gaps in the measures, it
    keeps the file (does not hand it back) and gives what the Python reader gives."""
    import random

    from reportgen.readers import jsonl, jsonl_duckdb

    rng = random.Random(2)
    records = []
    for t in range(30):
        runs = list(range(6))
        rng.shuffle(runs)
        for r in runs:
            record: dict = {"task": f"t{t}", "passed": rng.random() < 0.5}
            record["model"] = "a" if t % 3 else "b"
            if not (t % 7 == 0 and r == 3):
                record["run"] = r
            if rng.random() < 0.8:
                record["cost"] = round(rng.random(), 3)
            if t % 5 == 0:
                record["confidence"] = 0.5
            records.append(record)
    path = write_lines(tmp_path / "runs.jsonl", records)
    slow = load_sources([Source(path)]).result_sets
    kept = []
    read = jsonl_duckdb.read_jsonl_through_duckdb

    def through_duckdb(*args: Any) -> bool:
        kept.append(read(*args))
        return kept[-1]

    monkeypatch.setattr(jsonl, "DUCKDB_MIN_BYTES", 0)
    monkeypatch.setattr(jsonl_duckdb, "read_jsonl_through_duckdb", through_duckdb)
    fast = load_sources([Source(path)]).result_sets
    assert kept == [True]
    assert [(t.id, t.codes, t.measures) for rs in fast for t in rs.tasks] == [
        (t.id, t.codes, t.measures) for rs in slow for t in rs.tasks
    ]
    assert any("confidence" in t.measures for t in slow[0].tasks)


def test_tables_give_the_measures_jsonl_gives(tmp_path: Path) -> None:
    """A CSV and a Parquet file of the same runs (one column named by --columns, empty
    cells and NaN as missing) read as the JSON lines of those runs do."""
    import duckdb

    nan = math.nan
    rows = [
        ("a", 2, True, 0.5, None, 0.9),
        ("a", 1, False, 0.25, 3.0, None),
        ("b", 1, True, None, 4.0, 1.0),
        ("b", 2, False, None, None, None),
    ]
    records = [
        {
            "task": task,
            "run": run,
            "passed": passed,
            **{
                k: v
                for k, v in (("cost", cost), ("duration", time), ("confidence", c))
                if v is not None
            },
        }
        for task, run, passed, cost, time, c in rows
    ]
    want = measures_of(write_lines(tmp_path / "runs.jsonl", records))
    csv = tmp_path / "runs.csv"
    csv.write_text(
        "task,run,passed,price,duration,confidence\n"
        + "".join(
            f"{t},{r},{str(p).lower()},{'' if c is None else c},{'NaN' if d is None else d},"
            f"{'' if k is None else k}\n"
            for t, r, p, c, d, k in rows
        )
    )
    parquet = tmp_path / "runs.parquet"
    with duckdb.connect() as con:
        con.execute(
            "CREATE TABLE t (task VARCHAR, run INT, passed BOOLEAN, price DOUBLE, "
            "duration DOUBLE, confidence DOUBLE)"
        )
        con.executemany(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
            [(t, r, p, c, nan if d is None else d, k) for t, r, p, c, d, k in rows],
        )
        con.execute(f"COPY t TO '{parquet}' (FORMAT parquet)")
    for path in (csv, parquet):
        [rs] = load_sources([Source(path, columns=(("cost", "price"),))]).result_sets
        got = {t.id: {n: list(t.measure(n) or []) for n in t.measures} for t in rs.tasks}
        assert got.keys() == want.keys()
        for task in want:
            assert got[task].keys() == want[task].keys(), (path, task)
            assert all(same(got[task][n], want[task][n]) for n in want[task])


def test_a_bad_measure_cell_is_named_with_its_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("task,passed,cost,confidence\na,true,-0.5,0.9\na,false,abc,1.2\n")
    with pytest.raises(UserError) as error:
        load_sources([Source(path)])
    assert str(error.value).splitlines() == [
        f"{path}: row 1, column 'cost': '-0.5' is not a number of at least 0",
        f"{path}: row 2, column 'cost': 'abc' is not a number of at least 0",
        f"{path}: row 2, column 'confidence': '1.2' is not a number from 0 to 1",
    ]


FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    "path",
    [
        FIXTURES / "tau2" / "results.json",
        FIXTURES / "real" / "tau2" / "ft-gpt-4.1-sft_telecom_sierra_1trial.json",
    ],
)
def test_tau2_runs_carry_the_agent_s_cost_and_the_duration(path: Path) -> None:
    """τ²-bench writes agent_cost (the agent's), user_cost (the simulated user's, not
    the agent's spend: not read) and duration per simulation."""
    doc = json.loads(path.read_text())
    want: dict[str, list[tuple[int, float, float]]] = {}
    for sim in doc["simulations"]:
        want.setdefault(str(sim["task_id"]), []).append(
            (sim["trial"], sim["agent_cost"], sim["duration"])
        )
    [rs] = load_sources([Source(path)]).result_sets
    assert {t.id for t in rs.tasks} == set(want)
    for task in rs.tasks:
        runs = sorted(want[task.id])  # run order is trial order
        nan = math.nan
        costs = task.measure("cost") or [nan] * len(runs)  # no run of the task has one
        assert same(list(costs), [nan if c is None else c for _, c, _ in runs])
        assert list(task.measure("duration") or []) == [time for _, _, time in runs]


def test_inspect_samples_carry_their_time_and_tokens(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "inspect" / "mini.json").read_text())
    for i, sample in enumerate(doc["samples"]):
        sample["model_usage"] = {
            "openai/gpt-4o": {"input_tokens": 10, "output_tokens": i, "total_tokens": 10 + i},
            "openai/gpt-4o-mini": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
        }
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    want = {}
    for i, sample in enumerate(doc["samples"]):
        want[(str(sample["id"]), sample["epoch"])] = (sample["total_time"], 12.0 + i)
    [rs] = load_sources([Source(path, scorer="match")]).result_sets
    for task in rs.tasks:
        epochs = sorted(e for t, e in want if t == task.id)
        assert list(task.measure("duration") or []) == [want[(task.id, e)][0] for e in epochs]
        assert list(task.measure("tokens") or []) == [want[(task.id, e)][1] for e in epochs]
    doc["samples"][0]["model_usage"] = {"openai/gpt-4o": {"total_tokens": "many"}}
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError) as error:
        load_sources([Source(path, scorer="match")])
    assert 'samples[0].model_usage: "many" is not a number of at least 0' in str(error.value)


def test_real_tau2_runs_with_costs_give_hal_s_resource_consistency() -> None:
    """Real τ²-bench results (three models, four trials a task; see the fixture's
    README): cost per run is the mean agent_cost, and resource consistency is HAL's
    C_res over agent_cost and duration, both computed here from the file's fields."""
    import statistics

    from reportgen.report import build_report

    from .test_resources import hal_c_res

    for path in sorted((FIXTURES / "real" / "tau2-costs").glob("*.json")):
        sims = json.loads(path.read_text())["simulations"]
        [rs] = load_sources([Source(path)]).result_sets
        [s] = build_report([rs], "t", "", 3, 0.95).sets
        assert s.resources is not None and s.resources.cost is not None
        costs = [sim["agent_cost"] for sim in sims]
        assert s.resources.cost.per_run.estimate == pytest.approx(statistics.fmean(costs))
        assert s.resources.cost.runs == len(sims)
        by_task: dict[str, dict[str, list[float]]] = {}
        for sim in sims:
            task = by_task.setdefault(str(sim["task_id"]), {"cost": [], "duration": []})
            task["cost"].append(sim["agent_cost"])
            task["duration"].append(sim["duration"])
        assert s.resources.consistency is not None
        want = hal_c_res(list(by_task.values()))
        assert s.resources.consistency.value.estimate == pytest.approx(want)


def test_real_terminal_bench_trials_carry_their_tokens() -> None:
    """Terminal-Bench results.json: total_input_tokens + total_output_tokens per trial.
    Agents that do not count their usage write 0 and 0, read as not recorded."""
    root = FIXTURES / "real" / "terminal-bench"
    want: dict[str, list[tuple[str, float]]] = {}
    for path in root.rglob("results.json"):
        doc = json.loads(path.read_text())
        for trial in doc.get("results", [doc]):
            tokens = (trial.get("total_input_tokens") or 0) + (
                trial.get("total_output_tokens") or 0
            )
            want.setdefault(trial["task_id"], []).append(
                (trial["trial_name"], float(tokens) if tokens else math.nan)
            )
    seen = 0
    for rs in load_sources([Source(root)]).result_sets:
        for task in rs.tasks:
            values = task.measure("tokens")
            if values is None:
                continue
            seen += 1
            assert all(math.isnan(v) or v > 0 for v in values)
            assert {v for v in values if not math.isnan(v)} <= {
                t for _, t in want[task.id] if not math.isnan(t)
            }
    assert seen >= 2


def test_real_harbor_trials_carry_the_agent_s_time_and_tokens() -> None:
    """Harbor's result.json: agent_execution's span is the agent's duration, and
    agent_result's input and output tokens its tokens (cost_usd is null in these)."""
    from datetime import datetime

    root = FIXTURES / "real" / "harbor" / "jobs"
    want = {}
    for path in root.glob("*/*/result.json"):
        doc = json.loads(path.read_text())
        span, usage = doc["agent_execution"], doc["agent_result"]
        seconds = (
            datetime.fromisoformat(span["finished_at"]) - datetime.fromisoformat(span["started_at"])
        ).total_seconds()
        tokens = (usage["n_input_tokens"] or 0) + (usage["n_output_tokens"] or 0)
        want[(doc["task_name"], seconds)] = float(tokens) if tokens else math.nan
    got = {}
    for rs in load_sources([Source(root)]).result_sets:
        for task in rs.tasks:
            durations = list(task.measure("duration") or [])
            tokens = list(task.measure("tokens") or [math.nan] * len(durations))
            for seconds, count in zip(durations, tokens, strict=True):
                got[(task.id, seconds)] = count
    assert got.keys() == want.keys() and len(got) >= 4
    assert all(same([got[key]], [want[key]]) for key in want)


def test_real_inspect_logs_carry_each_epoch_s_time_and_tokens(tmp_path: Path) -> None:
    """Real Inspect logs (see the fixture's README): each epoch's total_time and its
    tokens over model_usage, read from the zip's sample files here; a site built from
    them shows resource consistency over time and tokens."""
    import zipfile

    from reportgen.cli import main

    paths = sorted((FIXTURES / "real" / "inspect-usage").glob("*.eval"))
    for path in paths:
        archive = zipfile.ZipFile(path)
        samples = [
            json.loads(archive.read(name))
            for name in archive.namelist()
            if name.startswith("samples/")
        ]
        samples.sort(key=lambda s: s["epoch"])
        [rs] = load_sources([Source(path)]).result_sets
        [task] = rs.tasks
        assert task.id == samples[0]["id"] and task.runs == len(samples) == 4
        assert list(task.measure("duration") or []) == [s["total_time"] for s in samples]
        tokens = [sum(u["total_tokens"] for u in s["model_usage"].values()) for s in samples]
        assert list(task.measure("tokens") or []) == tokens
    site = tmp_path / "site"
    assert main(["build", *map(str, paths), "-o", str(site), "--no-cache"]) == 0
    report = json.loads((site / "report.json").read_text())
    for rs in report["result_sets"]:
        consistency = rs["resources"]["resource_consistency"]
        assert consistency["resources"] == ["duration", "tokens"]
        assert rs["resources"]["cost"] is None
        page = (site / rs["page"]).read_text()
        assert "Resource consistency" in page
