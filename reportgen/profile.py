"""A set's reliability profile beyond reliability@k, from its runs' counts and measures.

What report.py asks of the statistics for each set besides its estimates: the check
of the outcome-consistency intervals, costs and resource consistency (where runs
recorded cost, time or tokens), predictability (where they stated a confidence) and,
for runs made under a perturbation, robustness against the baseline runs of the same
suite and model; each computed once and kept in the results cache.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .counts import EXCLUDED, MEASURES, PASS, TaskCounts
from .results import Results
from .stats.consistency import ConsistencyCoverage, check_consistency_coverage
from .stats.estimate import IntArray, SuiteEstimates
from .stats.headline import Headline
from .stats.population import fit_population
from .stats.predictability import Predictability, predictability
from .stats.resources import ResourceSummary, summarise_resources
from .stats.robustness import (
    RatioCoverage,
    RatioInterval,
    check_ratio_coverage,
    hal_robustness,
    paired_ratio,
    smoothed_rates,
)


def predictability_of(
    tasks: list[TaskCounts], confidence: float, results: Results
) -> Predictability | None:
    """Over the evaluated runs that recorded the agent's confidence; None if none did."""
    if not any("confidence" in t.measures for t in tasks):
        return None
    owner, passed, stated = [], [], []
    for i, t in enumerate(tasks):
        codes = np.frombuffer(t.codes or b"", dtype=np.uint8)
        evaluated = codes != EXCLUDED
        values = (
            np.frombuffer(t.measures["confidence"], dtype=np.float64)
            if "confidence" in t.measures
            else np.full(codes.size, np.nan)
        )
        owner.append(np.full(int(evaluated.sum()), i, dtype=np.int64))
        passed.append(codes[evaluated] == PASS)
        stated.append(values[evaluated])
    return results.get(
        "predictability",
        Predictability | None,
        predictability,
        np.concatenate(owner),
        np.concatenate(passed),
        np.concatenate(stated),
        len(tasks),
        confidence,
    )


def resources(
    tasks: list[TaskCounts],
    estimates: SuiteEstimates,
    headline: Headline,
    k: int,
    confidence: float,
    results: Results,
) -> ResourceSummary | None:
    """Costs and resource consistency over every recorded run of the evaluated tasks;
    None where no run recorded a measure. A reliable success is priced by the pass^k
    the page leads with (plug-in where the unbiased one leaves tasks out)."""
    names = [name for name in MEASURES if any(name in t.measures for t in tasks)]
    if not names:
        return None
    lengths = [len(t.codes or b"") for t in tasks]
    owner = np.repeat(np.arange(len(tasks), dtype=np.int64), lengths)
    measures = {
        name: np.concatenate(
            [
                np.frombuffer(t.measures[name], dtype=np.float64)
                if name in t.measures
                else np.full(length, np.nan)
                for t, length in zip(tasks, lengths, strict=True)
            ]
        )
        for name in names
    }
    per_task = estimates.tasks.unbiased if headline.estimator == "unbiased" else None
    if per_task is None or np.isnan(per_task).any():
        per_task = estimates.tasks.plugin
    return results.get(
        "resources", ResourceSummary, summarise_resources, owner, measures, per_task, k, confidence
    )


def consistency_coverage(
    successes: IntArray, runs: IntArray, confidence: float, results: Results
) -> ConsistencyCoverage | None:
    """The coverage check of the consistency intervals, in a population fitted to the
    tasks they are computed over (those with two runs or more)."""
    kept = runs >= 2
    if np.count_nonzero(kept) < 2:
        return None
    population = fit_population(successes[kept], runs[kept])
    if population.every_run is not None:
        return None
    return results.get(
        "consistency coverage",
        ConsistencyCoverage | None,
        check_consistency_coverage,
        runs[kept],
        population,
        confidence,
    )


@dataclass(frozen=True)
class Robustness:
    """A set of runs made under a perturbation, against its suite and model's baseline."""

    #: The baseline set's id.
    baseline: str
    #: Tasks evaluated in both conditions, and in only one of them.
    shared: int
    only_perturbed: int
    only_baseline: int
    #: reliability@k under the perturbation over the baseline's, paired by task.
    reliability: RatioInterval
    #: The same with k = 1: the pass rate's ratio.
    pass_rate: RatioInterval
    #: HAL's R: pooled accuracies' ratio, capped at 1 (NaN where undefined).
    hal: float
    #: How often each ratio's interval held the truth in simulated suites.
    coverage: RatioCoverage | None
    pass_rate_coverage: RatioCoverage | None


def robustness(
    tasks: list[TaskCounts],
    baseline_tasks: list[TaskCounts],
    baseline_id: str,
    k: int,
    confidence: float,
    results: Results,
    coverage_check: bool = True,
) -> Robustness:
    """Paired over the tasks both sets evaluated; HAL's ratio over all their runs."""
    base = {t.id: t for t in baseline_tasks if t.runs > 0}
    shared = [(t, base[t.id]) for t in tasks if t.runs > 0 and t.id in base]
    c = np.array([t.successes for t, _ in shared], dtype=np.int64)
    n = np.array([t.runs for t, _ in shared], dtype=np.int64)
    base_c = np.array([b.successes for _, b in shared], dtype=np.int64)
    base_n = np.array([b.runs for _, b in shared], dtype=np.int64)
    reliability = paired_ratio(base_c, base_n, c, n, k, confidence)
    pass_rate = paired_ratio(base_c, base_n, c, n, 1, confidence)

    def check(ratio: RatioInterval) -> RatioCoverage | None:
        if not coverage_check or ratio.tasks < 2 or ratio.estimate is None:
            return None
        kept = (base_n >= ratio.k) & (n >= ratio.k)
        return results.get(
            "robustness coverage",
            RatioCoverage | None,
            check_ratio_coverage,
            smoothed_rates(base_c[kept], base_n[kept]),
            smoothed_rates(c[kept], n[kept]),
            base_n[kept],
            n[kept],
            ratio.tasks,
            ratio.k,
            confidence,
        )

    evaluated = [t for t in tasks if t.runs > 0]
    baseline_evaluated = list(base.values())
    return Robustness(
        baseline=baseline_id,
        shared=len(shared),
        only_perturbed=len(evaluated) - len(shared),
        only_baseline=len(baseline_evaluated) - len(shared),
        reliability=reliability,
        pass_rate=pass_rate,
        hal=hal_robustness(
            np.array([t.successes for t in baseline_evaluated], dtype=np.int64),
            np.array([t.runs for t in baseline_evaluated], dtype=np.int64),
            np.array([t.successes for t in evaluated], dtype=np.int64),
            np.array([t.runs for t in evaluated], dtype=np.int64),
        ),
        coverage=check(reliability),
        pass_rate_coverage=check(pass_rate),
    )
