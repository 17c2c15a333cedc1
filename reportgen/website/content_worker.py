"""The content pages (methodology, FAQ), read once and rendered alongside the build.

Their worked examples are most of a small build's work and need only the
settings, so a ContentWorker renders them while the inputs are read, into this
process's memo, where the renderer then finds them.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import signal
import threading
import time
from collections.abc import Collection
from typing import Any

from ..errors import UserError, os_reason
from .content import front_matter, markdown_parser, render_content
from .theme import Theme

#: Content pages as read: page name -> (source path, Markdown text).
ContentTexts = dict[str, tuple[str, str]]


def read_content(theme: Theme) -> ContentTexts:
    """Every content page's source and text, read once per build."""
    texts = {}
    for name, path in theme.content_pages().items():
        try:
            texts[name] = (str(path), path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as error:
            raise UserError(
                f"{path}: not UTF-8 text (byte {error.start + 1}); save the page as UTF-8"
            ) from None
        except OSError as error:
            raise UserError(f"{path}: cannot read this content page: {os_reason(error)}") from None
    return texts


#: Rendered content pages of this process, by (text, site settings, source): their
#: worked examples take a while, and `serve` asks for the same pages again after
#: every edit to something else. A few entries, the oldest dropped first.
_CONTENT_MEMO: dict[tuple[str, tuple[tuple[str, Any], ...], str], tuple[str, dict[str, Any]]] = {}
_CONTENT_MEMO_SIZE = 16


def content_page(text: str, site: dict[str, Any], source: str) -> tuple[str, dict[str, Any]]:
    memo_key = (text, tuple(site.items()), source)
    found = _CONTENT_MEMO.get(memo_key)
    if found is None:
        found = render_content(text, site, source)
        _remember_content(memo_key, found)
    html, meta = found
    return html, dict(meta)


def _remember_content(
    memo_key: tuple[str, tuple[tuple[str, Any], ...], str], page: tuple[str, dict[str, Any]]
) -> None:
    _CONTENT_MEMO[memo_key] = page
    while len(_CONTENT_MEMO) > _CONTENT_MEMO_SIZE:
        del _CONTENT_MEMO[next(iter(_CONTENT_MEMO))]


class ContentWorker:
    """Renders content pages alongside the rest of the build, into this process's memo.

    Their worked examples (simulations, exact tests, a large Jinja template to
    compile) are most of a small build's work and need only the site settings,
    so they start before the inputs are read: in a forked child process, which
    has a core of its own, or, where forking is not safe (another thread is
    running, as in `serve`, or no fork on this system), in a thread. Errors are
    left for the real rendering, which reports them with their place.
    """

    def __init__(self, content: ContentTexts, site: dict[str, Any], skip: Collection[str]) -> None:
        self.site = site
        self.todo = [
            (source, text)
            for name, (source, text) in content.items()
            if f"{name}.html" not in skip
            and (text, tuple(site.items()), source) not in _CONTENT_MEMO
        ]
        self.pid: int | None = None
        self.reader: int | None = None
        self.thread: threading.Thread | None = None
        if not self.todo:
            return
        # What the pages' worked examples use, loaded here before the fork: the child
        # inherits it, and this process needs scipy.special anyway to estimate.
        importlib.import_module("scipy.special")
        markdown_parser()
        for source, text in self.todo:  # parsed here for the navigation anyway
            with contextlib.suppress(UserError):
                front_matter(text, source)
        if hasattr(os, "fork") and threading.active_count() == 1:
            self._fork()
        else:
            self.thread = threading.Thread(target=self._render_here, daemon=True)
            self.thread.start()

    def _render_here(self) -> None:
        for source, text in self.todo:
            try:
                content_page(text, self.site, source)
            except Exception:  # reported, with its place, by the rendering that follows
                return

    def _fork(self) -> None:
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: render, send the HTML as JSON, and leave at once
            status = 1
            try:
                os.close(reader)
                # Hold no copy of the parent's other pipes (the chart engine's input
                # among them): the chart engine must see its input end when the parent
                # closes it, not when this child exits.
                os.closerange(3, writer)
                os.closerange(writer + 1, _MAX_FD)
                pages: list[str | None] = []
                for source, text in self.todo:
                    try:
                        pages.append(render_content(text, self.site, source)[0])
                    except Exception:
                        pages.append(None)
                with os.fdopen(writer, "wb") as out:
                    out.write(json.dumps(pages).encode("utf-8"))
                status = 0
            finally:
                os._exit(status)
        os.close(writer)
        self.pid, self.reader = pid, reader

    def finish(self) -> None:
        """Wait for the pages and keep them in the memo (any that failed are rendered later)."""
        if self.thread is not None:
            self.thread.join()
            return
        if self.reader is None:
            return
        # A child that never answers (a lock another thread held at the fork, say)
        # must not hold the build: past the deadline it is stopped and the pages are
        # rendered here.
        deadline = time.monotonic() + CONTENT_WORKER_SECONDS
        chunks: list[bytes] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.reader], [], [], left)[0]:
                self.close()
                return
            chunk = os.read(self.reader, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(self.reader)
        self.reader = None
        data = b"".join(chunks)
        self._reap()
        try:
            pages = json.loads(data)
        except ValueError:
            return  # the child failed: the pages are rendered here instead
        if not isinstance(pages, list) or len(pages) != len(self.todo):
            return
        for (source, text), html in zip(self.todo, pages, strict=True):
            if isinstance(html, str):
                meta = front_matter(text, source)  # parsed once per text (memoised)
                _remember_content((text, tuple(self.site.items()), source), (html, meta))

    def close(self) -> None:
        """Stop the child if the build ends without its pages (an error, Ctrl-C)."""
        if self.reader is not None:
            os.close(self.reader)
            self.reader = None
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap()

    def _reap(self) -> None:
        if self.pid is not None:
            os.waitpid(self.pid, 0)
            self.pid = None


#: Descriptors a forked content worker closes (all but its own pipe).
_MAX_FD = 1 << 16
#: How long a build waits for the forked content worker (it needs a second or two).
CONTENT_WORKER_SECONDS = 120.0
