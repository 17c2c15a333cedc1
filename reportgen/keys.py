"""Every cache key in one place: canonical bytes of plain data, hashed.

A key is a hash of what made a piece (parsed inputs, charts, a page), salted with
`code.identity()` so that new code never keeps an old piece (results.py salts its
keys with the statistics' code alone, through `digest`). What is hashed is
the data's JSON by orjson, never `repr()`: numpy prints only the ends of an array
past 1,000 elements, so two different arrays could share a repr and a key.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import PurePath
from typing import Any

import orjson

from . import code

# orjson writes dataclasses itself (as objects of their fields), in C: a result set of
# 10,000 tasks is hashed in a few hundredths of a second.
_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _plain(value: Any) -> Any:
    """What orjson cannot write itself, as plain data that says what it was."""
    if isinstance(value, PurePath):
        return ["path", str(value)]
    if isinstance(value, frozenset | set):
        return ["set", sorted(canonical(item) for item in value)]
    if isinstance(value, bytes | bytearray | memoryview):
        return ["bytes", base64.b64encode(value).decode("ascii")]
    if hasattr(value, "__array__"):  # a numpy array or scalar: every element, every bit
        import numpy as np

        array = np.ascontiguousarray(value)
        return ["array", array.dtype.str, list(array.shape), ["bytes", array.tobytes().hex()]]
    raise TypeError(f"no canonical form for {type(value).__name__}")


def canonical(value: Any) -> str:
    """`value` as JSON with sorted keys; dataclasses, paths, sets, bytes and arrays included.

    A float NaN is written as null, as None is: no key mixes the two in one place.
    An integer must fit in 64 bits (every count, setting and time does); a larger
    one is a TypeError, as an unknown type is.
    """
    return orjson.dumps(value, default=_plain, option=_OPTIONS).decode("utf-8")


def digest(*parts: Any) -> str:
    """A short hex hash of the parts' canonical bytes."""
    data = orjson.dumps(parts, default=_plain, option=_OPTIONS)
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def key(*parts: Any) -> str:
    """digest() salted with what made a piece: reportgen's code and libraries."""
    return digest(code.identity(), *parts)
