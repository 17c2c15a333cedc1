"""Incremental rebuilds: reuse parsed inputs and charts when their sources are unchanged.

Everything is keyed by content hashes (never by file times), so a reused piece
is exactly what a clean build would make, and the site stays byte-identical.
The cache lives in `.reportgen-cache/` beside the output folder; deleting it
only makes the next build slower.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import __version__

CACHE_DIR = ".reportgen-cache"
_KEEP = 4  # entries of each kind kept; older ones are removed


def file_digest(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_digest(folders: Iterable[Path]) -> str:
    """One hash over every file (name and bytes) in the given folders, in order."""
    digest = hashlib.blake2b(digest_size=16)
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(folder)).encode() + b"\0")
            digest.update(file_digest(path).encode())
    return digest.hexdigest()


def key(*parts: Any) -> str:
    """A short hex key for any repr-able parts, salted with reportgen's version."""
    text = repr((__version__, *parts)).encode("utf-8")
    return hashlib.blake2b(text, digest_size=16).hexdigest()


class Cache:
    def __init__(self, output: Path) -> None:
        self.folder = output.absolute().parent / CACHE_DIR / output.name

    def get(self, kind: str, entry: str) -> Any | None:
        path = self.folder / f"{kind}-{entry}.pickle"
        try:
            with path.open("rb") as handle:
                return pickle.load(handle)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None  # missing or from another version: rebuild the piece

    def put(self, kind: str, entry: str, value: Any) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.folder / f"{kind}-{entry}.pickle")
            self._prune(kind)
        except OSError:
            pass  # a cache that cannot be written only costs speed

    def _prune(self, kind: str) -> None:
        entries = sorted(
            self.folder.glob(f"{kind}-*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True
        )
        for old in entries[_KEEP:]:
            old.unlink(missing_ok=True)
