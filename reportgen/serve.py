"""`reportgen serve`: build, serve on 127.0.0.1, and rebuild when an input changes.

For previewing only: the server is Python's own static file server, bound to
the loopback address. Changes are found by polling file times, which needs no
extra dependency and works the same on every system.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

from .build import Progress, build
from .config import Config
from .errors import Problems, UserError, os_reason
from .readers.folder import walk
from .terminal import terminal_safe
from .website.render import Theme

Snapshot = dict[str, tuple[int, int]]


def watched_paths(config: Config) -> list[Path]:
    """Everything a build reads: config, inputs, templates and content folders."""
    theme = Theme.from_folders(config.templates, config.content)
    paths = [s.path for s in config.result_sets] + theme.templates + theme.content
    if config.path is not None:
        paths.append(config.path)
    return paths


def snapshot(paths: list[Path]) -> Snapshot:
    state: Snapshot = {}
    for path in paths:
        # Folders are walked as the folder reader walks them: bounded, and without
        # following links to folders, which can loop.
        files = [path] if not path.is_dir() else (walk(path, Problems()) or [])
        for file in files:
            try:
                info = file.stat()
            except OSError:
                continue  # deleted between listing and reading: the next poll sees it
            state[str(file)] = (info.st_mtime_ns, info.st_size)
    return state


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        # GET /%00 made os.stat raise ValueError (embedded null byte): a traceback on
        # the console for each such request. No file has a NUL in its name.
        if "\0" in self.translate_path(self.path):
            self.send_error(404)
            return None
        return super().send_head()


class PreviewServer:
    """Serves config.output and rebuilds it when what it was built from changes."""

    def __init__(self, load: Callable[[], Config], port: int, log: TextIO) -> None:
        self.load = load
        self.log = log
        self.config = load()
        handler = functools.partial(_QuietHandler, directory=str(self.config.output))
        try:
            # Before the build, so a busy port is reported at once.
            self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        except OSError as error:
            raise UserError(
                f"--port: cannot serve on 127.0.0.1:{port}: {os_reason(error)}"
            ) from None
        try:
            self._build()
        except BaseException:
            self.server.server_close()
            raise
        self.state = snapshot(watched_paths(self.config))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def _build(self) -> None:
        result = build(self.config, progress=Progress(self.log))
        print(f"built {result.pages} pages in {result.seconds:.1f} s", file=self.log)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def check_once(self) -> bool:
        """Rebuild if anything changed since the last look; True when a rebuild ran."""
        try:
            paths = watched_paths(self.config)
        except UserError:
            paths = []
        state = snapshot(paths)
        if state == self.state:
            return False
        self.state = state
        print("change detected, rebuilding", file=self.log)
        try:
            self.config = self.load()
            self._build()
            self.state = snapshot(watched_paths(self.config))
        except UserError as error:
            # Keep serving the last good site; the user fixes the input and saves again.
            for line in error.problems:
                print(f"reportgen: error: {terminal_safe(line)}", file=self.log)
        return True

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve(load: Callable[[], Config], port: int, log: TextIO, interval: float = 0.5) -> None:
    preview = PreviewServer(load, port, log)
    preview.start()
    print(
        terminal_safe(f"serving {preview.config.output} at {preview.url} (Ctrl-C to stop)"),
        file=log,
    )
    try:
        while True:
            time.sleep(interval)
            preview.check_once()
    finally:
        preview.stop()
