"""The thin glue behind `reportgen compare` and `reportgen plan`.

It finds result sets (in result files or in a built report.json), hands their
counts to the pure modules compare.py and planner.py, and formats the answer
for a terminal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .check import headline_estimator, read_report
from .errors import Problems, UserError
from .numbers import fixed, percent, signed, signed_bracket
from .readers import Source, flags_without_effect, load_sources
from .slugs import unique_slugs
from .stats.compare import Comparison, compare
from .stats.plain import DEFAULT_CONFIDENCE, counted
from .stats.planner import Plan
from .terminal import table


@dataclass(frozen=True)
class NamedCounts:
    name: str
    counts: dict[str, tuple[int, int]]
    #: The headline estimate's sd across tasks, when the source is a report (for the planner).
    task_sd: float | None = None
    #: The k and confidence level the report was built with; None for a results file.
    k: int | None = None
    confidence: float | None = None
    #: For a results file: how it was read, and (path, format) of each file read in it.
    source: Source | None = None
    formats: tuple[tuple[str, str], ...] = ()
    #: (file, why) of each file left out with --skip-unreadable.
    skipped: tuple[tuple[str, str], ...] = ()


def is_report(path: Path) -> bool:
    """A built site (a folder holding report.json) or a report.json itself."""
    if path.is_dir():
        return (path / "report.json").is_file()
    return path.name.endswith("report.json") or (
        path.suffix == ".json" and _looks_like_report(path)
    )


def _looks_like_report(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return b'"schema_version"' in handle.read(4096)
    except OSError:
        return False


def split_spec(spec: str) -> tuple[Path, str]:
    """`PATH#ID` -> (PATH, ID); a path that exists as given, `#` and all ("res#1.jsonl"),
    is taken whole."""
    if "#" not in spec or Path(spec).exists():
        return Path(spec), ""
    path_text, _, wanted = spec.rpartition("#")
    return Path(path_text), wanted


def find_result_set(
    spec: str, flag: str, reading: Mapping[str, Any] | None = None, flags_checked: bool = True
) -> NamedCounts:
    """`PATH` or `PATH#ID`: a result file or a site/report.json, and which result set in it.

    `reading`: how to read result files (Source's fields, from the reading flags);
    `flags_checked` as for load_sources.
    """
    path, wanted = split_spec(spec)
    if is_report(path):
        doc = read_report(path, flag, tasks=True)
        candidates = {
            rs["id"]: NamedCounts(
                rs["name"],
                {t["id"]: (t["successes"], t["runs"]) for t in rs["tasks"]},
                rs["reliability_at_k"][headline_estimator(rs)]["sd"],
                doc["k"],
                doc["confidence"],
            )
            for rs in doc["result_sets"]
        }
    else:
        source = Source(path, **(reading or {}))
        loaded = load_sources([source], flags_checked)
        ids = unique_slugs([rs.name for rs in loaded.result_sets], "results", strict=False)
        formats = tuple(loaded.formats)
        candidates = {
            set_id: NamedCounts(
                rs.name,
                rs.counts_by_task(),
                source=source,
                formats=formats,
                skipped=tuple(loaded.skipped),
            )
            for set_id, rs in zip(ids, loaded.result_sets, strict=True)
        }
    if wanted:
        if wanted not in candidates:
            raise UserError(
                f"{flag}: {path} has no result set {wanted!r}; it has {', '.join(candidates)}"
            )
        return candidates[wanted]
    if not candidates:
        raise UserError(f"{flag}: {path} holds no result sets")
    if len(candidates) > 1:
        raise UserError(
            f"{flag}: {path} holds {len(candidates)} result sets; pick one as "
            f"{path}#ID with ID one of {', '.join(candidates)}"
        )
    return next(iter(candidates.values()))


def comparison_text(a: NamedCounts, b: NamedCounts, cmp: Comparison) -> str:
    k, level = cmp.k, percent(cmp.confidence)
    lines = [
        f"A = {a.name}, B = {b.name}: {counted(len(cmp.shared), 'shared task', 'shared tasks')}, "
        f"k = {k}, "
        f"paired {level} intervals of the mean difference A - B",
        "",
    ]
    rows = []
    differences = [(f"pass^{k} plug-in", cmp.plugin), (f"pass^{k} unbiased", cmp.unbiased)]
    if cmp.headline == "unbiased":
        differences.reverse()
    differences[0] = (f"{differences[0][0]} (headline)", differences[0][1])
    for label, d in [*differences, ("pass rate", cmp.pass_rate)]:
        interval = signed_bracket(d.low, d.high)
        verdict = (
            "no interval"
            if d.low is None or d.high is None
            else "A higher"
            if d.low > 0
            else "B higher"
            if d.high < 0
            else "includes 0"
        )
        rows.append([label, signed(d.estimate), interval, verdict])
    lines.append(
        table(
            ["difference", "A - B", f"{level} interval", "reading"],
            rows,
            [False, True, True, False],
        )
    )
    lines.append(f"correlation of per-task plug-in pass^{k}: {fixed(cmp.correlation)}")
    for label, ids in (
        ("solved every run only by A", cmp.a_only_solved),
        ("solved every run only by B", cmp.b_only_solved),
        ("only in A", cmp.only_in_a),
        ("only in B", cmp.only_in_b),
    ):
        lines.append(f"{label} ({len(ids)}): {', '.join(ids) or 'none'}")
    # Only tasks A does worse on: the ranking runs on into improvements when few fell.
    lead = cmp.diff_lead
    lead_name = "unbiased" if cmp.headline == "unbiased" else "plug-in"
    worst = [
        [cmp.shared[i], signed(lead[i]), signed(cmp.diff_pass_rate[i])]
        for i in cmp.ranked[:10]
        if lead[i] < 0
    ]
    lines.append("")
    if worst:
        lines.append("biggest regressions (A - B):")
        lines.append(
            table(["task", f"pass^{k} {lead_name}", "pass rate"], worst, [False, True, True])
        )
    else:
        lines.append(
            f"biggest regressions (A - B): none, no shared task has a lower {lead_name} "
            f"pass^{k} in A"
        )
    lines.extend(f"warning: {w}" for w in cmp.warnings)
    return "\n".join(lines) + "\n"


def _setting(flag: str, given: Any, a: Any, b: Any, default: Any) -> Any:
    """The value of `flag` for a comparison: as given, else the one its reports were
    built with (a results file has none), else the default."""
    if given is not None:
        return given
    if a is not None and b is not None and a != b:
        raise UserError(
            f"A was built with {flag} {a} and B with {flag} {b}: give {flag} to compare "
            "them at one value"
        )
    return a if a is not None else b if b is not None else default


def run_compare(
    spec_a: str,
    spec_b: str,
    k: int | None,
    confidence: float | None,
    reading: Mapping[str, Any] | None = None,
    given: Sequence[str] = (),
) -> tuple[NamedCounts, NamedCounts, Comparison]:
    """Compare A with B; `k` and `confidence` None: those of the reports compared.

    `reading` says how result files are read; `given`, the flags it came from, which
    are refused when A and B are both reports (there is nothing for them to read).
    """
    if given and all(is_report(split_spec(spec)[0]) for spec in (spec_a, spec_b)):
        raise UserError(
            f"{given[0]}: A and B are both reports, and it applies to result files only; "
            "leave it out"
        )
    # A --scorer or --threshold needs a use in A or in B, not in each: checked for both.
    a = find_result_set(spec_a, "A", reading, flags_checked=False)
    b = find_result_set(spec_b, "B", reading, flags_checked=False)
    sources = [side.source for side in (a, b) if side.source is not None]
    problems = Problems()
    for problem in flags_without_effect(sources, [*a.formats, *b.formats]):
        problems.add(problem)
    problems.raise_if_any()
    if not set(a.counts) & set(b.counts):
        raise UserError(f"{a.name!r} and {b.name!r} share no task ids: nothing to compare")
    k = _setting("-k", k, a.k, b.k, 3)
    confidence = _setting(
        "--confidence", confidence, a.confidence, b.confidence, DEFAULT_CONFIDENCE
    )
    return a, b, compare(a.counts, b.counts, k, confidence)


def plan_text(result: Plan) -> str:
    level = percent(result.confidence)
    dd = result.detectable_difference
    power = f"{percent(dd.power)} power (correlation {fixed(dd.correlation)})"
    if dd.value <= 1.0:
        # Below 0.0005 three decimals would say 0.000: two significant digits instead.
        value = fixed(dd.value) if dd.value >= 0.0005 else f"{dd.value:.2g}"
        detects = f"detects a difference of about {value} at {power}"
    else:
        # Past 1 the normal approximation has left the scale of a difference of rates.
        detects = f"detects no difference, not even the largest possible (1), at {power}"
    return (
        # The target as given: a half-width of 0.0001 is not "±0.000".
        f"to pin an estimate to within ±{result.target_halfwidth:g} at {level}:\n"
        f"  runs per task: {result.runs_per_task:,} (Wilson interval at a pass rate of "
        f"{fixed(result.pass_rate)})\n"
        f"  tasks:         {result.tasks:,} (Student-t, across-task sd {fixed(result.task_sd)})\n"
        f"with {dd.tasks:,} tasks, a paired comparison {detects}\n"
    )
