"""`reportgen check`: a CI gate on a built report.

Reads report.json (from a site folder or the file itself) and fails (exit 1)
when a result set's reliability@k is below a bar, or dropped against a
baseline report by more than allowed. Result sets are matched to the baseline
by suite, model and condition.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from .counts import BASELINE, MAX_COUNT, identity
from .errors import Problems, UserError
from .limits import MAX_DOCUMENT_BYTES, TooLarge, read_limited
from .numbers import fixed, percent, percent1
from .readers.documents import json_loads, not_regular
from .readers.fields import describe
from .stats.headline import UNFIT_COVERAGE
from .stats.plain import MAX_K, confidence_extreme, decimals
from .stats.task_tests import DEFAULT_LEVEL, TaskTests, task_tests

#: report.json versions `check`, `compare` and `plan` read.
READABLE_VERSIONS = (1, 2, 3, 4)


def read_report(path: Path, flag: str = "report", tasks: bool = False) -> dict[str, Any]:
    """report.json from a site folder or a file path, checked enough to use.

    Every value the commands read is checked, with its key path in the message: a
    report edited by hand or cut short is the reader's to fix. With tasks=True
    (compare, plan) the per-task counts are checked too.
    """
    file = path / "report.json" if path.is_dir() else path
    if not file.exists():
        raise UserError(f"{flag}: {file}: no such file (give a built site or its report.json)")
    special = not_regular(file)
    if special is not None:
        raise UserError(f"{flag}: {file}: {special}")
    try:
        doc = json_loads(read_limited(file, MAX_DOCUMENT_BYTES))
    except TooLarge as error:
        raise UserError(f"{flag}: {file}: {error}") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise UserError(f"{flag}: {file}: not a report.json ({error})") from None
    except OSError as error:
        raise UserError(f"{flag}: {file}: cannot read ({error.strerror})") from None
    # Versions 1 (before the headline choice) and 2 (before the per-task tests) stay
    # readable: old sites are baselines.
    if not isinstance(doc, dict) or doc.get("schema_version") not in READABLE_VERSIONS:
        raise UserError(f"{flag}: {file}: not a reportgen report.json (schema_version 1 to 4)")
    problems = Problems()
    for problem in _report_problems(doc, tasks):
        problems.add(f"{flag}: {file}: {problem}")
    problems.raise_if_any()
    return doc


def _is_whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _report_problems(doc: dict[str, Any], tasks: bool) -> Iterator[str]:
    """'key path: what is wrong' for each value of report.json that is not as written."""
    k = doc.get("k")
    if not _is_whole(k) or not 1 <= k <= MAX_K:
        yield f"k: expected a whole number from 1 to {MAX_K:,}, got {describe(k)}"
    confidence = doc.get("confidence")
    if not _is_number(confidence) or not 0 < confidence < 1 or confidence_extreme(confidence):
        yield f"confidence: expected a number between 0 and 1, got {describe(confidence)}"
    sets = doc.get("result_sets")
    if not isinstance(sets, list):
        yield (
            "result_sets: missing"
            if sets is None
            else f"result_sets: expected a list, got {describe(sets)}"
        )
        return
    ids: dict[str, int] = {}  # set id -> the first set that has it
    for i, rs in enumerate(sets):
        where = f"result_sets[{i}]"
        if not isinstance(rs, dict):
            yield f"{where}: expected an object"
            continue
        set_id = rs.get("id")
        if isinstance(set_id, str):
            if set_id in ids:
                # `site#id` would name either: a report does not repeat one.
                yield f"{where}.id: {set_id!r} is also the id of result_sets[{ids[set_id]}]"
            ids.setdefault(set_id, i)
        for key in ("id", "suite", "model", "name") if tasks else ("suite", "model", "name"):
            if not isinstance(rs.get(key), str):
                yield f"{where}.{key}: expected a string"
        if not isinstance(rs.get("condition", ""), str):
            yield f"{where}.condition: expected a string"
        reliability = rs.get("reliability_at_k")
        headline = reliability.get("headline", "plugin") if isinstance(reliability, dict) else None
        short = reliability.get("headline_uncalibrated") if isinstance(reliability, dict) else None
        if short is not None and not (_is_number(short) and 0 <= short <= 1):
            yield (
                f"{where}.reliability_at_k.headline_uncalibrated: expected a number from 0 to "
                f"1 or null, got {describe(short)}"
            )
        if headline not in (None, "plugin", "unbiased"):
            yield (
                f'{where}.reliability_at_k.headline: expected "plugin" or "unbiased", '
                f"got {describe(headline)}"
            )
        for estimator in ("plugin", "unbiased"):
            part = reliability.get(estimator) if isinstance(reliability, dict) else None
            if not isinstance(part, dict):
                yield f"{where}.reliability_at_k.{estimator}: missing"
                continue
            for key in ("estimate", "sd"):
                value = part.get(key, "missing")
                if value is not None and not _is_number(value):
                    yield (
                        f"{where}.reliability_at_k.{estimator}.{key}: expected a number or "
                        f"null, got {describe(value)}"
                    )
        partial = reliability.get("unbiased_partial") if isinstance(reliability, dict) else None
        if partial is not None and not (
            isinstance(partial, dict)
            and _is_number(partial.get("estimate"))
            and _is_whole(partial.get("tasks"))
        ):
            yield (
                f"{where}.reliability_at_k.unbiased_partial: expected null or an estimate "
                "with its number of tasks"
            )
        if tasks:
            yield from _task_problems(where, rs.get("tasks"))


def _task_problems(where: str, tasks: Any) -> Iterator[str]:
    if not isinstance(tasks, list) or not tasks:
        yield f"{where}.tasks: expected a non-empty list of tasks"
        return
    seen: set[str] = set()
    for j, task in enumerate(tasks):
        at = f"{where}.tasks[{j}]"
        if not isinstance(task, dict):
            yield f"{at}: expected an object"
            continue
        task_id, successes, runs = task.get("id"), task.get("successes"), task.get("runs")
        if not isinstance(task_id, str) or task_id in seen:
            yield f"{at}.id: expected a string not used by another task, got {describe(task_id)}"
        else:
            seen.add(task_id)
        if not _is_whole(runs) or not 1 <= runs <= MAX_COUNT:
            yield (
                f"{at}.runs: expected a whole number from 1 to {MAX_COUNT:,}, got {describe(runs)}"
            )
        elif not _is_whole(successes) or not 0 <= successes <= runs:
            yield (
                f"{at}.successes: expected a whole number from 0 to runs ({runs}), "
                f"got {describe(successes)}"
            )


@dataclass(frozen=True)
class Verdict:
    failures: list[str]
    passes: list[str]
    #: Result sets of the report that the baseline holds too (by suite, model and condition).
    matched: int = 0
    #: Each result set's figures at full precision, for --format json: name, estimator,
    #: value, and where checked the bar, the baseline's value and the drop.
    figures: list[dict[str, Any]] = field(default_factory=list)


def _value(rs: dict[str, Any], estimator: str) -> float | None:
    """The set's reliability@k on `estimator`; where some tasks have fewer than k runs,
    the unbiased one over the tasks that have k (as its pages show it)."""
    part = _partial(rs) if estimator == "unbiased" else None
    value = (part or rs["reliability_at_k"][estimator])["estimate"]
    return None if value is None else float(value)


def _partial(rs: dict[str, Any]) -> dict[str, Any] | None:
    part = rs["reliability_at_k"].get("unbiased_partial")
    return part if isinstance(part, dict) else None


def _label(rs: dict[str, Any], estimator: str) -> str:
    if estimator == "plugin":
        return "plug-in"
    part = _partial(rs) if estimator == "unbiased" else None
    if part is None:
        return estimator
    return f"unbiased over {part['tasks']} of {rs['reliability_at_k'].get('tasks', '?')} tasks"


def headline_estimator(rs: dict[str, Any]) -> str:
    """The estimator a result set leads with; reports before schema 2 led with the plug-in."""
    chosen = rs["reliability_at_k"].get("headline", "plugin")
    return chosen if chosen in ("plugin", "unbiased") else "plugin"


def _apart(value: float, bar: float) -> tuple[str, str]:
    """Both numbers to three decimals, or to as many more as it takes to tell them
    apart: "0.438 is below 0.438" said nothing of a bar given as 0.43772."""
    for places in range(3, 10):
        shown = decimals(value, places), decimals(bar, places)
        if shown[0] != shown[1]:
            return shown
    return fixed(value), fixed(bar)


def check_report(
    report: dict[str, Any],
    min_reliability: float | None,
    baseline: dict[str, Any] | None,
    max_drop: float | None,
    estimator: str = "headline",
) -> Verdict:
    """Gate each result set on its headline reliability@k (or the named estimator).

    Against a baseline the same estimator is read from both reports, so the
    drop is like for like even if the baseline led with another one.
    """
    k = report["k"]
    failures: list[str] = []
    passes: list[str] = []
    figures: list[dict[str, Any]] = []
    old_sets = {identity(rs): rs for rs in (baseline or {}).get("result_sets", [])}
    for rs in report["result_sets"]:
        name = rs["name"]
        chosen = headline_estimator(rs) if estimator == "headline" else estimator
        value = _value(rs, chosen)
        label = f"reliability@{k} ({_label(rs, chosen)})"
        figure: dict[str, Any] = {"name": name, "estimator": chosen, "value": value}
        if chosen == headline_estimator(rs):
            # Its own measured coverage when short of the level (report.json v3 builds
            # since it was added; absent before): a gate's reader must see it too.
            figure["headline_uncalibrated"] = rs["reliability_at_k"].get("headline_uncalibrated")
        figures.append(figure)
        old = old_sets.get(identity(rs))
        if min_reliability is not None:
            figure["min_reliability"] = min_reliability
        if baseline is not None and max_drop is not None:
            figure["baseline"] = None if old is None else _value(old, chosen)
            figure["max_drop"] = max_drop
            both = value is not None and figure["baseline"] is not None
            figure["drop"] = figure["baseline"] - value if both else None
        figure["passed"] = (
            value is not None
            and (min_reliability is None or value >= min_reliability)
            and (figure.get("drop") is None or figure["drop"] <= max_drop)
        )
        if value is None:
            failures.append(f"{name}: {label} is undefined; see the report's warnings")
            continue
        if min_reliability is not None:
            shown, bar = _apart(value, min_reliability)
            if value < min_reliability:
                failures.append(f"{name}: {label} {shown} is below {bar}")
            else:
                passes.append(f"{name}: {label} {shown} >= {bar}")
        if baseline is not None and max_drop is not None:
            if old is None:
                passes.append(f"{name}: not in the baseline; nothing to compare")
                continue
            old_value = figure["baseline"]
            if old_value is None:
                passes.append(f"{name}: {label} is undefined in the baseline; nothing to compare")
                continue
            drop = old_value - value
            move = f"{name}: {label} {fixed(old_value)} -> {fixed(value)}"
            if drop > max_drop:
                shown, bar = _apart(drop, max_drop)
                failures.append(f"{move}: dropped by {shown}, more than the allowed {bar}")
            elif round(drop, 3) > 0:
                passes.append(
                    f"{move}: fell by {fixed(drop)}, within the allowed {fixed(max_drop)}"
                )
            else:
                passes.append(f"{move}: {'rose' if round(drop, 3) < 0 else 'held'}")
    matched = sum(identity(rs) in old_sets for rs in report["result_sets"])
    return Verdict(failures=failures, passes=passes, matched=matched, figures=figures)


def _history_build(path: Path, report: dict[str, Any]) -> dict[str, Any]:
    """The entry of a history.jsonl for the build before the current report's."""
    from .history import read_history

    entries = read_history(path, "--baseline")
    history = report.get("history")
    current = history.get("label") if isinstance(history, dict) else None
    earlier = [e for e in entries if e["label"] != current]
    if current is not None:
        labels = [e["label"] for e in entries]
        if current in labels:
            earlier = entries[: labels.index(current)]
    if not earlier:
        raise UserError(f"--baseline: {path} has no build before this one to compare with")
    return earlier[-1]


def _doc_from_counts(
    label: str,
    sets: list[tuple[tuple[str, str, str], str, dict[str, tuple[int, int]]]],
    report: dict[str, Any],
) -> dict[str, Any]:
    """A report.json-shaped baseline from per-task counts, with the report's k and confidence.

    Values are recomputed from the counts, so the comparison is like for like.
    """
    from .stats.estimate import estimate_suite
    from .views import reliability_json

    out = []
    for (suite_name, model, condition), name, counts in sets:
        values = list(counts.values())
        suite = estimate_suite(
            [c for c, _ in values], [n for _, n in values], report["k"], report["confidence"]
        )
        out.append(
            {
                "suite": suite_name,
                "model": model,
                "condition": condition or BASELINE,
                "name": name,
                "reliability_at_k": reliability_json(suite),
                "tasks": [{"id": t, "successes": c, "runs": n} for t, (c, n) in counts.items()],
            }
        )
    return {"schema_version": 1, "label": label, "result_sets": out}


def baseline_from_history(path: Path, report: dict[str, Any]) -> dict[str, Any]:
    """The build before the current one in a history.jsonl, shaped like a report.json."""
    entry = _history_build(path, report)
    sets = [
        (identity(rs), rs["name"], {t: (c, n) for t, (c, n) in rs["tasks"].items()})
        for rs in entry["result_sets"]
    ]
    return _doc_from_counts(entry["label"], sets, report)


def _looks_like_history(path: Path) -> bool:
    """A .jsonl whose first line is a history entry (result files share the suffix)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    first = head.lstrip().split(b"\n", 1)[0]
    return b'"schema_version"' in first and b'"result_sets"' in first


def _looks_like_report(path: Path) -> bool:
    if path.is_dir():
        return (path / "report.json").is_file()
    if path.suffix != ".json":
        return False
    try:
        with path.open("rb") as handle:
            return b'"schema_version"' in handle.read(4096)
    except OSError:
        return False


def load_baseline(
    path: Path,
    report: dict[str, Any],
    tasks: bool,
    reading: Mapping[str, Any] | None = None,
    given: Sequence[str] = (),
) -> dict[str, Any]:
    """The baseline as a report.json-shaped document, whatever `path` holds.

    A site folder or report.json; a history.jsonl (its build before the
    report's); or result files (a file or a folder of them), read as `reading`
    says (Source's fields, from the flags `given`, which only result files take).
    The document's "label" says which, for the output. With tasks=True every set
    carries its per-task counts, checked.
    """
    if not path.exists():
        raise UserError(
            f"--baseline: {path}: no such file or folder (give a site, a report.json, a "
            "history.jsonl or result files)"
        )
    # Each looked at once: both open the file to read its start.
    is_report = _looks_like_report(path)
    is_history = (
        not is_report and path.is_file() and path.suffix == ".jsonl" and _looks_like_history(path)
    )
    if given and (is_report or is_history):
        raise UserError(
            f"{given[0]}: --baseline {path} is a report or a history, and it applies to "
            "result files only; leave it out"
        )
    if is_report:
        doc = read_report(path, "--baseline", tasks=tasks)
        if (doc["k"], doc["confidence"]) == (report["k"], report["confidence"]):
            doc["label"] = str(path)
            return doc
        # Its reliability is of another k or level: comparing it with this report's
        # would gate on a change of k. Recomputed from its per-task counts instead.
        built = f"k = {doc['k']}, {percent(doc['confidence'])}"
        doc = read_report(path, "--baseline", tasks=True)
        sets = [(identity(rs), rs["name"], _counts(rs)) for rs in doc["result_sets"]]
        doc = _doc_from_counts(str(path), sets, report)
        doc["label"] = (
            f"{path} (built with {built}; recomputed from its task counts at this report's "
            f"k = {report['k']}, {percent(report['confidence'])})"
        )
        return doc
    if is_history:
        doc = baseline_from_history(path, report)
        doc["label"] = f"build {doc['label']} of {path}"
        return doc
    from .readers import Source, load_sources

    loaded = load_sources([Source(path, **(reading or {}))])
    if not loaded.result_sets:
        raise UserError(f"--baseline: {path} holds no result sets")
    sets = [(rs.identity, rs.name, rs.counts_by_task()) for rs in loaded.result_sets]
    doc = _doc_from_counts(str(path), sets, report)
    doc["skipped"] = loaded.skipped
    ours = report["result_sets"]
    if len(sets) == 1 and len(ours) == 1:
        # One set on each side, of one model: the same eval, run before. A bare results
        # file's suite is named after the file (main-results.jsonl against
        # results.jsonl), so matching by name would compare nothing and let every
        # regression through. Another model's set is not taken: that gate compared
        # nothing, and says so.
        # Runs under another condition are another eval, whatever the file's name.
        (theirs,) = doc["result_sets"]
        same = identity(theirs)[1:] == identity(ours[0])[1:]
        if same and theirs["suite"] != ours[0]["suite"]:
            doc["label"] += (
                f" (its one result set, {theirs['name']!r}, taken as the report's "
                f"{ours[0]['name']!r})"
            )
            theirs["suite"] = ours[0]["suite"]
    return doc


def _counts(rs: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {t["id"]: (t["successes"], t["runs"]) for t in rs["tasks"]}


def uncalibrated_sets(report: dict[str, Any], estimator: str) -> list[str]:
    """The sets whose gated interval (the headline's) covered less than UNFIT_COVERAGE
    of simulated suites, each as "name (covered 41.6%)"."""
    found = []
    for rs in report["result_sets"]:
        chosen = headline_estimator(rs) if estimator == "headline" else estimator
        own = rs["reliability_at_k"].get("headline_uncalibrated")
        if chosen == headline_estimator(rs) and own is not None and own < UNFIT_COVERAGE:
            found.append(f"{rs['name']} (its interval covered {percent1(own)})")
    return found


#: How many result sets (suite, model, condition) a message lists before it counts the rest.
LISTED_PAIRS = 5


def _pairs(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return sorted({identity(rs) for rs in doc["result_sets"]})


def _listing(pairs: Sequence[tuple[str, str, str]]) -> str:
    shown = ", ".join(
        " / ".join(part for part in (suite, model, condition) if part)
        for suite, model, condition in pairs[:LISTED_PAIRS]
    )
    more = len(pairs) - LISTED_PAIRS
    return shown + (f" and {more} more" if more > 0 else "") if pairs else "nothing"


def unmatched_sets(report: dict[str, Any], baseline: dict[str, Any]) -> str:
    """Why a check against `baseline` compared nothing: what the report's sets looked for
    (suite / model / condition) and what the baseline holds, for a message that can be
    acted on."""
    ours, theirs = _pairs(report), _pairs(baseline)
    shared = [pair for pair in ours if pair in set(theirs)]
    if shared:
        return (
            f"the result sets {_listing(shared)} are in both, but share no task id with "
            "the baseline's"
        )
    return (
        f"no suite / model of the report ({_listing(ours)}) is in the baseline, which "
        f"holds {_listing(theirs)} (result sets are matched by suite, model and condition)"
    )


@dataclass(frozen=True)
class TaskGate:
    """The per-task gate: one family over every matched result set's shared tasks."""

    tests: TaskTests
    #: Pooled task key -> (result set name, task id).
    keys: dict[str, tuple[str, str]]
    #: Result set name -> tasks only in the report / only in the baseline.
    new: dict[str, tuple[str, ...]]
    gone: dict[str, tuple[str, ...]]
    #: Result sets of the report with no counterpart (same suite, model and condition)
    #: in the baseline.
    unmatched: list[str]
    shared_sets: list[str]

    def name(self, key: str) -> str:
        """How output names a task: with its result set when several were tested."""
        set_name, task = self.keys[key]
        return f"{set_name} / {task}" if len(self.shared_sets) > 1 else task


def check_tasks(
    report: dict[str, Any],
    baseline: dict[str, Any],
    level: float = DEFAULT_LEVEL,
    test: str = "fisher",
    control: str = "holm",
    screen: bool = True,
    min_drop: float = 0.0,
) -> TaskGate:
    """Test every task shared by a report's result set and its baseline counterpart.

    Result sets are matched by (suite, model); all their shared tasks form one
    family, so the gate's error rate holds for the whole check, not per set.
    """
    old_sets = {identity(rs): rs for rs in baseline["result_sets"]}
    keys: dict[str, tuple[str, str]] = {}
    before: list[tuple[int, int]] = []
    after: list[tuple[int, int]] = []
    new: dict[str, tuple[str, ...]] = {}
    gone: dict[str, tuple[str, ...]] = {}
    unmatched: list[str] = []
    shared_sets: list[str] = []
    for rs in report["result_sets"]:
        old = old_sets.get(identity(rs))
        if old is None:
            unmatched.append(rs["name"])
            continue
        shared_sets.append(rs["name"])
        now, then = _counts(rs), _counts(old)
        for task in now:
            if task in then:
                keys[f"{rs['name']}\x00{task}"] = (rs["name"], task)
                before.append(then[task])
                after.append(now[task])
        new[rs["name"]] = tuple(t for t in now if t not in then)
        gone[rs["name"]] = tuple(t for t in then if t not in now)
    tests = task_tests(
        list(keys),
        ([c for c, _ in before], [n for _, n in before]),
        ([c for c, _ in after], [n for _, n in after]),
        level=level,
        test=test,
        control=control,
        screen=screen,
        min_drop=min_drop,
    )
    return TaskGate(tests, keys, new, gone, unmatched, shared_sets)
