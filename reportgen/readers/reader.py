"""The `Reader` each format module defines: how to recognise its files and read them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .base import Tally
from .source import Source

#: How much of a file sniffing looks at.
HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Reader:
    """One input format: its name, how to recognise a file, and how to read it.

    `suffixes` settle the format by the file name alone; otherwise `sniff` looks
    at the first 64 KiB (byte-order mark and leading white space removed).
    `read` hands every run or task count to the tally, reporting problems
    through `tally.problems` with their location.
    """

    name: str
    suffixes: tuple[str, ...]
    sniff: Callable[[bytes], bool]
    read: Callable[[Source, Tally], None]
    #: One line for `reportgen formats` and the README's format table.
    summary: str
    #: For a folder input: of the files found in it that were detected as this
    #: format (sorted), the ones to read. Formats whose folders also hold summaries
    #: of the same runs (a run-level file beside per-trial files, a job summary)
    #: drop those here; by default every file is read.
    folder_files: Callable[[list[Path]], list[Path]] | None = None
    #: Whether a run may carry several scores, one of them picked with scorer:.
    scorers: bool = False
    #: Whether a run may be given as a score, which passes at threshold: or more.
    scores: bool = False
    #: Whether a file detected as this format inside a folder input is a result file,
    #: from its first 64 KiB (as for sniff). A harness's or reportgen's own YAML config
    #: beside the results is not, nor a site's history.jsonl kept there.
    in_folder: Callable[[bytes], bool] | None = None


def never(head: bytes) -> bool:
    """For formats recognised by their suffix only."""
    return False
