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
    site = tmp_path / "site"
    write_site(site, [("sets/a/kept.html", b"<p>kept</p>")])
    reported: dict[str, tuple[int, int]] = {}
    files = [("index.html", b"<p>new</p>"), ("sets/a/kept.html", write.KEEP), ("x.csv", b"a\n")]
    write_site(site, files, written_files=reported, previous=site_on_disk(site))
    assert reported == _site_files(site)
    assert len(reported) == 4  # and the marker


def test_files_written_by_workers_count_and_a_failure_leaves_nothing(tmp_path: Path) -> None:
    from collections.abc import Iterator

    from reportgen.website.write import Written, write_staged

    staging: list[str] = []

    def pages(fail: bool) -> Iterator[tuple[str, bytes | Written]]:
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


def _old_site(tmp_path: Path) -> tuple[Path, list[tuple[str, bytes | write.Keep]]]:
    old = tmp_path / "site"
    pages = {f"sets/a/tasks/t{i}.html": f"<p>{i}</p>".encode() for i in range(5)}
    write_site(old, [("index.html", b"<p>old</p>"), *pages.items()])
    kept: list[tuple[str, bytes | write.Keep]] = [("index.html", b"<p>new</p>")]
    kept += [(name, write.KEEP) for name in pages]
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
    walked = site_on_disk(old)
    before = {name: (old / name).stat().st_ino for name, data in files if data is write.KEEP}

    def no_links(*args: object, **kwargs: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(write.os, "link", no_links)
    reported: dict[str, tuple[int, int]] = {}
    write_site(old, files, written_files=reported, previous=walked)
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


def test_keeping_needs_the_walked_previous_site(tmp_path: Path) -> None:
    site = _three_folder_site(tmp_path)
    with pytest.raises(ValueError, match="no previous site"):
        write_site(site, [("index.html", write.KEEP)])
    with pytest.raises(ValueError, match="no such file"):
        write_site(site, [("gone.html", write.KEEP)], previous=site_on_disk(site))
    with pytest.raises(ValueError, match="is not the one at"):
        write_site(tmp_path / "other", [("index.html", write.KEEP)], previous=site_on_disk(site))
    assert (site / "index.html").read_bytes() == b"<p>home</p>"


def test_ctrl_c_during_the_swap_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal

    site = _three_folder_site(tmp_path)
    walked = site_on_disk(site)
    real_swap = write._swap

    def interrupted_swap(staging: Path, output: Path) -> Path | None:
        signal.raise_signal(signal.SIGINT)  # Ctrl-C as the site is swapped in
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
    # Every set's folder gets a new page and keeps another: the kept files of 300
    # folders are linked under a limit of 64 open files.
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
        "seen = {'files': len(walked.files)}\n"
        "print(json.dumps(seen), file=sys.stderr)\n"
    )
    assert probe(code, str(site)) == {"files": 301}  # 300 pages and the marker
