"""The theme: its template and content folders, the Jinja environment its pages are
rendered in, and the keys that tell whether a template changed.

Templates are looked up in the user's folder first, then in the built-in theme
(Pelican's ChoiceLoader habit); content pages likewise, file by file.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
from jinja2.sandbox import SandboxedEnvironment

from .. import __version__
from ..errors import UserError
from ..keys import key
from ..numbers import (
    fixed,
    p_value,
    percent,
    percent1,
    signed,
    signed_bracket,
    significant,
)
from ..stats.plain import COVERAGE_NAMES
from ..terminal import isolate_bidi, plain_warning


def package_folder(name: str) -> Path:
    """The built-in `templates` or `content` folder.

    Inside an installed wheel they sit in the package; in a source checkout
    (an editable install) they sit at the repository root.
    """
    here = Path(__file__).resolve().parent.parent  # the reportgen package
    inside = here / name
    return inside if inside.is_dir() else here.parent / name


@dataclass(frozen=True)
class Theme:
    templates: list[Path]  # user folder first
    content: list[Path]

    @classmethod
    def from_folders(
        cls,
        templates: Path | None,
        content: Path | None,
        names: tuple[str, str] = ("--templates", "--content"),
    ) -> Theme:
        """The theme: `templates` and `content` (folders named in messages by `names`)
        before the package's own."""
        for flag, folder in zip(names, (templates, content), strict=True):
            if folder is not None and not folder.is_dir():
                raise UserError(f"{flag}: {folder} is not a folder")
            if folder is not None:
                _refuse_links(flag, folder)
        return cls(
            templates=[p for p in (templates, package_folder("templates")) if p is not None],
            content=[p for p in (content, package_folder("content")) if p is not None],
        )

    def content_pages(self) -> dict[str, Path]:
        """Page name -> Markdown file, the user's folder winning name by name."""
        pages: dict[str, Path] = {}
        for folder in reversed(self.content):
            for path in sorted(folder.glob("*.md")):
                pages[path.stem] = path
        return dict(sorted(pages.items()))

    def asset_files(self) -> dict[str, Path]:
        assets: dict[str, Path] = {}
        for folder in reversed(self.templates):
            base = folder / "assets"
            if base.is_dir():
                for path in sorted(base.rglob("*")):
                    if path.is_file() and not path.is_symlink():
                        assets[path.relative_to(folder).as_posix()] = path
        return dict(sorted(assets.items()))


def _refuse_links(flag: str, folder: Path) -> None:
    """Refuse a symbolic link anywhere inside a user's theme folder.

    Its files are copied into the site or rendered into pages; a link could
    publish any file the build can read (a link to /etc/passwd was copied once).
    """
    for parent, folders, files in os.walk(folder):
        for name in sorted([*folders, *files]):
            path = Path(parent, name)
            if path.is_symlink():
                raise UserError(
                    f"{flag}: {path} is a symbolic link; put the file itself in the folder"
                )


def interval_text(low: float | None, high: float | None, around_zero: bool = False) -> str:
    """[low, high] to three decimals. `around_zero`, for a difference whose page says
    whether its interval excludes 0: a bound that is not 0 but rounds to it gets the
    digits that show its sign, so "[0.000, 0.136]" cannot sit beside "excludes 0"."""
    if around_zero:
        return signed_bracket(low, high)
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return "[n/a]"
    return f"[{fixed(low)}, {fixed(high)}]"


def safe_url(url: str | None) -> str | None:
    """Only http(s) links come from data; anything else is dropped."""
    if url and url.lower().startswith(("http://", "https://")):
        return url
    return None


def _isolated(value: Any) -> Any:
    # Markup (charts, rendered content) is the site's own HTML and left as it is.
    # Bidirectional marks are never ASCII: most values (numbers, ids) skip the search,
    # which this hook, run for every printed value, otherwise spent on each.
    if type(value) is str and not value.isascii():
        return isolate_bidi(value)
    return value


_HEADING = re.compile(r"<h([2-6])\b[^>]*>(.*?)</h\1>", re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def _table_label(before: str, number: int) -> str:
    """The name of a content page's table, for a screen reader's list of regions:
    'Worked example: a suite, table 2', from the last heading in the HTML before it."""
    headings = _HEADING.findall(before)
    if not headings:
        return f"Table {number}"
    heading = unescape(_TAG.sub("", headings[-1][1])).strip()
    return f"{heading}, table {number}"


class _TextLoader(jinja2.FileSystemLoader):
    """A folder of templates; a file that is not UTF-8 text is the user's mistake, named."""

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        try:
            return super().get_source(environment, template)
        except UnicodeDecodeError as error:
            files = (Path(folder) / template for folder in self.searchpath)
            place = next((str(f) for f in files if f.is_file()), template)
            raise UserError(
                f"{place}: not UTF-8 text (byte {error.start + 1}); save the template as UTF-8"
            ) from None


def environment(theme: Theme) -> jinja2.Environment:
    """The pages' Jinja environment.

    A theme with templates of the user's own gets Jinja's sandbox: a template from a
    pull request's config folder must not reach Python's internals
    (`cycler.__init__.__globals__.os`) and run commands as the build's user. The
    package's own templates are trusted, and rendered without the sandbox's checks."""
    kind = (
        jinja2.Environment
        if theme.templates == [package_folder("templates")]
        else SandboxedEnvironment
    )
    env = kind(
        loader=jinja2.ChoiceLoader([_TextLoader(str(p)) for p in theme.templates]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,  # one build reads each template once; no stat per page
        trim_blocks=True,
        lstrip_blocks=True,
        optimized=False,  # as content.py's: compile time matters more than folding
        # Names and ids come from input files: one with bidirectional marks must
        # not reorder the text around it on the page.
        finalize=_isolated,
    )
    env.filters["f3"] = fixed
    env.filters["signed"] = signed
    env.filters["pvalue"] = p_value
    env.filters["pct"] = percent
    env.filters["pct1"] = percent1
    env.filters["sig3"] = significant
    env.filters["safe_url"] = safe_url
    env.filters["note"] = plain_warning
    env.filters["table_label"] = _table_label
    env.globals["coverage_names"] = COVERAGE_NAMES
    env.globals["interval"] = interval_text
    env.globals["version"] = __version__
    return env


@functools.lru_cache(maxsize=256)
def _references(env: jinja2.Environment, source: str) -> tuple[str | None, ...]:
    """The templates a source names (None for a name known only at run time): base.html
    is in every page's closure, parsed once."""
    return tuple(jinja2.meta.find_referenced_templates(env.parse(source)))


def template_key(env: jinja2.Environment, name: str) -> str | None:
    """A hash of a template and every template it extends, includes or imports; None
    when one of them cannot be read or parsed (its pages are then always rendered)."""
    seen: dict[str, str] = {}
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        try:
            source = env.loader.get_source(env, current)[0]  # type: ignore[union-attr]
            referenced = _references(env, source)
        except jinja2.TemplateError:
            # A template that cannot be read here (a syntax error, which rendering
            # reports with its place, or an include that is never reached and does
            # not exist): its pages are always rendered, never kept.
            return None
        seen[current] = source
        if None in referenced:
            # A template named at run time: depend on every template there is.
            todo.extend(env.list_templates(extensions=["html"]))
        todo.extend(ref for ref in referenced if ref is not None)
    return key(sorted(seen.items()))
