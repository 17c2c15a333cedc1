"""The pipeline, top to bottom: load -> estimate -> chart -> render -> write."""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .chart import make_charts
from .config import Config
from .errors import UserError
from .load import load_sources
from .render import SiteOptions, Theme, render_site
from .report import build_report
from .write import check_output, write_site


class Progress:
    """One status line on stderr, redrawn in place, only when stderr is a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self._last = 0.0

    def note(self, message: str) -> None:
        """A line worth keeping in a CI log, such as which format was detected."""
        self.clear()
        print(message, file=self.stream)

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


def build(config: Config, force: bool = False, progress: Progress | None = None) -> BuildResult:
    progress = progress or Progress()
    start = time.perf_counter()
    check_output(config.output, force)
    theme = Theme.from_folders(config.templates, config.content)

    progress.update("reading inputs")
    loaded = load_sources(config.result_sets)
    for path, format_name in loaded.formats:
        given = any(str(s.path) == path and s.format for s in config.result_sets)
        progress.note(f"read {path} ({format_name}{'' if given else ', detected'})")

    progress.update("estimating")
    report = build_report(
        loaded.result_sets, config.title, config.description, config.k, config.confidence
    )
    progress.update("drawing charts")
    charts = make_charts(report)

    options = SiteOptions(
        base_path=config.base_path, base_url=config.base_url, build_date=build_date()
    )
    files = render_site(report, charts, theme, options)
    total_pages = 4 + sum(1 + len(s.tasks) for s in report.sets)
    written, size = write_site(
        config.output,
        files,
        force=force,
        on_file=lambda n: progress.update(f"writing {n}/{total_pages}+ files"),
    )
    progress.clear()
    pages = sum(1 for _ in config.output.rglob("*.html"))
    return BuildResult(
        output=config.output,
        files=written,
        pages=pages,
        result_sets=len(report.sets),
        bytes=size,
        seconds=time.perf_counter() - start,
    )
