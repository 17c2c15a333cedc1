"""Vega-Lite specs to SVG with vl-convert, in a child process.

`python -m reportgen.website.chart_engine` loads vl-convert and warms up its
JavaScript engine, then reads a JSON list of specs on stdin (its length in
bytes first, as 8 bytes big-endian) and writes a JSON list of SVG strings on
stdout. The child imports nothing else, so it stays small, and the engine's
memory goes away when it exits instead of adding to the build's peak. Started
early, its start-up overlaps the reading of the inputs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

#: Makes vl-convert measure text with the Liberation Sans built into it and with no
#: font of the machine's: the same layout everywhere, and no font file reopened for
#: each glyph measured (the file says more).
FONTS_CONF = Path(__file__).with_name("fontconfig") / "fonts.conf"

_WARM_UP = {"mark": "point", "data": {"values": [{"x": 0}]}, "encoding": {"x": {"field": "x"}}}


#: Starts the line the engine writes when one spec fails: the spec's index and why.
FAILED_SPEC = "reportgen-chart-failed"


class EngineFailed(Exception):
    """The engine stopped: at one spec (`index`), or as a whole (index None)."""

    def __init__(self, reason: str, index: int | None = None, out_of_memory: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.index = index
        self.out_of_memory = out_of_memory

    @classmethod
    def from_stderr(cls, text: str, status: int) -> EngineFailed:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        for line in lines:
            if line.startswith(FAILED_SPEC + " "):
                _, index, reason = line.split(" ", 2)
                memory = "out of memory" in reason.lower() or "call stack" in reason.lower()
                return cls(reason, int(index), memory)
        # V8 aborts the whole process, printing "Fatal process out of memory" (as it
        # does when `ulimit -v` leaves it too little address space to reserve its heap)
        # and then a C stack trace that says nothing more.
        fatal = next((line.lstrip("# ") for line in lines if "Fatal" in line), None)
        if fatal is not None:
            return cls(fatal, None, "out of memory" in fatal.lower())
        if status < 0:
            return cls(f"stopped by signal {-status}", None, status == -9)
        return cls(lines[-1] if lines else f"exit status {status}")


class Converter:
    """One child process that converts one batch of specs."""

    def __init__(self) -> None:
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "reportgen.website.chart_engine"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as error:
            # Said as the system's reason for this step (the command line prints it).
            reason = f"cannot start the chart engine: {error.strerror or error}"
            raise OSError(error.errno, reason, error.filename) from None

    def send(self, specs: list[dict[str, Any]]) -> None:
        """Hand over the specs: the engine draws them while this process goes on."""
        assert self.process.stdin is not None
        try:
            body = json.dumps(specs).encode("utf-8")
            # Length first: processes forked after this one was started (task-page
            # workers) hold copies of its input pipe, so it cannot wait for the end.
            self.process.stdin.write(len(body).to_bytes(8, "big") + body)
        except BrokenPipeError:  # the engine failed to start: receive() says why
            pass
        finally:
            self.process.stdin.close()
            self.process.stdin = None  # communicate() must not flush it

    def receive(self) -> list[str]:
        """The SVG of each spec sent, in order, once the engine has drawn them all."""
        out, err = self.process.communicate()
        if self.process.returncode != 0:
            raise EngineFailed.from_stderr(err.decode("utf-8", "replace"), self.process.returncode)
        svgs: list[str] = json.loads(out)
        return svgs

    def close(self) -> None:
        """Stop the child if it is still waiting (for example when the build failed)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


#: A converter started before the command line was even imported (see __main__.py):
#: the engine's start-up is the longest single step of a small build.
_early: Converter | None = None


def start_early() -> None:
    """Start the chart engine now, for the next `started()` to hand out."""
    global _early
    if _early is None:
        try:
            _early = Converter()
        except OSError:
            # Not startable here (this runs before the command line can report errors):
            # the build starts its own when it needs charts, and says why that fails.
            _early = None


def started() -> Converter:
    """The converter started early, if any, else a new one; the caller closes it."""
    global _early
    converter, _early = _early, None
    return converter or Converter()


def discard_early() -> None:
    """Stop an early converter nobody took (the command failed before building)."""
    global _early
    if _early is not None:
        _early.close()
        _early = None


def main() -> None:
    # Read by vl-convert's font database when it is first used, in this process only.
    os.environ["FONTCONFIG_FILE"] = str(FONTS_CONF)
    import vl_convert

    vl_convert.vegalite_to_svg(_WARM_UP)  # start the engine before the specs arrive
    size = int.from_bytes(sys.stdin.buffer.read(8), "big")
    specs = json.loads(sys.stdin.buffer.read(size))
    svgs = []
    for index, spec in enumerate(specs):
        try:
            svgs.append(vl_convert.vegalite_to_svg(spec))
        except Exception as error:  # Vega's own errors, a JavaScript stack overflow
            reason = " ".join(str(error).split())[:300]
            print(f"{FAILED_SPEC} {index} {reason}", file=sys.stderr)
            sys.exit(3)
    json.dump(svgs, sys.stdout)


if __name__ == "__main__":
    main()
