"""write_site reports what it wrote, so a build need not walk the new site again."""

from __future__ import annotations

from pathlib import Path

import pytest

from reportgen.build import _site_files
from reportgen.website.write import write_site


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
