"""Results of the slow pure computations, kept between builds (the cache's "results").

A rebuild after a template edit has the same counts and options as the build
before it, so the two-stage bootstrap, the coverage simulation, the curve over k
and the per-task tests come out the same: they are read back instead of made
again. Each result is stored under a hash of its computation's name, its
arguments (array bytes included), the source of stats/ and the versions of
reportgen, numpy and scipy (the simulations use numpy's random streams), so
changed code or counts never find an old result.

What is read back is untrusted, like every cache entry: plain JSON, turned into
the dataclass the result's annotation names and nothing else, every field
checked against its own annotation (numpy arrays by dtype and shape; a float
stays a Python float, an int an int, a numpy scalar a numpy scalar, so a page
formats it as it would the computed one). Anything that does not fit is
ignored and computed again; a result whose types the codec cannot express
exactly is not stored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np

from . import __version__
from .keys import digest

T = TypeVar("T")
Encode = Callable[[Any], Any]
Decode = Callable[[Any], Any]


class Unfit(ValueError):
    """A stored result that does not fit its annotation (damaged or foreign)."""


# ---------------------------------------------------------------- the key


@functools.cache
def _code_digest() -> str:
    """What the stored results were computed by: stats/'s source and the libraries."""
    import scipy

    sources = sorted((Path(__file__).resolve().parent / "stats").glob("*.py"))
    versions = (__version__, np.__version__, scipy.__version__)
    return digest(versions, [(path.name, path.read_bytes()) for path in sources])


def result_key(kind: str, *arguments: Any) -> str:
    """A hex key for one computation: its name, its arguments and the code that runs it."""
    return digest(_code_digest(), kind, *arguments)


# ---------------------------------------------------------------- the codec


_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _plain_float(value: float) -> float | str:
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def _read_float(value: Any) -> float:
    if type(value) is float:
        return value
    if type(value) is str and value in _NONFINITE:
        return _NONFINITE[value]
    raise Unfit("not a float")


def _tagged(value: Any, tag: str) -> Any:
    if type(value) is not dict or list(value) != [tag]:
        raise Unfit(f"expected {tag}")
    return value[tag]


def _encode_float(value: Any) -> Any:
    if type(value) is float:
        return _plain_float(value)
    if type(value) is int:  # an int where a float is declared stays an int
        return value
    if type(value) is np.float64:
        return {"f8": _plain_float(float(value))}
    raise TypeError(f"not a float: {type(value).__name__}")


def _decode_float(value: Any) -> Any:
    if type(value) is int:
        return value
    if type(value) is dict:
        return np.float64(_read_float(_tagged(value, "f8")))
    return _read_float(value)


def _encode_int(value: Any) -> Any:
    if type(value) is int:
        return value
    if type(value) is np.int64:
        return {"i8": int(value)}
    raise TypeError(f"not an int: {type(value).__name__}")


def _decode_int(value: Any) -> Any:
    if type(value) is int:
        return value
    number = _tagged(value, "i8")
    if type(number) is not int or not -(2**63) <= number < 2**63:
        raise Unfit("not an int64")
    return np.int64(number)


def _encode_bool(value: Any) -> Any:
    if type(value) is bool:
        return value
    if type(value) is np.bool_:
        return {"b1": bool(value)}
    raise TypeError(f"not a bool: {type(value).__name__}")


def _decode_bool(value: Any) -> Any:
    if type(value) is bool:
        return value
    flag = _tagged(value, "b1")
    if type(flag) is not bool:
        raise Unfit("not a bool")
    return np.bool_(flag)


def _exactly(kind: type) -> tuple[Encode, Decode]:
    def check(value: Any) -> Any:
        if type(value) is not kind:
            raise Unfit(f"not a {kind.__name__}")
        return value

    def encode(value: Any) -> Any:
        if type(value) is not kind:
            raise TypeError(f"not a {kind.__name__}")
        return value

    return encode, check


_ARRAY_ITEMS: dict[Any, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    np.float64: (_plain_float, _read_float),
    np.int64: (lambda v: v, lambda v: v if type(v) is int else _unfit("not an int")),
    np.bool_: (lambda v: v, lambda v: v if type(v) is bool else _unfit("not a bool")),
}


def _unfit(reason: str) -> Any:
    raise Unfit(reason)


def _array(dtype: Any) -> tuple[Encode, Decode]:
    if dtype not in _ARRAY_ITEMS:
        raise TypeError(f"arrays of {dtype} are not kept")
    write, read = _ARRAY_ITEMS[dtype]

    def encode(value: Any) -> Any:
        if type(value) is not np.ndarray or value.dtype != np.dtype(dtype):
            raise TypeError("not an array of the declared type")
        return {"shape": list(value.shape), "values": [write(v) for v in value.ravel().tolist()]}

    def decode(value: Any) -> Any:
        if type(value) is not dict or sorted(value) != ["shape", "values"]:
            raise Unfit("not an array")
        shape, items = value["shape"], value["values"]
        if type(shape) is not list or any(type(n) is not int or n < 0 for n in shape):
            raise Unfit("not an array's shape")
        if type(items) is not list or len(items) != math.prod(shape):
            raise Unfit("an array's values do not fill its shape")
        return np.array([read(v) for v in items], dtype=dtype).reshape(shape)

    return encode, decode


def _sequence(
    kind: type[list[Any]] | type[tuple[Any, ...]], item: tuple[Encode, Decode]
) -> tuple[Encode, Decode]:
    write, read = item

    def encode(value: Any) -> Any:
        if type(value) is not kind:
            raise TypeError(f"not a {kind.__name__}")
        return [write(v) for v in value]

    def decode(value: Any) -> Any:
        if type(value) is not list:
            raise Unfit("not a list")
        return kind(read(v) for v in value)

    return encode, decode


def _fixed_tuple(items: list[tuple[Encode, Decode]]) -> tuple[Encode, Decode]:
    def encode(value: Any) -> Any:
        if type(value) is not tuple or len(value) != len(items):
            raise TypeError("not a tuple of the declared length")
        return [write(v) for (write, _), v in zip(items, value, strict=True)]

    def decode(value: Any) -> Any:
        if type(value) is not list or len(value) != len(items):
            raise Unfit("not a tuple of the declared length")
        return tuple(read(v) for (_, read), v in zip(items, value, strict=True))

    return encode, decode


def _union(members: list[tuple[Encode, Decode]]) -> tuple[Encode, Decode]:
    # Each member's JSON is told apart by its own type, so trying them in order
    # decodes a value with the member that encoded it.
    def encode(value: Any) -> Any:
        for write, _ in members:
            try:
                return write(value)
            except TypeError:
                continue
        raise TypeError(f"no member of the union takes a {type(value).__name__}")

    def decode(value: Any) -> Any:
        for _, read in members:
            try:
                return read(value)
            except Unfit:
                continue
        raise Unfit("no member of the union fits")

    return encode, decode


def _literal(choices: tuple[Any, ...]) -> tuple[Encode, Decode]:
    def check(value: Any) -> Any:
        if not any(type(value) is type(c) and value == c for c in choices):
            raise Unfit("not one of the declared values")
        return value

    def encode(value: Any) -> Any:
        try:
            return check(value)
        except Unfit:
            raise TypeError("not one of the declared values") from None

    return encode, check


def _dataclass(cls: type) -> tuple[Encode, Decode]:
    fields = dataclasses.fields(cls)
    if any(not f.init for f in fields):
        raise TypeError(f"{cls.__name__} has fields its constructor does not take")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in fields]
    # The fields' codecs are made when first used, so that a type may refer to itself.
    parts: list[tuple[Encode, Decode]] = []

    def field_codecs() -> list[tuple[Encode, Decode]]:
        if not parts:
            parts.extend(codec(hints[name]) for name in names)
        return parts

    def encode(value: Any) -> Any:
        if type(value) is not cls:
            raise TypeError(f"not a {cls.__name__}")
        return [
            write(getattr(value, name))
            for name, (write, _) in zip(names, field_codecs(), strict=True)
        ]

    def decode(value: Any) -> Any:
        if type(value) is not list or len(value) != len(names):
            raise Unfit(f"not a {cls.__name__}")
        # Positionally: the constructor takes every field, in this order.
        return cls(*[read(item) for (_, read), item in zip(field_codecs(), value, strict=True)])

    return encode, decode


@functools.cache
def codec(hint: Any) -> tuple[Encode, Decode]:
    """(encode, decode) for values of a type annotation; TypeError for one not kept."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is float:
        return _encode_float, _decode_float
    if hint is int:
        return _encode_int, _decode_int
    if hint is bool:
        return _encode_bool, _decode_bool
    if hint is str or hint is type(None):
        return _exactly(hint)
    if origin in (typing.Union, types.UnionType):
        return _union([codec(member) for member in args])
    if origin is Literal:
        return _literal(args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence(tuple, codec(args[0]))
        return _fixed_tuple([codec(a) for a in args])
    if origin is list and len(args) == 1:
        return _sequence(list, codec(args[0]))
    if origin is np.ndarray and len(args) == 2:
        (dtype,) = typing.get_args(args[1]) or (None,)
        return _array(dtype)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(hint)
    raise TypeError(f"results of type {hint!r} are not kept")


# ---------------------------------------------------------------- the store


_KEY = re.compile(r"[0-9a-f]{32}")


class Results:
    """Results stored by the previous build (untrusted JSON), and those this build made.

    `recorded` maps a result_key to the JSON of its result. Without `keep`, every
    result is computed and nothing is stored (a build without the cache).
    """

    def __init__(self, recorded: dict[str, Any] | None = None, keep: bool = True) -> None:
        self.recorded = recorded or {}
        #: Whether results are kept for a next build (not without the cache).
        self.keep = keep
        #: What this build used, to store for the next one.
        self.used: dict[str, Any] = {}
        #: How many results were read back instead of computed.
        self.reused = 0

    def get(
        self, kind: str, hint: Any, compute: Callable[..., T], *arguments: Any, **options: Any
    ) -> T:
        """compute(*arguments, **options), read back if stored under the same key."""
        if not self.keep:
            return compute(*arguments, **options)
        try:
            key = result_key(kind, *arguments, sorted(options.items()))
            encode, decode = codec(hint)
        except (TypeError, NameError):
            # An argument without a canonical form, or a type the codec cannot express
            # exactly: computed every time.
            return compute(*arguments, **options)
        stored = self.recorded.get(key)
        if stored is not None:
            try:
                value: T = decode(stored)
            except (Unfit, TypeError, ValueError):
                pass  # damaged or foreign: compute it again
            else:
                self.used[key] = stored
                self.reused += 1
                return value
        value = compute(*arguments, **options)
        with contextlib.suppress(TypeError):  # not kept, as above
            self.used[key] = encode(value)
        return value


def results_from_json(doc: Any) -> dict[str, Any]:
    """The stored results as read: only their keys are checked here (each result is
    checked against its annotation when a build asks for it)."""
    if type(doc) is not dict or not all(_KEY.fullmatch(k) for k in doc):
        raise Unfit("not a store of results")
    return doc
