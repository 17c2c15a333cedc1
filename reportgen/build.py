"""The pipeline, top to bottom: load -> estimate -> chart -> render -> write."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .cache import (
    Cache,
    KnownDigests,
    SiteRecipe,
    SiteState,
    files_digest,
    folder_digest,
    input_digest,
)
from .cache import key as cache_key
from .config import Config, site_urls
from .errors import UserError, one_line, os_reason
from .readers import SCORER_FORMATS, Loaded, load_sources
from .terminal import set_warnings, skipped_warnings, terminal_safe
from .website.chart_engine import Converter
from .website.charts import PendingCharts, SiteCharts, drawing_key
from .website.replay import ReplayEnvironment, guard, replay_page
from .website.theme import SiteOptions, Theme, environment, template_key, template_references
from .website.write import (
    KEEP,
    MARKER,
    SiteOnDisk,
    check_output,
    current_umask,
    site_on_disk,
    write_site,
)

if TYPE_CHECKING:
    from .report import Report
    from .views import Json
    from .website.render import ContentTexts, ContentWorker

# The statistics, the report model and the renderer (numpy, scipy, Altair) are
# imported where a build needs them, below: a build that keeps every file, or
# renders the edited overview from its record (_replayed), loads none of them.


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


def build_date() -> str | None:
    """The date to print on pages: only when SOURCE_DATE_EPOCH pins it (reproducible builds)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return None
    try:
        moment = dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC)
    except (ValueError, OverflowError, OSError):
        raise UserError(
            f"SOURCE_DATE_EPOCH: {epoch!r} is not a date: give whole seconds since "
            "1970-01-01 UTC, before the year 10000"
        ) from None
    return moment.strftime("%Y-%m-%d")


def _site_state(files: dict[str, tuple[int, int]]) -> tuple[int, int, int]:
    """(files, bytes, HTML pages) of a built site.

    Also a cheap check, for the cache, that nobody changed the site by hand.
    """
    pages = sum(1 for name in files if name.endswith(".html"))
    return len(files), sum(size for size, _ in files.values()), pages


def _reusable_pages(cache: Cache, on_disk: SiteOnDisk | None) -> dict[str, str]:
    """Pages of the previous build that are still on disk as it wrote them: path -> key.

    The cache's list is untrusted: a page is offered for reuse only when a
    regular file of the same size and time is at its (relative) path.
    `on_disk` is the previous site as walked (None when there is none).
    """
    if on_disk is None:
        return {}
    recorded = cache.get_pages()
    if not recorded:
        return {}
    files = on_disk.files
    return {
        path: page_key
        for path, (page_key, size, mtime) in recorded.items()
        if files.get(path) == (size, mtime)
    }


def _is_template(relative: Path) -> bool:
    """Whether a file of a templates folder is a page template (not an asset)."""
    return relative.suffix == ".html" and relative.parts[0] != "assets"


def _replayed(
    config: Config,
    force: bool,
    progress: Progress,
    cache: Cache,
    keys: tuple[str, str, str, str],
    theme: Theme,
    on_disk: SiteOnDisk,
    retired: list[Path] | None,
) -> BuildResult | None:
    """A rebuild after edits of templates alone, when every changed page has a record
    of what its template read (website/replay.py): those pages are rendered from their
    records, every other file is kept, and the inputs are not read. None when that
    cannot be done; the build then goes the usual way.

    The recipe is untrusted: it is used only when the site on disk is, file for
    file, the one it describes, and it only ever leads to the page a full build
    would make or to the usual build.
    """
    site_key, recipe_key = keys[2], keys[3]
    recipe = cache.get_recipe(recipe_key)
    if recipe is None or on_disk.files != recipe.files:
        return None
    env = environment(theme)
    now = {name: template_key(env, name, recipe.references) for name in recipe.templates}
    # A template that cannot be followed (None) counts as changed: its pages are always
    # rendered, as Renderer._kept renders them.
    changed = {name for name, key in now.items() if key is None or key != recipe.templates[name]}
    records = {}
    for path, (template, data_key) in recipe.pages.items():
        if template not in changed:
            continue
        record = cache.get_record(path, data_key) if data_key and now[template] else None
        if record is None:
            return None
        records[path] = (template, record)
    progress.update("rendering pages from their records")
    guarded = guard(environment(theme, ReplayEnvironment))
    pages: dict[str, bytes] = {}
    for path, (template, record) in records.items():
        # A page may grow with an edit, but not without bound: see replay_page.
        limit = 4 * recipe.files[path][0] + (1 << 20)
        try:
            pages[path] = replay_page(guarded, template, record, limit).encode("utf-8")
        except Exception:  # a Miss, or an error the usual build reports with its place
            return None
    files = ((path, pages.get(path, KEEP)) for path in recipe.files if path != MARKER)
    written: dict[str, tuple[int, int]] = {}
    try:
        count, size = write_site(
            config.output,
            files,
            force=force,
            inputs=_inputs(config),
            written_files=written,
            previous=on_disk,
            retired=retired,
        )
    except OSError as error:
        raise UserError(
            f"{config.named('output')}: {config.output}: cannot write the site: {os_reason(error)}"
        ) from None
    progress.clear()
    state = recipe.state
    for line in state.notes:
        progress.note(line)
    # The same files as before: only the rendered pages' sizes may have changed.
    file_count, size_before, html_pages = state.counts
    grown = sum(written[path][0] - recipe.files[path][0] for path in pages)
    counts = (file_count, size_before + grown, html_pages)
    site_state = dataclasses.replace(state, counts=counts, files=files_digest(written))
    cache.put_site(site_key, site_state)
    # The earlier builds' and this one's, the latest few: each edit adds a source.
    references = dict([*recipe.references.items(), *template_references().items()][-64:])
    cache.put_recipe(recipe_key, SiteRecipe(written, recipe.pages, now, references, site_state))
    kept_pages = site_state.counts[2] - len(pages)
    rendered = ", ".join(sorted(pages)) or "no page"
    return BuildResult(
        output=config.output,
        files=count + 1,  # and the marker
        pages=site_state.counts[2],
        result_sets=state.result_sets,
        bytes=size,
        seconds=0.0,
        reused=(
            f"rendered {rendered} from a record of its last rendering and kept "
            f"{kept_pages} unchanged pages, without reading the inputs"
        ),
        previous_files=len(on_disk.files),
        warnings=state.warnings,
    )


def _inputs(config: Config) -> list[Path]:
    """What the build reads and the output folder must not hold.

    Not the history file: its entries are carried into the new site's
    history.jsonl, so extending a site's own copy in place loses nothing.
    """
    paths = [s.path for s in config.result_sets]
    return [*paths, *(p for p in (config.path, config.templates, config.content) if p)]


def build(
    config: Config,
    force: bool = False,
    progress: Progress | None = None,
    use_cache: bool = True,
    converter: Converter | None = None,
    retired: list[Path] | None = None,
) -> BuildResult:
    """load -> estimate -> chart -> render -> write, reusing cached pieces when unchanged.

    `converter`, a chart engine the caller started, is used and closed. `retired`,
    when given, receives the previous site once the new one has replaced it, for the
    caller to remove later (see write_site); otherwise the build removes it.
    """
    progress = progress or Progress()
    start = time.perf_counter()
    check_output(config.output, force, _inputs(config), config.named("output"))
    base_path, base_url = site_urls(config)
    theme = Theme.from_folders(
        config.templates, config.content, (config.named("templates"), config.named("content"))
    )
    options = SiteOptions(
        base_path=base_path,
        base_url=base_url,
        build_date=build_date(),
        task_pages=config.task_pages,
        umask=current_umask(),
    )
    cache = Cache(config.output) if use_cache else None

    progress.update("hashing inputs")
    # Content hashes only matter to the cache; without it, skip reading the inputs twice.
    # An input unchanged since the last build (by its stat) keeps that build's digest.
    known = cache.get_digests() if cache is not None else None
    inputs_key = cache_key(
        [
            (s, input_digest(s.path, known) if known is not None else None)
            for s in config.result_sets
        ]
    )
    previous_history: list[Json] | None = None
    label = None
    if config.history is not None:
        from .history import default_label, read_history

        previous_history = read_history(config.history, config.named("history"))
        cwd = config.path.parent if config.path is not None else Path.cwd()
        label = config.label or default_label(previous_history, cwd)
    elif config.label is not None:
        # A label names this build in a history; with no history file there is
        # nothing to name, and silently dropping it hid a forgotten --history.
        progress.note(
            f"label {config.label!r} ignored: there is no history to add this build to; "
            "give --history FILE (for example the published site's history.jsonl) to start one"
        )
    history_key = cache_key(previous_history, label)
    settings = (
        inputs_key,
        history_key,
        config.title,
        config.description,
        config.k,
        config.confidence,
        options,
    )
    site_key = cache_key(
        *settings,
        folder_digest(theme.templates + theme.content) if cache is not None else None,
    )
    # The same but for the templates' pages: what a rebuild from records needs unchanged.
    recipe_key = (
        cache_key(
            *settings,
            folder_digest(theme.content),
            folder_digest(theme.templates, skip=_is_template),
        )
        if cache is not None
        else ""
    )
    keys = (inputs_key, history_key, site_key, recipe_key)
    previous = cache.get_site(site_key) if cache is not None else None
    # The previous site's files, walked once: for the check below and the pages to keep.
    on_disk = site_on_disk(config.output) if (config.output / MARKER).is_file() else None
    # Counted only when there is a previous state to compare with: 20,000 files take 5 ms.
    state = _site_state(on_disk.files) if on_disk is not None and previous is not None else None
    if (
        previous is not None
        and previous.counts == state
        and on_disk is not None
        and previous.files == files_digest(on_disk.files)
    ):
        assert state is not None
        kept, kept_bytes, kept_pages = state
        if cache is not None and known is not None:
            cache.put_digests(known)
        progress.clear()
        for line in previous.notes:
            progress.note(line)
        if converter is not None:
            converter.close()
        return BuildResult(
            output=config.output,
            files=kept,
            pages=kept_pages,
            result_sets=previous.result_sets,
            bytes=kept_bytes,
            seconds=time.perf_counter() - start,
            reused="nothing changed: kept every file of the previous build",
            warnings=previous.warnings,
        )

    if cache is not None and on_disk is not None:
        replayed = _replayed(config, force, progress, cache, keys, theme, on_disk, retired)
        if replayed is not None:
            if known is not None:
                cache.put_digests(known)
            if converter is not None:
                converter.close()
            return dataclasses.replace(replayed, seconds=time.perf_counter() - start)

    from .website.render import ContentWorker, read_content, site_settings

    reusable = _reusable_pages(cache, on_disk) if cache is not None else {}
    content = read_content(theme)
    charts_key = cache_key(inputs_key, history_key, config.k, config.confidence, drawing_key())
    cached_charts = cache.get_charts(charts_key) if cache is not None else None
    if cached_charts is not None:
        # Every chart is in the cache: an engine the caller started is stopped at
        # once, so that its start-up does not take a core from this build.
        if converter is not None:
            converter.close()
        converter = None
    else:
        # vl-convert starts in a child process now (unless the caller started it even
        # earlier), so its start-up overlaps the reading.
        converter = converter or Converter()
    # The content pages, which need only the config, are rendered alongside the
    # reading too (those not likely kept).
    worker = ContentWorker(
        content,
        site_settings(config.title, config.description, config.k, config.confidence),
        skip=reusable,
    )
    job = _Job(
        config,
        force,
        progress,
        cache,
        keys,
        label,
        previous_history,
        theme,
        options,
        start,
        reusable,
        content,
        worker,
        on_disk,
        charts_key,
        cached_charts,
        retired,
        known,
    )
    try:
        return _stages(job, converter)
    finally:
        worker.close()
        if converter is not None:
            converter.close()


@dataclass(frozen=True)
class _Job:
    """What build() settled before the stages run."""

    config: Config
    force: bool
    progress: Progress
    cache: Cache | None
    keys: tuple[str, str, str, str]  # inputs, history, whole site, all but the templates
    label: str | None
    previous_history: list[Json] | None
    theme: Theme
    options: SiteOptions
    start: float
    #: Pages of the previous build that may be kept: path -> key.
    reusable: dict[str, str]
    content: ContentTexts
    worker: ContentWorker
    #: The previous site as walked; None without one.
    previous: SiteOnDisk | None = None
    charts_key: str = ""
    #: The charts of the cache entry for charts_key, when there is one.
    cached_charts: SiteCharts | None = None
    #: Where to hand the previous site for the caller to remove; None: removed here.
    retired: list[Path] | None = None
    #: The inputs' content digests, stored once they have been read without a problem
    #: (a build refused for bad input leaves no cache behind).
    digests: KnownDigests | None = None


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


def _read_and_estimate(job: _Job, reused: list[str], notes: list[str]) -> tuple[Loaded, Report]:
    """Read (or take from the cache) and estimate; the lines said go to `notes`."""
    config, progress, cache = job.config, job.progress, job.cache
    inputs_key = job.keys[0]
    progress.update("reading inputs")
    loaded = cache.get_inputs(inputs_key) if cache is not None else None
    if loaded is not None:
        reused.append("parsed inputs")
    else:
        loaded = load_sources(config.result_sets)
        if cache is not None:
            cache.put_inputs(inputs_key, loaded)
    notes.extend(_note_formats(config, loaded, progress))

    progress.update("estimating")
    history = None
    if job.previous_history is not None:
        assert job.label is not None
        if config.history is not None and not config.history.exists():
            notes.append(f"no history at {config.history} yet: starting one with {job.label!r}")
            progress.note(notes[-1])
        history = (job.previous_history, job.label)
    from .report import build_report

    # The slow computations' results of the last build, where their arguments are unchanged.
    results = cache.get_results() if cache is not None else None
    report = build_report(
        loaded.result_sets,
        config.title,
        config.description,
        config.k,
        config.confidence,
        history,
        results,
        skipped=loaded.skipped,
    )
    if cache is not None and results is not None:
        cache.put_results(results)
        if results.reused:
            reused.append(f"{results.reused} computed results")
    return loaded, report


#: The last report this process built and the key of what it was built from, so
#: that `serve`, rebuilding after a template or content edit, neither reads nor
#: estimates again. Kept only when the key holds the inputs' content hashes.
_last_report: tuple[str, Loaded, Report] | None = None


def _stages(job: _Job, converter: Converter | None) -> BuildResult:
    """load -> estimate -> chart -> render -> write, reusing cached pieces."""
    from .website.render import Renderer, page_count

    global _last_report
    config, progress, cache = job.config, job.progress, job.cache
    inputs_key, history_key, site_key, recipe_key = job.keys
    label = job.label
    reused: list[str] = []
    report_key = cache_key(
        config.output.absolute(),  # the same site rebuilt, as `serve` does
        inputs_key,
        history_key,
        label,
        config.title,
        config.description,
        config.k,
        config.confidence,
    )
    remembered = _last_report if cache is not None else None
    notes: list[str] = []  # what is said about the inputs, said again if the site is kept
    if remembered is not None and remembered[0] == report_key:
        _, loaded, report = remembered
        reused.append("the report of the previous build")
        notes.extend(_note_formats(config, loaded, progress))
    else:
        loaded, report = _read_and_estimate(job, reused, notes)
        _last_report = (report_key, loaded, report) if cache is not None else None
    if cache is not None and job.digests is not None:
        cache.put_digests(job.digests)
    progress.update("rendering pages")
    charts_key, cached = job.charts_key, job.cached_charts
    if cached is not None and cached.fit(report):
        reused.append(f"{cached.count} charts")
        charts = PendingCharts.ready(cached)
    else:

        def begin() -> Callable[[], SiteCharts]:
            from .website.chart import begin_charts  # Altair loads only to draw

            receive = begin_charts(report, converter)  # a new engine if none runs

            def drawn() -> SiteCharts:
                made = receive()
                if cache is not None:
                    cache.put_charts(charts_key, made)
                return made

            return drawn

        # Drawn while the pages without charts render (see Renderer._files).
        charts = PendingCharts(begin)

    renderer = Renderer(
        report,
        charts,
        job.theme,
        job.options,
        job.reusable,
        job.content,
        cache is not None,
        content_ready=job.worker.finish,
    )
    files = renderer.pages()
    total_pages = page_count(report, job.theme, job.options.task_pages)
    on_disk: dict[str, tuple[int, int]] = {}  # the new site's files, as written
    try:
        written, size = write_site(
            config.output,
            files,
            force=job.force,
            on_file=lambda n: progress.update(f"writing {n}/{total_pages}+ files"),
            inputs=_inputs(config),
            written_files=on_disk,
            on_staging=renderer.set_staging,
            previous=job.previous,
            retired=job.retired,
        )
    except OSError as error:
        # Disk full, a folder that vanished or became a file after check_output, another
        # build swapping in the same folder: write_site has already removed its staging.
        raise UserError(
            f"{config.named('output')}: {config.output}: cannot write the site: {os_reason(error)}"
        ) from None
    progress.clear()
    state = _site_state(on_disk)
    warnings = tuple(
        skipped_warnings(report.skipped)
        + [f"{s.result_set.name}: {w}" for s in report.sets for w in set_warnings(s)]
    )
    if cache is not None:
        site_state = SiteState(
            state, len(report.sets), tuple(notes), warnings, files_digest(on_disk)
        )
        cache.put_site(site_key, site_state)
        cache.put_pages(
            {path: (key, *on_disk[path]) for path, key in renderer.keys.items() if path in on_disk}
        )
        pages = {path: made for path, made in renderer.recipes.items() if path in on_disk}
        recipe = SiteRecipe(
            on_disk, pages, renderer.template_keys(), template_references(), site_state
        )
        cache.put_recipe(recipe_key, recipe)
        for path, (data_key, record) in renderer.record_pages().items():
            cache.put_record(path, data_key, record)
    if renderer.kept:
        reused.append(f"{renderer.kept} unchanged pages")
    return BuildResult(
        output=config.output,
        files=written + 1,  # and the marker
        pages=state[2],
        result_sets=len(report.sets),
        bytes=size,
        seconds=time.perf_counter() - job.start,
        reused=f"reused {' and '.join(reused)} from the cache" if reused else "",
        previous_files=len(job.previous.files) if job.previous is not None else 0,
        warnings=warnings,
    )
