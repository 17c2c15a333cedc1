"""The pipeline, top to bottom: read -> estimate -> chart -> render -> write.

`build()` reads as the pipeline runs. What it may reuse from an earlier build is
decided by keys (keys.py) made from what each stage reads: the inputs' digests,
the history, the settings that stage depends on (settings.py) and the theme.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .cache import Cache, SiteState, files_digest, folder_digest, input_digest
from .config import Config, site_urls
from .errors import UserError, one_line, os_reason
from .keys import key
from .readers import SCORER_FORMATS, Loaded, load_sources
from .settings import PAGES, REPORT, BuildSettings
from .terminal import set_warnings, skipped_warnings, terminal_safe
from .website.chart_engine import Converter
from .website.theme import Theme
from .website.write import MARKER, SiteOnDisk, check_output, current_umask, site_on_disk, write_site

if TYPE_CHECKING:
    from .report import Report
    from .views import Json
    from .website.charts import PendingCharts, SiteCharts
    from .website.render import Renderer
    from .website.write import Keep, Written

# The statistics, the report model and the renderer (numpy, scipy, Altair) are
# imported where a build needs them, below: a build that keeps every file loads none.


class Progress:
    """One status line on stderr, redrawn in place, only when stderr is a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        # A dumb terminal (TERM=dumb: Emacs' shell, some CI logs) has no escape to clear a line.
        self.live = self.stream.isatty() and os.environ.get("TERM") != "dumb"
        self._last = 0.0

    def note(self, message: str) -> None:
        """A line worth keeping in a CI log, such as which format was detected."""
        self.clear()
        # One line, even when a file name holds a line break.
        print(terminal_safe(one_line(message)), file=self.stream)

    def update(self, message: str) -> None:
        now = time.monotonic()
        if self.live and now - self._last > 0.1:
            self._last = now
            self.stream.write("\r\x1b[K" + message)
            self.stream.flush()

    def clear(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


@dataclass(frozen=True)
class BuildResult:
    output: Path
    files: int
    pages: int
    result_sets: int
    bytes: int
    seconds: float
    #: What came from the cache, in words; empty for a full build.
    reused: str = ""
    #: Files of the site this build replaced (0 when there was none).
    previous_files: int = 0
    #: What the report warns of, each as "set name: warning" (when the build kept the
    #: previous site whole, those the build that wrote it recorded).
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class History:
    """The earlier builds' entries and this build's label, when the build keeps a history."""

    entries: list[Json]
    label: str


@dataclass(frozen=True)
class BuildKeys:
    """What each reusable piece is made from, as keys (see keys.key)."""

    #: The result files' digests and how each is read: the parsed inputs.
    inputs: str
    #: The inputs, the history and the settings the numbers depend on: the report and
    #: its charts.
    report: str
    #: All of that, the page settings and the theme: the whole site.
    site: str

    @property
    def charts(self) -> str:
        return key("charts", self.report)


@dataclass(frozen=True)
class PreviousSite:
    """The site at the output folder as a walk found it, and what the cache says of it."""

    on_disk: SiteOnDisk | None
    #: What the last build recorded, when it was made with this build's site key.
    state: SiteState | None
    #: Its pages that may be kept: path -> the key they were made with.
    pages: dict[str, str]

    @property
    def unchanged(self) -> bool:
        """Whether it is the site this build would write, as that build left it."""
        return (
            self.state is not None
            and self.on_disk is not None
            and self.state.files == files_digest(self.on_disk.files)
        )


def build(
    config: Config,
    force: bool = False,
    progress: Progress | None = None,
    use_cache: bool = True,
    converter: Converter | None = None,
) -> BuildResult:
    """read -> estimate -> chart -> render -> write, reusing what is unchanged.

    `converter`, a chart engine the caller started, is used and closed.
    """
    progress = progress or Progress()
    start = time.perf_counter()
    check_output(config.output, force, _inputs(config), config.named("output"))
    base_path, _ = site_urls(config)
    settings = BuildSettings.from_config(config, base_path, current_umask())
    theme = Theme.from_folders(
        config.templates, config.content, (config.named("templates"), config.named("content"))
    )
    cache = Cache(config.output, enabled=use_cache)
    history = _history(config, progress)
    keys = _keys(config, settings, theme, history, cache, progress)
    previous = _previous_site(config.output, cache, keys.site)
    if previous.unchanged:
        if converter is not None:
            converter.close()
        cache.put_digests()  # the stamps of inputs touched but not changed
        return _kept_whole(config.output, previous, start, progress)

    from .website.content_worker import ContentWorker, read_content
    from .website.render import Renderer

    content = read_content(theme)
    # The content pages need only the settings: rendered while the inputs are read.
    worker = ContentWorker(content, settings.site, skip=previous.pages)
    charts = cache.get_charts(keys.charts)
    if charts is None:
        # Started now (unless the caller did), so that its start-up overlaps the reading.
        converter = converter or Converter()
    elif converter is not None:
        converter.close()
        converter = None
    try:
        report, notes = _read_and_estimate(config, settings, history, keys, cache, progress)
        progress.update("rendering pages")
        drawing = _drawing(report, charts, converter, cache, keys)
        renderer = Renderer(
            report, drawing, theme, settings, previous.pages, content, worker.finish
        )
        on_disk = _write(config, force, renderer.pages(), previous, renderer, progress)
    finally:
        worker.close()
        if converter is not None:
            converter.close()
    return _recorded(config.output, report, renderer, on_disk, previous, notes, keys, cache, start)


def _inputs(config: Config) -> list[Path]:
    """What the build reads and the output folder must not hold.

    Not the history file: its entries are carried into the new site's
    history.jsonl, so extending a site's own copy in place loses nothing.
    """
    paths = [s.path for s in config.result_sets]
    return [*paths, *(p for p in (config.path, config.templates, config.content) if p)]


def _history(config: Config, progress: Progress) -> History | None:
    if config.history is None:
        if config.label is not None:
            # A label names this build in a history; with no history file there is
            # nothing to name, and silently dropping it hid a forgotten --history.
            progress.note(
                f"label {config.label!r} ignored: there is no history to add this build to; "
                "give --history FILE (for example the published site's history.jsonl) to "
                "start one"
            )
        return None
    from .history import default_label, read_history

    entries = read_history(config.history, config.named("history"))
    cwd = config.path.parent if config.path is not None else Path.cwd()
    return History(entries, config.label or default_label(entries, cwd))


def _keys(
    config: Config,
    settings: BuildSettings,
    theme: Theme,
    history: History | None,
    cache: Cache,
    progress: Progress,
) -> BuildKeys:
    progress.update("hashing inputs")
    # Content hashes only matter to the cache: without one the inputs are read once.
    digests = [
        (source, input_digest(source.path, cache.digests) if cache.enabled else None)
        for source in config.result_sets
    ]
    inputs = key("inputs", digests)
    report = key("report", inputs, history, settings.affecting(REPORT))
    theme_digest = folder_digest(theme.templates + theme.content) if cache.enabled else None
    site = key("site", report, settings.affecting(PAGES), theme_digest)
    return BuildKeys(inputs=inputs, report=report, site=site)


def _previous_site(output: Path, cache: Cache, site_key: str) -> PreviousSite:
    """The site now at `output`; a cache's list of its pages is trusted only for
    files still of the size and time it records."""
    on_disk = site_on_disk(output) if (output / MARKER).is_file() else None
    if on_disk is None:
        return PreviousSite(None, None, {})
    recorded = cache.get_pages() or {}
    pages = {
        path: page_key
        for path, (page_key, size, mtime) in recorded.items()
        if on_disk.files.get(path) == (size, mtime)
    }
    return PreviousSite(on_disk, cache.get_site(site_key), pages)


def _kept_whole(
    output: Path, previous: PreviousSite, start: float, progress: Progress
) -> BuildResult:
    """Nothing changed: the previous site stays, and what its build said is said again."""
    assert previous.state is not None and previous.on_disk is not None
    files = previous.on_disk.files
    progress.clear()
    for line in previous.state.notes:
        progress.note(line)
    return BuildResult(
        output=output,
        files=len(files),
        pages=sum(1 for name in files if name.endswith(".html")),
        result_sets=previous.state.result_sets,
        bytes=sum(size for size, _ in files.values()),
        seconds=time.perf_counter() - start,
        reused="nothing changed: kept every file of the previous build",
        warnings=previous.state.warnings,
    )


def _note_formats(config: Config, loaded: Loaded, progress: Progress) -> list[str]:
    """Say which format each input was read as; returns the lines said."""
    lines = []
    for path, format_name in loaded.formats:
        sources = [s for s in config.result_sets if str(s.path) == path]
        given = any(s.format for s in sources)
        # Which of several scores was counted: otherwise nothing on the pages says.
        scorers = sorted(
            {s.scorer for s in sources if s.scorer} if format_name in SCORER_FORMATS else ()
        )
        scorer = f"; scorer {', '.join(scorers)}" if scorers else ""
        lines.append(f"read {path} ({format_name}{'' if given else ', detected'}{scorer})")
        progress.note(lines[-1])
    return lines


def _read_and_estimate(
    config: Config,
    settings: BuildSettings,
    history: History | None,
    keys: BuildKeys,
    cache: Cache,
    progress: Progress,
) -> tuple[Report, list[str]]:
    """Read (or take the parsed inputs from the cache) and estimate; also the lines
    said about the inputs, which a later build that keeps the site says again."""
    progress.update("reading inputs")
    loaded = cache.get_inputs(keys.inputs)
    if loaded is None:
        loaded = load_sources(config.result_sets)
        cache.put_inputs(keys.inputs, loaded)
    # The digests are recorded once the inputs were read without a problem.
    cache.put_digests()
    notes = _note_formats(config, loaded, progress)
    progress.update("estimating")
    if history is not None and config.history is not None and not config.history.exists():
        notes.append(f"no history at {config.history} yet: starting one with {history.label!r}")
        progress.note(notes[-1])
    from .report import build_report

    # The slow computations' results of the last build, where their arguments are unchanged.
    results = cache.get_results()
    report = build_report(
        loaded.result_sets,
        settings.title,
        settings.description,
        settings.k,
        settings.confidence,
        None if history is None else (history.entries, history.label),
        results,
        skipped=loaded.skipped,
    )
    cache.put_results(results)
    return report, notes


def _drawing(
    report: Report,
    cached: SiteCharts | None,
    converter: Converter | None,
    cache: Cache,
    keys: BuildKeys,
) -> PendingCharts:
    """The charts: from the cache, or drawn while the pages without charts render."""
    from .website.charts import PendingCharts

    if cached is not None and cached.fit(report):
        cache.reused.append(f"{cached.count} charts")
        return PendingCharts.ready(cached)

    def begin() -> Callable[[], SiteCharts]:
        from .website.chart import begin_charts  # Altair loads only to draw

        receive = begin_charts(report, converter)  # a new engine if none runs

        def drawn() -> SiteCharts:
            made = receive()
            cache.put_charts(keys.charts, made)
            return made

        return drawn

    return PendingCharts(begin)


def _write(
    config: Config,
    force: bool,
    files: Iterable[tuple[str, bytes | Written | Keep]],
    previous: PreviousSite,
    renderer: Renderer,
    progress: Progress,
) -> dict[str, tuple[int, int]]:
    """Write the site and swap it in; the new site's files as written."""
    written: dict[str, tuple[int, int]] = {}
    total = renderer.page_count()
    try:
        write_site(
            config.output,
            files,
            force=force,
            on_file=lambda n: progress.update(f"writing {n}/{total}+ files"),
            inputs=_inputs(config),
            written_files=written,
            on_staging=renderer.set_staging,
            previous=previous.on_disk,
        )
    except OSError as error:
        # Disk full, a folder that vanished or became a file after check_output, another
        # build swapping in the same folder: write_site has already removed its staging.
        raise UserError(
            f"{config.named('output')}: {config.output}: cannot write the site: {os_reason(error)}"
        ) from None
    progress.clear()
    return written


def _recorded(
    output: Path,
    report: Report,
    renderer: Renderer,
    on_disk: dict[str, tuple[int, int]],
    previous: PreviousSite,
    notes: list[str],
    keys: BuildKeys,
    cache: Cache,
    start: float,
) -> BuildResult:
    """Record the new site in the cache for the next build, and say what was made."""
    warnings = tuple(
        skipped_warnings(report.skipped)
        + [f"{s.result_set.name}: {w}" for s in report.sets for w in set_warnings(s)]
    )
    state = SiteState(len(report.sets), tuple(notes), warnings, files_digest(on_disk))
    cache.put_site(keys.site, state)
    cache.put_pages(
        {path: (key, *on_disk[path]) for path, key in renderer.keys.items() if path in on_disk}
    )
    reused = [*cache.reused, *([f"{renderer.kept} unchanged pages"] if renderer.kept else [])]
    return BuildResult(
        output=output,
        files=len(on_disk),
        pages=sum(1 for name in on_disk if name.endswith(".html")),
        result_sets=len(report.sets),
        bytes=sum(size for size, _ in on_disk.values()),
        seconds=time.perf_counter() - start,
        reused=f"reused {' and '.join(reused)} from the cache" if reused else "",
        previous_files=len(previous.on_disk.files) if previous.on_disk is not None else 0,
        warnings=warnings,
    )
