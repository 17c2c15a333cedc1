"""Vega-Lite specs to SVG with vl-convert, in a child process.

`python -m reportgen.website.chart_engine` loads vl-convert and warms up its JavaScript engine,
then reads a JSON list of specs on stdin and writes a JSON list of SVG strings
on stdout. The child imports nothing else, so it stays small, and the engine's
memory goes away when it exits instead of adding to the build's peak. Started
early, its start-up overlaps the reading of the inputs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

_WARM_UP = {"mark": "point", "data": {"values": [{"x": 0}]}, "encoding": {"x": {"field": "x"}}}


class Converter:
    """One child process that converts one batch of specs."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "reportgen.website.chart_engine"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def convert(self, specs: list[dict[str, Any]]) -> list[str]:
        """SVG for each spec, in order."""
        out, err = self.process.communicate(json.dumps(specs).encode("utf-8"))
        if self.process.returncode != 0:
            detail = err.decode("utf-8", "replace").strip().splitlines()
            reason = detail[-1] if detail else f"exit status {self.process.returncode}"
            raise RuntimeError(f"drawing charts failed: {reason}")
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


def svg_batch(specs: list[dict[str, Any]], converter: Converter | None = None) -> list[str]:
    """SVG for each spec, in order, with a given (already started) converter or a new one."""
    if not specs and converter is None:
        return []
    converter = converter or Converter()
    try:
        return converter.convert(specs)
    finally:
        converter.close()


def main() -> None:
    import vl_convert

    vl_convert.vegalite_to_svg(_WARM_UP)  # start the engine before the specs arrive
    specs = json.load(sys.stdin.buffer)
    json.dump([vl_convert.vegalite_to_svg(spec) for spec in specs], sys.stdout)


if __name__ == "__main__":
    main()
