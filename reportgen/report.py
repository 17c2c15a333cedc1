"""The report model: loaded result sets plus every number the pages show.

Built once, before anything is rendered (as MkDocs gathers every page's data
first), so all pages, report.json and the CSV agree by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .counts import ResultSet, TaskCounts, naming_guesses, naming_note
from .history import SCHEMA_VERSION as HISTORY_SCHEMA_VERSION
from .history import Json, SiteHistory, site_history, task_test_level
from .numbers import interval_json
from .profile import Robustness, consistency_coverage, predictability_of, resources, robustness
from .results import Results
from .slugs import unique_slugs
from .stats.bootstrap import (
    SHOWN_INTERVAL,
    TwoStageBootstrap,
    shown_bootstrap_interval,
    two_stage_bootstrap,
)
from .stats.clustered import ClusteredReliability, clustered_reliability
from .stats.compare import Comparison, compare
from .stats.consistency import ConsistencyCoverage, OutcomeConsistency, outcome_consistency
from .stats.coverage import CoverageCheck, check_coverage
from .stats.estimate import (
    CurvePoint,
    IntArray,
    SuiteEstimates,
    SuiteInterval,
    curve_over_k,
    estimate_suite,
    mean_with_t_interval,
)
from .stats.headline import (
    INTERVAL_KINDS,
    UNFIT_COVERAGE,
    Headline,
    Supported,
    choose_headline,
    supported,
    uncalibrated,
)
from .stats.plain import decimals
from .stats.planner import DEFAULT_TASK_SD, Plan, plan
from .stats.population import Population, fit_population
from .stats.predictability import Predictability
from .stats.resources import ResourceSummary
from .stats.task_tests import TaskTests, natural_key, shared_task_tests
from .stats.variance import VarianceDecomposition, decompose_variance

#: The headline note on bias appears when the plug-in exceeds the unbiased
#: value by more than this share of the headline interval's half-width.
BIAS_NOTE_SHARE = 0.25


@dataclass
class SetReport:
    """One result set with its estimates, page slugs and curve over k."""

    id: str
    result_set: ResultSet
    tasks: list[TaskCounts]  # evaluated tasks, in the order of `estimates`
    estimates: SuiteEstimates
    task_slugs: list[str]
    curve: list[CurvePoint]
    warnings: list[str]
    variance: VarianceDecomposition
    bootstrap: TwoStageBootstrap
    #: Cluster-robust interval by task category; None when no task has a category.
    clustered: ClusteredReliability | None
    #: How many runs and tasks a tighter interval would take, for a few targets.
    plans: list[Plan]
    #: How often each suite interval covered the truth in suites of this shape.
    coverage: CoverageCheck | None
    #: Which reliability@k leads the pages (chosen from `coverage`).
    headline: Headline
    #: Outcome consistency (HAL's C_out and its unbiased form), over tasks with 2+ runs.
    consistency: OutcomeConsistency
    #: How often its intervals held the truth in simulated suites of this shape; None
    #: where there is nothing to simulate (fewer than two such tasks, or every run alike).
    consistency_coverage: ConsistencyCoverage | None
    #: Cost per run and resource consistency, where runs recorded cost, time or tokens.
    resources: ResourceSummary | None
    #: Calibration, discrimination and Brier score, where runs recorded a confidence.
    predictability: Predictability | None
    #: What leads instead where the headline's interval covered less than UNFIT_COVERAGE.
    supported: Supported | None = None
    #: For runs made under a perturbation, against the baseline runs of the same suite
    #: and model (None at baseline, or where no baseline runs were read).
    robustness: Robustness | None = None
    #: At baseline: the ids of the sets of the same suite and model run under a
    #: perturbation, each compared with this one.
    perturbed: list[str] = field(default_factory=list)

    @property
    def related(self) -> list[str]:
        """The ids of the sets whose runs this set's page also shows (in robustness)."""
        return [self.robustness.baseline] if self.robustness else self.perturbed

    @property
    def page(self) -> str:
        return f"sets/{self.id}/index.html"

    @property
    def lead(self) -> SuiteInterval:
        """The headline reliability@k with its t interval."""
        return self.on(self.headline.estimator)

    @property
    def run_totals(self) -> tuple[int, int, int]:
        """(passed, evaluated, not evaluated) runs over every task of the set: the pooled
        rate a harness's own accuracy is usually made of."""
        tasks = self.result_set.tasks
        return (
            sum(t.successes for t in tasks),
            sum(t.runs for t in tasks),
            sum(t.excluded for t in tasks),
        )

    @property
    def naming(self) -> str | None:
        """Where the set's model and suite names were taken from, for its page."""
        return naming_note(self.result_set)

    def on(self, estimator: str) -> SuiteInterval:
        """reliability@k on one estimator ("plugin" or "unbiased"), with its t interval.
        Where some tasks have fewer than k runs, the unbiased one is over the others."""
        return self.estimates.on(estimator)

    def label(self, estimator: str) -> str:
        """How pages name an estimator's value: "plug-in", "unbiased", or, where the
        unbiased value leaves out tasks with fewer than k runs, how many it covers."""
        if estimator != "unbiased":
            return "plug-in"
        partial = self.estimates.unbiased_partial
        if partial is None:
            return "unbiased"
        return f"unbiased over {partial.df + 1} of {len(self.tasks)} tasks"

    @property
    def lead_label(self) -> str:
        return self.label(self.headline.estimator)

    @property
    def other_label(self) -> str:
        return self.label("plugin" if self.headline.estimator == "unbiased" else "unbiased")

    @property
    def other(self) -> SuiteInterval:
        """The reliability@k shown beside the headline."""
        return self.on("plugin" if self.headline.estimator == "unbiased" else "unbiased")

    @property
    def headline_interval_name(self) -> str:
        """Which of the coverage check's intervals the headline shows: the one chosen
        with it (Headline.interval), unless that has zero width (every task has the same
        pass^k: it measures only differences between tasks, and would read as a
        certainty the runs cannot give) while the two-stage bootstrap's, which also
        redraws each task's runs, does not."""
        low, high = self._bounds(self.headline.interval)
        if low is not None and high is not None and high - low <= 1e-12:
            low, high = self.bootstrap_interval
            if low is not None and high is not None and high - low > 1e-12:
                return "bootstrap"
        return self.headline.interval

    def _bounds(self, name: str) -> tuple[float | None, float | None]:
        """The bounds of one of the coverage check's intervals, as this page shows it."""
        if name == "bootstrap":
            return self.bootstrap_interval
        if name.startswith("clustered_"):
            if self.clustered is None:
                return None, None
            chosen = self.clustered.unbiased if name.endswith("unbiased") else self.clustered.plugin
            return chosen.low, chosen.high
        lead = self.on("unbiased" if name == "unbiased_t" else "plugin")
        return lead.low, lead.high

    @property
    def headline_interval_kind(self) -> str:
        """What kind of interval the headline shows: "Student-t", "two-stage bootstrap"
        or "cluster-robust"."""
        return INTERVAL_KINDS[self.headline_interval_name]

    @property
    def headline_interval(self) -> tuple[float | None, float | None, str | None]:
        """The interval shown with the headline (headline_interval_name), and how it was
        made when it is not the lead's Student-t interval; none when both that and the
        bootstrap's have zero width."""
        name, k = self.headline_interval_name, self.estimates.k
        low, high = self._bounds(name)
        if name != self.headline.interval:
            return (
                low,
                high,
                "two-stage bootstrap: the Student-t interval across tasks has zero width, "
                f"since every task has the same pass^{k}",
            )
        if low is not None and high is not None and high - low <= 1e-12:
            return (
                None,
                None,
                f"no interval: every task has the same pass^{k} and redrawing runs changes "
                "nothing, which says the runs agree, not that the value is exact",
            )
        how = {
            "bootstrap": "two-stage bootstrap, which redraws tasks and each task's runs",
            "clustered_plugin": "cluster-robust across task categories",
            "clustered_unbiased": "cluster-robust across task categories",
        }
        return low, high, how.get(name)

    @property
    def bootstrap_interval(self) -> tuple[float | None, float | None]:
        """The two-stage bootstrap interval shown beside the t intervals."""
        return shown_bootstrap_interval(self.bootstrap)

    @property
    def plugin_bias(self) -> float | None:
        """Mean plug-in minus mean unbiased pass^k: the plug-in's bias, estimated."""
        p, u = self.estimates.plugin.estimate, self.estimates.unbiased.estimate
        return None if p is None or u is None else p - u

    @property
    def plugin_bias_share(self) -> float | None:
        """The plug-in's bias as a share of the headline t interval's half-width (unclamped)."""
        bias, lead = self.plugin_bias, self.lead
        if bias is None or lead.sd is None or lead.t is None:
            return None
        half = lead.t * lead.sd / float(np.sqrt(lead.df + 1))
        return bias / half if half > 0 else None

    @property
    def bias_is_large(self) -> bool:
        """Whether the page should say in words that the plug-in overstates."""
        share = self.plugin_bias_share
        return share is not None and share > BIAS_NOTE_SHARE

    @property
    def uncalibrated(self) -> float | None:
        """The headline interval's own measured coverage when it is short of its claimed
        level beyond Monte-Carlo noise (stats.headline.uncalibrated), else None."""
        return uncalibrated(self.coverage, self.headline_interval_name)

    @property
    def coverage_shortfall(self) -> float | None:
        """The best measured coverage when no interval reaches its level, else None."""
        if self.coverage is None:
            return None
        measured = [i for i in self.coverage.intervals if i.coverage is not None]
        if not measured or any(i.reaches(self.coverage.confidence) for i in measured):
            return None
        return max(float(i.coverage) for i in measured if i.coverage is not None)

    @property
    def bootstrap_note(self) -> str | None:
        """A caution when the shown bootstrap interval misses the headline estimate."""
        low, high = self.bootstrap_interval
        estimate = self.lead.estimate
        if low is None or high is None or estimate is None or low <= estimate <= high:
            return None
        return (
            "The bootstrap interval does not contain the headline estimate "
            f"{decimals(estimate, 3)}: with so few runs per task, redrawing runs shifts pass^k "
            "noticeably."
        )

    def task_page(self, i: int) -> str:
        return f"sets/{self.id}/tasks/{self.task_slugs[i]}.html"

    def order_least_reliable(self) -> list[int]:
        """Task indices, least reliable (lowest plug-in pass^k) first, ties by id."""
        plugin = self.estimates.tasks.plugin.tolist()  # floats index faster than numpy
        return sorted(
            range(len(self.tasks)), key=lambda i: (plugin[i], natural_key(self.tasks[i].id))
        )


@dataclass
class ComparisonReport:
    """Two result sets of the same suite compared on their shared tasks (A - B)."""

    id: str
    a: SetReport
    b: SetReport
    comparison: Comparison
    #: Each shared task tested: is A's pass rate lower (or higher) than B's beyond noise?
    tests: TaskTests

    @property
    def page(self) -> str:
        return f"compare/{self.id}.html"


@dataclass
class Report:
    title: str
    description: str
    k: int
    confidence: float
    sets: list[SetReport]
    comparisons: list[ComparisonReport]
    #: Earlier builds and this one, when the build was given a history.
    history: SiteHistory | None = None
    #: (file, why) for each input file left out with --skip-unreadable.
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def shared_estimator(self) -> str:
        """The estimator the overview compares every set on, so that it sets like beside
        like: the one most sets lead with, the unbiased one on a tie (as the headline
        rule prefers it). Each set's own headline is marked where it differs."""
        leads = [s.headline.estimator for s in self.sets]
        return "plugin" if leads.count("plugin") > leads.count("unbiased") else "unbiased"

    @property
    def leads_differ(self) -> bool:
        """Whether the sets lead with different estimators (then the overview says so)."""
        return len({s.headline.estimator for s in self.sets}) > 1


# ---------------------------------------------------------------- building the model


def build_report(
    result_sets: list[ResultSet],
    title: str,
    description: str,
    k: int,
    confidence: float,
    history: tuple[list[Json], str] | None = None,
    results: Results | None = None,
    coverage_check: bool = True,
    skipped: list[tuple[str, str]] | None = None,
) -> Report:
    """Every number the pages show, for these result sets.

    `history` is (the earlier builds' entries, this build's label): the
    report then carries the history with this build added and every set's trend.
    `results`, when given, holds the slow computations' results of an earlier
    build: those made from the same arguments are read back, not made again.
    Without `coverage_check` no set's intervals are simulated (`summary
    --no-coverage`): the headline is then chosen as for a single task.
    """
    results = results or Results(keep=False)
    set_ids = unique_slugs([rs.name for rs in result_sets], "results", strict=False)
    sets = [
        _set_report(set_id, rs, k, confidence, results, coverage_check)
        for set_id, rs in zip(set_ids, result_sets, strict=True)
    ]
    for s in sets:
        own = s.uncalibrated
        if own is not None and own < UNFIT_COVERAGE:
            s.supported = _supported(s, confidence, results)
    baselines = {s.result_set.identity[:2]: s for s in sets if not s.result_set.condition}
    for s in sets:
        base = baselines.get(s.result_set.identity[:2])
        if s.result_set.condition and base is not None:
            s.robustness = robustness(
                s.tasks, base.tasks, base.id, k, confidence, results, coverage_check
            )
            base.perturbed.append(s.id)
    report = Report(
        title=title,
        description=description,
        k=k,
        confidence=confidence,
        sets=sets,
        comparisons=compare_pairs(sets, k, confidence, results),
        skipped=list(skipped or ()),
    )
    if history is not None:
        previous, label = history
        ids = [(s.id, s.result_set.identity, s.headline.estimator) for s in sets]
        entry = history_entry(report, label)
        report.history = site_history(previous, entry, ids, k, confidence)
    return report


def _set_report(
    set_id: str,
    rs: ResultSet,
    k: int,
    confidence: float,
    results: Results,
    coverage_check: bool,
) -> SetReport:
    """One result set's numbers: its estimates, the coverage check that chooses its
    headline, and what its page shows beside them."""
    tasks = rs.evaluated_tasks
    warnings = [*naming_guesses(rs)] + [
        f"task {t.id!r} has no evaluated runs ({t.excluded} excluded); it is left out"
        for t in rs.tasks
        if t.runs == 0
    ]
    successes = np.array([t.successes for t in tasks], dtype=np.int64)
    runs = np.array([t.runs for t in tasks], dtype=np.int64)
    estimates = estimate_suite(
        successes, runs, k, confidence, labels=[f"task {t.id!r}" for t in tasks]
    )
    categories = [t.category for t in tasks]
    clustered, labels = None, None
    if any(categories):
        # Tasks without a category form a cluster of their own.
        labels = [c if c else "(no category)" for c in categories]
        clustered = clustered_reliability(successes, runs, k, labels, confidence)
    coverage, every_run = None, None
    if len(tasks) >= 2 and coverage_check:
        coverage, every_run = _coverage_of_shape(runs, successes, k, confidence, labels, results)
    headline = choose_headline(coverage, estimates.unbiased.estimate is not None, every_run)
    lead = estimates.on(headline.estimator)
    task_sd = lead.sd if lead.sd else DEFAULT_TASK_SD
    return SetReport(
        id=set_id,
        result_set=rs,
        tasks=tasks,
        estimates=estimates,
        task_slugs=unique_slugs([t.id for t in tasks], "task"),
        curve=results.get("curve", list[CurvePoint], curve_over_k, successes, runs, confidence),
        warnings=warnings + list(estimates.warnings),
        variance=decompose_variance(successes, runs),
        bootstrap=results.get(
            "bootstrap",
            TwoStageBootstrap,
            two_stage_bootstrap,
            successes,
            runs,
            k,
            confidence,
            interval=SHOWN_INTERVAL,
        ),
        clustered=clustered,
        plans=[
            plan(h, confidence, task_sd=task_sd, tasks=max(len(tasks), 2)) for h in PLAN_TARGETS
        ],
        coverage=coverage,
        headline=headline,
        consistency=results.get(
            "outcome consistency",
            OutcomeConsistency,
            outcome_consistency,
            successes,
            runs,
            confidence,
        ),
        consistency_coverage=(
            consistency_coverage(successes, runs, confidence, results) if coverage_check else None
        ),
        resources=resources(tasks, estimates, headline, k, confidence, results),
        predictability=predictability_of(tasks, confidence, results),
    )


def _coverage_of_shape(
    runs: IntArray,
    successes: IntArray,
    k: int,
    confidence: float,
    categories: list[str] | None,
    results: Results,
) -> tuple[CoverageCheck | None, str | None]:
    """(the coverage check of suites shaped like this one, None) or, where every run
    of every task passed or every one failed, (None, "passed" or "failed"): then
    there is nothing to simulate (stats.population.Population.every_run)."""
    population = fit_population(successes, runs)
    if population.every_run is not None:
        return None, population.every_run
    check = results.get(
        "coverage",
        CoverageCheck,
        check_coverage,
        runs,
        k,
        population,
        confidence,
        categories=categories,
    )
    return check, None


def history_entry(report: Report, label: str) -> Json:
    """This build's line of the history (history.py reads it back and checks it)."""
    return {
        "schema_version": HISTORY_SCHEMA_VERSION,
        "label": label,
        "k": report.k,
        "confidence": report.confidence,
        "result_sets": [
            {
                "suite": s.result_set.suite,
                "model": s.result_set.model,
                **({"condition": s.result_set.condition} if s.result_set.condition else {}),
                "name": s.result_set.name,
                "tasks": {t.id: [t.successes, t.runs] for t in s.tasks},
                "reliability_at_k": {
                    "headline": s.headline.estimator,
                    "plugin": interval_json(s.estimates.plugin),
                    "unbiased": interval_json(s.estimates.unbiased),
                },
                "pass_rate": interval_json(_pass_rate_interval(s)),
            }
            for s in report.sets
        ],
    }


def _pass_rate_interval(s: SetReport) -> SuiteInterval:
    return mean_with_t_interval(s.estimates.tasks.pass_rate, s.estimates.confidence)


def _supported(s: SetReport, confidence: float, results: Results) -> Supported:
    """What the set's pages lead with instead of its headline (stats.headline.supported)."""

    def check(runs: IntArray, k: int, population: Population) -> CoverageCheck:
        return results.get(
            "coverage", CoverageCheck, check_coverage, runs, k, population, confidence
        )

    tasks = s.estimates.tasks
    return supported(tasks.successes, tasks.runs, s.estimates.k, confidence, check)


#: Target half-widths the planner section of each result set's page answers for.
PLAN_TARGETS = (0.10, 0.05, 0.02)


def compare_pairs(
    sets: list[SetReport], k: int, confidence: float, results: Results | None = None
) -> list[ComparisonReport]:
    """Every pair of result sets on the same suite under the same condition (different
    models), in page order. A model against itself under a perturbation is robustness,
    on the perturbed set's page; one model at baseline against another perturbed
    compares nothing worth a page."""
    results = results or Results(keep=False)
    pairs = [
        (a, b)
        for i, a in enumerate(sets)
        for b in sets[i + 1 :]
        if (a.result_set.suite, a.result_set.condition)
        == (b.result_set.suite, b.result_set.condition)
    ]
    ids = unique_slugs([f"{a.id}-vs-{b.id}" for a, b in pairs], "comparison", strict=False)
    reports = []
    for pair_id, (a, b) in zip(ids, pairs, strict=True):
        counts_a = a.result_set.counts_by_task()
        counts_b = b.result_set.counts_by_task()
        if not set(counts_a) & set(counts_b):
            continue  # nothing shared: there is no paired comparison to make
        comparison = compare(counts_a, counts_b, k, confidence)
        # B is the baseline and A the candidate, as in the differences A - B.
        tests = results.get(
            "task tests",
            TaskTests,
            shared_task_tests,
            counts_b,
            counts_a,
            level=task_test_level(confidence),
        )
        reports.append(ComparisonReport(pair_id, a, b, comparison, tests))
    return reports


# ---------------------------------------------------------------- JSON views
