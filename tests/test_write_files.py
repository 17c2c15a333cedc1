"""write_site reports what it wrote, so a build need not walk the new site again."""

from __future__ import annotations

from pathlib import Path

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
