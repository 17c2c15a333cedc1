"""Write: stream the site into a temporary folder beside the output, then swap it in.

A failed build (bad input, a template error, Ctrl-C) never touches the previous
site. Pages kept from the previous build are hard-linked into the new one (copied
where links cannot be made). The swap is two renames, the previous site aside and
the new one in its place; Ctrl-C, SIGTERM and SIGHUP wait until both are done,
and the previous site is then removed.

An existing output folder is replaced only if reportgen made it (it carries a
marker file) or --force is given, so a mistyped --output cannot wipe someone's
folder; and never, even with --force, when it holds an input of the build, the
working folder or the home folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
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


def site_on_disk(output: Path) -> SiteOnDisk:
    """Walk a built site: its regular files, without following symbolic links.

    What cannot be listed (gone, unreadable) is left out, as os.walk does."""
    files: dict[str, tuple[int, int]] = {}
    top = os.fspath(output)
    for folder, _, names in os.walk(top):
        prefix = os.path.relpath(folder, top).replace(os.sep, "/") + "/"
        prefix = "" if prefix == "./" else prefix
        for name in names:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                files[prefix + name] = (info.st_size, info.st_mtime_ns)
    return SiteOnDisk(output, files)


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
    files: Iterable[tuple[str, bytes | Written | Keep]],
    force: bool = False,
    on_file: Callable[[int], None] | None = None,
    inputs: Iterable[Path] = (),
    written_files: dict[str, tuple[int, int]] | None = None,
    on_staging: Callable[[str], None] | None = None,
    previous: SiteOnDisk | None = None,
) -> tuple[int, int]:
    """Write every (relative path, bytes) and swap the result in. Returns (files, bytes).

    Instead of bytes, a file may come as KEEP: the file at the same path in the
    `previous` site (the one at `output`, as walked before the build), kept as it
    is. `written_files`, when given, receives every file of the new site (the marker
    too) as relative path -> (size, mtime in ns), what walking the site afterwards
    would find. `on_staging` is told the staging folder before the first file is
    asked for, so that workers can write files into it themselves (given here as
    Written).
    """
    output = check_output(output, force, inputs)
    output.parent.mkdir(parents=True, exist_ok=True)
    if previous is not None and previous.path.resolve() != output:
        raise ValueError(f"the previous site {previous.path} is not the one at {output}")
    staging = Path(tempfile.mkdtemp(prefix=f".{output.name}.building-", dir=output.parent))
    written: dict[str, tuple[int, int]] = {}
    try:
        if on_staging is not None:
            on_staging(str(staging))
        for name, data in files:
            relative, folder = _safe_relative(name)
            if relative in written:
                raise ValueError(f"two pages want the same file: {name}")
            if isinstance(data, Written):
                written[relative] = (data.size, data.mtime_ns)
            else:
                os.makedirs(os.path.join(staging, folder), exist_ok=True)
                target = os.path.join(staging, relative)
                if data is KEEP:
                    written[relative] = _keep(previous, relative, target)
                else:
                    assert isinstance(data, bytes | bytearray | memoryview), data
                    info = _write_file(target, data)
                    written[relative] = (info.st_size, info.st_mtime_ns)
            if on_file is not None:
                on_file(len(written))
        total = sum(size for size, _ in written.values())
        count = len(written)
        marker = _write_file(os.path.join(staging, MARKER), _MARKER_TEXT)
        written[MARKER] = (marker.st_size, marker.st_mtime_ns)
        # mkdtemp makes it private: it gets the mode of the folders inside it instead.
        os.chmod(staging, 0o777 & ~current_umask())
        # A stop asked for during the swap waits until it is done and the previous
        # site removed: it would otherwise leave no site, or a hidden copy of the old.
        with _signals_held() as stops:
            old_site = _swap(staging, output)
            if old_site is not None:
                shutil.rmtree(old_site, ignore_errors=True)
    except BaseException:
        close = getattr(files, "close", None)
        if close is not None:
            # Stop the producer first: its workers may still be writing into staging.
            with contextlib.suppress(Exception):
                close()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if written_files is not None:
        written_files.update(written)
    if stops:
        # Asked to stop while the new site went in: it is in place and the old one
        # removed; the stop is acted on now.
        raise StoppedAfterSwap(stops[0])
    return count, total


def _keep(previous: SiteOnDisk | None, relative: str, target: str) -> tuple[int, int]:
    """Link the previous site's file at `relative` to `target`; the size and time its
    walk found (should the file be replaced after the walk, the next build's walk
    will not match them and renders the page again)."""
    if previous is None:
        raise ValueError(f"{relative}: nothing to keep, there is no previous site")
    found = previous.files.get(relative)
    if found is None:
        raise ValueError(f"{relative}: the previous site has no such file to keep")
    source = os.path.join(previous.path, relative)
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        # No links here (another device, a file system without them): a copy.
        shutil.copyfile(source, target, follow_symlinks=False)
        info = os.lstat(target)
        return info.st_size, info.st_mtime_ns
    return found


class StoppedAfterSwap(KeyboardInterrupt):
    """A stop (Ctrl-C, SIGTERM, SIGHUP) came while the new site was swapped in.

    The swap was finished, not undone: the new site is complete and in place. As
    a KeyboardInterrupt, whatever runs the build stops as for Ctrl-C; `build`
    says the site is in place and exits 0.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signal_name = signal.Signals(signum).name


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
