"""`reportgen serve`: build, serve on 127.0.0.1, and rebuild when an input changes.

For previewing only: the server is Python's own static file server, bound to
the loopback address. Changes are found by polling file times, which needs no
extra dependency and works the same on every system.

Open pages reload by themselves: HTML is rewritten on its way out (never on
disk) to load a small script that asks the server ten times a second whether
a build has finished since the page was sent. A failed build keeps the last
good site served and lays the located message over the open page.

Served pages keep the built site's Content-Security-Policy, with the server's
own script and its state URL added by their full URLs (not 'self'): a page's
own scripts run here exactly when the published site would run them. Requests
must name this machine in their Host header, so a page of another site whose
name was pointed at 127.0.0.1 (DNS rebinding) reads nothing.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import secrets
import sys
import threading
import time
import traceback
from collections.abc import Callable
from html import unescape
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

from .build import Progress, build
from .config import Config
from .errors import Problems, UserError, os_reason
from .readers.folder import walk
from .terminal import terminal_safe, warnings_text
from .website.theme import Theme
from .website.write import MARKER

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

#: A <meta> tag, attribute values quoted or not (a quoted value may hold ">").
_META = re.compile(rb"""<meta\b(?:[^>"']|"[^"]*"|'[^']*')*>""", re.IGNORECASE)
#: One attribute of a tag: its name, and its value double-, single- or unquoted.
_ATTRIBUTE = re.compile(rb"""([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?""")
#: What separates a policy's words: ASCII whitespace only, as browsers read it
#: (str.split would also split at a no-break space, which a browser keeps in a word).
_POLICY_SPACE = re.compile(r"[\t\n\f\r ]+")


def watched_paths(config: Config) -> list[Path]:
    """Everything a build reads: config, inputs, templates and content folders."""
    theme = Theme.from_folders(
        config.templates, config.content, (config.named("templates"), config.named("content"))
    )
    paths = [s.path for s in config.result_sets] + theme.templates + theme.content
    paths += [p for p in (config.path, config.history) if p is not None]
    return paths


def look(config: Config) -> Snapshot:
    """The files a build of `config` reads, by time and size, but those inside its
    output folder: the build writes them itself (a history kept in the site it
    extends), and counting its own writes as edits would rebuild for ever."""
    output = os.path.abspath(config.output)
    return {
        name: stamp
        for name, stamp in snapshot(watched_paths(config)).items()
        if os.path.commonpath([output, os.path.abspath(name)]) != output
    }


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


def allow_live_reload(policy: str, origin: str, nonce: str) -> str:
    """A Content-Security-Policy that also lets the live-reload script, at its own URL on
    `origin`, run and ask the state URL, and nothing else the policy did not allow.

    URLs rather than a nonce: a nonce would switch off a policy's 'unsafe-inline',
    and block inline scripts the published page runs. Under 'strict-dynamic', which
    ignores URLs, the script's nonce is added instead.
    """
    directives: dict[str, list[str]] = {}
    for part in policy.split(";"):
        words = [w for w in _POLICY_SPACE.split(part) if w]
        if words:
            directives.setdefault(words[0].lower(), words[1:])  # the first one counts
    script = f"{origin}{LIVE_PREFIX}live.js"
    needed = {
        "script-src": script,
        "script-src-elem": script,
        "connect-src": f"{origin}{LIVE_PREFIX}state",
    }
    for name, source in needed.items():
        fallback = "script-src" if name == "script-src-elem" else "default-src"
        if name not in directives and (name == "script-src-elem" or fallback not in directives):
            continue  # not restricted by this directive (or by what it falls back to)
        sources = directives.get(name, directives.get(fallback, []))
        kept = [s for s in sources if s.lower() != "'none'"]
        if "'strict-dynamic'" in (s.lower() for s in kept):
            source = f"'nonce-{nonce}'"
        directives[name] = [*kept, source]
    return "; ".join(" ".join([name, *sources]) for name, sources in directives.items())


def _policy_attribute(tag: bytes) -> tuple[int, int, str] | None:
    """Where a <meta http-equiv="Content-Security-Policy"> tag's content attribute is,
    and its policy: (start, end, policy); None for any other tag."""
    equiv, content = None, None
    for attribute in _ATTRIBUTE.finditer(tag, 5):  # after "<meta"
        name = attribute.group(1).lower()
        value = next((v for v in attribute.group(2, 3, 4) if v is not None), b"")
        if name == b"http-equiv" and equiv is None:
            equiv = unescape(value.decode("utf-8", "replace")).strip().lower()
        elif name == b"content" and content is None:
            policy = unescape(value.decode("utf-8", "replace"))
            content = (attribute.start(), attribute.end(), policy)
    return content if equiv == "content-security-policy" else None


def with_live_reload(html: bytes, build_number: int, origin: str) -> bytes:
    """A served page: the live-reload script added, and its CSP letting that run.

    Only what the server sends changes; the built page on disk keeps its policy.
    `origin` is the page's own, such as http://127.0.0.1:8000.
    """
    nonce = secrets.token_urlsafe(16)

    def allow(meta: re.Match[bytes]) -> bytes:
        tag = meta.group(0)
        found = _policy_attribute(tag)
        if found is None:
            return tag
        start, end, policy = found
        value = allow_live_reload(policy, origin, nonce).replace("&", "&amp;")
        attribute = f'content="{value.replace(chr(34), "&quot;")}"'.encode()
        return tag[:start] + attribute + tag[end:]

    html = _META.sub(allow, html)
    tag = (
        f'<script src="{LIVE_PREFIX}live.js" nonce="{nonce}" data-build="{build_number}"></script>'
    ).encode()
    end = html.rfind(b"</body>")
    return html + tag if end < 0 else html[:end] + tag + html[end:]


class PreviewHTTPServer(ThreadingHTTPServer):
    """The preview's HTTP server: a client that goes away mid-request is not news."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A browser that closes a connection early (a reload, a cancelled request) or
        # sends half a request: the standard server prints a traceback for each.
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class _QuietHandler(SimpleHTTPRequestHandler):
    def __init__(self, *args: Any, preview: PreviewServer, **kwargs: Any) -> None:
        self.preview = preview
        super().__init__(*args, **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def end_headers(self) -> None:
        # A preview must never show a stale page after a rebuild.
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def _host(self) -> str | None:
        """The Host header when it names this server (or is absent), else None."""
        host = self.headers.get("Host")
        port = self.preview.port
        if host is None:
            return f"127.0.0.1:{port}"
        names = [f"127.0.0.1:{port}", f"localhost:{port}"]
        if port == 80:  # a browser leaves out the scheme's own port
            names += ["127.0.0.1", "localhost"]
        return host if host.lower() in names else None

    def _origin(self) -> str:
        return f"http://{self._host()}"

    def send_head(self) -> Any:
        if self._host() is None:
            # Another site's page whose name now points here (DNS rebinding).
            super().send_error(403, "unknown host: open this preview at 127.0.0.1")
            return None
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
            if url_path.endswith("/") and not page.is_dir():
                self.send_error(404)  # a file asked for as a folder
                return None
            if page.is_dir() and url_path.endswith("/"):
                page = page / "index.html"
            html = page.read_bytes() if page.suffix == ".html" and page.is_file() else None
        except OSError:
            # A name too long for the file system (ENAMETOOLONG) is not caught by
            # is_dir() and would drop the connection with a traceback.
            self.send_error(404)
            return None
        if html is not None:
            page_html = with_live_reload(html, self.preview.build_number, self._origin())
            return self._send(page_html, "text/html")
        return super().send_head()

    def list_directory(self, path: Any) -> None:
        # A published site lists no folders (GitHub Pages answers 404): neither does this.
        self.send_error(404)

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
        body = with_live_reload(body, self.preview.build_number, self._origin())
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
        #: The folder being served: the output of the last build that worked.
        self.served = self.config.output
        handler = self._handler(self.served)
        try:
            # Before the build, so a busy port is reported at once.
            self.server = PreviewHTTPServer(("127.0.0.1", port), handler)
        except OSError as error:
            raise UserError(
                f"--port: cannot serve on 127.0.0.1:{port}: {os_reason(error)}"
            ) from None
        self.state = look(self.config)
        try:
            self._build()
        except UserError as error:
            if not (self.served / MARKER).is_file():
                self.server.server_close()
                raise
            # A site built earlier is there: serve it, with the error over its pages,
            # so that the mistake can be fixed with the preview open.
            self._failed(error)
        except BaseException:
            self.server.server_close()
            raise
        self._thread: threading.Thread | None = None

    def _failed(self, error: UserError) -> None:
        """A build refused its input: said in the terminal, and over the open pages."""
        for line in error.problems:
            print(f"reportgen: error: {terminal_safe(line)}", file=self.log)
        if error.hint is not None:
            print(f"reportgen: {terminal_safe(error.hint)}", file=self.log)
        self.problems = list(error.problems)

    def _handler(self, folder: Path) -> Callable[..., _QuietHandler]:
        return functools.partial(_QuietHandler, directory=str(folder), preview=self)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def _build(self) -> None:
        result = build(self.config, force=self.force, progress=Progress(self.log))
        # What was reused says why a rebuild was quick (or not): "reused parsed inputs
        # and 7 computed results and 141 unchanged pages from the cache".
        reused = f"; {result.reused}" if result.reused else ""
        # The warnings `build` prints, so that a preview hides none of them.
        self.log.write(terminal_safe(warnings_text(result.warnings)))
        print(f"built {result.pages} pages in {result.seconds:.1f} s{reused}", file=self.log)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def check_once(self) -> bool:
        """Rebuild if anything changed since the last look; True when a rebuild ran."""
        try:
            state = look(self.config)
        except UserError:
            state = {}
        # A site deleted by hand is built again (after a failed build it stays gone
        # until the next edit, rather than being built again on every look).
        gone = not self.problems and not (self.served / MARKER).is_file()
        if state == self.state and not gone:
            return False
        self.state = state
        print("change detected, rebuilding" if not gone else "site gone, rebuilding", file=self.log)
        try:
            self.config = self.load()
            # What this build reads, as it is before the build starts: a file saved
            # while it runs differs from this at the next look, and is built then.
            self.state = look(self.config)
            self._build()
            if self.config.output != self.served:
                # `output:` changed in the config: serve the folder now built, or every
                # later edit would go where nobody looks.
                self.served = self.config.output
                self.server.RequestHandlerClass = self._handler(self.served)
                print(terminal_safe(f"serving {self.served} now"), file=self.log)
            self.problems = []
        except UserError as error:
            # Keep serving the last good site; the user fixes the input and saves again.
            self._failed(error)
        except Exception as error:  # a bug must not end the preview
            # reportgen's own bug: said with its traceback (for a report), and the last
            # good site stays served, as for a mistake in the input.
            traceback.print_exc(file=self.log)
            self.problems = [
                f"reportgen failed unexpectedly ({type(error).__name__}: {error}); this is "
                "a bug in reportgen: the traceback is in the terminal"
            ]
        finally:
            self.build_number += 1  # open pages reload once the number moves
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
