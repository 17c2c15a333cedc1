"""File names for ids: page names that are safe, stable and distinct on every system."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_WINDOWS_RESERVED = (
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


#: Text slugify returns as it is: lowercase ASCII letters and digits, words joined
#: by single '-' or '_'. Most task ids look so, and checking is cheaper than cleaning.
_PLAIN_SLUG = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")


def slugify(text: str, max_length: int = 60) -> str:
    """A lowercase ASCII file-name stem: letters, digits, '-' and '_' only."""
    if len(text) <= max_length and _PLAIN_SLUG.fullmatch(text):
        return text
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9_]+", "-", ascii_text.lower()).strip("-_")
    return slug[:max_length].rstrip("-_")


def unique_slugs(names: list[str], prefix: str, strict: bool = True) -> list[str]:
    """Safe, unique, case-insensitively distinct file names for arbitrary ids.

    A name that survives slugify unchanged keeps its slug; any name that had to
    be altered (or collides, or is a reserved device name on Windows) gets a
    short hash of the original appended, so the mapping is stable across builds
    and two ids never share a file, even on case-insensitive file systems.
    With strict=False (result-set names, chosen by people) a cleaned-up name
    keeps its readable slug unless it collides.
    """
    slugs: list[str] = []
    taken: set[str] = set()
    for name in names:
        base = slugify(name) or prefix
        slug = base
        altered = strict and base != name
        if altered or base in _WINDOWS_RESERVED or base in taken:
            slug = f"{base}-{_short_hash(name)}"
        while slug in taken:  # a hash collision among a suite's ids: vanishingly rare
            slug = f"{slug}-{_short_hash(slug)}"
        taken.add(slug)
        slugs.append(slug)
    return slugs
