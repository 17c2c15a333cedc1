"""Templates compiled ahead of time (website/precompiled.py, website/precompile.py).

The law: a build that takes the package's templates from the compiled folder
makes, byte for byte, the site a build that compiles them makes; the compiled
code is taken only for exactly the text, name, Jinja and settings it was made
from, and a missing or damaged folder only means compiling as usual.
"""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jinja2
import pytest

from reportgen.website import precompile, precompiled
from reportgen.website.content import content_environment, split_front_matter
from reportgen.website.render import Theme, _template_place, environment
from reportgen.website.replay import ReplayEnvironment

from .conftest import EXAMPLE, ROOT

THEME = Theme.from_folders(None, None)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("precompiled") / "compiled"
    precompile.write(folder)
    return folder


@pytest.fixture
def reading(compiled: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The build reads `compiled` (the index is read again for each test)."""
    monkeypatch.setattr(precompiled, "FOLDER", compiled)
    precompiled._index.cache_clear()
    yield compiled
    precompiled._index.cache_clear()


def _pages_env() -> jinja2.Environment:
    return environment(THEME)


def _page_templates() -> list[str]:
    env = _pages_env()
    assert env.loader is not None
    return [n for n in env.loader.list_templates() if n.endswith(".html")]


def test_every_shipped_template_and_content_page_has_its_code(reading: Path) -> None:
    env = _pages_env()
    assert env.loader is not None
    names = _page_templates()
    assert {"base.html", "index.html", "set.html", "task.html", "content.html"} <= set(names)
    for name in names:
        source = env.loader.get_source(env, name)[0]
        assert precompiled.code(env, name, source) is not None, name
    content = content_environment()
    pages = THEME.content_pages()
    assert set(pages) >= {"methodology", "faq"}
    for path in pages.values():
        body = split_front_matter(path.read_text(encoding="utf-8"))[0]
        assert precompiled.code(content, None, body) is not None, path


def test_code_is_taken_only_for_what_it_was_made_from(reading: Path) -> None:
    env = _pages_env()
    assert env.loader is not None
    source = env.loader.get_source(env, "task.html")[0]
    assert precompiled.code(env, "task.html", source) is not None
    # Another text (a user's edited copy), another name, other settings, another kind
    # of environment (the replay sandbox compiles to other code), another Jinja.
    assert precompiled.code(env, "task.html", source + "\n") is None
    assert precompiled.code(env, "set.html", source) is None
    other = environment(THEME)
    other.trim_blocks = False
    assert precompiled.code(other, "task.html", source) is None
    other = environment(THEME)
    other.filters["extra"] = str
    assert precompiled.code(other, "task.html", source) is None
    assert precompiled.code(environment(THEME, ReplayEnvironment), "task.html", source) is None


def test_code_made_by_another_jinja_is_not_taken(
    compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "compiled"
    shutil.copytree(compiled, folder)
    index = json.loads((folder / precompiled.INDEX).read_text())
    index["jinja"] = "0.0"
    (folder / precompiled.INDEX).write_text(json.dumps(index))
    monkeypatch.setattr(precompiled, "FOLDER", folder)
    precompiled._index.cache_clear()
    env = _pages_env()
    assert env.loader is not None
    try:
        assert (
            precompiled.code(env, "task.html", env.loader.get_source(env, "task.html")[0]) is None
        )
    finally:
        precompiled._index.cache_clear()


def test_a_precompiled_template_renders_as_one_compiled_here(reading: Path) -> None:
    ahead = _pages_env()
    here = _pages_env()
    assert here.loader is not None
    context = {"site": {"title": "t"}}
    located = 0
    for name in _page_templates():
        source = here.loader.get_source(here, name)[0]
        loaded = ahead.get_template(name)
        made = here.from_string(source)
        assert loaded.filename == str(ROOT / "templates" / name)
        assert loaded.root_render_func.__code__.co_filename.startswith(str(reading))
        assert made.root_render_func.__code__.co_filename == "<template>"
        # With most of their context missing, both fail at the same place of the same
        # file, or (a template that needs none of it) give the same text.
        outcomes = []
        for template in (loaded, here.get_template(name)):
            try:
                outcomes.append(template.render(context))
            except jinja2.UndefinedError as error:
                outcomes.append(_template_place(error))
        assert outcomes[0] == outcomes[1] and outcomes[0] is not None, name
        located += str(outcomes[0]).startswith(str(ROOT / "templates"))
    assert located >= 4  # the error places were compared, not only texts


def _damage(folder: Path, how: str) -> None:
    index_path = folder / precompiled.INDEX
    index = json.loads(index_path.read_text())
    entries = next(iter(index["environments"].values()))
    if how == "index not JSON":
        index_path.write_text("{not json")
    elif how == "index a list":
        index_path.write_text("[]")
    elif how == "module outside the folder":
        for key in entries:
            entries[key] = "../escape.py"
        (folder.parent / "escape.py").write_text("raise SystemExit('ran')\n")
        index_path.write_text(json.dumps(index))
    elif how == "module missing":
        for path in folder.glob("page_*.py"):
            path.unlink()
    elif how == "module not Python":
        for path in folder.glob("page_*.py"):
            path.write_text("def root(:\n")
    elif how == "no folder":
        for path in folder.rglob("*"):
            if path.is_file():
                path.unlink()


@pytest.mark.parametrize(
    "how",
    [
        "index not JSON",
        "index a list",
        "module outside the folder",
        "module missing",
        "module not Python",
        "no folder",
    ],
)
def test_a_damaged_folder_means_compiling_as_usual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    folder = tmp_path / "compiled"
    precompile.write(folder)
    _damage(folder, how)
    monkeypatch.setattr(precompiled, "FOLDER", folder)
    precompiled._index.cache_clear()
    env = _pages_env()
    assert env.loader is not None
    source = env.loader.get_source(env, "base.html")[0]
    try:
        assert precompiled.code(env, "base.html", source) is None
        assert env.get_template("index.html").filename == str(ROOT / "templates" / "index.html")
    finally:
        precompiled._index.cache_clear()


_BUILD = """
import sys
from pathlib import Path
from reportgen.website import precompiled
precompiled.FOLDER = Path(sys.argv[1])
from reportgen.__main__ import run
sys.argv = ["reportgen", "build", "--config", sys.argv[2], "-o", sys.argv[3], "--no-cache"]
run()
"""


def _build(folder: Path, output: Path) -> None:
    subprocess.run(
        [sys.executable, "-c", _BUILD, str(folder), str(EXAMPLE), str(output)],
        check=True,
        capture_output=True,
        env={"SOURCE_DATE_EPOCH": "1700000000", "PATH": "/usr/bin:/bin"},
    )


def _same_tree(a: Path, b: Path) -> None:
    # Not Python's bytecode: it is Python's to write, and names the folder it is in.
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.suffix != ".pyc")
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file() and p.suffix != ".pyc")
    assert files_a == files_b
    _, mismatch, errors = filecmp.cmpfiles(a, b, files_a, shallow=False)
    assert mismatch == [] and errors == []


def test_a_build_with_compiled_templates_makes_the_same_site(
    compiled: Path, tmp_path: Path
) -> None:
    # Separate processes: nothing compiled by one build is in memory for the other.
    _build(compiled, tmp_path / "ahead")
    _build(tmp_path / "none", tmp_path / "here")
    _same_tree(tmp_path / "ahead", tmp_path / "here")


def test_writing_twice_gives_the_same_bytes(compiled: Path, tmp_path: Path) -> None:
    again = tmp_path / "compiled"
    assert precompile.write(again) == len(list(compiled.glob("*.py")))
    precompile.write(again)  # over an existing folder
    _same_tree(compiled, again)
    assert not list(tmp_path.glob(".compiled-*")) and not (tmp_path / "compiled.old").exists()
