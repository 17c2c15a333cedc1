"""Read: result files in, exact per-task counts out.

Every reader (one module per format) turns a file into run records or task
counts and hands them to a `Tally` (base.py), which groups them into result sets
(one per suite and model) and checks them. Problems are collected with their
location (file and line, key path, or zip member) and raised together, before
anything is written.

READERS below is the registry: its order is the order formats are detected in,
and everything else that lists formats (the --input-format choices, the error
messages, the report.json schema's enum, checked by a test) follows it. A new
format is one module with a `Reader` and one line here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..counts import ResultSet
from ..errors import Problems, UserError
from ..json_scan import check_json_values
from ..limits import TooLarge
from . import (
    harbor,
    inspect,
    jsonl,
    junit,
    promptfoo,
    swe_bench,
    table,
    tau_bench,
    terminal_bench,
    yaml_suite,
)
from .base import Tally
from .documents import not_regular
from .fields import did_you_mean
from .folder import folder_files
from .reader import HEAD_BYTES, Reader
from .source import Source

__all__ = [
    "FORMATS",
    "READERS",
    "Loaded",
    "Reader",
    "Source",
    "detect_format",
    "formats_text",
    "load_sources",
    "prepare_input",
    "read_inputs",
    "side_files",
]

READERS: tuple[Reader, ...] = (
    jsonl.READER,
    yaml_suite.READER,
    tau_bench.TAU_BENCH,
    tau_bench.TAU2_BENCH,
    inspect.READER,
    swe_bench.READER,
    terminal_bench.READER,
    harbor.READER,
    promptfoo.READER,
    junit.READER,
    table.CSV,
    table.PARQUET,
)
FORMATS = tuple(reader.name for reader in READERS)
_BY_NAME = {reader.name: reader for reader in READERS}
#: The formats whose runs may carry several scores, one picked with scorer:.
SCORER_FORMATS = tuple(reader.name for reader in READERS if reader.scorers)


def _and_list(names: list[str]) -> str:
    """["a", "b", "c"] -> "a, b and c"."""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


#: For messages: "inspect and harbor"; "harbor, csv and parquet".
_SCORER_FORMATS = _and_list(list(SCORER_FORMATS))
_SCORE_FORMATS = _and_list([r.name for r in READERS if r.scores])
_TABLES = (table.CSV.name, table.PARQUET.name)


def side_files(path: Path) -> list[Path]:
    """Files besides an input file that a reader may also read: Terminal-Bench's
    run_metadata.json beside a run's results.json or two folders above a trial's, and
    Harbor's trial.log, named in a run's note. A cache of the input must cover them."""
    found = [path.parent / "run_metadata.json", path.parent / "trial.log"]
    if len(path.parents) > 2:
        found.append(path.parents[2] / "run_metadata.json")
    return found


def formats_text() -> str:
    """`reportgen formats`: one line a reader, in detection order."""
    width = max(len(reader.name) for reader in READERS)
    lines = []
    for reader in READERS:
        suffixes = f" ({', '.join(reader.suffixes)})" if reader.suffixes else ""
        lines.append(f"{reader.name:<{width}}  {reader.summary}{suffixes}\n")
    return "".join(lines)


def detect_format(path: Path) -> str | None:
    """Guess a file's format from its suffix, else its first bytes; None when unsure."""
    suffix = path.suffix.lower()
    for reader in READERS:
        if suffix in reader.suffixes:
            return reader.name
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return next((reader.name for reader in READERS if reader.sniff(head)), None)


#: Files up to this size that no format claims are parsed as JSON to say why.
_EXPLAIN_JSON_BYTES = 64 * 1024 * 1024


def _broken_json(path: Path) -> str | None:
    """Said of a file that starts like one JSON document and ends before it does
    ("line 9: JSON cut short"): a log cut short may lack the keys that tell its
    format. Any other file no format claims is left to the plain message."""
    try:
        if path.stat().st_size > _EXPLAIN_JSON_BYTES:
            return None
        text = path.read_bytes().decode("utf-8").removeprefix("\ufeff").rstrip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        check_json_values(text)  # parsed only to say why: not at any cost
        json.loads(text)
    except (TooLarge, RecursionError):  # too many values, or nested too deep to tell
        return None
    except json.JSONDecodeError as error:
        # Cut short: the parser ran out of text, or a string it was reading never ended
        # (reported where the string starts).
        if error.pos < len(text) and not error.msg.startswith("Unterminated string"):
            return None  # not cut short: JSON Lines, or some other damage
        return (
            f"line {text.count(chr(10)) + 1}: the JSON is cut short (a {{ or [ is never "
            "closed), so its format cannot be told"
        )
    return None


def prepare_input(
    source: Source, problems: Problems, skipped: list[tuple[str, str]] | None = None
) -> tuple[Source, str, list[Path]] | None:
    """An input's format and the files to read from it (one, or a folder's), with the
    settings its format has no use for dropped; None after a problem. `skipped`, with
    --skip-unreadable: where a folder's unreadable entries are listed instead."""
    path = source.path
    if not path.exists():
        dangling = " (a symbolic link to nothing, or in a loop)" if path.is_symlink() else ""
        problems.add(f"{path}: no such file{dangling}")
        return None
    if not os.access(path, os.R_OK):
        problems.add(f"{path}: cannot be read (permission denied)")
        return None
    name = source.format
    if name is not None and name not in FORMATS:
        problems.add(
            f"{path}: unknown format {name!r}{did_you_mean(name, FORMATS)}; "
            f"known formats: {', '.join(FORMATS)}"
        )
        return None
    if path.is_dir():
        found = folder_files(path, name, READERS, detect_format, problems, skipped)
        if found.format is None:
            return None
        name, files = found.format, found.files
    else:
        special = not_regular(path)
        if special is not None:
            problems.add(f"{path}: {special}")
            return None
        if path.stat().st_size == 0:
            problems.add(f"{path}: the file is empty: no runs to count")
            return None
        if name is None:
            name = detect_format(path)
            if name is None:
                # Name both ways to set it: the config key and the command-line flag.
                problems.add(
                    f"{path}: {_broken_json(path) or 'cannot tell the format'}; set format: "
                    f"(or --input-format) to one of {', '.join(FORMATS)}"
                )
                return None
        files = [path]
    if source.columns and name not in _TABLES:
        # A mapping that silently did nothing would leave the user guessing.
        problems.add(
            f"{path}: a column mapping (columns: or --columns) applies to tables "
            f"({', '.join(_TABLES)}), not to {name} files"
        )
        return None
    if source.scorer is not None and not _BY_NAME[name].scorers:
        if not source.scorer_from_flag:
            problems.add(
                f"{path}: scorer: picks one of several scores, which only "
                f"{_SCORER_FORMATS} files hold; {name} files hold one result per run"
            )
            return None
        source = replace(source, scorer=None)
    if source.threshold is not None and not _BY_NAME[name].scores:
        if not source.threshold_from_flag:
            problems.add(
                f"{path}: threshold: applies to scores, which only {_SCORE_FORMATS} files "
                f"hold; {name} files hold a pass or fail per run"
            )
            return None
        source = replace(source, threshold=None)
    return source, name, files


def read_inputs(
    inputs: list[tuple[Source, list[Path]]],
    name: str,
    problems: Problems,
    skipped: list[tuple[str, str]],
) -> list[ResultSet]:
    """Read inputs of one format and the same settings into one tally, so that the runs
    of one suite and model meet whichever file or folder holds them (one report per
    run, given one by one), with every run id checked for repeats across them.

    With skip_unreadable, a file with a problem is added to `skipped` (file, its first
    problem) and none of its runs is counted.
    """
    tally = Tally(inputs[0][0], problems)
    # Empty files inside a folder are passed over below (each said), and do not count.
    empty = {
        f for source, files in inputs for f in files if f != source.path and not f.stat().st_size
    }
    tally.file_count = sum(len(files) for _, files in inputs) - len(empty)
    skip = inputs[0][0].skip_unreadable
    before, skipped_before = len(problems.items), len(skipped)
    read = _BY_NAME[name].read
    for source, files in inputs:
        tally.start_input(source.path)
        for file in files:
            if problems.truncated:
                break
            if file in empty:
                if skip:
                    skipped.append((str(file), "the file is empty"))
                else:
                    problems.add(f"{file}: the file is empty: no runs to count")
                continue
            tally.start_file(file)
            if not skip:
                read(replace(source, path=file), tally)
                continue
            own = tally.problems = Problems()
            tally.hold()
            read(replace(source, path=file), tally)
            tally.problems = problems
            if own.items:
                tally.drop()
                skipped.append((str(file), own.items[0]))
            else:
                tally.keep()
    if len(problems.items) > before:
        return []
    paths = [str(source.path) for source, _ in inputs]
    sets = tally.result_sets(name)
    if not any(rs.tasks for rs in sets) and len(skipped) == skipped_before:
        problems.add(f"{', '.join(paths)}: no tasks found")
    return sets


@dataclass
class Loaded:
    result_sets: list[ResultSet]
    #: (path, format) for each file read, in order: the build reports what it detected.
    formats: list[tuple[str, str]]
    #: (file, why) for each file left out with --skip-unreadable, in order.
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: prepare_input says so
        return path


def load_sources(sources: list[Source], flags_checked: bool = True) -> Loaded:
    """Read every source; merge result sets that share (suite, model, condition); raise
    all problems.

    `flags_checked`: a --scorer or --threshold that no input had a use for is refused
    (flags_without_effect). False when these are some of the inputs the flags were
    given for (compare's A or B): the caller checks them all together.
    """
    problems = Problems()
    skipped: list[tuple[str, str]] = []
    prepared = _prepare_all(sources, problems, skipped)
    merged: dict[tuple[str, str, str], ResultSet] = {}
    unreadable = prepared.unreadable
    for (_, format_name), inputs in prepared.groups.items():
        before = len(problems.items)
        sets = read_inputs(inputs, format_name, problems, skipped)
        unreadable = unreadable or (not sets and len(problems.items) > before)
        for rs in sets:
            key = (rs.suite, rs.model, rs.condition)
            if key not in merged:
                merged[key] = rs
                continue
            _merge(merged[key], rs, problems)
    if flags_checked and not problems.items:
        for problem in flags_without_effect(sources, prepared.formats):
            problems.add(problem)
    hint = None
    if unreadable and prepared.files_seen > 1 and not any(s.skip_unreadable for s in sources):
        hint = "--skip-unreadable leaves out the files that cannot be read, lists them, and goes on"
    problems.raise_if_any(hint)
    if not merged:
        left_out = f" ({len(skipped)} file{'s' if len(skipped) != 1 else ''} skipped)"
        left_out = left_out if skipped else ""
        raise UserError(f"no result sets to report{left_out}")
    for rs in merged.values():
        if not rs.evaluated_tasks:
            raise UserError(
                f"{', '.join(rs.sources)}: result set {rs.name!r} has no evaluated runs "
                f"(all {rs.excluded_runs} runs were excluded)"
            )
    return Loaded(result_sets=list(merged.values()), formats=prepared.formats, skipped=skipped)


@dataclass
class _Prepared:
    """Every input's format and files, grouped by how they are read (read_inputs)."""

    #: Inputs read the same way (settings and format) are read together.
    groups: dict[tuple[Source, str], list[tuple[Source, list[Path]]]] = field(default_factory=dict)
    formats: list[tuple[str, str]] = field(default_factory=list)
    #: A file or folder could not be read: --skip-unreadable would have gone on with
    #: the others, if there are any (files_seen counts them).
    unreadable: bool = False
    files_seen: int = 0


def _prepare_all(
    sources: list[Source], problems: Problems, skipped: list[tuple[str, str]]
) -> _Prepared:
    """prepare_input for each source not already read as part of another."""
    prepared = _Prepared()
    # Each input as read (resolved, with its settings) -> as given: the same file read
    # the same way twice would count its runs twice. (Read twice with different
    # settings, such as two scorers of one log, it makes two result sets.)
    given: dict[Source, Path] = {}
    folders = [(s.path, _resolved(s.path)) for s in sources if s.path.is_dir()]
    for source in sources:
        same_input = replace(source, path=_resolved(source.path))
        repeated = _given_before(source, same_input, folders, given)
        if repeated is not None:
            problems.add(repeated)
            continue
        given[same_input] = source.path
        own = Problems() if source.skip_unreadable else problems
        found = prepare_input(source, own, skipped if source.skip_unreadable else None)
        if found is None:
            if own is not problems:
                skipped.append((str(source.path), own.items[0]))
            prepared.unreadable = True
            prepared.files_seen += 1
            continue
        source, format_name, files = found
        prepared.files_seen += len(files)
        prepared.formats.append((str(source.path), format_name))
        key = (replace(source, path=Path()), format_name)
        prepared.groups.setdefault(key, []).append((source, files))
    return prepared


def _given_before(
    source: Source,
    same_input: Source,
    folders: list[tuple[Path, Path]],
    given: dict[Source, Path],
) -> str | None:
    """Why an input is not read: it lies in a folder also given (`folders`: each as
    given and resolved), or the same file is read the same way already (`given`)."""
    holder = next(
        (
            as_given
            for as_given, folder in folders
            if as_given != source.path and same_input.path.is_relative_to(folder)
        ),
        None,
    )
    if holder is not None:
        return f"{source.path}: already read as part of {holder}, also given"
    if same_input in given:
        first = given[same_input]
        also = "" if first == source.path else f" (as {first})"
        return f"{source.path}: given twice{also}: its runs would count twice"
    return None


def flags_without_effect(
    sources: Sequence[Source], formats: Sequence[tuple[str, str]]
) -> list[str]:
    """A --scorer or --threshold that none of the files read (`formats`) had a use for:
    a flag that changed nothing would leave the user guessing."""
    read = _and_list(sorted({f for _, f in formats}))
    found = []
    scorer = next((s.scorer for s in sources if s.scorer_from_flag and s.scorer), None)
    if scorer is not None and not any(_BY_NAME[f].scorers for _, f in formats):
        found.append(
            f"--scorer {scorer}: no input holds several scores to pick from "
            f"(only {_SCORER_FORMATS} files do; these are {read})"
        )
    threshold = next(
        (s.threshold for s in sources if s.threshold_from_flag and s.threshold is not None), None
    )
    if threshold is not None and not any(_BY_NAME[f].scores for _, f in formats):
        found.append(
            f"--threshold {threshold:g}: no input gives scores to compare with it "
            f"(only {_SCORE_FORMATS} files do; these are {read})"
        )
    return found


def _merge(into: ResultSet, extra: ResultSet, problems: Problems) -> None:
    known = {t.id: t for t in into.tasks}
    for task in extra.tasks:
        if task.id in known:
            problems.add(
                f"{extra.sources[0]}: task {task.id!r} of {into.name!r} is also in "
                f"{into.sources[0]}, which is read with other settings (format, scorer, "
                "errors, columns or threshold); inputs read differently must not share a "
                "task, so that a file given twice is not counted twice: read them the same "
                "way (then their runs are read together, each checked for repeats)"
            )
            continue
        into.tasks.append(task)
    into.sources.extend(extra.sources)
    into.figures.extend(extra.figures)
