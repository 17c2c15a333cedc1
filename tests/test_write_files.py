"""write_site reports what it wrote, so a build need not walk the new site again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.website import write
from reportgen.website.write import site_on_disk, write_site

from .conftest import examples
from .test_imports import probe


def _site_files(site: Path) -> dict[str, tuple[int, int]]:
    return site_on_disk(site).files


def test_write_site_reports_the_files_a_walk_finds(tmp_path: Path) -> None:
    # build.py records each page's size and time from what write_site reports,
    # instead of walking the new site again: the two must agree, kept files included.
    old = tmp_path / "old.html"
    old.write_bytes(b"<p>kept</p>")
    reported: dict[str, tuple[int, int]] = {}
    files = [("index.html", b"<p>new</p>"), ("sets/a/kept.html", old), ("data/x.csv", b"a,b\n")]
    write_site(tmp_path / "site", files, written_files=reported)
    assert reported == _site_files(tmp_path / "site")
    assert len(reported) == 4  # and the marker


def test_files_written_by_workers_count_and_a_failure_leaves_nothing(tmp_path: Path) -> None:
    from collections.abc import Iterator

    from reportgen.website.write import Written, write_staged

    staging: list[str] = []

    def pages(fail: bool) -> Iterator[tuple[str, bytes | Path | Written]]:
        yield "index.html", b"<p>home</p>"
        # What a rendering worker does: write into the staging folder itself.
        yield "sets/a/tasks/t.html", write_staged(staging[-1], "sets/a/tasks/t.html", b"<p>t</p>")
        if fail:
            raise ValueError("a template failed")

    reported: dict[str, tuple[int, int]] = {}
    files, size = write_site(
        tmp_path / "site", pages(False), written_files=reported, on_staging=staging.append
    )
    assert (files, size) == (2, len(b"<p>home</p>") + len(b"<p>t</p>"))
    assert reported == _site_files(tmp_path / "site")
    assert (tmp_path / "site" / "sets/a/tasks/t.html").read_bytes() == b"<p>t</p>"

    with pytest.raises(ValueError, match="a template failed"):
        write_site(tmp_path / "other", pages(True), on_staging=staging.append)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no staging left behind


@pytest.mark.parametrize("name", ["/etc/passwd", "../up.html", "sets/../../up.html", "", ".", "//"])
def test_paths_outside_the_site_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="refusing to write outside the site"):
        write_site(tmp_path / "site", [(name, b"x")])
    assert not (tmp_path / "site").exists()


def test_paths_are_normalised_as_posix_paths(tmp_path: Path) -> None:
    reported: dict[str, tuple[int, int]] = {}
    write_site(tmp_path / "site", [("sets//a/./t.html", b"x")], written_files=reported)
    assert (tmp_path / "site" / "sets" / "a" / "t.html").read_bytes() == b"x"
    assert "sets/a/t.html" in reported
    with pytest.raises(ValueError, match="two pages want the same file"):
        write_site(tmp_path / "other", [("a/b.html", b"x"), ("a//b.html", b"y")])


def _reference_relative(name: str) -> tuple[str, str]:
    """The rule as PurePosixPath would apply it, written out the long way."""
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if name.startswith("/") or ".." in parts or not parts:
        raise ValueError("outside")
    return "/".join(parts), "/".join(parts[:-1])


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(["a", "b.html", "/", ".", "..", "c."]), max_size=10).map("".join))
def test_normal_names_are_taken_as_they_are_and_others_normalised(name: str) -> None:
    from reportgen.website.write import _safe_relative

    try:
        expected = _reference_relative(name)
    except ValueError:
        with pytest.raises(ValueError):
            _safe_relative(name)
        return
    assert _safe_relative(name) == expected


def _old_site(tmp_path: Path) -> tuple[Path, list[tuple[str, bytes | Path]]]:
    old = tmp_path / "site"
    pages = {f"sets/a/tasks/t{i}.html": f"<p>{i}</p>".encode() for i in range(5)}
    write_site(old, [("index.html", b"<p>old</p>"), *pages.items()])
    kept: list[tuple[str, bytes | Path]] = [("index.html", b"<p>new</p>")]
    kept += [(name, old / name) for name in pages]
    return old, kept


def test_kept_files_are_reported_with_the_numbers_their_walk_found(tmp_path: Path) -> None:
    old, files = _old_site(tmp_path)
    walked = site_on_disk(old)
    reported: dict[str, tuple[int, int]] = {}
    write_site(old, files, written_files=reported, previous=walked)
    assert reported == _site_files(old)  # the new site, as a walk finds it
    assert (old / "index.html").read_bytes() == b"<p>new</p>"
    assert (old / "sets/a/tasks/t3.html").read_bytes() == b"<p>3</p>"


def test_a_file_replaced_after_the_walk_is_not_recorded_as_the_walked_one(
    tmp_path: Path,
) -> None:
    # Replaced between the walk and the link: the new site holds the replacement, but
    # it is reported with the walked numbers, so the next build's check (the page's
    # recorded size and time against a walk) does not offer it for keeping.
    old, files = _old_site(tmp_path)
    walked = site_on_disk(old)
    replaced = old / "sets/a/tasks/t1.html"
    replaced.unlink()
    replaced.write_bytes(b"<p>written by hand, longer</p>")
    reported: dict[str, tuple[int, int]] = {}
    write_site(old, files, written_files=reported, previous=walked)
    now = _site_files(old)
    assert reported["sets/a/tasks/t1.html"] != now["sets/a/tasks/t1.html"]
    assert {k: v for k, v in reported.items() if k != "sets/a/tasks/t1.html"} == {
        k: v for k, v in now.items() if k != "sets/a/tasks/t1.html"
    }


def test_kept_files_are_copied_where_links_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, files = _old_site(tmp_path)
    before = {name: (old / name).stat().st_ino for name, data in files if isinstance(data, Path)}

    def no_links(*args: object, **kwargs: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(write.os, "link", no_links)
    reported: dict[str, tuple[int, int]] = {}
    write_site(old, files, written_files=reported)
    assert reported == _site_files(old)
    for name, inode in before.items():
        assert (old / name).stat().st_ino != inode  # a copy, not the same file
        assert (old / name).read_bytes() == f"<p>{name[-6]}</p>".encode()


def test_site_walk_lists_regular_files_only_and_follows_no_links(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "a" / "b").mkdir(parents=True)
    (site / "index.html").write_bytes(b"x")
    (site / "a" / "b" / "deep.html").write_bytes(b"yy")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.html").write_bytes(b"zzz")
    (site / "linked-folder").symlink_to(outside)
    (site / "a" / "linked-file.html").symlink_to(outside / "secret.html")
    os.mkfifo(site / "a" / "pipe")
    found = _site_files(site)
    assert found == {
        "index.html": (1, (site / "index.html").stat().st_mtime_ns),
        "a/b/deep.html": (2, (site / "a" / "b" / "deep.html").stat().st_mtime_ns),
    }
    assert _site_files(tmp_path / "missing") == {}


# ------------------------------------------------ folders kept whole move, not link


def _three_folder_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    pages = {
        "index.html": b"<p>home</p>",
        "sets/a/index.html": b"<p>a</p>",
        **{f"sets/a/tasks/t{i}.html": f"<p>a{i}</p>".encode() for i in range(4)},
        **{f"sets/b/tasks/t{i}.html": f"<p>b{i}</p>".encode() for i in range(3)},
    }
    write_site(site, list(pages.items()))
    return site


def _keep_every_page(walked: write.SiteOnDisk) -> list[tuple[str, write.Keep]]:
    """The files of a rebuild that keeps every page of the walked site as it is."""
    return [(name, write.KEEP) for name in walked.files if name != write.MARKER]


def _rebuild(
    site: Path, new: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], dict[str, tuple[int, int]]]:
    """Keep every file of `site` but those in `new`; the files linked one by one."""
    walked = site_on_disk(site)
    linked: list[str] = []
    real_link = os.link

    def counting_link(*args: object, **kwargs: object) -> None:
        linked.append(str(args[1]))
        real_link(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(write.os, "link", counting_link)
    files: list[tuple[str, object]] = [
        (name, new.get(name, write.KEEP)) for name in walked.files if name != write.MARKER
    ]
    files += [(name, data) for name, data in new.items() if name not in walked.files]
    reported: dict[str, tuple[int, int]] = {}
    write_site(site, files, written_files=reported, previous=walked)  # type: ignore[arg-type]
    monkeypatch.undo()
    return linked, reported


def test_a_folder_whose_files_are_all_kept_is_moved_not_linked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _three_folder_site(tmp_path)
    before = {name: (site / name).stat().st_ino for name in site_on_disk(site).files}
    linked, reported = _rebuild(site, {"sets/a/index.html": b"<p>a, new</p>"}, monkeypatch)
    # sets/a holds a new page, so only its tasks folder moves; sets/b moves whole. The
    # top folder never moves (the marker is written anew): its kept page is linked.
    assert linked == ["index.html"]
    assert reported == _site_files(site)
    assert (site / "sets/a/index.html").read_bytes() == b"<p>a, new</p>"
    for name, inode in before.items():
        if name not in ("sets/a/index.html", write.MARKER):
            assert (site / name).stat().st_ino == inode, name  # the very same file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # nothing left beside


def test_a_site_kept_whole_moves_every_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _three_folder_site(tmp_path)
    before = {name: (site / name).read_bytes() for name in _site_files(site)}
    linked, reported = _rebuild(site, {}, monkeypatch)
    assert linked == ["index.html"]  # the one kept page in the top folder
    assert reported == _site_files(site)
    assert {name: (site / name).read_bytes() for name in _site_files(site)} == before


def test_a_folder_with_a_page_dropped_or_added_is_not_moved_and_ends_as_built(
    tmp_path: Path,
) -> None:
    site = _three_folder_site(tmp_path)
    walked = site_on_disk(site)

    files = [
        (n, write.KEEP) for n in walked.files if n not in (write.MARKER, "sets/b/tasks/t2.html")
    ]
    files.append(("sets/a/tasks/t9.html", b"<p>new</p>"))
    write_site(site, files, previous=walked)  # type: ignore[arg-type]
    after = _site_files(site)
    assert "sets/b/tasks/t2.html" not in after  # dropped, though its folder-mates were kept
    assert (site / "sets/a/tasks/t9.html").read_bytes() == b"<p>new</p>"
    assert (site / "sets/b/tasks/t1.html").read_bytes() == b"<p>b1</p>"
    assert len(after) == len(walked.files)  # one gone, one new


def test_odd_things_in_a_kept_folder_stay_out_of_the_new_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A link, a pipe or an empty folder put into the old site by hand is not a file of
    # the site: moving its folder whole would carry it into the new one.
    site = _three_folder_site(tmp_path)
    (site / "sets/b/tasks/link.html").symlink_to(site / "index.html")
    (site / "sets/a/tasks/empty").mkdir()
    os.mkfifo(site / "sets/b/pipe")
    walked = site_on_disk(site)
    assert walked.odd_folders == {"sets/b/tasks", "sets/a/tasks/empty", "sets/b"}
    linked, _ = _rebuild(site, {}, monkeypatch)
    assert len(linked) == 2 + 7  # both index pages and the task pages, one by one
    assert not (site / "sets/b/tasks/link.html").is_symlink()
    assert not (site / "sets/a/tasks/empty").exists()
    assert not (site / "sets/b/pipe").exists()
    assert site_on_disk(site).odd_folders == set()


def test_a_failed_swap_puts_moved_folders_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _three_folder_site(tmp_path)
    before = {name: (site / name).read_bytes() for name in _site_files(site)}
    walked = site_on_disk(site)

    def failing_swap(staging: Path, output: Path) -> None:
        assert (staging / "sets/b").is_dir() and not (output / "sets/b").exists()
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write, "_swap", failing_swap)
    files = _keep_every_page(walked)
    with pytest.raises(OSError, match="No space"):
        write_site(site, files, previous=walked)  # type: ignore[arg-type]
    assert {name: (site / name).read_bytes() for name in _site_files(site)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_keeping_needs_the_walked_previous_site(tmp_path: Path) -> None:
    site = _three_folder_site(tmp_path)
    with pytest.raises(ValueError, match="no previous site"):
        write_site(site, [("index.html", write.KEEP)])
    with pytest.raises(ValueError, match="no such file"):
        write_site(site, [("gone.html", write.KEEP)], previous=site_on_disk(site))
    with pytest.raises(ValueError, match="is not the one at"):
        write_site(tmp_path / "other", [("index.html", write.KEEP)], previous=site_on_disk(site))
    assert (site / "index.html").read_bytes() == b"<p>home</p>"


def test_a_folder_changed_after_the_walk_is_linked_not_moved(tmp_path: Path) -> None:
    # Something put into the old site while the new one renders (by hand, by another
    # build) must not ride along with a folder moved whole; a folder replaced by a
    # file or by a link to another folder must not be moved in as that.

    site = _three_folder_site(tmp_path)
    walked = site_on_disk(site)
    (site / "sets/b/tasks/late.html").write_bytes(b"<p>late</p>")
    os.rename(site / "sets/a/tasks", site / "sets/a/tasks.real")
    (site / "sets/a/tasks").symlink_to("tasks.real")
    files = _keep_every_page(walked)
    reported: dict[str, tuple[int, int]] = {}
    write_site(site, files, written_files=reported, previous=walked)  # type: ignore[arg-type]
    after = _site_files(site)
    assert after.keys() == walked.files.keys()  # no late.html, no tasks.real
    assert not (site / "sets/a/tasks").is_symlink()
    assert (site / "sets/a/tasks/t3.html").read_bytes() == b"<p>a3</p>"
    assert reported.keys() == after.keys()

    walked = site_on_disk(site)
    for name in ("t0.html", "t1.html", "t2.html"):
        (site / "sets/b/tasks" / name).unlink()
    (site / "sets/b/tasks").rmdir()
    (site / "sets/b/tasks").write_bytes(b"not a folder")
    files = _keep_every_page(walked)
    with pytest.raises(OSError):  # its pages are gone: nothing to keep
        write_site(site, files, previous=walked)  # type: ignore[arg-type]
    assert (site / "sets/b/tasks").read_bytes() == b"not a folder"  # left as it was
    assert (site / "sets/a/tasks/t3.html").read_bytes() == b"<p>a3</p>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_folder_that_cannot_be_moved_has_its_files_linked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A read-only folder (its ".." cannot change) or another file system mounted in
    # the site: the rename fails, and the folder's pages are linked one by one.

    site = _three_folder_site(tmp_path)
    before = {name: (site / name).read_bytes() for name in _site_files(site)}
    real_rename = os.rename

    def refuse_inside_site(source: object, target: object) -> None:
        if str(source).startswith(f"{site}/"):
            raise PermissionError(13, "Permission denied", str(source))
        real_rename(source, target)  # type: ignore[arg-type]

    monkeypatch.setattr(write.os, "rename", refuse_inside_site)
    linked, reported = _rebuild(site, {}, monkeypatch)
    assert len(linked) == len(before) - 1  # every page but the marker, one by one
    assert reported == _site_files(site)
    assert {name: (site / name).read_bytes() for name in _site_files(site)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_ctrl_c_while_folders_move_waits_for_the_swap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal

    site = _three_folder_site(tmp_path)
    walked = site_on_disk(site)
    real_swap = write._swap

    def interrupted_swap(staging: Path, output: Path) -> Path | None:
        signal.raise_signal(signal.SIGINT)  # Ctrl-C with the folders moved out
        return real_swap(staging, output)

    monkeypatch.setattr(write, "_swap", interrupted_swap)
    files = _keep_every_page(walked)
    files[0] = (files[0][0], b"<p>changed</p>")
    with pytest.raises(write.StoppedAfterSwap):
        write_site(site, files, previous=walked)  # type: ignore[arg-type]
    # The interrupt took effect once the new site was in place, whole.
    assert _site_files(site).keys() == walked.files.keys()
    assert (site / files[0][0]).read_bytes() == b"<p>changed</p>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_held_signals_reach_their_handlers_afterwards() -> None:
    import signal

    from reportgen.website.write import _signals_held

    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda number, frame: seen.append(number))
    try:
        # A block that succeeds hands the stops to its caller (write_site finishes
        # the swap and then stops: StoppedAfterSwap).
        with _signals_held() as stops:
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGTERM)
            assert seen == []
        assert seen == [] and stops == [signal.SIGTERM, signal.SIGTERM]
        # One that fails acts on them, each once. Ctrl-C first: its KeyboardInterrupt
        # does not keep SIGTERM from its handler.
        with pytest.raises(KeyboardInterrupt), _signals_held():
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGTERM)
            raise OSError("the swap failed")
        assert seen == [signal.SIGTERM]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_linking_the_pages_of_many_folders_keeps_few_open(tmp_path: Path) -> None:
    # Every set's folder gets a new page and keeps another: nothing moves whole, and
    # the kept files of 300 folders are linked under a limit of 64 open files.
    site = tmp_path / "site"
    write_site(site, [(f"sets/s{i}/{n}", f"{n} {i}".encode()) for i in range(300) for n in "ab"])
    code = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from reportgen.website.write import KEEP, site_on_disk, write_site\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
        "site = Path(sys.argv[1])\n"
        "walked = site_on_disk(site)\n"
        "files = [(f'sets/s{i}/a', b'new') for i in range(300)]\n"
        "files += [(f'sets/s{i}/b', KEEP) for i in range(300)]\n"
        "write_site(site, files, previous=walked)\n"
        "print('{}', file=sys.stderr)\n"
    )
    assert probe(code, str(site)) == {}
    assert (site / "sets/s7/a").read_bytes() == b"new"
    assert (site / "sets/s7/b").read_bytes() == b"b 7"
    assert len(_site_files(site)) == 601


def test_the_walk_keeps_few_folders_open(tmp_path: Path) -> None:
    # A site of many result sets: the walk must not hold a descriptor for each of
    # them, or a low limit on open files silently cost it every set past the limit.
    site = tmp_path / "site"
    write_site(site, [(f"sets/s{i}/tasks/t.html", b"x") for i in range(300)])
    code = (
        "import json, resource, sys\n"
        "from reportgen.website.write import site_on_disk\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
        "walked = site_on_disk(sys.argv[1])\n"
        "seen = {'files': len(walked.files), 'folders': len(walked.folders),\n"
        "        'odd': len(walked.odd_folders)}\n"
        "print(json.dumps(seen), file=sys.stderr)\n"
    )
    # 300 pages and the marker; the top, sets/ and each set's folder and tasks/ folder.
    assert probe(code, str(site)) == {"files": 301, "folders": 2 + 2 * 300, "odd": 0}


def _tree_to_remove(tmp_path: Path, depth: int = 3) -> Path:
    """A retired site: a folder of more files than one thread unlinks alone, nested
    and empty folders, and links to things outside it (which must survive)."""
    outside = tmp_path / "outside"
    (outside / "inner").mkdir(parents=True)
    (outside / "inner" / "keep.txt").write_text("not part of the site")
    (outside / "file.txt").write_text("nor this")
    tree = tmp_path / "old-site"
    big = tree / "a" / "tasks"
    big.mkdir(parents=True)
    for i in range(write._REMOVE_ALONE * 3 + 7):
        (big / f"{i}.html").write_bytes(b"x")
    deep = tree.joinpath(*["d"] * depth)
    deep.mkdir(parents=True)
    (deep / "page.html").write_bytes(b"y")
    (tree / "a" / "link-to-folder").symlink_to(outside / "inner", target_is_directory=True)
    (tree / "link-to-file").symlink_to(outside / "file.txt")
    (tree / "dangling").symlink_to(tmp_path / "nowhere")
    (tree / "empty").mkdir()
    return tree


def _outside_intact(tmp_path: Path) -> bool:
    outside = tmp_path / "outside"
    return (outside / "inner" / "keep.txt").read_text() == "not part of the site" and (
        outside / "file.txt"
    ).read_text() == "nor this"


def test_remove_tree_unlinks_every_file_itself_and_only_inside_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree_to_remove(tmp_path)
    # The working folder holds files of the same names: an unlink that is not
    # relative to the tree's own folders would take them.
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for name in ("0.html", "1.html", "page.html", "link-to-file"):
        (cwd / name).write_bytes(b"bystander")
    monkeypatch.chdir(cwd)
    left_for_rmtree: list[list[str]] = []
    real_rmtree = write.shutil.rmtree

    def rmtree(path: Path, ignore_errors: bool = False) -> None:
        left_for_rmtree.append([str(p) for p in Path(path).rglob("*") if not p.is_dir()])
        real_rmtree(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(write.shutil, "rmtree", rmtree)
    write.remove_tree(tree)
    assert not tree.exists() and not tree.is_symlink()
    assert left_for_rmtree == [[]]  # only empty folders were left to rmtree
    assert sorted(p.read_bytes() for p in cwd.iterdir()) == [b"bystander"] * 4
    assert _outside_intact(tmp_path)


def test_remove_tree_finishes_what_it_cannot_do_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = _tree_to_remove(tmp_path / "deep", depth=write._REMOVE_DEPTH + 6)
    write.remove_tree(deep)  # below the depth limit, rmtree takes over
    assert not deep.exists() and _outside_intact(tmp_path / "deep")

    def no_thread(*args: object, **kwargs: object) -> None:
        raise RuntimeError("can't start new thread")  # a low process limit, say

    monkeypatch.setattr(write.ThreadPoolExecutor, "submit", no_thread)
    tree = _tree_to_remove(tmp_path / "no-threads")
    write.remove_tree(tree)
    assert not tree.exists() and _outside_intact(tmp_path / "no-threads")


def test_remove_tree_interrupted_never_unlinks_through_a_closed_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal
    import threading
    import time

    tree = _tree_to_remove(tmp_path)
    big = tree / "a" / "tasks"
    folder = (big.stat().st_dev, big.stat().st_ino)
    main = threading.get_ident()
    real_unlink = os.unlink
    interrupted = threading.Event()
    wrong_folder: list[str] = []

    def watched_unlink(name: str, *, dir_fd: int | None = None) -> None:
        if dir_fd is not None and threading.get_ident() != main:
            try:
                info = os.fstat(dir_fd)
                same = (info.st_dev, info.st_ino) == folder
            except OSError:
                same = False
            if not same:
                wrong_folder.append(name)
                return
            if not interrupted.is_set():
                interrupted.set()
                signal.pthread_kill(main, signal.SIGINT)  # Ctrl-C while the threads work
            time.sleep(0.002)
        real_unlink(name, dir_fd=dir_fd)

    monkeypatch.setattr(write.os, "unlink", watched_unlink)
    with pytest.raises(KeyboardInterrupt):
        write.remove_tree(tree)
    time.sleep(0.1)  # any thread still at work would show here
    assert interrupted.is_set() and wrong_folder == []
    assert not [t for t in threading.enumerate() if t.name.startswith("remove")]
    assert _outside_intact(tmp_path)


def test_remove_tree_of_a_link_removes_the_link_only(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "page.html").write_bytes(b"z")
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    write.remove_tree(link)  # rmtree refuses a link: nothing happens
    write.remove_tree(tmp_path / "missing")  # nor for a missing folder
    assert (target / "page.html").read_bytes() == b"z"
