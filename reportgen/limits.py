"""Limits on what an input may cost, and the readers that keep to them.

Result files, configs and reports may come from anyone (a pull request, a
shared folder), so a small file must not be able to make a build use gigabytes
or minutes. Each limit here is stated in the README; a file beyond one is
refused with a located message, like any other bad input.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.events import AliasEvent
from yaml.nodes import Node

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


class _BoundedLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses deep nesting and alias expansion beyond a budget.

    The checks happen while the document is composed into nodes, before any
    Python value is built, so a refused document costs about its own size.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._open_anchors: set[str] = set()
        self._alias_nodes = 0
        #: Expanded (nodes, depth) of each node an alias has named, by id.
        self._expanded: dict[int, tuple[int, int]] = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        if self.check_event(AliasEvent):
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
        return self.peek_event()  # type: ignore[no-untyped-call]

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


def load_yaml(text: str) -> Any:
    """yaml.safe_load within MAX_DEPTH and MAX_ALIAS_NODES; raises yaml.YAMLError beyond."""
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
