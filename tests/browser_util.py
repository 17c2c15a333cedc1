"""Helpers for the browser tests: finding Chromium and axe-core, and serving a
site under a sub-path the way GitHub Pages serves a project site.

Where a tool is missing the browser tests skip with the reason, except in CI
(CI=true), where a missing tool is a failure: CI must run them.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
ARTIFACTS = ROOT / "test-artifacts"

#: Debian's Chromium in a container: no sandbox, no GPU, and nothing that phones home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHROMIUM_NAMES = ("chromium", "chromium-browser")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def unavailable(reason: str) -> NoReturn:
    """Skip because `reason`; in CI, fail instead."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: the browser tests must run in CI)", pytrace=False)
    pytest.skip(reason)


def find_chromium() -> str | None:
    """REPORTGEN_CHROMIUM if set, else Chromium on PATH (Debian: apt-get install chromium)."""
    explicit = os.environ.get("REPORTGEN_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


class _Handler(SimpleHTTPRequestHandler):
    """Static files; a missing path under /<prefix>/ gets <prefix>/404.html with status 404."""

    prefix = "repo"
    #: Where each request's (path, status) goes, when a test asks for them.
    requests: list[tuple[str, int]] | None = None

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: failures show up in the tests' own assertions

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if self.requests is not None:
            status = int(code) if isinstance(code, int) or code.isdigit() else 0
            self.requests.append((self.path, status))

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / self.prefix / "404.html"
        if code != 404 or not self.path.startswith(f"/{self.prefix}/") or not page.is_file():
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


@contextmanager
def serve(
    folder: Path, prefix: str = "repo", requests: list[tuple[str, int]] | None = None
) -> Iterator[str]:
    """Serve `folder` on 127.0.0.1 (a free port) in a thread; yields http://127.0.0.1:PORT.

    The site is expected at `folder/prefix`, so it is reached at /prefix/, as a
    GitHub Pages project site is. With `requests`, each request's path and the status
    it was answered with are appended to it: what the browser asked for, whether or
    not the page's own events show it (Chromium's icon request, for one).
    """
    attributes = {"prefix": prefix, "requests": requests}
    handler = partial(type("Handler", (_Handler,), attributes), directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
