"""JUnit XML (pytest --junitxml, and most CI test runners), one file per run.

The shape most runners share (pytest's src/_pytest/junitxml.py, Ant's and
Surefire's schemas): `<testsuites>` holding `<testsuite>` elements (or one
`<testsuite>` at the top), each holding `<testcase classname=... name=...>`.
A test case passed unless it holds `<failure>` (failed) or `<error>` (it
could not run: excluded, or failed with `errors: fail`); one holding
`<skipped>` did not run and is excluded. Task: `classname::name` (`name`
alone without a classname). Run: the file, so a folder of files from repeated
CI runs gives each test its runs; a test that appears several times in one
file counts once per appearance.

The XML is untrusted: it is parsed with expat as a stream (no tree is built),
and any document type declaration is refused before it is read, so neither
external entities nor entity expansion ("billion laughs") can happen; a JUnit
report never needs one.
"""

from __future__ import annotations

import codecs
import re
import xml.parsers.expat
from pathlib import Path

from ..limits import MAX_DOCUMENT_BYTES, size_text
from .base import Tally
from .reader import Reader
from .source import Source

_CHUNK = 1024 * 1024
#: Children of a test case that decide its outcome, the strongest first.
_OUTCOMES = ("failure", "error", "skipped")


class _Refused(Exception):
    """A construct no JUnit report needs (a DTD, an entity declaration)."""


class _Cases:
    """Collects test cases from expat's events: (line, task, outcome)."""

    def __init__(self, parser: xml.parsers.expat.XMLParserType) -> None:
        self.parser = parser
        self.depth = 0
        self.root: str | None = None
        self.case: tuple[int, str, dict[str, str]] | None = None
        self.case_depth = 0
        self.outcome: str | None = None
        self.found: list[tuple[int, str, str | None]] = []
        self.problems: list[tuple[int, str]] = []

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        line = self.parser.CurrentLineNumber
        self.depth += 1
        if self.root is None:
            self.root = tag
        if tag == "testcase" and self.case is None:
            self.case = (line, tag, attrs)
            self.case_depth = self.depth
            self.outcome = None
        elif (
            self.case is not None
            and self.depth == self.case_depth + 1
            and tag in _OUTCOMES
            # failure outranks error outranks skipped, whatever their order.
            and (self.outcome is None or _OUTCOMES.index(tag) < _OUTCOMES.index(self.outcome))
        ):
            self.outcome = tag

    def end(self, tag: str) -> None:
        if self.case is not None and self.depth == self.case_depth:
            line, _, attrs = self.case
            name = attrs.get("name", "")
            if not name.strip():
                self.problems.append((line, "<testcase> has no name attribute"))
            else:
                classname = attrs.get("classname", "").strip()
                task = f"{classname}::{name}" if classname else name
                self.found.append((line, task, self.outcome))
            self.case = None
        self.depth -= 1


def _refuse_doctype(*_: object) -> None:
    raise _Refused("a document type declaration (DTD), which a JUnit report never needs")


def _refuse_entity(*_: object) -> None:
    raise _Refused("an entity declaration, which a JUnit report never needs")


#: Encodings expat decodes itself; for any other a file declares, Python decodes it.
_EXPAT_ENCODINGS = frozenset({"utf-8", "utf-16", "utf-16-le", "utf-16-be", "latin-1", "ascii"})
_DECLARED = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]{1,40})["']""")


def _declared_codec(path: Path) -> str | None:
    """The Python codec of the encoding the file's XML declaration names, where expat
    cannot decode it itself (Shift_JIS, GBK, Big5, UTF-7, UTF-32: expat stops with
    "multi-byte encodings are not supported"); None where expat can, or none is named.
    Raises LookupError for a name Python does not know."""
    with path.open("rb") as handle:
        head = handle.read(256)
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"  # its declaration cannot be read as bytes
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # UTF-16 with its byte-order mark: expat's own
    found = _DECLARED.match(head)
    if found is None:
        return None
    codec = codecs.lookup(found.group(1).decode("ascii")).name
    return None if codec in _EXPAT_ENCODINGS else codec


def read_junit(source: Source, tally: Tally) -> None:
    problems = tally.problems
    path = source.path
    try:
        codec = _declared_codec(path)
    except LookupError as error:
        problems.add(f"{path}:1: cannot read the XML's encoding: {error}")
        return
    except OSError as error:
        problems.add(f"{path}: cannot read: {error.strerror}")
        return
    # A file in another encoding reaches expat as UTF-8, which then overrides the
    # encoding its declaration names.
    parser = xml.parsers.expat.ParserCreate("utf-8" if codec else None)
    cases = _Cases(parser)
    parser.StartElementHandler = cases.start
    parser.EndElementHandler = cases.end
    parser.StartDoctypeDeclHandler = _refuse_doctype
    parser.EntityDeclHandler = _refuse_entity
    parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            problems.add(
                f"{path}: is {size_text(size)}; files of this kind are read up to "
                f"{size_text(MAX_DOCUMENT_BYTES)}"
            )
            return
        with path.open("rb") as handle:
            read = 0
            decoder = codecs.getincrementaldecoder(codec)() if codec else None
            while chunk := handle.read(_CHUNK):
                read += len(chunk)
                if read > MAX_DOCUMENT_BYTES:
                    problems.add(f"{path}: holds more than {size_text(MAX_DOCUMENT_BYTES)}")
                    return
                parser.Parse(decoder.decode(chunk).encode("utf-8") if decoder else chunk, False)
            parser.Parse(decoder.decode(b"", final=True).encode("utf-8") if decoder else b"", True)
    except _Refused as error:
        problems.add(f"{path}:{parser.CurrentLineNumber}: refused: {error}")
        return
    except xml.parsers.expat.ExpatError as error:
        reason = xml.parsers.expat.ErrorString(error.code)
        hint = " (was the file cut short?)" if reason == "no element found" else ""
        problems.add(f"{path}:{error.lineno}: not well-formed XML: {reason}{hint}")
        return
    except (LookupError, UnicodeError, ValueError) as error:
        # The XML declaration names an encoding Python does not know, or the bytes do
        # not decode in the one it names.
        problems.add(f"{path}:{parser.CurrentLineNumber}: cannot read the XML's encoding: {error}")
        return
    except OSError as error:
        problems.add(f"{path}: cannot read: {error.strerror}")
        return
    if cases.root not in ("testsuites", "testsuite"):
        problems.add(
            f"{path}:1: expected a JUnit report (<testsuites> or <testsuite>), found <{cases.root}>"
        )
        return
    for line, message in cases.problems:
        problems.add(f"{path}:{line}: {message}")
    if cases.problems:
        return
    if not cases.found:
        problems.add(f"{path}: no <testcase> elements: no runs to count")
        return
    seen: dict[str, int] = {}
    passed_of = {None: True, "failure": False, "error": source.error_outcome, "skipped": None}
    # Line numbers and run ids as integers keep the tally's compact path. The tally's
    # line_base says which file of a folder this is, so a run id (the base plus how
    # often the test appeared so far in this file) is unique and sorts in file order.
    base = tally.line_base
    add_run = tally.add_run
    notes = {"error": "the test raised an error (<error>)", "skipped": "skipped (<skipped>)"}
    for line, task, outcome in cases.found:
        appearance = seen[task] = seen.get(task, 0) + 1
        note = notes.get(outcome) if outcome is not None else None
        add_run(base + line, task, passed_of[outcome], run=base + appearance, note=note)


def sniff(head: bytes) -> bool:
    """XML whose first element is <testsuites> or <testsuite>."""
    return head.startswith(b"<") and (b"<testsuites" in head or b"<testsuite" in head)


READER = Reader(
    name="junit",
    suffixes=(".xml",),
    sniff=sniff,
    read=read_junit,
    summary="JUnit XML (pytest --junitxml, CI runners), one file per run (a folder of them); "
    "<error> and <skipped> are excluded runs",
)
