"""The pipeline, top to bottom: load -> estimate -> chart -> render -> write."""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .cache import Cache, folder_digest, input_digest
from .cache import key as cache_key
from .config import Config, site_urls
from .errors import UserError, one_line, os_reason
from .history import default_label, read_history
from .readers import load_sources
from .report import build_report
from .terminal import terminal_safe
from .views import Json
from .website.chart import make_charts
from .website.chart_engine import Converter
from .website.render import SiteOptions, Theme, page_count, render_site
from .website.write import MARKER, check_output, write_site


class Progress:
    """One status line on stderr, redrawn in place, only when stderr is a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
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


def build_date() -> str | None:
    """The date to print on pages: only when SOURCE_DATE_EPOCH pins it (reproducible builds)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return None
    try:
        moment = dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC)
    except (ValueError, OverflowError):
        raise UserError(f"SOURCE_DATE_EPOCH: {epoch!r} is not a whole number of seconds") from None
    return moment.strftime("%Y-%m-%d")


def _site_state(output: Path) -> tuple[int, int, int]:
    """(files, bytes, HTML pages) of a built site, in one walk.

    Also a cheap check, for the cache, that nobody changed the site by hand.
    """
    files = [p for p in output.rglob("*") if p.is_file()]
    pages = sum(1 for p in files if p.suffix == ".html")
    return len(files), sum(p.stat().st_size for p in files), pages


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
) -> BuildResult:
    """load -> estimate -> chart -> render -> write, reusing cached pieces when unchanged."""
    progress = progress or Progress()
    start = time.perf_counter()
    check_output(config.output, force, _inputs(config))
    base_path, base_url = site_urls(config)
    theme = Theme.from_folders(config.templates, config.content)
    options = SiteOptions(base_path=base_path, base_url=base_url, build_date=build_date())
    cache = Cache(config.output) if use_cache else None

    progress.update("hashing inputs")
    # Content hashes only matter to the cache; without it, skip reading the inputs twice.
    inputs_key = cache_key(
        [(s, input_digest(s.path) if cache is not None else None) for s in config.result_sets]
    )
    previous_history = read_history(config.history) if config.history is not None else None
    label = None
    if previous_history is not None:
        cwd = config.path.parent if config.path is not None else Path.cwd()
        label = config.label or default_label(previous_history, cwd)
    history_key = cache_key(previous_history, label)
    site_key = cache_key(
        inputs_key,
        history_key,
        config.title,
        config.description,
        config.k,
        config.confidence,
        options,
        folder_digest(theme.templates + theme.content) if cache is not None else None,
    )
    keys = (inputs_key, history_key, site_key)
    previous = cache.get_site(site_key) if cache is not None else None
    state = _site_state(config.output) if (config.output / MARKER).is_file() else None
    if previous is not None and previous[0] == state and state is not None:
        kept, kept_bytes, kept_pages = state
        progress.clear()
        return BuildResult(
            output=config.output,
            files=kept,
            pages=kept_pages,
            result_sets=previous[1],
            bytes=kept_bytes,
            seconds=time.perf_counter() - start,
            reused="nothing changed: kept every file of the previous build",
        )

    # vl-convert starts in a child process now, so its start-up overlaps the reading.
    job = _Job(config, force, progress, cache, keys, label, previous_history, theme, options, start)
    converter = Converter()
    try:
        return _stages(job, converter)
    finally:
        converter.close()


@dataclass(frozen=True)
class _Job:
    """What build() settled before the stages run."""

    config: Config
    force: bool
    progress: Progress
    cache: Cache | None
    keys: tuple[str, str, str]  # inputs, history, whole site
    label: str | None
    previous_history: list[Json] | None
    theme: Theme
    options: SiteOptions
    start: float


def _stages(job: _Job, converter: Converter) -> BuildResult:
    """load -> estimate -> chart -> render -> write, reusing cached pieces."""
    config, progress, cache = job.config, job.progress, job.cache
    inputs_key, history_key, site_key = job.keys
    previous_history, label = job.previous_history, job.label
    reused: list[str] = []
    progress.update("reading inputs")
    loaded = cache.get_inputs(inputs_key) if cache is not None else None
    if loaded is not None:
        reused.append("parsed inputs")
    else:
        loaded = load_sources(config.result_sets)
        if cache is not None:
            cache.put_inputs(inputs_key, loaded)
    for path, format_name in loaded.formats:
        given = any(str(s.path) == path and s.format for s in config.result_sets)
        progress.note(f"read {path} ({format_name}{'' if given else ', detected'})")

    progress.update("estimating")
    history = None
    if previous_history is not None:
        assert label is not None
        if config.history is not None and not config.history.exists():
            progress.note(f"no history at {config.history} yet: starting one with {label!r}")
        history = (previous_history, label)
    report = build_report(
        loaded.result_sets,
        config.title,
        config.description,
        config.k,
        config.confidence,
        history,
    )
    progress.update("drawing charts")
    charts_key = cache_key(inputs_key, history_key, config.k, config.confidence)
    charts = cache.get_charts(charts_key) if cache is not None else None
    if charts is not None and charts.fit(report):
        reused.append(f"{charts.count} charts")
    else:
        charts = make_charts(report, converter)
        if cache is not None:
            cache.put_charts(charts_key, charts)

    files = render_site(report, charts, job.theme, job.options)
    total_pages = page_count(report, job.theme)
    try:
        written, size = write_site(
            config.output,
            files,
            force=job.force,
            on_file=lambda n: progress.update(f"writing {n}/{total_pages}+ files"),
            inputs=_inputs(config),
        )
    except OSError as error:
        # Disk full, a parent that is a file (-o /dev/null/x), a dangling symlink, another
        # build swapping in the same folder: write_site has already removed its staging.
        raise UserError(
            f"--output: {config.output}: cannot write the site: {os_reason(error)}"
        ) from None
    progress.clear()
    state = _site_state(config.output)
    if cache is not None:
        cache.put_site(site_key, (state, len(report.sets)))
    return BuildResult(
        output=config.output,
        files=written + 1,  # and the marker
        pages=state[2],
        result_sets=len(report.sets),
        bytes=size,
        seconds=time.perf_counter() - job.start,
        reused=f"reused {' and '.join(reused)} from the cache" if reused else "",
    )
