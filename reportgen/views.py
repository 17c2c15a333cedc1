"""The JSON shapes reportgen writes: `estimate`, `summary`, `compare` and `plan
--format json`, and report.json. A build's line of history.jsonl is made with the
report (report.history_entry), its intervals as here (numbers.interval_json): the
views read the report model, never the other way round.

Full precision throughout; an undefined value (NaN in the core) becomes null.
The statistics modules know nothing of JSON; these functions read their results.
The reliability profile's shapes (consistency, resources, predictability,
robustness) are in profile_views.py.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .counts import BASELINE
from .json_stream import Stream
from .numbers import interval_json, number
from .profile_views import (
    consistency_json,
    population_json,
    predictability_json,
    resources_json,
    robustness_json,
)
from .stats.bootstrap import BootstrapInterval, TwoStageBootstrap
from .stats.clustered import ClusteredInterval, ClusteredReliability
from .stats.compare import Comparison
from .stats.consistency import (
    hal_outcome_consistency,
    unbiased_outcome_consistency,
)
from .stats.coverage import CoverageCheck
from .stats.estimate import SuiteEstimates, TaskEstimates
from .stats.headline import Headline, Supported, uncalibrated
from .stats.planner import Plan
from .stats.task_tests import UNCHANGED, TaskChange, TaskTests
from .stats.variance import VarianceDecomposition
from .terminal import estimate_warnings, set_warnings

if TYPE_CHECKING:  # the views read the report model; it never imports them
    from .history import SiteHistory, TrendPoint
    from .report import Report, SetReport

#: report.json's layout version: 2 added the headline choice and the coverage check,
#: 3 the per-task change tests of comparisons and trend steps ("task_tests"), 4 the
#: outcome consistency of each set and task and the rest of the reliability profile
#: (resources, predictability, each set's condition and robustness).
SCHEMA_VERSION = 4

Json = dict[str, Any]


def task_json(tasks: TaskEstimates, i: int) -> Json:
    """The object for task i, as `reportgen estimate --format json` prints it."""
    return {
        "successes": int(tasks.successes[i]),
        "runs": int(tasks.runs[i]),
        "pass_rate": {
            "estimate": number(tasks.pass_rate[i]),
            "low": number(tasks.pass_rate_low[i]),
            "high": number(tasks.pass_rate_high[i]),
        },
        "pass_hat_k": {
            "plugin": {
                "estimate": number(tasks.plugin[i]),
                "low": number(tasks.plugin_low[i]),
                "high": number(tasks.plugin_high[i]),
            },
            "unbiased": number(tasks.unbiased[i]),
        },
        "pass_at_k": number(tasks.pass_at_k[i]),
    }


def reliability_json(
    suite: SuiteEstimates,
    headline: Headline | None = None,
    check: CoverageCheck | None = None,
    interval_name: str | None = None,
    supported: Supported | None = None,
) -> Json:
    """Both reliability@k estimates; with `headline`, which one leads, with which of the
    check's intervals and why, and that interval's own measured coverage when `check`
    found it short (else null). `interval_name`: the interval the headline shows where it
    is not the one chosen with it (a zero-width one gives way to the bootstrap's);
    `supported`: what leads instead where that interval is unfit to."""
    body: Json = {"tasks": len(suite.tasks)}
    if headline is not None:
        shown = interval_name or headline.interval
        body["headline"] = headline.estimator
        body["headline_interval"] = shown
        body["headline_reason"] = headline.reason
        body["headline_uncalibrated"] = uncalibrated(check, shown)
    body["plugin"] = interval_json(suite.plugin)
    body["unbiased"] = interval_json(suite.unbiased)
    partial = suite.unbiased_partial
    # Null where every task has k runs (then it is `unbiased`) or none has.
    body["unbiased_partial"] = (
        None if partial is None else {**interval_json(partial), "tasks": partial.df + 1}
    )
    # What pages lead with where the headline interval is unfit to (below 80% coverage).
    body["supported"] = (
        None
        if supported is None
        else {"k": supported.k, **interval_json(supported.value), "coverage": supported.coverage}
    )
    return body


def coverage_json(check: CoverageCheck) -> Json:
    """The coverage check: its simulated world and each interval's measured coverage."""
    return {
        "confidence": check.confidence,
        "k": check.k,
        "tasks": check.tasks,
        "population": population_json(check.population),
        "true_value": check.true_value,
        "plugin_bias": check.plugin_bias,
        "seed": check.seed,
        "replicates": check.replicates,
        "bootstrap_replicates": check.bootstrap_replicates,
        "bootstrap_resamples": check.bootstrap_resamples,
        "intervals": [
            {
                "interval": i.name,
                "coverage": number(i.coverage),
                "monte_carlo_error": number(i.monte_carlo_error),
                "replicates": i.replicates,
            }
            for i in check.intervals
        ],
    }


def estimate_json(
    suite: SuiteEstimates,
    headline: Headline | None = None,
    check: CoverageCheck | None = None,
    supported: Supported | None = None,
    stream: bool = False,
) -> Json:
    """The whole `reportgen estimate --format json` document (`stream`: as for summary)."""
    rows = (task_json(suite.tasks, i) for i in range(len(suite.tasks)))
    return {
        "k": suite.k,
        "confidence": suite.confidence,
        "tasks": Stream(rows) if stream else list(rows),
        "reliability_at_k": reliability_json(suite, headline, check, None, supported),
        "coverage": None if check is None else coverage_json(check),
        "warnings": estimate_warnings(suite, headline, check, supported),
    }


# ---------------------------------------------------------------- variance, bootstrap, clusters


def decomposition_json(result: VarianceDecomposition) -> Json:
    """Plain-JSON view of a VarianceDecomposition."""
    return {
        "tasks": result.tasks,
        "flaky_tasks": result.flaky_tasks,
        "always_passed": result.always_passed,
        "never_passed": result.never_passed,
        "flaky_share": result.flaky_share,
        "mean_pass_rate": result.mean_pass_rate,
        "variance": {
            "total": number(result.total),
            "within": number(result.within),
            "between": number(result.between),
            "within_share": number(result.within_share),
        },
        "warnings": list(result.warnings),
    }


def _bootstrap_interval_json(interval: BootstrapInterval) -> Json:
    return {
        "estimate": number(interval.estimate),
        "low": number(interval.low),
        "high": number(interval.high),
        "replicate_mean": number(interval.replicate_mean),
    }


def bootstrap_json(result: TwoStageBootstrap) -> Json:
    """Plain-JSON view of a TwoStageBootstrap."""
    return {
        "k": result.k,
        "confidence": result.confidence,
        "replicates": result.replicates,
        "seed": result.seed,
        "method": result.method,
        "interval": result.interval,
        "plugin": _bootstrap_interval_json(result.plugin),
        "unbiased": _bootstrap_interval_json(result.unbiased),
        "warnings": list(result.warnings),
    }


def _clustered_interval_json(p: ClusteredInterval) -> Json:
    return {
        "estimate": number(p.estimate),
        "low": number(p.low),
        "high": number(p.high),
        "se": number(p.se),
        "t": number(p.t),
        "df": p.df,
    }


def clustered_json(result: ClusteredReliability) -> Json:
    """Plain-JSON view of a ClusteredReliability."""
    return {
        "k": result.k,
        "confidence": result.confidence,
        "clusters": result.plugin.clusters,
        "tasks": result.plugin.tasks,
        "plugin": _clustered_interval_json(result.plugin),
        "unbiased": _clustered_interval_json(result.unbiased),
        "categories": [
            {
                "category": cat.category,
                "tasks": cat.tasks,
                "plugin": interval_json(cat.plugin),
                "unbiased": interval_json(cat.unbiased),
            }
            for cat in result.categories
        ],
        "warnings": list(result.warnings),
    }


# ---------------------------------------------------------------- comparison and planner


def comparison_json(comparison: Comparison) -> Json:
    """Plain-JSON view: full precision, null for undefined values.

    Besides the keys of the issue it carries "k", "confidence" and "warnings",
    so a reader of the JSON alone knows what was compared.
    """
    cmp = comparison
    tasks = []
    for i in cmp.ranked:
        tasks.append(
            {
                "id": cmp.shared[i],
                "a": {"successes": int(cmp.a.successes[i]), "runs": int(cmp.a.runs[i])},
                "b": {"successes": int(cmp.b.successes[i]), "runs": int(cmp.b.runs[i])},
                "difference": {
                    "plugin": number(cmp.diff_plugin[i]),
                    "unbiased": number(cmp.diff_unbiased[i]),
                    "pass_rate": number(cmp.diff_pass_rate[i]),
                },
            }
        )
    return {
        "k": cmp.k,
        "confidence": cmp.confidence,
        "shared_tasks": len(cmp.shared),
        "headline": cmp.headline,
        "only_in_a": list(cmp.only_in_a),
        "only_in_b": list(cmp.only_in_b),
        "difference": {
            "plugin": interval_json(cmp.plugin),
            "unbiased": interval_json(cmp.unbiased),
            "pass_rate": interval_json(cmp.pass_rate),
        },
        "correlation": cmp.correlation,
        "flipped": {
            "a_only_solved": list(cmp.a_only_solved),
            "b_only_solved": list(cmp.b_only_solved),
        },
        "tasks": tasks,
        "warnings": list(cmp.warnings),
    }


def task_change_json(t: TaskChange) -> Json:
    """One task's two one-sided tests and verdict (ids are added by the caller)."""
    return {
        "baseline": {"successes": t.baseline[0], "runs": t.baseline[1]},
        "candidate": {"successes": t.candidate[0], "runs": t.candidate[1]},
        "change": t.change,
        "p_lower": t.p_lower,
        "p_higher": t.p_higher,
        "adjusted_lower": t.adjusted_lower,
        "adjusted_higher": t.adjusted_higher,
        "verdict": t.verdict,
    }


def task_tests_json(
    tests: TaskTests, names: Callable[[str], Json] = lambda key: {"id": key}
) -> Json:
    """The per-task tests: settings, family sizes, tallies and the tasks that changed.

    Unchanged tasks (equal pass rates) are counted, not listed, so the document
    stays small for large suites; `names` turns a task key into its id fields.
    """
    return {
        "test": tests.test,
        "control": tests.control,
        "level": tests.level,
        "screened": tests.screened,
        "min_drop": tests.min_drop,
        "shared_tasks": len(tests.tasks),
        "family": {"lower": tests.family_lower, "higher": tests.family_higher},
        "regressed": len(tests.regressed),
        "improved": len(tests.improved),
        "moved": len(tests.moved),
        "unchanged": len(tests.with_verdict(UNCHANGED)),
        "only_in_candidate": list(tests.only_in_candidate),
        "only_in_baseline": list(tests.only_in_baseline),
        "tasks": [{**names(t.id), **task_change_json(t)} for t in tests.changed],
    }


def plan_json(result: Plan) -> Json:
    """Plain-JSON view of a Plan."""
    mde = result.detectable_difference
    return {
        "target_halfwidth": result.target_halfwidth,
        "confidence": result.confidence,
        "pass_rate": result.pass_rate,
        "task_sd": result.task_sd,
        "runs_per_task": result.runs_per_task,
        "tasks": result.tasks,
        "detectable_difference": {
            "power": mde.power,
            "correlation": mde.correlation,
            "tasks": mde.tasks,
            "sd_difference": mde.sd_difference,
            "value": mde.value,
        },
    }


# ---------------------------------------------------------------- the report and its history


def _summary_task_rows(s: SetReport) -> Iterator[Json]:
    for i, t in enumerate(s.tasks):
        row: Json = {"id": t.id}
        body = task_json(s.estimates.tasks, i)
        row["successes"] = body.pop("successes")
        row["runs"] = body.pop("runs")
        row["excluded_runs"] = t.excluded
        row.update(body)
        yield row


def summary_set_json(s: SetReport, stream: bool = False) -> Json:
    """One result set as `reportgen summary --format json` prints it; with `stream`,
    its tasks are a Stream, made as they are written (json_stream.write_json)."""
    rs = s.result_set
    rows = _summary_task_rows(s)
    return {
        "suite": rs.suite,
        "model": rs.model,
        "condition": rs.condition or BASELINE,
        "name": rs.name,
        "format": rs.format,
        "excluded_runs": rs.excluded_runs,
        "tasks": Stream(rows) if stream else list(rows),
        "reliability_at_k": reliability_json(
            s.estimates, s.headline, s.coverage, s.headline_interval_name, s.supported
        ),
        # As the terminal and the build print them, with the coverage check's shortfall.
        "warnings": set_warnings(s),
    }


def summary_json(report: Report, stream: bool = False) -> Json:
    """The whole `reportgen summary --format json` document (`stream`: see above)."""
    sets = []
    for s in report.sets:
        body = summary_set_json(s, stream)
        # Where `estimate --format json` has it: the check that chose the headline.
        warnings = body.pop("warnings")
        body["coverage"] = None if s.coverage is None else coverage_json(s.coverage)
        body["warnings"] = warnings
        sets.append(body)
    return {
        "k": report.k,
        "confidence": report.confidence,
        "result_sets": sets,
        "skipped_files": skipped_json(report),
    }


def skipped_json(report: Report) -> list[Json]:
    return [{"file": path, "reason": why} for path, why in report.skipped]


def report_json(report: Report, with_pages: Mapping[str, Collection[int]] | None = None) -> Json:
    """report.json at the site root: the summary plus pages and curves. A task has a
    page unless `with_pages` (by set id) leaves it out; then its page is null."""
    sets = []
    for s in report.sets:
        body = summary_set_json(s)
        made = None if with_pages is None else with_pages[s.id]
        tasks = s.estimates.tasks
        unbiased = unbiased_outcome_consistency(tasks.successes, tasks.runs).tolist()
        hal = hal_outcome_consistency(tasks.successes, tasks.runs).tolist()
        for i, task in enumerate(body["tasks"]):
            task["page"] = s.task_page(i) if made is None or i in made else None
            task["outcome_consistency"] = (
                None if tasks.runs[i] < 2 else {"unbiased": unbiased[i], "hal": hal[i]}
            )
        sets.append(
            {
                "id": s.id,
                "page": s.page,
                **body,
                "variance": decomposition_json(s.variance),
                "bootstrap": {
                    **bootstrap_json(s.bootstrap),
                    "shown": dict(zip(("low", "high"), s.bootstrap_interval, strict=True)),
                },
                "clustered": None if s.clustered is None else clustered_json(s.clustered),
                "coverage": None if s.coverage is None else coverage_json(s.coverage),
                "outcome_consistency": consistency_json(s.consistency, s.consistency_coverage),
                "resources": resources_json(s.resources),
                "predictability": predictability_json(s.predictability),
                "robustness": robustness_json(s.robustness),
                "planner": [plan_json(p) for p in s.plans],
                "curve": [
                    {
                        "k": p.k,
                        "reliability_plugin": interval_json(p.plugin),
                        "reliability_unbiased": interval_json(p.unbiased),
                        "pass_at_k": interval_json(p.pass_at_k),
                    }
                    for p in s.curve
                ],
            }
        )
    comparisons = [
        {
            "id": c.id,
            "page": c.page,
            "a": c.a.id,
            "b": c.b.id,
            **comparison_json(c.comparison),
            "task_tests": task_tests_json(c.tests),
        }
        for c in report.comparisons
    ]
    return {
        "schema_version": SCHEMA_VERSION,
        "title": report.title,
        "description": report.description,
        "confidence": report.confidence,
        "k": report.k,
        "result_sets": sets,
        "comparisons": comparisons,
        "history": None if report.history is None else history_json(report.history),
        "skipped_files": skipped_json(report),
    }


def trend_json(points: list[TrendPoint]) -> list[Json]:
    return [
        {
            "label": p.label,
            "tasks": p.tasks,
            "headline": p.estimator,
            "reliability_plugin": interval_json(p.plugin),
            "reliability_unbiased": interval_json(p.unbiased),
            "pass_rate": interval_json(p.pass_rate),
            "change": None
            if p.step is None
            else {
                "shared_tasks": len(p.step.shared),
                "plugin": interval_json(p.step.plugin),
                "unbiased": interval_json(p.step.unbiased),
                "significant": p.significant,
                "movers": [{"id": task, "change": d} for task, d in p.movers],
                "task_tests": None if p.tests is None else task_tests_json(p.tests),
            },
        }
        for p in points
    ]


def history_json(history: SiteHistory) -> Json:
    """report.json's "history" key."""
    # The history module (and the readers it uses) loads only for the views of a
    # history: `estimate --format json` goes without it.
    from .history import HISTORY_FILE

    return {
        "label": history.label,
        "builds": [e["label"] for e in history.entries],
        "file": HISTORY_FILE,
        "trends": {set_id: trend_json(points) for set_id, points in history.trends.items()},
    }
