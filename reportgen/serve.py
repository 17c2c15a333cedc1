"""`reportgen serve`: build, serve on 127.0.0.1, and rebuild when an input changes.

For previewing only: the server is Python's own static file server, bound to
the loopback address. Changes are found by polling file times, which needs no
extra dependency and works the same on every system.

Open pages reload by themselves: HTML is rewritten on its way out (never on
disk) to load a small script that asks the server every quarter second whether
a build has finished since the page was sent. A failed build keeps the last
good site served and lays the located message over the open page.
"""

from __future__ import annotations

import functools
import io
import json
import re
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
from .website.write import remove_tree

Snapshot = dict[str, tuple[int, int]]

#: URLs the preview server answers itself; no file of a site starts with this.
LIVE_PREFIX = "/__reportgen__/"
#: How often open pages ask whether the site was rebuilt, in milliseconds: a tiny
#: request to this machine, so often enough that a reload follows a save at once.
POLL_MS = 100

# The script every served page loads. It reloads the page when the build number
# changes, and shows the last build's errors over the page until they are fixed.
# DOM calls and textContent only: an error message is shown, never parsed as HTML.
LIVE_SCRIPT = """\
(function () {
  "use strict";
  var shown = document.currentScript.getAttribute("data-build");
  var box = null;
  function showProblems(problems) {
    if (!problems.length) {
      if (box) { box.remove(); box = null; }
      return;
    }
    if (!box) {
      box = document.createElement("div");
      box.id = "reportgen-build-error";
      box.setAttribute("role", "alert");
      box.style.cssText = "position:fixed;inset:auto 0 0 0;max-height:60vh;overflow:auto;" +
        "z-index:2147483647;margin:0;padding:1rem 1.25rem;background:#3b0a0a;color:#fff;" +
        "font:14px/1.5 ui-monospace,monospace;border-top:4px solid #f87171";
      document.body.appendChild(box);
    }
    box.textContent = "";
    var title = document.createElement("strong");
    title.textContent = "The last build failed; this is the last good page. Fix and save:";
    var list = document.createElement("pre");
    list.style.cssText = "margin:.5rem 0 0;white-space:pre-wrap";
    list.textContent = problems.join("\\n");
    box.appendChild(title);
    box.appendChild(list);
  }
  function poll() {
    fetch("__PREFIX__state", {cache: "no-store"})
      .then(function (response) { return response.json(); })
      .then(function (state) {
        if (String(state.build) !== shown) { location.reload(); return; }
        showProblems(state.problems);
        setTimeout(poll, __POLL_MS__);
      })
      .catch(function () { setTimeout(poll, 1000); });
  }
  poll();
})();
""".replace("__PREFIX__", LIVE_PREFIX).replace("__POLL_MS__", str(POLL_MS))

_CSP = re.compile(rb'(<meta http-equiv="Content-Security-Policy" content=")([^"]*)(")')


def watched_paths(config: Config) -> list[Path]:
    """Everything a build reads: config, inputs, templates and content folders."""
    theme = Theme.from_folders(
        config.templates, config.content, (config.named("templates"), config.named("content"))
    )
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


def with_live_reload(html: bytes, build_number: int) -> bytes:
    """A served page: the live-reload script added, and its CSP letting it run.

    Only what the server sends changes; the built page on disk keeps
    `script-src 'none'` (or the calculator's 'self').
    """

    def allow(match: re.Match[bytes]) -> bytes:
        policy = match.group(2).replace(b"script-src 'none'", b"script-src 'self'")
        if b"connect-src" not in policy:
            policy += b"; connect-src 'self'"
        return match.group(1) + policy + match.group(3)

    html = _CSP.sub(allow, html, count=1)
    tag = f'<script src="{LIVE_PREFIX}live.js" data-build="{build_number}"></script>'.encode()
    end = html.rfind(b"</body>")
    return html + tag if end < 0 else html[:end] + tag + html[end:]


class _QuietHandler(SimpleHTTPRequestHandler):
    def __init__(self, *args: Any, preview: PreviewServer, **kwargs: Any) -> None:
        self.preview = preview
        super().__init__(*args, **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def end_headers(self) -> None:
        # A preview must never show a stale page after a rebuild.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def send_head(self) -> Any:
        url_path = self.path.split("?", 1)[0].split("#", 1)[0]
        if url_path.startswith(LIVE_PREFIX):
            return self._send_live(url_path.removeprefix(LIVE_PREFIX))
        # GET /%00 made os.stat raise ValueError (embedded null byte): a traceback on
        # the console for each such request. No file has a NUL in its name.
        local = self.translate_path(self.path)
        if "\0" in local:
            self.send_error(404)
            return None
        page = Path(local)
        try:
            if page.is_dir() and url_path.endswith("/"):
                page = page / "index.html"
            html = page.read_bytes() if page.suffix == ".html" and page.is_file() else None
        except OSError:
            # A name too long for the file system (ENAMETOOLONG) is not caught by
            # is_dir() and would drop the connection with a traceback.
            self.send_error(404)
            return None
        if html is not None:
            return self._send(with_live_reload(html, self.preview.build_number), "text/html")
        return super().send_head()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # A missing page looks as it will once published: the site's own 404 page.
        page = Path(self.directory) / "404.html"
        try:
            body = page.read_bytes() if code == 404 and page.is_file() else None
        except OSError:
            body = None
        if body is None:
            super().send_error(code, message, explain)
            return
        body = with_live_reload(body, self.preview.build_number)
        self.send_response(404, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_live(self, name: str) -> Any:
        if name == "live.js":
            return self._send(LIVE_SCRIPT.encode(), "text/javascript")
        if name == "state":
            state = {"build": str(self.preview.build_number), "problems": self.preview.problems}
            return self._send(json.dumps(state).encode(), "application/json")
        self.send_error(404)
        return None

    def _send(self, body: bytes, media_type: str) -> io.BytesIO:
        self.send_response(200)
        self.send_header("Content-Type", f"{media_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


class PreviewServer:
    """Serves config.output and rebuilds it when what it was built from changes."""

    def __init__(
        self, load: Callable[[], Config], port: int, log: TextIO, force: bool = False
    ) -> None:
        self.load = load
        self.log = log
        #: Replace an output folder reportgen did not write (--force), as `build` does.
        self.force = force
        self.config = load()
        #: Counts finished builds, failed ones included: open pages reload when it moves.
        self.build_number = 0
        #: The last build's located errors, shown over open pages; empty when it worked.
        self.problems: list[str] = []
        handler = self._handler(self.config.output)
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

    def _handler(self, folder: Path) -> Callable[..., _QuietHandler]:
        return functools.partial(_QuietHandler, directory=str(folder), preview=self)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def _build(self, retired: list[Path] | None = None) -> None:
        result = build(self.config, force=self.force, progress=Progress(self.log), retired=retired)
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
        retired: list[Path] = []
        try:
            served = self.config.output
            self.config = self.load()
            self._build(retired)
            if self.config.output != served:
                # `output:` changed in the config: serve the folder now built, or every
                # later edit would go where nobody looks.
                self.server.RequestHandlerClass = self._handler(self.config.output)
                print(terminal_safe(f"serving {self.config.output} now"), file=self.log)
            self.state = snapshot(watched_paths(self.config))
            self.problems = []
        except UserError as error:
            # Keep serving the last good site; the user fixes the input and saves again.
            for line in error.problems:
                print(f"reportgen: error: {terminal_safe(line)}", file=self.log)
            self.problems = list(error.problems)
        finally:
            # Open pages reload once the number moves; the previous site, moved aside,
            # is removed after that: 20,000 pages took 1.6-3 s here, which the reload
            # need not wait for.
            self.build_number += 1
            for path in retired:
                remove_tree(path)
        return True

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve(
    load: Callable[[], Config],
    port: int,
    log: TextIO,
    interval: float = 0.2,
    force: bool = False,
) -> None:
    preview = PreviewServer(load, port, log, force)
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
