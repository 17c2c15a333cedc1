"""Content pages rendered alongside the build (website/content_worker.py).

The worker renders in a forked child (or a thread where forking is not safe)
and hands the HTML back into the process's memo; what it hands back must be
exactly what rendering here gives, and a page it cannot render is left for the
real rendering, which reports the error with its place.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from reportgen.errors import UserError
from reportgen.settings import site_values
from reportgen.website import content_worker as render
from reportgen.website.content import render_content
from reportgen.website.content_worker import ContentWorker, read_content
from reportgen.website.theme import Theme

SITE = site_values("Worker test", "", 3, 0.95)


@pytest.fixture(autouse=True)
def empty_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render, "_CONTENT_MEMO", {})


@pytest.fixture(autouse=True)
def one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker forks only where no other thread runs. Another test in this process
    may have left a daemon thread behind for good (py4j's finalizer, once a Spark test
    ran): as far as these tests go, the process is single-threaded (a test of the
    thread path says otherwise)."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)


def _theme(tmp_path: Path, pages: dict[str, str]) -> Theme:
    folder = tmp_path / "content"
    folder.mkdir()
    for name, text in pages.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    return Theme.from_folders(None, folder)


@pytest.mark.parametrize("forked", [True, False], ids=["fork", "thread"])
def test_worker_pages_equal_pages_rendered_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    if not forked:
        # Another thread running (as in `serve`): the worker must not fork.
        monkeypatch.setattr(threading, "active_count", lambda: 2)
    theme = _theme(tmp_path, {"extra": "---\ntitle: Extra\n---\n# {{ site.title }}\n"})
    content = read_content(theme)
    worker = ContentWorker(content, SITE, skip={"faq.html"})
    assert (worker.pid is not None) == forked
    assert (worker.thread is not None) == (not forked)
    worker.finish()
    memo = render._CONTENT_MEMO
    assert len(memo) == len(content) - 1  # faq.html is skipped (kept from the last build)
    for name, (source, text) in content.items():
        key = (text, tuple(SITE.items()), source)
        if name == "faq":
            assert key not in memo
            continue
        assert memo[key] == render_content(text, SITE, source)
    assert memo[(content["extra"][1], tuple(SITE.items()), content["extra"][0])][0].startswith(
        "<h1>Worker test</h1>"
    )


def test_a_page_the_worker_cannot_render_is_reported_with_its_place(tmp_path: Path) -> None:
    theme = _theme(tmp_path, {"broken": "---\ntitle: Broken\n---\nfine\n\n{{ nothing.here }}\n"})
    content = read_content(theme)
    worker = ContentWorker({"broken": content["broken"]}, SITE, skip=())
    worker.finish()
    assert render._CONTENT_MEMO == {}
    source, text = content["broken"]
    with pytest.raises(UserError, match=r"broken\.md:6: template error"):
        render.content_page(text, SITE, source)


def test_closing_an_unfinished_worker_ends_its_child(tmp_path: Path) -> None:
    content = read_content(_theme(tmp_path, {}))
    worker = ContentWorker(content, SITE, skip=())
    pid = worker.pid
    assert pid is not None
    worker.close()
    assert worker.pid is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)  # already reaped: no process is left behind
    assert render._CONTENT_MEMO == {}


def test_nothing_to_render_starts_nothing(tmp_path: Path) -> None:
    content = read_content(_theme(tmp_path, {}))
    worker = ContentWorker(content, SITE, skip={f"{name}.html" for name in content})
    assert worker.pid is None and worker.thread is None
    worker.finish()
    worker.close()


def test_a_child_that_never_answers_is_stopped_and_the_pages_are_left_to_render_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    def hang(*args: object, **kwargs: object) -> None:
        time.sleep(600)

    # The child is forked after this, so it inherits the stand-in and hangs.
    monkeypatch.setattr(render, "render_content", hang)
    monkeypatch.setattr(render, "CONTENT_WORKER_SECONDS", 1.0)
    theme = _theme(tmp_path, {"extra": "# x\n"})
    worker = ContentWorker(read_content(theme), SITE, skip=())
    pid = worker.pid
    assert pid is not None
    started = time.monotonic()
    worker.finish()
    assert time.monotonic() - started < 30
    assert render._CONTENT_MEMO == {}  # nothing kept: the real rendering does it all
    assert worker.pid is None and worker.reader is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # stopped and reaped


def test_front_matter_is_parsed_once_per_text_and_each_caller_gets_its_own_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reportgen.website import content

    content._split.cache_clear()
    parsed: list[str] = []
    split = content.split_front_matter

    def counting(text: str) -> tuple[str, dict[str, object], int]:
        parsed.append(text)
        return split(text)

    monkeypatch.setattr(content, "split_front_matter", counting)
    text = "---\ntitle: Notes\nexamples: [{n: 3}]\n---\nbody\n"
    first = content.front_matter(text)
    first["examples"][0]["n"] = 99  # a caller changing its copy
    assert content.front_matter(text) == {"title": "Notes", "examples": [{"n": 3}]}
    assert parsed == [text]
    # Rendering the page (as a worker forked after the navigation was made does) parses
    # nothing again, and what it hands back is its own copy too.
    html, meta = content.render_content(text, {"title": "t"})
    assert html == "<p>body</p>\n" and parsed == [text]
    meta["examples"].clear()
    assert content.front_matter(text) == {"title": "Notes", "examples": [{"n": 3}]}
    other = text.replace("Notes", "Other")
    assert content.front_matter(other)["title"] == "Other"
    assert parsed == [text, other]
    with pytest.raises(UserError, match=r"^bad\.md:3: front matter: not valid YAML: "):
        content.front_matter("---\ntitle: [\n---\n", "bad.md")
    # Located at its line of the file, in one line, without PyYAML's own framing.
    with pytest.raises(UserError) as caught:
        content.front_matter("---\ntitle: x\n  bad: indent\n---\nbody\n", "faq.md")
    assert str(caught.value) == (
        "faq.md:3: front matter: not valid YAML: mapping values are not allowed here"
    )


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("{{ 1 / 0 }}", "division by zero"),
        ('{{ {}.pop("gone") }}', "'gone'"),
        ('{{ "{:d}".format("x") }}', "Unknown format code"),
    ],
)
def test_a_failing_content_expression_is_a_located_error(
    tmp_path: Path, expression: str, reason: str
) -> None:
    text = "---\ntitle: Notes\n---\n\nfine\n\n" + expression + "\n"
    with pytest.raises(UserError, match=rf"^notes\.md:7: .*{reason}"):
        render_content(text, SITE, "notes.md")
