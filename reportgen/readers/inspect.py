"""Inspect AI logs, read directly (inspect-ai is not a dependency).

A `.eval` log is a zip: `header.json` holds the task, model and scorer names,
and each run is a member `samples/<id>_epoch_<n>.json`. A `.json` log is one
document with the same header fields and a `samples` list. One run per
(sample id, epoch); a score value "C", the number 1 or true is a pass, any
other value ("I", "P", "N", other numbers) a failure. A sample that ended in an
error was not evaluated: it is left out of n and counted as excluded.

Current Inspect versions compress zip members with zstd (method 93), which the
standard zipfile module cannot read before Python 3.14, so such members are
decompressed here with the zstandard package; older logs use deflate.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from ..errors import Problems
from ..json_scan import check_json_values
from ..limits import MAX_ARCHIVE_BYTES, MAX_MEMBER_BYTES, TooLarge, size_text
from .base import Tally
from .documents import json_loads, load_json_records
from .fields import fraction, harness_measures, short_note, task_id_of
from .reader import Reader
from .source import Source

ZIP_ZSTANDARD = 93
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # the fixed 30 bytes of a zip local header


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, never more than the size the archive states for it.

    The stated size is checked against MAX_MEMBER_BYTES before anything is
    decompressed; holding decompression to it keeps a member that lies about
    its size (a zip bomb) from growing past it.
    """
    too_large = _member_too_large(info)
    if too_large is not None:
        raise TooLarge(too_large)
    if info.compress_type != ZIP_ZSTANDARD:
        # zipfile stops at the stated size and checks the CRC, but read() without a
        # size lets one step decompress up to 2 GiB before cutting it down.
        with archive.open(info) as member:
            return member.read(info.file_size + 1)
    import zstandard

    if info.compress_size > MAX_MEMBER_BYTES:
        raise TooLarge(f"is {size_text(info.compress_size)} compressed, over the member limit")
    fp = archive.fp
    assert fp is not None
    fp.seek(info.header_offset)
    header = _LOCAL_HEADER.unpack(fp.read(_LOCAL_HEADER.size))
    if header[0] != b"PK\x03\x04":
        raise zipfile.BadZipFile("bad local file header")
    name_length, extra_length = header[-2], header[-1]
    fp.seek(name_length + extra_length, 1)
    compressed = fp.read(info.compress_size)
    # Inspect splits large members into several zstd frames, which
    # ZstdDecompressor.decompress would silently cut at the first one.
    reader = zstandard.ZstdDecompressor().stream_reader(
        io.BytesIO(compressed), read_across_frames=True
    )
    data = reader.read(info.file_size + 1)
    if len(data) > info.file_size:
        raise zipfile.BadZipFile(f"decompresses to more than its stated {info.file_size} bytes")
    if zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile("CRC check failed")
    return data


def _member_too_large(info: zipfile.ZipInfo) -> str | None:
    if info.file_size > MAX_MEMBER_BYTES:
        return (
            f"decompresses to {size_text(info.file_size)}; "
            f"members are read up to {size_text(MAX_MEMBER_BYTES)}"
        )
    return None


def _archive_too_large(path: Path, members: list[zipfile.ZipInfo]) -> str | None:
    """Why the members to read are too large, one or all together; None when they are not."""
    for info in members:
        too_large = _member_too_large(info)
        if too_large is not None:
            return f"{path}: {info.filename}: {too_large}"
    total = sum(info.file_size for info in members)
    if total > MAX_ARCHIVE_BYTES:
        return (
            f"{path}: decompresses to {size_text(total)} in all; "
            f"archives are read up to {size_text(MAX_ARCHIVE_BYTES)}"
        )
    return None


def _scorer_names(header: dict[str, Any]) -> list[str]:
    """Scorer names from results.scores, or from eval.scorers when the eval failed."""
    results = header.get("results")
    scores = results.get("scores") if isinstance(results, dict) else None
    if not isinstance(scores, list):
        info = header.get("eval")
        scores = info.get("scorers") if isinstance(info, dict) else None
    if not isinstance(scores, list):
        return []
    names = [s["name"] for s in scores if isinstance(s, dict) and isinstance(s.get("name"), str)]
    return list(dict.fromkeys(names))


def _total_tokens(usage: Any) -> Any:
    """The tokens a sample used over all its models (model_usage: {model: {total_tokens:
    ...}}); None when it records none, the odd value itself when one is not a count."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        return usage
    total = 0
    for counts in usage.values():
        tokens = counts.get("total_tokens") if isinstance(counts, dict) else counts
        if isinstance(tokens, bool) or not isinstance(tokens, int):
            return tokens
        total += tokens
    return total if usage else None


def _is_pass(value: Any, threshold: float | None) -> bool:
    """True, "C" (correct) and 1 pass; a number passes at `threshold` or more when given."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value == "C"
    if not isinstance(value, int | float):
        return False
    return value >= threshold if threshold is not None else value == 1


def read_inspect(source: Source, tally: Tally) -> None:
    problems = tally.problems
    path = source.path
    if zipfile.is_zipfile(path):
        _read_eval_zip(source, tally)
        return
    with path.open("rb") as handle:
        if handle.read(4) == b"PK\x03\x04":
            # A zip's table of contents is at its end: without it the log was cut short.
            problems.add(
                f"{path}: damaged zip archive: its end is missing (was the file cut short?)"
            )
            return
    # The samples are read one batch at a time: with their messages and events a log
    # can be hundreds of megabytes. `doc` is the rest: the eval's header and results.
    records = load_json_records(path, problems, keys=("samples",))
    if records is None:
        return
    doc = records.top
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        problems.add(f"{path}: not an Inspect log (no 'eval' header)")
        return
    scorer = _choose_scorer(path, doc, source.scorer, problems)
    if scorer is None:
        return
    if records.key is None or not records.count:
        problems.add(f"{path}: samples: the log holds no samples (was it written with them?)")
        return
    suite, model = _suite_and_model(doc, tally)
    for i, sample in records.items:
        if problems.truncated:  # not `full`: see read_jsonl
            return
        _add_sample(f"{path}: samples[{i}]", sample, scorer, suite, model, tally, source)
    _add_accuracy(path, doc, scorer, suite, model, tally)


def _read_eval_zip(source: Source, tally: Tally) -> None:
    problems = tally.problems
    path = source.path
    try:
        with zipfile.ZipFile(path) as archive:
            members = {info.filename: info for info in archive.infolist()}
            if "header.json" not in members:
                problems.add(f"{path}: header.json is missing: not a finished Inspect .eval log")
                return
            header = _member_json(archive, members["header.json"], path, problems)
            if header is None:
                return
            if not isinstance(header, dict):
                problems.add(f"{path}: header.json: expected an object with the eval's header")
                return
            scorer = _choose_scorer(path, header, source.scorer, problems)
            if scorer is None:
                return
            suite, model = _suite_and_model(header, tally)
            _add_accuracy(path, header, scorer, suite, model, tally)
            names = sorted(n for n in members if n.startswith("samples/") and n.endswith(".json"))
            if not names:
                problems.add(f"{path}: no samples/ members: the log holds no runs")
                return
            too_large = _archive_too_large(path, [members[n] for n in names])
            if too_large is not None:
                problems.add(too_large)
                return
            for name in names:
                # `truncated`, not `full`: stop after the first problem past the limit, so
                # the report says it stopped (see load.read_jsonl).
                if problems.truncated:
                    return
                sample = _member_json(archive, members[name], path, problems)
                if sample is not None:
                    _add_sample(f"{path}: {name}", sample, scorer, suite, model, tally, source)
    except (zipfile.BadZipFile, NotImplementedError, OSError) as error:
        # NotImplementedError: a zip version or feature zipfile does not read.
        problems.add(f"{path}: damaged zip archive: {error}")


def _member_json(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, problems: Problems
) -> Any:
    where = f"{path}: {info.filename}"
    try:
        raw = _read_member(archive, info)
        # Counted before parsing: 64 MiB of `{}` would be 20 million objects.
        check_json_values(raw)
    except TooLarge as error:
        problems.add(f"{where}: {error}")
        return None
    except (zipfile.BadZipFile, NotImplementedError, OSError, ValueError) as error:
        problems.add(f"{where}: cannot be extracted: {error}")
        return None
    except Exception as error:  # zstandard raises its own ZstdError
        problems.add(f"{where}: cannot be decompressed: {error}")
        return None
    try:
        # As text, without the bytes: the member is then held once while it is parsed.
        text = raw.decode("utf-8")
        del raw
        return json_loads(text, counted=True)
    except (UnicodeDecodeError, ValueError) as error:
        problems.add(f"{where}: not valid JSON: {error}")
        return None


def _choose_scorer(
    path: Path, header: dict[str, Any], wanted: str | None, problems: Problems
) -> str | None:
    names = _scorer_names(header)
    if not names:
        status = header.get("status")
        if status == "success":
            # Run with --no-score (or scored later elsewhere): finished, never graded.
            problems.add(
                f"{path}: results.scores: the eval finished (status success) but was never "
                "scored, so no run passed or failed; score it with `inspect score "
                f"{path.name}` and read the log that writes"
            )
        else:
            said = f"status {status}" if isinstance(status, str) else "no status"
            problems.add(
                f"{path}: results.scores: the log has no scorers ({said}: the eval did not finish)"
            )
        return None
    if wanted is not None:
        if wanted not in names:
            problems.add(f"{path}: scorer {wanted!r} is not in this log; it has {', '.join(names)}")
            return None
        return wanted
    if len(names) > 1:
        problems.add(
            f"{path}: the log has several scorers ({', '.join(names)}); "
            "choose one with scorer: (or --scorer)"
        )
        return None
    return names[0]


def _suite_and_model(header: dict[str, Any], tally: Tally) -> tuple[str | None, str | None]:
    """The task and the model from the log's eval header."""
    tally.named_from(suite="eval.task", model="eval.model")
    info = header.get("eval")
    if not isinstance(info, dict):
        return None, None
    task, model = info.get("task"), info.get("model")
    return (
        task if isinstance(task, str) and task else None,
        model if isinstance(model, str) and model else None,
    )


def _add_accuracy(
    path: Path,
    header: dict[str, Any],
    scorer: str,
    suite: str | None,
    model: str | None,
    tally: Tally,
) -> None:
    """The log's own accuracy of the scorer counted (results.scores[].metrics), where it
    has one: over the samples it scored, each epoch reduced as the task says."""
    results = header.get("results")
    scores = results.get("scores") if isinstance(results, dict) else None
    for score in scores if isinstance(scores, list) else ():
        metrics = score.get("metrics") if isinstance(score, dict) else None
        accuracy = metrics.get("accuracy") if isinstance(metrics, dict) else None
        value = fraction(accuracy.get("value")) if isinstance(accuracy, dict) else None
        if score.get("name") == scorer and value is not None:
            label = f"{scorer} accuracy"
            tally.add_figure(str(path), label, value, suite=suite, model=model)
            return


def _add_sample(
    where: str,
    sample: Any,
    scorer: str,
    suite: str | None,
    model: str | None,
    tally: Tally,
    source: Source,
) -> None:
    problems = tally.problems
    if not isinstance(sample, dict):
        problems.add(f"{where}: expected a sample object")
        return
    task = task_id_of(sample.get("id"))
    epoch = sample.get("epoch")
    if task is None:
        problems.add(f"{where}.id: expected a string or integer sample id")
        return
    if isinstance(epoch, bool) or not isinstance(epoch, int):
        problems.add(f"{where}.epoch: expected an integer")
        return
    measures = harness_measures(
        where,
        {
            "duration": ("total_time", sample.get("total_time")),
            "tokens": ("model_usage", _total_tokens(sample.get("model_usage"))),
        },
        problems,
    )
    if measures is None:
        return
    scores = sample.get("scores")
    score = scores.get(scorer) if isinstance(scores, dict) else None
    if sample.get("error") or score is None:
        if not sample.get("error"):
            problems.add(f"{where}.scores.{scorer}: missing, and the sample has no error")
            return
        error = sample.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        note = short_note(
            "the sample raised an error", message if isinstance(message, str) else None
        )
        tally.add_run(
            where,
            task,
            source.error_outcome,
            suite=suite,
            model=model,
            run=epoch,
            note=note,
            measures=measures,
        )
        _describe(task, sample, suite, model, tally)
        return
    if not isinstance(score, dict) or "value" not in score:
        problems.add(f"{where}.scores.{scorer}.value: missing")
        return
    value = score["value"]
    if isinstance(value, dict | list):
        problems.add(f"{where}.scores.{scorer}.value: a {type(value).__name__} is not one score")
        return
    passed = _is_pass(value, source.threshold)
    tally.add_run(where, task, passed, suite=suite, model=model, run=epoch, measures=measures)
    _describe(task, sample, suite, model, tally)


def _describe(
    task: str, sample: dict[str, Any], suite: str | None, model: str | None, tally: Tally
) -> None:
    """The sample's input, shortened, for its task page: a string, or the text of the
    last user message of a chat input."""
    given = sample.get("input")
    if isinstance(given, list):
        texts = [
            m.get("content")
            for m in given
            if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str)
        ]
        given = texts[-1] if texts else None
    if isinstance(given, str) and given.strip():
        tally.describe_task(task, short_note(given), suite=suite, model=model)


def sniff(head: bytes) -> bool:
    """A zip archive (an .eval log), or a JSON log with eval and samples or results."""
    if head.startswith(b"PK\x03\x04"):
        return True
    # promptfoo's output also has results, and may hold the word "eval" as a value;
    # its evalId (which Inspect does not write) tells it apart.
    return (
        head.startswith(b"{")
        and b'"eval"' in head
        and (b'"samples"' in head or b'"results"' in head)
        and b'"evalId"' not in head
    )


READER = Reader(
    name="inspect",
    suffixes=(".eval",),
    sniff=sniff,
    read=read_inspect,
    summary="Inspect AI logs, .eval (zstd or deflate) or .json; scorer: picks one of several, "
    "threshold: sets the passing numeric score (default: exactly 1)",
    scorers=True,
    scores=True,
)
