"""Limits on what an input may cost, and the readers that keep to them.

Result files, configs and reports may come from anyone (a pull request, a
shared folder), so a small file must not be able to make a build use gigabytes
or minutes. Each limit here is stated in the README; a file beyond one is
refused with a located message, like any other bad input. JSON is measured
against them from its raw bytes by json_scan.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer, ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import Node
from yaml.resolver import Resolver

try:  # libyaml, which PyYAML's wheels carry: it scans a large file 100 times faster
    from yaml._yaml import CParser

    FAST_YAML = True
except ImportError:  # pragma: no cover - a PyYAML built without it
    FAST_YAML = False

MiB = 1024 * 1024

#: A whole-document format (a JSON array or object, report.json, a history file)
#: is parsed in one piece, so its size bounds the memory of the parse.
MAX_DOCUMENT_BYTES = 256 * MiB
#: YAML is parsed in pure Python, about a megabyte a second: a larger suite file
#: belongs in JSONL.
MAX_YAML_BYTES = 16 * MiB
#: One member of an Inspect .eval zip, decompressed. The member is held whole while
#: it is parsed; this keeps a zip bomb's peak memory near this size.
MAX_MEMBER_BYTES = 64 * MiB
#: All members of one .eval together, decompressed: bounds the time a small archive
#: (for example many entries pointing at the same compressed data) can take.
MAX_ARCHIVE_BYTES = 2048 * MiB
#: Values of one JSON value built at once (each array item, object key and object
#: value counts, the value itself too): a record of a τ-bench, τ²-bench or Inspect log,
#: the rest of such a log, an .eval member, a whole file of another format, whatever
#: json_loads reads (report.json, a history line). Counted from the raw bytes before
#: anything is built (json_scan.json_values), because a value can cost 85 bytes as a Python
#: object (`{"a":{}}`), 25 times what it takes in the file: at this many, about 130 MB,
#: beside the text of a 64 MiB member or record. Real records hold thousands (a
#: τ²-bench simulation with its trajectory), a long agent sample hundreds of thousands,
#: a report.json about 35 a task (so up to about 40,000 tasks for check, compare, plan).
MAX_JSON_VALUES = 1_500_000
#: One record of the array a τ-bench, τ²-bench or Inspect JSON log is read by, or the
#: rest of such a log, or a whole JSON file of another format: each is held whole while
#: it is parsed, like an .eval member, so it has the member's limit. The log itself may
#: be up to MAX_DOCUMENT_BYTES: it is read a record at a time.
MAX_RECORD_BYTES = MAX_MEMBER_BYTES
#: Nodes of one YAML document (each scalar, list and mapping, keys included), counted
#: as it is composed. PyYAML keeps every node, with its position in the file, until the
#: document is built: about 500 bytes and 15 microseconds each, so a 16 MiB file of
#: `{}, ` (4 million nodes) took minutes and gigabytes. A suite file with more tasks or
#: outcomes than this belongs in JSONL.
MAX_YAML_NODES = 250_000
#: Nesting of a YAML document, with aliases expanded.
MAX_DEPTH = 100
#: Nodes that YAML aliases may add beyond those written out. PyYAML's own dump
#: writes an alias for a repeated object, so aliases are allowed, but a chain of
#: them ("billion laughs") expands exponentially in anything that walks the
#: value, an error message included.
MAX_ALIAS_NODES = 100_000
#: Characters of a task id, result set name or build label shown in a chart;
#: tables show the whole text. An axis shows about 30 characters anyway; the
#: renderer measures a longer label again and again to cut it to fit, which took
#: minutes for a hundred ids of ten thousand characters.
MAX_CHART_LABEL = 40


class TooLarge(ValueError):
    """A file or member beyond its limit; the message says which limit."""


def size_text(count: int) -> str:
    """'256 MiB' for whole mebibytes, else the exact count ('16,777,217 bytes')."""
    return f"{count // MiB} MiB" if count % MiB == 0 and count else f"{count:,} bytes"


def check_size(path: Path, limit: int) -> int:
    """The file's size, or TooLarge when it is more than `limit` bytes (nothing is read)."""
    size = path.stat().st_size
    if size > limit:
        raise TooLarge(
            f"is {size_text(size)}; files of this kind are read up to {size_text(limit)}"
        )
    return size


def read_limited(path: Path, limit: int) -> bytes:
    """The whole file, or TooLarge when it holds more than `limit` bytes.

    The size is checked before reading, so a huge (or sparse) file costs nothing;
    the read itself is bounded too, for files whose size stat cannot tell (pipes,
    devices).
    """
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise TooLarge(
                f"is {size_text(size)}; files of this kind are read up to {size_text(limit)}"
            )
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"holds more than {size_text(limit)}, the limit for files of this kind")
    return data


class _Bounds(Composer, SafeConstructor):
    """The composer and constructor of a safe loader that refuse deep nesting, too many
    nodes and alias expansion beyond a budget.

    The checks happen while the document is composed into nodes, before any
    Python value is built, so a refused document costs about what it has composed.
    """

    def _start(self) -> None:
        self._depth = 0
        self._nodes = 0
        self._open_anchors: set[str] = set()
        self._alias_nodes = 0
        #: Expanded (nodes, depth) of each node an alias has named, by id.
        self._expanded: dict[int, tuple[int, int]] = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        if self.check_event(AliasEvent):  # type: ignore[attr-defined]
            event = self._next_event()
            if event.anchor in self._open_anchors:
                raise ComposerError(
                    None, None, f"alias *{event.anchor} is inside its own anchor", event.start_mark
                )
            node = super().compose_node(parent, index)
            assert node is not None  # an alias always names a composed node
            nodes, depth = self._expand(node)
            self._alias_nodes += nodes
            if self._alias_nodes > MAX_ALIAS_NODES:
                raise ComposerError(
                    None,
                    None,
                    f"aliases expand to more than {MAX_ALIAS_NODES:,} values",
                    event.start_mark,
                )
            if self._depth + depth > MAX_DEPTH:
                raise ComposerError(
                    None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark
                )
            return node
        event = self._next_event()
        if self._depth >= MAX_DEPTH:
            raise ComposerError(
                None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark
            )
        self._nodes += 1
        if self._nodes > MAX_YAML_NODES:
            raise ComposerError(
                None,
                None,
                f"holds more than {MAX_YAML_NODES:,} values (keys count too)",
                event.start_mark,
            )
        anchor = event.anchor
        if anchor is not None:
            self._open_anchors.add(anchor)
        self._depth += 1
        try:
            composed = super().compose_node(parent, index)
            assert composed is not None
            return composed
        finally:
            self._depth -= 1
            self._open_anchors.discard(anchor or "")

    def _next_event(self) -> Any:
        return self.peek_event()  # type: ignore[attr-defined]

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Any, Any]:
        """A mapping, refusing a key given twice: PyYAML keeps the last one silently, so a
        second result_sets: list dropped the first. Keys merged in with << may be
        overridden, as YAML means them to be."""
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    earlier = first.setdefault(key, key_node)
                except TypeError:  # an unhashable key: the constructor below says so
                    continue
                if earlier is not key_node:
                    raise ConstructorError(
                        None,
                        None,
                        f"key {key!r} is given twice (first on line {earlier.start_mark.line + 1})",
                        key_node.start_mark,
                    )
        mapping: dict[Any, Any] = super().construct_mapping(node, deep)  # type: ignore[arg-type]
        return mapping

    def _expand(self, root: Node) -> tuple[int, int]:
        """(values, depth) of a composed node with every alias in it expanded.

        Without recursion (a chain of aliases can be deeper than Python's stack),
        and remembering each node, so the cost is the number of distinct nodes.
        """
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, children_done = stack.pop()
            if id(node) in self._expanded:
                continue
            children = _children(node)
            if children_done or not children:
                sizes = [self._expanded[id(c)] for c in children]
                nodes = 1 + sum(n for n, _ in sizes)
                depth = 1 + max((d for _, d in sizes), default=0)
                self._expanded[id(node)] = (nodes, depth)
            else:
                stack.append((node, True))
                stack.extend((c, False) for c in children if id(c) not in self._expanded)
        return self._expanded[id(root)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


class _BoundedLoader(_Bounds, yaml.SafeLoader):
    """PyYAML's own Python parser: its messages are the ones a short text (front
    matter) has always had."""

    def __init__(self, stream: str) -> None:
        yaml.SafeLoader.__init__(self, stream)
        self._start()


if FAST_YAML:

    class _FastBoundedLoader(_Bounds, CParser, Resolver):
        """libyaml's parser with the Python composer above: the same checks and
        values, scanned and parsed 100 times faster (a 16 MiB file in seconds)."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            Composer.__init__(self)
            self._start()


#: A text libyaml refuses is parsed again by PyYAML's own parser when it is this short
#: (well under a second): for its messages, which are the ones reportgen has always
#: given, and its leniency (it reads an escaped lone surrogate, which the readers then
#: name where it is).
YAML_RETRY_CHARS = 256 * 1024


def load_yaml(text: str, *, fast: bool = False) -> Any:
    """yaml.safe_load within MAX_DEPTH, MAX_YAML_NODES and MAX_ALIAS_NODES; raises
    yaml.YAMLError beyond. `fast` parses with libyaml where PyYAML has it (for whole
    files): the same values, and the same messages for a short text."""
    if not (fast and FAST_YAML):
        return _load(_BoundedLoader(text))
    try:
        return _load(_FastBoundedLoader(text))
    except yaml.MarkedYAMLError as error:
        if len(text) <= YAML_RETRY_CHARS:
            return _load(_BoundedLoader(text))
        if error.problem == "exceeded maximum nesting depth":  # libyaml's own limit
            error.problem = f"nested deeper than {MAX_DEPTH} levels"
        raise


def _load(loader: _Bounds) -> Any:
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()  # type: ignore[attr-defined]
