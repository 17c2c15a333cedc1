"""A folder as one input: the result files it holds, all of one format.

SWE-bench reports, Harbor jobs, Terminal-Bench runs and JUnit files from
repeated CI runs arrive as folders. The rules, in order:

1. The folder is walked in sorted order; an entry that cannot be read (no
   permission) or a symbolic link to a file outside the folder stops it with an
   error naming the entry (--skip-unreadable lists it as skipped). Hidden
   entries (a name starting with "."), symbolic links to folders (which can
   loop), a site reportgen wrote (a folder holding SITE_MARKER), and anything
   deeper than MAX_DEPTH are passed over; a walk that meets more than
   MAX_ENTRIES entries stops with an error.
2. Files whose suffix says they are not results (NOT_RESULTS: logs, text,
   recordings, scripts, pictures, pages) are skipped unread. Every other file
   is detected like a file given alone (its suffix, else its first 64 KiB);
   files of no known format (configs, trajectories, empty files) are skipped
   too: a harness's folder holds many besides its results. A format may also pass
   over a file detected as its own (Reader.in_folder: a YAML file without a
   top-level tasks: key is a config, not a suite; a history.jsonl is no runs).
3. The files detected must be of one format; otherwise the error names them by
   format. With `format:` (or --input-format) given, only files of that format
   are read and the rest are skipped.
4. The format may drop files that repeat others (Reader.folder_files: a Harbor
   job's summary, Terminal-Bench's per-trial copies of the run's file).
5. A skipped file that carries the name of a file being read (another
   result.json) or a suffix only this format claims (.xml for JUnit) is read
   anyway, so a damaged or cut-short result fails with its location instead of
   quietly lowering the counts; one its format passed over by Reader.in_folder
   is not.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import Problems
from .reader import HEAD_BYTES, Reader

#: Folder levels below the one given that are looked into.
MAX_DEPTH = 8
#: Entries (files and folders) a walk may meet before it gives up.
MAX_ENTRIES = 200_000
#: The file that marks a folder as a site reportgen wrote (website/write.py's
#: MARKER; the readers may not import the website stage, a test keeps them equal).
SITE_MARKER = ".reportgen-site"
#: Suffixes of files that are never results, skipped without being opened.
NOT_RESULTS = frozenset(
    [
        ".log",
        ".txt",
        ".md",
        ".cast",
        ".sh",
        ".py",
        ".pyc",
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".svg",
        ".html",
        ".css",
        ".js",
        ".toml",
        ".lock",
        ".patch",
        ".diff",
    ]
)
#: File names listed in one message before "and N more".
_LISTED = 3


@dataclass
class FolderFiles:
    """What a folder holds for reading: the format and its files, or nothing."""

    format: str | None
    files: list[Path]
    skipped: int


def walk(
    folder: Path,
    problems: Problems,
    too_deep: list[Path] | None = None,
    skipped: list[tuple[str, str]] | None = None,
) -> list[Path] | None:
    """Every regular file under folder, sorted, by the rules above; None after a problem.

    `too_deep`, when given, receives the folders left out for lying deeper than
    MAX_DEPTH; `skipped` (--skip-unreadable), the entries that cannot be read, which
    are otherwise an error.
    """
    found: list[Path] = []
    files: dict[tuple[int, int], Path] = {}  # by (device, inode): see _add_once
    seen = 0
    inside = folder.resolve()
    stack: list[tuple[Path, int]] = [(folder, 0)]
    while stack:
        current, depth = stack.pop()
        try:
            with os.scandir(current) as entries:
                items = sorted(entries, key=lambda e: e.name)
        except OSError as error:
            if skipped is not None and current != folder:
                skipped.append((str(current), f"cannot list the folder: {error.strerror}"))
                continue
            problems.add(f"{current}: cannot list the folder: {error.strerror}")
            return None
        subfolders = []
        for entry in items:
            seen += 1
            if seen > MAX_ENTRIES:
                problems.add(
                    f"{folder}: holds more than {MAX_ENTRIES:,} files and folders; "
                    "give the folder of one run or job"
                )
                return None
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    sub = Path(entry.path)
                    if depth >= MAX_DEPTH:
                        if too_deep is not None:
                            too_deep.append(sub)
                    elif not (sub / SITE_MARKER).exists():
                        subfolders.append(sub)
                elif entry.is_file(follow_symlinks=True):
                    path = Path(entry.path)
                    if entry.is_symlink() and not path.resolve().is_relative_to(inside):
                        # A link out of the folder could read any file the build's user
                        # can (~/.git-credentials), and quote its first line in an error.
                        why = f"a symbolic link out of {folder}, not followed"
                        if skipped is None:
                            problems.add(f"{path}: {why}; give the file it names itself")
                            return None
                        skipped.append((str(path), why))
                        continue
                    _add_once(entry, path, files, found)
            except FileNotFoundError:
                continue  # an entry that vanished: nothing to read
            except OSError as error:
                # Never passed over in silence: a folder of runs left out unread
                # lowers the counts with nothing to say so (issue 38, row 6).
                if skipped is not None:
                    skipped.append((entry.path, f"cannot be read ({error.strerror})"))
                    continue
                problems.add(f"{entry.path}: cannot be read ({error.strerror})")
                return None
        stack.extend((sub, depth + 1) for sub in reversed(subfolders))
    return sorted(found, key=lambda p: p.relative_to(folder).parts)


def _add_once(
    entry: os.DirEntry[str], path: Path, files: dict[tuple[int, int], Path], found: list[Path]
) -> None:
    """Add a file found, unless it is one already found under another name (a link,
    symbolic or hard, to a file the folder also holds names the same runs): then the
    file under its own name is kept, else the first link's. `files` maps each file's
    (device, inode) to its name; Windows' scandir gives no inode (0), and nothing is
    merged there."""
    info = entry.stat(follow_symlinks=True)
    same = files.setdefault((info.st_dev, info.st_ino), path)
    if same is not path and info.st_ino:
        if entry.is_symlink() or not same.is_symlink():
            return
        found.remove(same)
        files[(info.st_dev, info.st_ino)] = path
    found.append(path)


def folder_files(
    folder: Path,
    wanted: str | None,
    readers: tuple[Reader, ...],
    detect: Callable[[Path], str | None],
    problems: Problems,
    skipped: list[tuple[str, str]] | None = None,
) -> FolderFiles:
    """The format and files to read from folder (format None after a problem); with
    `skipped` (--skip-unreadable) its unreadable entries are listed there, not refused."""
    if (folder / SITE_MARKER).exists():
        # Its tasks.csv files and history.jsonl would pass for results.
        problems.add(
            f"{folder}: is a site reportgen built, not result files; give the files it was "
            "built from (check and compare take a site as it is)"
        )
        return FolderFiles(None, [], 0)
    too_deep: list[Path] = []
    files = walk(folder, problems, too_deep, skipped)
    if files is None:
        return FolderFiles(None, [], 0)
    detected = _detected(files, readers, detect, problems, skipped)
    if detected is None:
        return FolderFiles(None, [], 0)
    by_format, undetected = detected
    # Said with each "nothing found": results may lie below where the walk stops.
    deeper = (
        f"; the walk stops {MAX_DEPTH} levels down, above {too_deep[0]}: give a folder "
        "nearer the files"
        if too_deep
        else ""
    )
    if not files:
        problems.add(
            f"{folder}: the folder holds no files to read (hidden ones are passed over){deeper}"
        )
        return FolderFiles(None, [], 0)
    if wanted is None:
        if not by_format:
            problems.add(
                f"{folder}: no result files of a known format in the folder "
                f"({len(files)} file{'s' if len(files) != 1 else ''} looked at); "
                f"set format: (or --input-format) if they are there{deeper}"
            )
            return FolderFiles(None, [], len(files))
        if len(by_format) > 1:
            kinds = "; ".join(
                f"{name}: {_listing(folder, paths)}" for name, paths in sorted(by_format.items())
            )
            problems.add(
                f"{folder}: holds result files of several formats ({kinds}); give a folder "
                "of one format, or set format: (or --input-format) to read only one"
            )
            return FolderFiles(None, [], 0)
        wanted = next(iter(by_format))
    reader = next(r for r in readers if r.name == wanted)
    chosen = _with_rescued(folder, reader, by_format.get(wanted, []), undetected)
    if not chosen:
        problems.add(f"{folder}: no {wanted} result files in the folder{deeper}")
        return FolderFiles(None, [], len(files))
    return FolderFiles(wanted, chosen, len(files) - len(chosen))


def _detected(
    files: list[Path],
    readers: tuple[Reader, ...],
    detect: Callable[[Path], str | None],
    problems: Problems,
    skipped: list[tuple[str, str]] | None,
) -> tuple[dict[str, list[Path]], list[Path]] | None:
    """The files by the format detected (rule 2), and those of none, which rule 5 may
    yet read; a file its format passes over (Reader.in_folder) is in neither. None
    after a problem."""
    by_format: dict[str, list[Path]] = {}
    undetected: list[Path] = []
    for path in files:
        if path.suffix.lower() in NOT_RESULTS:
            undetected.append(path)
            continue
        try:
            name = detect(path) if path.stat().st_size else None
            if name is not None and not _in_folder(readers, name, path):
                continue  # not a result file of its format (a config): not rescued below
        except FileNotFoundError:
            name = None
        except OSError as error:
            if skipped is not None:
                skipped.append((str(path), f"cannot be read ({error.strerror})"))
                continue
            problems.add(f"{path}: cannot be read ({error.strerror})")
            return None
        if name is None:
            undetected.append(path)
        else:
            by_format.setdefault(name, []).append(path)
    return by_format, undetected


def _with_rescued(
    folder: Path, reader: Reader, chosen: list[Path], undetected: list[Path]
) -> list[Path]:
    """The format's files, less those it drops (rule 4), with the skipped files that
    share a name with one of them or carry one of its suffixes (rule 5), sorted."""
    if reader.folder_files is not None:
        chosen = reader.folder_files(chosen)
    names = {p.name for p in chosen}
    own_suffixes = set(reader.suffixes)
    rescued = [p for p in undetected if p.name in names or p.suffix.lower() in own_suffixes]
    return sorted([*chosen, *rescued], key=lambda p: p.relative_to(folder).parts)


def _in_folder(readers: tuple[Reader, ...], name: str, path: Path) -> bool:
    """Whether a file detected as `name` is a result file of that format (Reader.in_folder)."""
    check = next(r for r in readers if r.name == name).in_folder
    if check is None:
        return True
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    return check(head.removeprefix(b"\xef\xbb\xbf").lstrip())


def _listing(folder: Path, paths: list[Path]) -> str:
    shown = ", ".join(str(p.relative_to(folder)) for p in paths[:_LISTED])
    more = len(paths) - _LISTED
    return f"{shown}, and {more} more" if more > 0 else shown
