"""Write: stream the site into a temporary folder beside the output, then swap it in.

A failed build (bad input, a template error, Ctrl-C) never touches the previous
site. Pages kept from the previous build are linked into the new one; a folder
whose every file is kept, and that holds nothing else, is moved over whole just
before the swap (and moved back should the swap fail), so that a rebuild after
an edit of one page does no work per unchanged page. From the first move to the
swap, Ctrl-C, SIGTERM and SIGHUP wait; only SIGKILL there leaves the live site
without the moved folders (they are in the staging folder beside it). A folder
changed since the walk of the previous site, or that cannot be moved, has its
files linked instead.

An existing output folder is replaced only if reportgen made it (it carries a
marker file) or --force is given, so a mistyped --output cannot wipe someone's
folder; and never, even with --force, when it holds an input of the build, the
working folder or the home folder.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError

MARKER = ".reportgen-site"
_MARKER_TEXT = b"This folder was written by reportgen; the next build replaces it whole.\n"


def check_output(
    output: Path, force: bool, inputs: Iterable[Path] = (), setting: str = "--output"
) -> Path:
    """Refuse, before any work, to replace a folder that is not an old site.

    Returns the folder to write: the target of `output` when it is a symbolic
    link, so the link stays and the folder it names is replaced. `inputs` are
    the files and folders the build reads; a folder holding one is never
    replaced, --force or not, as replacing it would delete them.
    """
    try:
        target = output.resolve()
    except (OSError, RuntimeError):  # Python raises RuntimeError for a loop of links
        raise UserError(f"{setting}: {output} is a symbolic link in a loop") from None
    if output.is_symlink() and not output.exists():
        raise UserError(f"{setting}: {output} is a symbolic link to a folder that does not exist")
    if target.exists() and not target.is_dir():
        raise UserError(f"{setting}: {output} exists and is not a folder")
    for above in target.parents:  # said now, not as "File exists" once the pages are made
        if above.exists():
            if not above.is_dir():
                raise UserError(f"{setting}: {output}: {above} is not a folder")
            break
    cwd, home = Path.cwd().resolve(), Path.home().resolve()
    if cwd.is_relative_to(target) or home.is_relative_to(target):
        raise UserError(
            f"{setting}: {output} is the working folder, the home folder or a folder above "
            "them; give the site a folder of its own"
        )
    for path in inputs:
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError):  # a loop of links: the reader says so
            continue
        if resolved.is_relative_to(target):
            raise UserError(
                f"{setting}: {output} holds {path}, which this build reads; replacing the "
                "folder would delete it, so give the site a folder of its own"
            )
    repository = _repository_in(target)
    if repository is not None:
        raise UserError(
            f"{setting}: {output} is or holds a version-control repository ({repository}); "
            "a site never replaces one, with or without --force: give the site a folder "
            "of its own"
        )
    if target.is_dir() and any(target.iterdir()) and not (target / MARKER).exists():
        if not force:
            raise UserError(
                f"{setting}: {output} is not empty and was not written by reportgen "
                f"(no {MARKER} file); pass --force to replace it"
            )
        if not (target / "index.html").is_file():
            # --force is for a site an older reportgen (or another tool) wrote, not for
            # any folder a typo names.
            raise UserError(
                f"{setting}: {output} is not empty and is not a site (no index.html), so "
                "even --force does not replace it; give the site a folder of its own"
            )
    return target


#: Folders that make a folder a version-control repository.
REPOSITORY_FOLDERS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})
#: Entries looked at, at most, when searching an output folder for a repository.
_REPOSITORY_SEARCH = 100_000


def _repository_in(target: Path) -> Path | None:
    """A repository folder that `target` is, lies in, or holds; None if there is none.
    A folder too large to search through counts as holding one: it is no old site."""
    for part in (target, *target.parents):
        if part.name in REPOSITORY_FOLDERS:
            return part
    if not target.is_dir():
        return None
    if (target / MARKER).exists():
        # A site reportgen wrote: only its top could have gained a repository since.
        return next((target / n for n in REPOSITORY_FOLDERS if (target / n).exists()), None)
    seen = 0
    for parent, folders, files in os.walk(target):
        for name in (*folders, *files):  # a worktree's or submodule's .git is a file
            seen += 1
            if name in REPOSITORY_FOLDERS:
                return Path(parent) / name
        if seen > _REPOSITORY_SEARCH:
            return target
    return None


@dataclass(frozen=True)
class SiteOnDisk:
    """A built site as a walk found it."""

    path: Path
    #: Every regular file: relative path -> (size, mtime in ns).
    files: dict[str, tuple[int, int]]
    #: Folders ("" for the top, else "a/b") that hold anything but regular files and
    #: folders, could not be listed, or are empty: never moved into a new site whole.
    odd_folders: set[str] = field(default_factory=set)
    #: Every folder listed: relative path -> (device, inode, mtime in ns), so that a
    #: folder replaced or changed since the walk is not moved into a new site.
    folders: dict[str, tuple[int, int, int]] = field(default_factory=dict)


def site_on_disk(output: Path) -> SiteOnDisk:
    """Walk a built site: its regular files, without following symbolic links."""
    files: dict[str, tuple[int, int]] = {}
    odd: set[str] = set()
    folders: dict[str, tuple[int, int, int]] = {}
    # Each folder is opened once and its entries are looked at relative to it: a large
    # site has tens of thousands of files in a few folders, and a stat by full path
    # resolved the whole path again for each file. What cannot be opened or listed
    # (gone, unreadable) is left out, as os.walk does, and its folder counts as odd.
    flags = os.O_RDONLY | os.O_DIRECTORY

    def listed(fd: int, folder: str) -> list[str]:
        """Record a folder's files; the names of its subfolders, to walk next."""
        prefix = f"{folder}/" if folder else ""
        subfolders: list[str] = []
        empty = True
        try:
            # Before listing it: a change made while it is listed changes the time.
            info = os.fstat(fd)
            folders[folder] = (info.st_dev, info.st_ino, info.st_mtime_ns)
            with os.scandir(fd) as entries:
                for entry in entries:
                    empty = False
                    if entry.is_dir(follow_symlinks=False):
                        subfolders.append(entry.name)
                        continue
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(info.st_mode):
                        files[prefix + entry.name] = (info.st_size, info.st_mtime_ns)
                    else:
                        odd.add(folder)
        except OSError:
            odd.add(folder)
        if empty:
            odd.add(folder)
        return subfolders

    try:
        top = os.open(output, flags)
    except OSError:
        return SiteOnDisk(output, files, odd, folders)
    # Depth first, with only the folders on the current path open (a site with a
    # thousand result sets must not need a thousand descriptors at once).
    path: list[tuple[int, str, list[str]]] = [(top, "", listed(top, ""))]
    try:
        while path:
            fd, folder, todo = path[-1]
            if not todo:
                path.pop()
                os.close(fd)
                continue
            name = todo.pop()
            child = f"{folder}/{name}" if folder else name
            try:
                sub = os.open(name, flags | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                odd.add(folder)
                continue
            path.append((sub, child, listed(sub, child)))
    finally:
        for fd, _, _ in path:
            os.close(fd)
    return SiteOnDisk(output, files, odd, folders)


class Keep:
    """The file at the same path in the previous site, kept as it is (see KEEP)."""

    def __repr__(self) -> str:
        return "KEEP"


#: Given instead of a file's bytes: keep the previous site's file at that path.
KEEP = Keep()


@dataclass(frozen=True)
class Written:
    """A file already written into the staging folder (by a rendering worker process):
    its size and time, for write_site to count and report."""

    size: int
    mtime_ns: int


def write_staged(staging: str, name: str, data: bytes) -> Written:
    """Write one file of the site into the staging folder write_site made.

    For worker processes, so that a large site's files are created by several
    processes at once instead of all by the one that swaps the site in.
    """
    relative, folder = _safe_relative(name)
    os.makedirs(os.path.join(staging, folder), exist_ok=True)
    info = _write_file(os.path.join(staging, relative), data)
    return Written(info.st_size, info.st_mtime_ns)


def _safe_relative(name: str) -> tuple[str, str]:
    """(the path, its folder) inside the site, "/"-separated as PurePosixPath would
    give them; a path that is absolute, empty or climbs out is refused."""
    # Plain string work: pathlib's parsing cost more than linking the file, for each
    # of the tens of thousands of pages a large site keeps. A name that is already
    # normal (no empty, "." or ".." part) is taken as it is.
    wrapped = f"/{name}/"
    if name and "//" not in wrapped and "/./" not in wrapped and "/../" not in wrapped:
        return name, name.rpartition("/")[0]
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if name.startswith("/") or ".." in parts or not parts:
        raise ValueError(f"refusing to write outside the site: {name!r}")
    return "/".join(parts), "/".join(parts[:-1])


def write_site(
    output: Path,
    files: Iterable[tuple[str, bytes | Path | Written | Keep]],
    force: bool = False,
    on_file: Callable[[int], None] | None = None,
    inputs: Iterable[Path] = (),
    written_files: dict[str, tuple[int, int]] | None = None,
    on_staging: Callable[[str], None] | None = None,
    previous: SiteOnDisk | None = None,
    retired: list[Path] | None = None,
) -> tuple[int, int]:
    """Write every (relative path, bytes) and swap the result in. Returns (files, bytes).

    Instead of bytes, a file may come as KEEP: the file at the same path in the
    `previous` site (the one at `output`, as walked before the build), kept as it
    is; or as a Path, a file to link (or copy) into the new site. `written_files`,
    when given, receives every file of the new site (the marker too) as relative
    path -> (size, mtime in ns), what walking the site afterwards would find.
    `on_staging` is told the staging folder before the first file is asked for, so
    that workers can write files into it themselves (given here as Written).
    `retired`, when given, receives the previous site once it is swapped out, for
    the caller to remove (with remove_tree) when it suits; otherwise it is removed
    here before returning.
    """
    output = check_output(output, force, inputs)
    parent = output.parent
    parent.mkdir(parents=True, exist_ok=True)
    if previous is not None and previous.path.resolve() != output:
        raise ValueError(f"the previous site {previous.path} is not the one at {output}")
    staging = Path(tempfile.mkdtemp(prefix=f".{output.name}.building-", dir=parent))
    written: set[str] = set()
    folders: set[str] = {""}
    total = 0
    links = _Linker(str(staging), previous)
    kept = _KeptFolders(previous)

    def make_folder(folder: str) -> None:
        if folder not in folders:
            os.makedirs(os.path.join(staging, folder), exist_ok=True)
            folders.add(folder)

    try:
        if on_staging is not None:
            on_staging(str(staging))
        for name, data in files:
            relative, folder = _safe_relative(name)
            if relative in written:
                raise ValueError(f"two pages want the same file: {name}")
            written.add(relative)
            if data is KEEP:
                size, mtime = kept.add(relative, folder)
            elif isinstance(data, Written):
                kept.fresh(folder)
                size, mtime = data.size, data.mtime_ns
            else:
                kept.fresh(folder)
                make_folder(folder)
                if isinstance(data, Path):
                    size, mtime = links.keep(data, relative, folder)
                else:
                    assert isinstance(data, bytes | bytearray | memoryview), data
                    info = _write_file(os.path.join(staging, relative), data)
                    size, mtime = info.st_size, info.st_mtime_ns
            total += size
            if written_files is not None:
                written_files[relative] = (size, mtime)
            if on_file is not None:
                on_file(len(written))

        def link_kept(relative: str, folder: str) -> None:
            make_folder(folder)
            links.keep(kept.source(relative), relative, folder)

        moves, singles = kept.plan()
        for relative, folder in singles:
            link_kept(relative, folder)
        marker = _write_file(os.path.join(staging, MARKER), _MARKER_TEXT)
        if written_files is not None:
            written_files[MARKER] = (marker.st_size, marker.st_mtime_ns)
        # mkdtemp makes it private: it gets the mode of the folders inside it instead.
        os.chmod(staging, 0o777 & ~current_umask())
        # Last, the whole folders: from here to the swap the served site lacks them,
        # so a stop asked for meanwhile (Ctrl-C, SIGTERM) waits until the swap is
        # done, or undone.
        old_site: Path | None = None
        try:
            with _signals_held() as stops:
                try:
                    kept.move(moves, staging, link_kept)
                    links.close()
                    old_site = _swap(staging, output)
                except BaseException:
                    kept.move_back(staging)
                    raise
                kept.moved.clear()  # in the live site now, for good
        finally:
            # Outside the held stretch: removing a large old site takes a while.
            if old_site is not None and retired is not None:
                retired.append(old_site)
            elif old_site is not None:
                remove_tree(old_site)
    except BaseException:
        close = getattr(files, "close", None)
        if close is not None:
            # Stop the producer first: its workers may still be writing into staging.
            with contextlib.suppress(Exception):
                close()
        links.close()
        if kept.move_back(staging):
            remove_tree(staging)
        raise
    if stops:
        # Asked to stop while the new site went in: it is in place, and the old one
        # is handed over for removal; the stop is acted on now.
        raise StoppedAfterSwap(stops[0])
    return len(written), total


class StoppedAfterSwap(KeyboardInterrupt):
    """A stop (Ctrl-C, SIGTERM, SIGHUP) came while the new site was swapped in.

    The swap was finished, not undone: the new site is complete and in place. As
    a KeyboardInterrupt, whatever runs the build stops as for Ctrl-C; `build`
    says the site is in place and exits 0.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signal_name = signal.Signals(signum).name


class _KeptFolders:
    """The files kept from the previous site, and which of its folders move whole.

    A folder moves when every file the walk found in it (at any depth) is kept at
    the same path, no other file of the new site is in it, and nothing else was
    there (odd_folders). Only the topmost such folders move; a kept file in any
    other folder is linked on its own.
    """

    def __init__(self, previous: SiteOnDisk | None) -> None:
        self.previous = previous
        self.files: dict[str, str] = {}  # kept file -> its folder
        #: Folders that cannot move; the top ("") never does: it gets a new marker.
        self.dirty: set[str] = {""}
        self.moved: list[str] = []
        #: A moved folder could not be moved back: staging holds it.
        self.stranded = False
        self._sorted: list[str] | None = None  # the walked folders, sorted

    def _mark(self, folder: str) -> None:
        # A folder that cannot move holds up every folder above it.
        while folder not in self.dirty:
            self.dirty.add(folder)
            folder = folder.rpartition("/")[0]

    def fresh(self, folder: str) -> None:
        """A file not kept goes into this folder."""
        self._mark(folder)

    def add(self, relative: str, folder: str) -> tuple[int, int]:
        """Keep the previous site's file at `relative`; the size and time its walk found."""
        if self.previous is None:
            raise ValueError(f"{relative}: nothing to keep, there is no previous site")
        found = self.previous.files.get(relative)
        if found is None:
            raise ValueError(f"{relative}: the previous site has no such file to keep")
        self.files[relative] = folder
        # Should the file be replaced after the walk, the next build's walk will not
        # match these numbers and renders the page again.
        return found

    def source(self, relative: str) -> Path:
        assert self.previous is not None
        return self.previous.path / relative

    def plan(self) -> tuple[list[str], list[tuple[str, str]]]:
        """(folders to move whole, (file, folder) to link one by one)."""
        if self.previous is None:
            return [], []
        for folder in self.previous.odd_folders:
            self._mark(folder)
        for relative in self.previous.files.keys() - self.files.keys():
            self._mark(relative.rpartition("/")[0])  # a file of the old site is dropped
        moves: set[str] = set()
        singles: list[tuple[str, str]] = []
        tops: dict[str, str] = {}
        for relative, folder in self.files.items():
            if folder in self.dirty:
                singles.append((relative, folder))
                continue
            top = tops.get(folder)
            if top is None:
                # The highest folder above this one that may still move: the folders
                # below a movable one may all move too, so the first dirty one ends it.
                top = folder
                while (up := top.rpartition("/")[0]) not in self.dirty:
                    top = up
                tops[folder] = top
            moves.add(top)
        return sorted(moves), singles

    def _unchanged(self, top: str) -> bool:
        """Whether `top` and every folder the walk found below it are still the
        folders it listed, with no entry added, removed or renamed since."""
        assert self.previous is not None
        walked = self.previous.folders
        if top not in walked:
            return False
        if self._sorted is None:
            self._sorted = sorted(walked)
        # The folders below `top` sort together, from "top/" up to "top0" ("0" follows "/").
        first = bisect.bisect_left(self._sorted, f"{top}/")
        last = bisect.bisect_left(self._sorted, f"{top}0")
        for folder in [top, *self._sorted[first:last]]:
            try:
                info = os.lstat(self.source(folder))
            except OSError:
                return False
            found = (info.st_dev, info.st_ino, info.st_mtime_ns)
            if not stat.S_ISDIR(info.st_mode) or found != walked[folder]:
                return False
        return True

    def move(self, folders: list[str], staging: Path, link: Callable[[str, str], None]) -> None:
        """Move each folder into staging; where one cannot be moved (changed since the
        walk, read-only, another file system mounted there), `link` its kept files."""
        assert self.previous is not None or not folders
        for folder in folders:
            if self._unchanged(folder):
                target = staging / folder
                target.parent.mkdir(parents=True, exist_ok=True)
                # Listed first: should the process stop right after the rename, the
                # folder is still known here and goes back.
                self.moved.append(folder)
                try:
                    os.rename(self.source(folder), target)
                    continue
                except OSError:
                    self.moved.pop()
            below = f"{folder}/"
            for relative, where in self.files.items():
                if where == folder or where.startswith(below):
                    link(relative, where)

    def move_back(self, staging: Path) -> bool:
        """Return moved folders to the previous site; False if one could not be
        (now or on an earlier call): its files are still in staging, to be kept."""
        while self.moved:
            folder = self.moved.pop()
            if not (staging / folder).exists() and os.path.isdir(self.source(folder)):
                continue  # never left (the rename had not happened)
            try:
                os.rename(staging / folder, self.source(folder))
            except OSError:
                self.stranded = True
        return not self.stranded


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux)."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere set and put back at once
    os.umask(mask)
    return mask


def _write_file(path: str, data: bytes) -> os.stat_result:
    """Write a new file; its size and time as written."""
    # os-level calls: a large site has tens of thousands of small files, and
    # pathlib's open/write layers cost more than the write itself.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        return os.fstat(fd)
    finally:
        os.close(fd)


class _Linker:
    """Links files into the staging folder; their sizes and times.

    Each link names its two files relative to their folders, opened once each: a large
    site keeps tens of thousands of pages in a few folders, and resolving both full
    paths again for every file cost a fifth of the link itself.
    """

    #: Open folders at most: the pages come folder by folder, and a site of many
    #: result sets must not need a descriptor for each of its folders at once.
    OPEN_FOLDERS = 32

    def __init__(self, staging: str, previous: SiteOnDisk | None) -> None:
        self.staging = staging
        self.previous_prefix = os.path.join(previous.path, "") if previous else "\0"
        self.known: Mapping[str, tuple[int, int]] = previous.files if previous else {}
        self.folders: dict[str, int] = {}  # folder path -> open descriptor

    def _folder(self, path: str) -> int:
        # Least recently used first: a folder asked for again goes to the end, so the
        # two folders of one link are never the ones closed to open another.
        fd = self.folders.pop(path, None)
        if fd is None:
            while len(self.folders) >= self.OPEN_FOLDERS:
                os.close(self.folders.pop(next(iter(self.folders))))
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        self.folders[path] = fd
        return fd

    def keep(self, previous: Path, relative: str, folder: str) -> tuple[int, int]:
        source = os.fspath(previous)
        source_folder, _, name = source.rpartition(os.sep)
        source_fd = self._folder(source_folder or os.sep)
        target = self._folder(os.path.join(self.staging, folder))
        base = relative.rpartition("/")[2]
        try:
            os.link(name, base, src_dir_fd=source_fd, dst_dir_fd=target, follow_symlinks=False)
        except OSError:
            # No links here (another device, a file system without them): a copy.
            path = os.path.join(self.staging, folder, base)
            shutil.copyfile(previous, path, follow_symlinks=False)
            info = os.lstat(path)
            return info.st_size, info.st_mtime_ns
        known = self.known.get(relative)
        if known is not None and source == self.previous_prefix + relative:
            # The file the walk of the previous site found at this very path. Should it
            # have been replaced since, the next build's walk will not match these
            # numbers and renders the page again, where a fresh stat would keep it.
            return known
        info = os.lstat(base, dir_fd=target)
        return info.st_size, info.st_mtime_ns

    def close(self) -> None:
        for fd in self.folders.values():
            os.close(fd)
        self.folders.clear()


@contextlib.contextmanager
def _signals_held() -> Iterator[list[int]]:
    """Hold Ctrl-C, SIGTERM and SIGHUP until the block ends.

    If the block fails, they are then acted on as the process's own handlers would
    have. If it succeeds, they are left to the caller: the list yielded holds
    them. (Acted on at once, SIGTERM's default ended the process before the old
    site was removed, and Ctrl-C exited 130 with the new site in place.) Only the
    main thread sets handlers; a build in another thread runs the block as it is.
    A handler installed outside Python (getsignal gives None) is left alone.
    """
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return

    def hold(signum: int, frame: object) -> None:
        caught.append(signum)

    held = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is not None:
            held[number] = signal.signal(number, hold)
    try:
        yield caught
    except BaseException:
        _restore(held)
        # Each one: one that raises (Ctrl-C's KeyboardInterrupt) does not keep the
        # others from theirs.
        first: BaseException | None = None
        for number in dict.fromkeys(caught):
            try:
                signal.raise_signal(number)
            except BaseException as error:
                first = first or error
        if first is not None:
            raise first from None
        raise
    _restore(held)


def _restore(handlers: dict[int, Any]) -> None:
    for number, handler in handlers.items():
        signal.signal(number, handler)


def _swap(staging: Path, output: Path) -> Path | None:
    """Put staging in output's place; the previous site, moved aside, to remove."""
    if not output.exists():
        staging.rename(output)
        return None
    retired = Path(tempfile.mkdtemp(prefix=f".{output.name}.old-", dir=output.parent))
    retired.rmdir()
    output.rename(retired)
    try:
        staging.rename(output)
    except BaseException:
        retired.rename(output)  # put the previous site back
        raise
    return retired


#: Threads that unlink files at once when a folder holds many (see remove_tree).
_REMOVERS = 16
#: Below this many files in a folder, one thread unlinks them.
_REMOVE_ALONE = 256
#: Folders deeper than this below the removed one are left to shutil.rmtree.
_REMOVE_DEPTH = 64


def remove_tree(path: Path) -> None:
    """Remove a folder and all it holds, ignoring errors as shutil.rmtree(path, True)
    does, with the files of a large folder unlinked by several threads at once.

    Where freed blocks are discarded as they are freed (ext4 mounted with
    `discard`, as on the machine of bench/FEEDBACK.md), each unlink waits for the
    device: a site of 20,000 files took 3.0-3.5 s to remove one file at a time and
    1.5-1.7 s sixteen at a time. Folders are opened without following symbolic
    links (one open folder per level, at most _REMOVE_DEPTH) and files unlinked
    relative to them, so a link in the tree removes the link only. Whatever this
    leaves (deeper folders, a thread that could not start) rmtree removes after it.
    """
    try:
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        top = None
    if top is not None:
        try:
            with ThreadPoolExecutor(_REMOVERS, thread_name_prefix="remove") as pool:
                _empty_folder(top, pool, depth=0)
        except (OSError, RuntimeError):  # RecursionError, or no thread to start
            pass
        finally:
            os.close(top)
    shutil.rmtree(path, ignore_errors=True)  # the emptied folders, and anything left


#: A previous site of at least this many files is removed by a process of its own
#: (remove_in_background), so that `build` returns once the new site is in place.
BACKGROUND_REMOVAL_FILES = 2_000
#: A previous site moved aside and untouched for this long lost its remover (a
#: terminal closed, a CI job ended): a later build removes it (abandoned_sites).
ABANDONED_SECONDS = 600
#: The removing process: low priority, as the user's next command matters more.
_REMOVER = """
import os, sys
os.nice(10)
from reportgen.website.write import remove_tree
for path in sys.argv[1:]:
    remove_tree(path)
"""
#: The removers started, held so that neither waits for nor warns about them.
_removers: list[subprocess.Popen[bytes]] = []


def remove_in_background(paths: list[Path]) -> None:
    """Remove folders (with remove_tree) in a process that outlives this one.

    Removing the 20,000 files of a large site took 1.6-2.3 s on the machine of
    bench/FEEDBACK.md, all after the new site was in place. The process runs in a
    session of its own, so a Ctrl-C meant for the next command does not stop it;
    should it stop anyway, abandoned_sites finds what it left. Where it cannot
    start, the folders are removed here.
    """
    if not paths:
        return
    package_parent = Path(__file__).resolve().parents[2]  # where `import reportgen` works
    try:
        _removers.append(
            subprocess.Popen(
                [sys.executable, "-c", _REMOVER, *(str(p.absolute()) for p in paths)],
                cwd=package_parent,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
    except OSError:
        for path in paths:
            remove_tree(path)


def abandoned_sites(output: Path) -> list[Path]:
    """Previous sites of `output` that were moved aside for removal and left there.

    They are the folders beside it named exactly as _swap names them (its name,
    ".old-" and mkdtemp's eight characters, so that a user's own ".site.old-backup"
    is not taken for one), unchanged for ABANDONED_SECONDS: the change time, as the
    move aside sets it and every removal inside the folder's top level sets it
    again. `output` is resolved first, as write_site resolves it.
    """
    output = output.resolve()
    name = re.compile(rf"\.{re.escape(output.name)}\.old-[a-z0-9_]{{8}}")
    now = time.time()
    found = []
    try:
        with os.scandir(output.parent) as entries:
            for entry in entries:
                if not name.fullmatch(entry.name) or not entry.is_dir(follow_symlinks=False):
                    continue
                if now - entry.stat(follow_symlinks=False).st_ctime > ABANDONED_SECONDS:
                    found.append(Path(entry.path))
    except OSError:
        return []
    return sorted(found)


def _empty_folder(folder: int, pool: ThreadPoolExecutor, depth: int) -> None:
    files = []
    with os.scandir(folder) as entries:
        found = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    for name, is_folder in found:
        if not is_folder:
            files.append(name)
        elif depth < _REMOVE_DEPTH:
            try:
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
            except OSError:
                continue
            try:
                _empty_folder(inner, pool, depth + 1)
            finally:
                os.close(inner)
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=folder)
    if len(files) < _REMOVE_ALONE:
        for name in files:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=folder)
        return
    # Each thread gets its own copy of the folder's descriptor: should this return
    # early (Ctrl-C) and the caller close `folder`, a thread still at work must not
    # unlink names in whatever folder gets that descriptor number next.
    stop = threading.Event()
    futures = []
    try:
        for part in (files[i::_REMOVERS] for i in range(_REMOVERS)):
            own = os.dup(folder)
            try:
                futures.append(pool.submit(_unlink_in, own, part, stop))
            except BaseException:
                os.close(own)
                raise
        for future in futures:
            future.result()
    finally:
        stop.set()  # when interrupted: the threads stop at their next file
        wait(futures)


def _unlink_in(folder: int, names: list[str], stop: threading.Event) -> None:
    """Unlink `names` in `folder` (a descriptor this closes), until `stop` is set."""
    try:
        for name in names:
            if stop.is_set():
                return
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=folder)
    finally:
        os.close(folder)
