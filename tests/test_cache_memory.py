"""Cache entries kept in memory (cache._remembered): `serve` reads back after each
edit what its previous build wrote. What a read gives must be what parsing the
file gives, and a file changed by anyone else is parsed again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reportgen import cache as cache_module
from reportgen.cache import Cache

PAGES = {
    "index.html": ("0" * 32, 120, 1_700_000_000_000_000_000),
    "sets/a/index.html": ("f" * 32, 99, 1_700_000_000_000_000_001),
}


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    monkeypatch.setattr(cache_module, "_remembered", {})
    calls: list[object] = []
    parse = cache_module._pages_from_json

    def counting(doc: object) -> cache_module.PageKeys:
        calls.append(doc)
        return parse(doc)

    monkeypatch.setattr(cache_module, "_pages_from_json", counting)
    return calls


def _entry(tmp_path: Path) -> Path:
    [path] = (tmp_path / cache_module.CACHE_DIR / "site").glob("pages-*")
    return path


def test_what_this_process_wrote_is_read_back_without_parsing(
    tmp_path: Path, parses: list[object]
) -> None:
    cache = Cache(tmp_path / "site")
    cache.put_pages(PAGES)
    assert cache.get_pages() == PAGES
    assert Cache(tmp_path / "site").get_pages() == PAGES
    assert parses == []
    cache_module._remembered.clear()  # another process: the file itself
    assert cache.get_pages() == PAGES
    assert len(parses) == 1


def test_a_file_rewritten_by_someone_else_is_parsed_again(
    tmp_path: Path, parses: list[object]
) -> None:
    cache = Cache(tmp_path / "site")
    cache.put_pages(PAGES)
    path = _entry(tmp_path)
    info = os.stat(path)
    # Another writer's file put in its place: same size and modification time.
    other = path.with_name("other")
    other.write_bytes(path.read_bytes().replace(b'"0000', b'"1111'))
    os.utime(other, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.replace(other, path)
    changed = ("1111" + "0" * 28, *PAGES["index.html"][1:])
    assert cache.get_pages() == {**PAGES, "index.html": changed}
    assert len(parses) == 1
    assert cache.get_pages() is not None and len(parses) == 1  # now that file is known

    path.write_bytes(b"{not json")
    assert cache.get_pages() is None  # damaged: the pages are rendered again
    path.unlink()
    assert cache.get_pages() is None


def test_reads_are_remembered_too_and_a_new_write_replaces_them(
    tmp_path: Path, parses: list[object]
) -> None:
    Cache(tmp_path / "site").put_pages(PAGES)
    cache_module._remembered.clear()
    cache = Cache(tmp_path / "site")
    assert cache.get_pages() == PAGES and cache.get_pages() == PAGES
    assert len(parses) == 1
    fewer = {"index.html": PAGES["index.html"]}
    cache.put_pages(fewer)
    assert cache.get_pages() == fewer
    assert len(parses) == 1


def test_a_caller_changing_what_it_got_changes_nothing_kept(tmp_path: Path) -> None:
    # Templates are not sandboxed: one could reorder the chart list it is given.
    from reportgen.website.charts import Chart, SiteCharts

    cache_module._remembered.clear()
    charts = SiteCharts(
        overview=[Chart("a", "A", "first", svg='<svg id="a"></svg>')],
        by_set={
            "s": [
                Chart("b", "B", "second", svg='<svg id="b"></svg>'),
                Chart("c", "C", "third", svg='<svg id="c"></svg>'),
            ]
        },
        by_comparison={},
        by_trend={},
    )
    cache = Cache(tmp_path / "site")
    cache.put_charts("k", charts)
    first = cache.get_charts("k")
    assert first is not None and first == charts
    first.by_set["s"].reverse()
    first.overview[0].svg = '<svg id="changed"></svg>'
    assert cache.get_charts("k") == charts  # parsed, then kept as a copy
    again = cache.get_charts("k")
    assert again == charts and again is not cache.get_charts("k")

    pages = cache_module.Cache(tmp_path / "site")
    pages.put_pages(PAGES)
    got = pages.get_pages()
    assert got is not None
    got.clear()
    assert pages.get_pages() == PAGES
