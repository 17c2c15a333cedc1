"""What a build is asked for besides its inputs, history and theme, declared once.

Each field of `BuildSettings` says what a change to it forces to rebuild, in its
metadata (Sphinx's `rebuild` for config values): REPORT, the numbers and so the
charts and every page; PAGES, the pages alone. The keys of build.py are made from
`affecting()`, so a new setting is covered by the keys once it is declared here.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from .errors import UserError
from .numbers import percent

if TYPE_CHECKING:
    from .config import Config

#: A change recomputes the report: every number, chart and page.
REPORT = "report"
#: A change renders the pages again; the report and its charts stay.
PAGES = "pages"

#: Which tasks get a page of their own: ("all", 0), ("flaky", 0), ("worst", N), ("none", 0).
TaskPages = tuple[str, int]


@dataclass(frozen=True)
class BuildSettings:
    """A build's settings; templates see the page ones as `options` and `site`."""

    k: int = field(default=3, metadata={"rebuild": REPORT})
    confidence: float = field(default=0.95, metadata={"rebuild": REPORT})
    title: str = field(default="Reliability report", metadata={"rebuild": PAGES})
    description: str = field(default="", metadata={"rebuild": PAGES})
    base_path: str = field(default="/", metadata={"rebuild": PAGES})
    base_url: str | None = field(default=None, metadata={"rebuild": PAGES})
    #: A build date to print, from SOURCE_DATE_EPOCH; None keeps pages date-free.
    build_date: str | None = field(default=None, metadata={"rebuild": PAGES})
    task_pages: TaskPages = field(default=("all", 0), metadata={"rebuild": PAGES})
    #: The umask the files are written under: a page kept from a build under another
    #: umask would keep that build's permissions.
    umask: int = field(default=0o022, metadata={"rebuild": PAGES})

    @classmethod
    def from_config(cls, config: Config, base_path: str, umask: int) -> BuildSettings:
        return cls(
            k=config.k,
            confidence=config.confidence,
            title=config.title,
            description=config.description,
            base_path=base_path,
            base_url=config.base_url,
            build_date=build_date(),
            task_pages=config.task_pages,
            umask=umask,
        )

    def affecting(self, what: str) -> dict[str, Any]:
        """The settings whose change rebuilds `what` (REPORT or PAGES), by name."""
        chosen = (f.name for f in fields(self) if f.metadata["rebuild"] == what)
        return {name: getattr(self, name) for name in chosen}

    @property
    def site(self) -> dict[str, Any]:
        """What every template and content page sees as `site`."""
        return site_values(self.title, self.description, self.k, self.confidence)


def site_values(title: str, description: str, k: int, confidence: float) -> dict[str, Any]:
    return {
        "title": title,
        "description": description,
        "k": k,
        "confidence": confidence,
        "level": percent(confidence),
    }


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
