"""Incremental rebuilds: reuse parsed inputs, computed results, charts and pages when
what made them is unchanged.

Everything is keyed by content hashes, so a reused piece is exactly what a
clean build would make, and the site stays byte-identical. File times only
spare the hashing of an input the previous build already hashed, as git's
index does: its recorded digest is taken again only when the file's size,
modification and change times, inode and device are all as recorded, and the
file was last changed clearly (RACY_NS) before that digest was taken; anything
else, and a file changed within the same clock tick as its hashing, is hashed
again. The change time cannot be set back by hand, so a file rewritten with
its old size and modification time restored is hashed again too.
The cache lives in `.reportgen-cache/` beside the output folder; deleting it
only makes the next build slower.

Entries are plain JSON, read back field by field with every type and range
checked. The folder sits in a project tree that others may write to (a pull
request, a shared output folder), so an entry must never be able to run code,
as unpickling could, and a damaged or foreign entry is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
import orjson

from .counts import EXCLUDED, MEASURES, PASS, TaskCounts, condition_key
from .errors import Problems
from .limits import MAX_DOCUMENT_BYTES
from .readers import FORMATS, Loaded, side_files
from .readers.folder import walk
from .website.charts import Chart, SiteCharts

if TYPE_CHECKING:
    from .results import Results

CACHE_DIR = ".reportgen-cache"
_KEEP = 4  # entries of each kind kept; older ones are removed
_SUFFIX = ".json"


def file_digest(path: Path) -> str:
    with path.open("rb") as handle:
        return _digest_of(handle.fileno())


def _digest_of(fd: int) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with open(fd, "rb", closefd=False) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: A recorded digest is trusted only for a file last changed at least this long
#: before the digest was taken. File times come from a coarse clock (and on some
#: file systems have a resolution of seconds): a file changed again within that
#: tick, after it was hashed, could otherwise keep a stat identical to the recorded one.
RACY_NS = 2_000_000_000

#: What a file's stat says about its bytes: size, modification and change times
#: (ns), inode, device.
Stamp = tuple[int, int, int, int, int]
#: Digests taken by a build: absolute path -> (the file's stamp, when the digest was
#: taken in ns since the epoch, the digest).
Digests = dict[str, tuple[Stamp, int, str]]


class KnownDigests:
    """Input digests recorded by the previous build, and those this build takes.

    `recorded` is untrusted (read from the cache): a digest is reused only for a
    file whose stamp is unchanged and clearly older than the digest (see RACY_NS).
    """

    def __init__(self, recorded: Digests | None = None) -> None:
        self.recorded = recorded or {}
        #: What this build used, to record for the next one.
        self.taken: Digests = {}
        #: How many files were hashed (not reused), for tests and the curious.
        self.hashed = 0

    def file(self, path: Path) -> str:
        name = os.path.abspath(path)
        # The time before the stat: a change after it gets a later time than this.
        before = time.time_ns()
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            stamp = (
                info.st_size,
                info.st_mtime_ns,
                info.st_ctime_ns,
                info.st_ino,
                info.st_dev,
            )
            prior = self.recorded.get(name)
            if (
                prior is not None
                and prior[0] == stamp
                and max(info.st_mtime_ns, info.st_ctime_ns) + RACY_NS <= prior[1]
            ):
                self.taken[name] = prior
                return prior[2]
            digest = _digest_of(handle.fileno())
        self.hashed += 1
        self.taken[name] = (stamp, before, digest)
        return digest


def input_digest(path: Path, known: KnownDigests | None = None) -> str | None:
    """A result file's digest, or for a folder input one over the names and bytes of the
    files it holds (the walk the folder reader makes): a file added, changed or removed
    changes it. None for anything else (the build reports it).

    With `known`, a file whose stat shows it unchanged since an earlier build hashed it
    keeps that build's digest instead of being read again."""
    digest_file = known.file if known is not None else file_digest
    if path.is_file():
        # And the files a reader reads beside it (a run's metadata), present or not.
        digest = hashlib.blake2b(digest_file(path).encode(), digest_size=16)
        for side in side_files(path):
            digest.update(digest_file(side).encode() if side.is_file() else b"-")
        return digest.hexdigest()
    if not path.is_dir():
        return None
    files = walk(path, Problems())
    if files is None:
        return None
    digest = hashlib.blake2b(digest_size=16)
    for file in files:
        digest.update(str(file.relative_to(path)).encode("utf-8", "surrogateescape") + b"\0")
        try:
            digest.update(digest_file(file).encode())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()


def folder_digest(folders: Iterable[Path]) -> str:
    """One hash over every file (name and bytes) in the given folders, in order."""
    digest = hashlib.blake2b(digest_size=16)
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(folder)).encode() + b"\0")
            digest.update(file_digest(path).encode())
    return digest.hexdigest()


class Damaged(ValueError):
    """A cache entry that does not hold what its kind must: it is rebuilt."""


T = TypeVar("T")


@dataclass(frozen=True)
class SiteState:
    """What a build wrote, for the next build with the same site key to keep it whole."""

    result_sets: int
    #: The lines the build printed about its inputs ("read x.jsonl (jsonl, detected)")
    #: and the report's warnings: printed again when the site is kept, so that a CI
    #: log says the same whether or not the cache was warm.
    notes: tuple[str, ...]
    warnings: tuple[str, ...]
    #: files_digest of what it wrote: every file's path, size and time, so that a
    #: page changed or removed by hand is noticed.
    files: str


def files_digest(files: dict[str, tuple[int, int]]) -> str:
    """One hash of a site's files as written or walked: path -> (size, mtime in ns)."""
    data = orjson.dumps(files, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(data, digest_size=16).hexdigest()


#: The last build's pages: path -> (what it was made from, as a key; size; mtime in ns).
PageKeys = dict[str, tuple[str, int, int]]


class Cache:
    """The cache folder of one output folder; with `enabled` false, it neither keeps nor
    gives anything (`--no-cache`), and the build reads every input once."""

    def __init__(self, output: Path, enabled: bool = True) -> None:
        # Beside the output as the system finds it: "out/../site" must not make an
        # empty out/ for the cache, and "a/.." names the folder a, not "..".
        place = output.absolute()
        if place.name in ("", ".", ".."):
            place = place.resolve()
        self.folder = place.parent.resolve() / CACHE_DIR / place.name
        self.enabled = enabled
        #: The inputs' digests: those the last build took, and this build's.
        stored = self._get("digests", "last", _StoredDigests, _check_digests)
        self.digests = KnownDigests(
            {name: (tuple(entry[:5]), entry[5], entry[6]) for name, entry in stored.items()}  # type: ignore[misc]
            if stored is not None
            else None
        )
        #: What was taken from the cache, in words ("parsed inputs", "3 charts").
        self.reused: list[str] = []

    # -- the kinds of entry

    def get_inputs(self, entry: str) -> Loaded | None:
        loaded = self._get("inputs", entry, Loaded, _check_loaded)
        if loaded is not None:
            self.reused.append("parsed inputs")
        return loaded

    def put_inputs(self, entry: str, loaded: Loaded) -> None:
        self._put("inputs", entry, loaded)

    def get_charts(self, entry: str) -> SiteCharts | None:
        return self._get("charts", entry, SiteCharts, _check_charts)

    def put_charts(self, entry: str, charts: SiteCharts) -> None:
        self._put("charts", entry, _without_specs(charts))

    def get_site(self, entry: str) -> SiteState | None:
        return self._get("site", entry, SiteState, _check_site)

    def put_site(self, entry: str, state: SiteState) -> None:
        self._put("site", entry, state)

    def put_digests(self) -> None:
        known = self.digests
        if known.taken != known.recorded:
            stored = {
                name: (*stamp, at, digest) for name, (stamp, at, digest) in known.taken.items()
            }
            self._put("digests", "last", stored)

    def get_results(self) -> Results:
        from .results import Results, results_from_json  # numpy: only for a full build

        stored = self._get("results", "last", dict[str, Any], results_from_json)
        return Results(stored, keep=self.enabled)

    def put_results(self, results: Results) -> None:
        if results.reused:
            self.reused.append(f"{results.reused} computed results")
        if results.used != results.recorded:
            self._put("results", "last", results.used)

    def get_pages(self) -> PageKeys | None:
        return self._get("pages", "last", PageKeys, _check_pages)

    def put_pages(self, pages: PageKeys) -> None:
        self._put("pages", "last", pages)

    # -- files

    def _usable(self) -> bool:
        # A symbolic link in place of the cache folder could send writes (and the
        # pruning of old entries) anywhere: such a cache is not used at all.
        return self.enabled and not any(p.is_symlink() for p in (self.folder.parent, self.folder))

    def _get(self, kind: str, entry: str, shape: type[T], check: Callable[[T], object]) -> T | None:
        """The entry decoded as `shape` (msgspec checks every field's type: no bool
        for an int, no float for an int, no missing or unknown field) and passed
        by `check` (what the types cannot say); None for anything else."""
        if not self._usable():
            return None
        raw = _read_regular(self.folder / f"{kind}-{entry}{_SUFFIX}")
        if raw is None:
            return None
        try:
            value = msgspec.json.decode(raw, type=shape)
            check(value)
        except (msgspec.MsgspecError, ValueError, RecursionError):
            # Damaged, foreign or from another version (Damaged and results.Unfit are
            # ValueErrors too): the piece is made again.
            return None
        return value

    def _put(self, kind: str, entry: str, value: Any) -> None:
        if not self._usable():
            return
        path = self.folder / f"{kind}-{entry}{_SUFFIX}"
        try:
            data = msgspec.json.encode(value)
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
            self._prune(kind)
        except (OSError, TypeError, msgspec.MsgspecError):
            pass  # a cache that cannot be written (or text JSON cannot hold) only costs speed

    def _prune(self, kind: str) -> None:
        entries = sorted(
            self.folder.glob(f"{kind}-*{_SUFFIX}"),
            key=lambda p: p.lstat().st_mtime,
            reverse=True,
        )
        for old in entries[_KEEP:]:
            old.unlink(missing_ok=True)


def _read_regular(path: Path) -> bytes | None:
    """The bytes of a regular file of sane size; None for anything else. Without
    following a symbolic link, and without blocking on a named pipe someone left in
    the cache's place."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_DOCUMENT_BYTES:
            return None
        with open(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_DOCUMENT_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)


# ---------------------------------------------------------------- what types cannot say


def _check_loaded(loaded: Loaded) -> None:
    """What load_sources guarantees to the stages after it, and what a reader accepts."""
    if not loaded.result_sets:
        raise Damaged("no result sets")
    formats = [name for _, name in loaded.formats] + [rs.format for rs in loaded.result_sets]
    if not set(formats) <= set(FORMATS):
        raise Damaged("an unknown format")
    for rs in loaded.result_sets:
        if not rs.evaluated_tasks or len({t.id for t in rs.tasks}) != len(rs.tasks):
            raise Damaged("a result set without evaluated runs, or with a task twice")
        if set(rs.named_by) - {"suite", "model"}:
            raise Damaged("unknown keys in named_by")
        if rs.condition != condition_key(rs.condition):
            raise Damaged("a baseline condition not stored as ''")
        if not all(0 <= number <= 1 for _, number in rs.figures):
            raise Damaged("a harness figure outside [0, 1]")
        for task in rs.tasks:
            _check_task(task)


def _check_task(task: TaskCounts) -> None:
    if min(task.successes, task.runs, task.excluded) < 0 or task.successes > task.runs:
        raise Damaged("a negative count, or more successes than runs")
    codes = task.codes or b""
    if task.codes is not None:
        # Only the three outcome codes, and the counts they imply.
        if codes.translate(None, bytes([PASS, 0, EXCLUDED])):
            raise Damaged("unknown run code")
        excluded = codes.count(EXCLUDED)
        if (task.successes, task.runs, task.excluded) != (
            codes.count(PASS),
            len(codes) - excluded,
            excluded,
        ):
            raise Damaged("counts disagree with the runs")
    # The loader accepts only http(s) links; a cached one must be no different.
    for position, url in task.urls.items():
        if not 0 <= position < len(codes) or not url.lower().startswith(("http://", "https://")):
            raise Damaged("bad transcript link")
    for position in task.notes:
        if not 0 <= position < len(codes) or codes[position] != EXCLUDED:
            raise Damaged("a note on a run that was evaluated")
    for name, packed in task.measures.items():
        import numpy as np  # only where runs recorded measures: an unchanged build loads none

        if name not in MEASURES or len(packed) != 8 * len(codes):
            raise Damaged("an unknown measure, or one that is not one value a run")
        values = np.frombuffer(packed, dtype=np.float64)
        known = values[~np.isnan(values)]
        top = 1.0 if name == "confidence" else np.inf
        if known.size and not (np.all(known >= 0) and np.all(known <= top)):
            raise Damaged(f"a {name} outside what the readers accept")


def _without_specs(charts: SiteCharts) -> SiteCharts:
    """The charts as stored: the drawings, not the specs they were drawn from."""

    def drawn(group: list[Chart]) -> list[Chart]:
        return [
            Chart(c.id, c.title, c.description, svg=c.svg, narrow_svg=c.narrow_svg) for c in group
        ]

    return SiteCharts(
        overview=drawn(charts.overview),
        by_set={k: drawn(v) for k, v in charts.by_set.items()},
        by_comparison={k: drawn(v) for k, v in charts.by_comparison.items()},
        by_trend={k: drawn(v) for k, v in charts.by_trend.items()},
    )


# What vl-convert draws, plus what `chart._accessible` adds. Pages include a chart's
# SVG as it is, so a cached one must hold nothing that could run or load: only
# these elements, no event handler attributes, no links.
_SVG_ELEMENTS = frozenset(
    [
        "svg",
        "g",
        "path",
        "line",
        "rect",
        "circle",
        "ellipse",
        "polygon",
        "polyline",
        "text",
        "tspan",
        "title",
        "desc",
        "defs",
        "clipPath",
        "linearGradient",
        "stop",
    ]
)
_TAG = re.compile(r"<(/?)([^\s/>]*)")
# An event handler (HTML starts an attribute after a space, a slash or a quote), a
# link, a script URL, markup declarations, and what CSS can load.
_ACTIVE = re.compile(
    r"""[\s/"']on[a-z]+\s*=|href|javascript:|<!|<\?|url\s*\(|@import|expression\s*\(""",
    re.IGNORECASE,
)
# A style attribute's value: only plain declarations (max-width: 723px), with nothing
# CSS could decode into a load (no backslash escape, entity, parenthesis).
_STYLE = re.compile(r"""style\s*=\s*("[^"]*"|'[^']*'|[^\s>]*)""", re.IGNORECASE)
_PLAIN_STYLE = re.compile(r"""["']?[a-zA-Z0-9\s:;.,%#-]*["']?""")


def _inert(text: str) -> bool:
    """Whether text may go into a page as it is: nothing in it could run or load.

    Checked as written and with character references decoded, as a browser reads
    attribute values (SVG's fill, cursor or mask take CSS, and `u&#114;l(` is a
    url); a backslash, which CSS reads as an escape (`\\75rl(`), is refused."""
    decoded = html.unescape(text)
    return (
        not _ACTIVE.search(text)
        and not _ACTIVE.search(decoded)
        and "\\" not in decoded
        and all(name in _SVG_ELEMENTS for _, name in _TAG.findall(text))
        and all(_PLAIN_STYLE.fullmatch(value) for value in _STYLE.findall(decoded))
    )


def _check_charts(charts: SiteCharts) -> None:
    # Pages include a chart's SVG as it is (and a spec is never stored).
    for chart in charts.all():
        drawings = (chart.svg, chart.narrow_svg)
        if chart.specs or not all(d.startswith("<svg ") and _inert(d) for d in drawings):
            raise Damaged("not a chart, or one with an element charts do not use")


_HASH = re.compile(r"[0-9a-f]{32}")


def _check_site(state: SiteState) -> None:
    if state.result_sets < 0 or not _HASH.fullmatch(state.files):
        raise Damaged("not the state of a site")


def _check_pages(pages: PageKeys) -> None:
    for page_key, size, _ in pages.values():
        if not _HASH.fullmatch(page_key) or size < 0:
            raise Damaged("a page key is not a hash")


#: Digests as stored: the stamp's five numbers, when the digest was taken, the digest.
_StoredDigests = dict[str, tuple[int, int, int, int, int, int, str]]


def _check_digests(digests: _StoredDigests) -> None:
    for name, (size, _, _, inode, device, _, digest) in digests.items():
        if not os.path.isabs(name) or not _HASH.fullmatch(digest) or min(size, inode, device) < 0:
            raise Damaged("not a digest of a file")
