"""JSON written as it is made, for documents too large to hold twice.

`summary --format json` of a million tasks was one string of half a gigabyte,
built from a list of a million dicts, then copied on its way to the terminal:
over 5 GB. Here a list given as a `Stream` is written one element at a time,
and the output is the same, byte for byte, as json.dumps(doc, indent=2) of the
document with every Stream made a list.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

INDENT = "  "


class Stream:
    """A list whose elements are made only as they are written."""

    def __init__(self, items: Iterable[Any]) -> None:
        self._items = items

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)


def write_json(doc: Any, out: TextIO, level: int = 0) -> None:
    """Write `doc` as json.dumps(doc, indent=2) would, Streams as lists.

    A Stream's elements are encoded whole, so they must not hold a Stream.
    """
    inner = "\n" + INDENT * (level + 1)
    if isinstance(doc, dict) and doc:
        out.write("{")
        for i, (key, value) in enumerate(doc.items()):
            out.write(("," if i else "") + inner + json.dumps(key) + ": ")
            write_json(value, out, level + 1)
        out.write("\n" + INDENT * level + "}")
    elif isinstance(doc, list) and doc:
        for i, item in enumerate(doc):
            out.write(("," if i else "[") + inner)
            write_json(item, out, level + 1)
        out.write("\n" + INDENT * level + "]")
    elif isinstance(doc, Stream):
        # Gathered a thousand elements at a time: a write per element cost more
        # than encoding it.
        count = 0
        batch: list[str] = []
        for item in doc:
            batch.append(("," if count else "[") + inner + _dumps(item, level + 1))
            count += 1
            if len(batch) == 1000:
                out.write("".join(batch))
                batch.clear()
        out.write("".join(batch) + ("\n" + INDENT * level + "]" if count else "[]"))
    else:
        out.write(_dumps(doc, level))


def _dumps(value: Any, level: int) -> str:
    """json.dumps with indent=2, its lines indented to `level`."""
    return json.dumps(value, indent=len(INDENT)).replace("\n", "\n" + INDENT * level)
