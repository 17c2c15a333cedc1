"""Replay: render a page again from a record of what its template read.

After an edit of index.html, a rebuild from a new process would need the whole
report (reading the inputs, estimating) to render one page. Instead, the build
that last rendered the page renders it a second time with every value of its
context wrapped: each attribute, item, length, iteration, comparison, call and
string the template takes from them is looked up in the real objects and noted
down. That record, plain JSON, goes to the cache. A later build whose data is
the same (the cache keys say so) renders the edited template against the record
alone. Anything the new template asks that the record lacks raises Miss, and the
build renders the page the usual way.

Why the replayed page is the page a full build would make: a wrapped value
answers every question from one table, filled from the real object while
recording and read while replaying, so the two give the same answers to the
same questions. What the table cannot answer faithfully is refused instead:
 - Python code that inspects a value's type (isinstance in a filter, a test
   such as `is mapping`) would see the wrapper, not the object: filters, tests
   and globals given a wrapped value raise Miss, except a few of Jinja's own that
   use only the questions above (length, join, map, sort, ...);
 - plain values (str, int, float, bool, None, Markup) are given out as they are;
   subclasses of them and numpy values, whose behaviour a copy would not keep,
   stop the recording;
 - `%` formatting decides by the value's type whether to unpack a tuple or read
   a mapping: records are made and replayed in Jinja's sandbox, which sends `%`
   through ReplayEnvironment.call_binop, and a wrapped value there is a Miss
   (as is an attribute the sandbox hides and the pages' environment shows);
 - NaN is one object or another, and `x in [y]` holds for the same NaN only:
   each NaN object met while recording is numbered and replayed as one object;
 - a call that could change the object (append, update, any method called by an
   underscore name) stops the recording, and an iterator (which a second loop
   would find empty) too; and the second rendering runs once the site is
   written, so that a template that changes what it reads anyway changes no page;
 - an error other than a missing attribute, item or a wrong type or value
   stops the recording; those four are noted down and raised again.
The record is untrusted input read back from disk: it is JSON, never code,
anything malformed in it is a Miss, and a replayed page may not grow past a
limit (a record from elsewhere could repeat one value many times over). The
cache checks its text as it checks cached charts (cache._record_from_json).
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jinja2
import orjson
from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup


class Miss(Exception):
    """The record cannot answer what the template asks: render the page the usual way."""


class Unrecordable(Exception):
    """The page reads its values in a way a record could not repeat faithfully."""


#: Errors a value may raise that are noted down and raised again on replay: the
#: ones Jinja's attribute and item lookups fall back on, and a wrong type or value.
_ERRORS: dict[str, type[Exception]] = {
    cls.__name__: cls for cls in (AttributeError, KeyError, IndexError, TypeError, ValueError)
}

#: Calls that change the object called: never made while recording.
_MUTATORS = frozenset(
    {
        "add",
        "append",
        "clear",
        "difference_update",
        "discard",
        "extend",
        "insert",
        "intersection_update",
        "pop",
        "popitem",
        "remove",
        "reverse",
        "setdefault",
        "sort",
        "symmetric_difference_update",
        "update",
    }
)

#: Jinja's filters, tests and globals that touch a value only through the questions
#: a record answers (length, iteration, items, attributes, str, ==): they may be given
#: wrapped values. Every other one given a wrapped value raises Miss.
SAFE_FILTERS = frozenset(
    {
        "count",
        "d",
        "default",
        "e",
        "escape",
        "first",
        "join",
        "length",
        "list",
        "map",
        "reject",
        "rejectattr",
        "safe",
        "select",
        "selectattr",
        "sort",
        "string",
    }
)
SAFE_TESTS = frozenset(
    {"defined", "undefined", "none", "eq", "equalto", "==", "ne", "!=", "in", "escaped"}
)
SAFE_GLOBALS = frozenset({"range", "dict", "namespace", "joiner", "cycler"})

#: The questions whose answer is a sequence of answers.
_SEQUENCES = frozenset({"iter", "reversed"})

#: How a NaN is answered: "nan" and the number of the object it is.
_NAN = re.compile(r"nan [0-9]{1,9}")

#: The largest integer a record holds (JSON as orjson writes it).
_MAX_INT = 2**63


def _plain(value: Any) -> list[Any] | None:
    """The record's form of a plain value (one given out as it is), else None."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return ["v", value]
    if kind is float:
        if math.isnan(value):
            return None  # NaN is answered by Record._answer_for, which keeps its identity
        return ["v", value] if math.isfinite(value) else ["f", repr(value)]
    if kind is int:
        if -_MAX_INT <= value < _MAX_INT:
            return ["v", value]
        raise Unrecordable("an integer too large for the record")
    if kind is Markup:
        return ["m", str(value)]
    return None


def _key(kind: str, value: Any) -> str:
    """The record's name for a question that carries a plain value (an item's key,
    a call's arguments, the other side of ==)."""
    return kind + orjson.dumps(_argument(value)).decode("utf-8")


def _argument(value: Any) -> Any:
    if isinstance(value, slice):
        return ["slice", *(_argument(part) for part in (value.start, value.stop, value.step))]
    if isinstance(value, tuple):
        return ["tuple", *(_argument(part) for part in value)]
    plain = _plain(value)
    if plain is None:  # an object, or NaN (whose identity a question cannot carry)
        raise Miss("a question that carries a value the record cannot write")
    return plain


class Record:
    """What a page's template read from its context: nodes of answers.

    `nodes[i]` maps a question (".name", "[key", "len", "iter", ...) to its answer:
    ["v", plain value], ["f", "nan"], ["m", markup], ["n", node], ["x", error name]
    or, for "iter" and "reversed", ["s", [answers]]. `context` maps each name the
    template was given to its answer.
    """

    def __init__(
        self,
        context: dict[str, Any],
        nodes: list[dict[str, Any]],
        objects: list[Any] | None = None,
    ) -> None:
        self.context = context
        self.nodes = nodes
        #: While recording, the real object behind each node; None when replaying.
        self.objects = objects
        #: While recording, each NaN object met (by id, kept alive) and its number.
        self._nan_numbers: dict[int, tuple[int, float]] = {}
        #: The NaN object given out for each number: `x in [y]` holds for the same
        #: NaN object and not for another, so one real object stays one object.
        self._nan_objects: dict[int, float] = {}

    # -- recording

    @classmethod
    def recording(cls, context: Mapping[str, Any]) -> tuple[Record, dict[str, Any]]:
        """A new record, and the context to render with (every value wrapped)."""
        record = cls({}, [], [])
        wrapped = {}
        for name, value in context.items():
            record.context[name] = record._answer_for(value)
            wrapped[name] = record._value(record.context[name])
        return record, wrapped

    def _answer_for(self, value: Any) -> list[Any]:
        plain = _plain(value)
        if plain is not None:
            return plain
        if type(value) is float:  # NaN, by which object it is
            number = self._nan_numbers.setdefault(id(value), (len(self._nan_numbers), value))
            return ["f", f"nan {number[0]}"]
        if (
            isinstance(value, str | bytes | numbers.Number)
            or type(value).__module__.partition(".")[0] == "numpy"
        ):
            # A subclass of a plain type or a numpy value: a wrapper would not keep
            # how it prints or compares, and a copy would not keep its type.
            raise Unrecordable(f"a value of type {type(value).__name__}")
        if isinstance(value, Iterator):
            raise Unrecordable("an iterator, which a second loop would find empty")
        assert self.objects is not None
        self.nodes.append({})
        self.objects.append(value)
        return ["n", len(self.nodes) - 1]

    # -- both

    def ask(self, node: int, question: str, compute: Callable[[Any], Any]) -> Any:
        """The answer to `question` about a node: from the record, or (recording)
        computed from its real object and noted down."""
        answers = self.nodes[node]
        answer = answers.get(question)
        if answer is None:
            if self.objects is None:
                raise Miss(question)
            answer = answers[question] = self._compute(self.objects[node], question, compute)
        return self._value(answer, sequence=question in _SEQUENCES)

    def _compute(self, real: Any, question: str, compute: Callable[[Any], Any]) -> list[Any]:
        try:
            value = compute(real)
        except (Miss, Unrecordable):
            raise
        except Exception as error:
            for name, cls in _ERRORS.items():
                if isinstance(error, cls):
                    return ["x", name]
            raise Unrecordable(f"{question}: {type(error).__name__}") from error
        if question in ("iter", "reversed"):
            return ["s", [self._answer_for(item) for item in value]]
        return self._answer_for(value)

    def _value(self, answer: Any, sequence: bool = False) -> Any:
        """The value an answer stands for (raising the error it notes); Miss if malformed.
        A sequence of answers only where `sequence` (the answer to "iter" or "reversed"),
        and never one inside another: recording writes no other."""
        if not isinstance(answer, list) or len(answer) != 2 or not isinstance(answer[0], str):
            raise Miss("a malformed answer")
        kind, value = answer
        if kind == "v" and (value is None or type(value) in (str, int, float, bool)):
            return value
        if kind == "n" and type(value) is int and 0 <= value < len(self.nodes):
            return Wrapped(self, value)
        if kind == "m" and type(value) is str:
            return Markup(value)
        if kind == "f" and value in ("inf", "-inf"):
            return float(value)
        if kind == "f" and type(value) is str and _NAN.fullmatch(value):
            number = int(value[4:])
            return self._nan_objects.setdefault(number, float("nan"))
        if kind == "x" and value in _ERRORS:
            raise _ERRORS[value](value)
        if kind == "s" and sequence and type(value) is list:
            return [self._value(item) for item in value]
        raise Miss("a malformed answer")

    # -- the record as JSON, and back

    def to_json(self) -> dict[str, Any]:
        return {"context": self.context, "nodes": self.nodes}

    @classmethod
    def from_json(cls, doc: Any) -> Record:
        """A record read back from disk; ValueError if its shape is wrong (its
        answers are checked as they are used)."""
        if not isinstance(doc, dict):
            raise ValueError("a record is an object")
        context, nodes = doc.get("context"), doc.get("nodes")
        if not isinstance(context, dict) or not isinstance(nodes, list):
            raise ValueError("a record has a context and nodes")
        if not all(isinstance(node, dict) for node in nodes):
            raise ValueError("a record's node is an object")
        return cls(context, nodes)

    def replaying_context(self) -> dict[str, Any]:
        """The context to render with, every value answered from the record."""
        return {name: self._value(answer) for name, answer in self.context.items()}


class Wrapped:
    """A value of a page's context, answering from a Record (see the module's docstring).

    Every attribute, including those with underscores, is the wrapped object's:
    the wrapper's own state is reached only through object.__getattribute__.
    """

    __slots__ = ("_record",)
    __hash__ = None  # type: ignore[assignment]  # unhashable: a set or a dict key is a Miss

    def __init__(self, record: Record, node: int) -> None:
        object.__setattr__(self, "_record", (record, node))

    def __getattribute__(self, name: str) -> Any:
        return _ask(self, "." + name, lambda real: getattr(real, name))

    def __setattr__(self, name: str, value: Any) -> None:
        raise Miss("setting an attribute")

    def __delattr__(self, name: str) -> None:
        raise Miss("deleting an attribute")

    def __getitem__(self, key: Any) -> Any:
        return _ask(self, _key("[", key), lambda real: real[key])

    def __len__(self) -> int:
        length: int = _ask(self, "len", len)
        return length

    def __bool__(self) -> bool:
        truth: bool = _ask(self, "bool", bool)
        return truth

    def __iter__(self) -> Iterator[Any]:
        def items(real: Any) -> Any:
            iterator = iter(real)
            if iterator is real:
                raise Unrecordable("an iterator, which a second loop would find empty")
            return list(iterator)

        return iter(_ask(self, "iter", items))

    def __reversed__(self) -> Iterator[Any]:
        return iter(_ask(self, "reversed", lambda real: list(reversed(real))))

    def __contains__(self, item: Any) -> bool:
        found: bool = _ask(self, _key("in", item), lambda real: item in real)
        return found

    def __eq__(self, other: object) -> bool:
        same: bool = _ask(self, _key("==", other), lambda real: real == other)
        return same

    def __ne__(self, other: object) -> bool:
        different: bool = _ask(self, _key("!=", other), lambda real: real != other)
        return different

    def __str__(self) -> str:
        text: str = _ask(self, "str", str)
        return text

    def __repr__(self) -> str:
        text: str = _ask(self, "repr", repr)
        return text

    def __format__(self, spec: str) -> str:
        if spec:
            raise Miss("a format with a specification")
        return str(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        def call(real: Any) -> Any:
            name = getattr(real, "__name__", "")
            if not isinstance(name, str) or name in _MUTATORS or _hidden(name):
                raise Unrecordable(f"a call of {name!r}, which may change its object")
            return real(*args, **kwargs)

        return _ask(self, _key("()", (tuple(args), tuple(sorted(kwargs.items())))), call)


def _ask(wrapped: Wrapped, question: str, compute: Callable[[Any], Any]) -> Any:
    """The answer to `question` about a wrapped value (Record.ask), reached without
    Wrapped.__getattribute__, which forwards every attribute to the wrapped object."""
    record, node = object.__getattribute__(wrapped, "_record")
    return record.ask(node, question, compute)


def _hidden(name: str) -> bool:
    """A method called through its underscore name (`__iadd__`, `__setitem__`, a bound
    `__call__`) may change its object; only `__html__`, which markupsafe calls, is read."""
    return name.startswith("_") and name != "__html__"


#: Containers a template builds that may hold wrapped values, looked into by _suspect.
_CONTAINERS = (list, tuple, set, frozenset, dict)
#: How many values _suspect looks at before it takes a value for suspect.
_SUSPECT_LOOKS = 10_000


def _suspect(value: Any) -> bool:
    """Whether a value given to a filter, test, global or `%` may hold a wrapped value,
    at any depth of the lists, tuples, sets and dicts a template can build."""
    todo, looked = [value], 0
    while todo:
        current = todo.pop()
        looked += 1
        if looked > _SUSPECT_LOOKS or isinstance(current, Wrapped | Iterator):
            return True
        if isinstance(current, dict):
            todo.extend(current.keys())
            todo.extend(current.values())
        elif isinstance(current, _CONTAINERS):
            todo.extend(current)
    return False


def _guarded(function: Callable[..., Any], what: str) -> Callable[..., Any]:
    @functools.wraps(function)  # keeps Jinja's pass_context and the like
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if any(_suspect(arg) for arg in args) or any(_suspect(v) for v in kwargs.values()):
            raise Miss(f"{what} given a recorded value")
        return function(*args, **kwargs)

    return guarded


class ReplayEnvironment(SandboxedEnvironment):
    """The environment records are made and replayed in: Jinja's sandbox, so that `%`
    goes through call_binop. `"%s" % value` decides by the value's type whether to
    unpack a tuple or read a mapping, which a wrapper cannot show: so `%` with a
    wrapped value on either side is a Miss. (The sandbox also refuses underscore
    attributes: a template that reads them is rendered the usual way.)"""

    intercepted_binops = frozenset({"%"})

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        # The sandbox would give an undefined value for `x.__len__` or `f.__doc__`
        # where the pages' own environment gives the attribute: `is defined` and
        # `default` would then decide otherwise, with no error.
        raise Miss(f"the attribute {attribute!r}, which the sandbox hides")

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if _suspect(left) or _suspect(right):
            raise Miss(f"{operator} with a recorded value")
        return super().call_binop(context, operator, left, right)


def guard(env: jinja2.Environment) -> jinja2.Environment:
    """Make `env` (one of its own, not shared) fit for recording and replaying: its
    filters, tests and globals, but the safe ones, refuse wrapped values."""
    env.filters = {
        name: f if name in SAFE_FILTERS else _guarded(f, f"filter {name}")
        for name, f in env.filters.items()
    }
    tests: dict[str, Any] = dict(env.tests)
    env.tests = {
        name: t if name in SAFE_TESTS else _guarded(t, f"test {name}") for name, t in tests.items()
    }
    env.globals = {
        name: g if name in SAFE_GLOBALS or not callable(g) else _guarded(g, f"function {name}")
        for name, g in env.globals.items()
    }
    return env


def record_page(
    env: jinja2.Environment, template: str, context: Mapping[str, Any], expected: str
) -> Record | None:
    """Render `template` again with every context value wrapped; the record, or None
    when the page cannot be recorded or the wrapped rendering differs from
    `expected` (the page as rendered with the real values). `env` must be guarded."""
    try:
        record, wrapped = Record.recording(context)
        html = env.get_template(template).render(**wrapped)
    except Exception:  # any failure only means no record: the page is rendered as usual
        return None
    if html != expected:
        return None
    record.objects = None  # the real objects are not kept with it
    record._nan_numbers.clear()
    return record


def replay_page(env: jinja2.Environment, template: str, record: Record, limit: int) -> str:
    """The page `template` makes from `record` alone, of at most `limit` characters.
    Miss (or any error) when the template asks what the record cannot answer, or
    the page grows past the limit (a record from elsewhere could repeat one value
    many times over: the usual build then renders it from the real data).
    `env` must be guarded."""
    parts: list[str] = []
    size = 0
    for part in env.get_template(template).generate(**record.replaying_context()):
        size += len(part)
        if size > limit:
            raise Miss(f"the page grows past {limit:,} characters")
        parts.append(part)
    return "".join(parts)
