"""What a cached piece was made by: reportgen's version and source, and the libraries
that shape its pages.

An editable install (`make` sets one up) keeps its version number across a `git
pull`, and so does a wheel rebuilt from changed code: a cache keyed by the version
alone kept pages the new code would write differently. The source is a few hundred
kilobytes: hashing it and looking up the libraries' versions takes about 5 ms, once
per process.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import metadata
from pathlib import Path

from . import __version__

#: Libraries whose upgrade may change a page: those that render it, those that compute
#: its numbers and those that draw its charts (inline SVG). The stored results and
#: charts have keys of their own (results.py, website/charts.py), but a page kept
#: by its key must not keep the numbers or the chart of the library before.
PAGE_LIBRARIES = (
    "jinja2",
    "markdown-it-py",
    "markupsafe",
    "numpy",
    "scipy",
    "altair",
    "vl-convert-python",
)


@functools.cache
def identity() -> str:
    """reportgen's version with a hash of its own files and its page libraries' versions."""
    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=12)
    sources = [
        path
        for path in package.rglob("*.py")
        # Not an editor's lock or backup (".#cli.py", a dangling link): Python never
        # imports a name that starts with a dot.
        if not any(part.startswith(".") for part in path.relative_to(package).parts)
        and path.is_file()
    ]
    # The chart engine's font configuration shapes every chart a page holds.
    fonts = package / "website" / "fontconfig" / "fonts.conf"
    for path in sorted([*sources, package / "report.schema.json", fonts]):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    for library in PAGE_LIBRARIES:
        try:
            digest.update(f"\0{library} {metadata.version(library)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"\0{library} missing".encode())
    return f"{__version__}+{digest.hexdigest()}"
