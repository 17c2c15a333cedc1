"""Templates compiled ahead of time (website/precompiled.py, website/precompile.py).

The law: a build that takes the package's templates from the compiled folder
makes, byte for byte, the site a build that compiles them makes; the compiled
code is taken only for exactly the text, name, Jinja and settings it was made
from, and a missing or damaged folder only means compiling as usual.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jinja2
import pytest

from reportgen import code
from reportgen.website import precompile, precompiled
from reportgen.website.content import content_environment, split_front_matter
from reportgen.website.render import _template_place
from reportgen.website.replay import ReplayEnvironment, guard
from reportgen.website.theme import Theme, environment

from .conftest import EXAMPLE, ROOT

THEME = Theme.from_folders(None, None)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("precompiled") / "compiled"
    precompile.write(folder)
    return folder


@pytest.fixture
def reading(compiled: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The build reads `compiled`."""
    monkeypatch.setattr(precompiled, "FOLDER", compiled)
    return compiled


def _pages_env() -> jinja2.Environment:
    return environment(THEME)


def _replay_env() -> jinja2.Environment:
    return guard(environment(THEME, ReplayEnvironment))


def _page_templates() -> list[str]:
    env = _pages_env()
    assert env.loader is not None
    return [n for n in env.loader.list_templates() if n.endswith(".html")]


def test_every_shipped_template_and_content_page_has_its_code(reading: Path) -> None:
    env = _pages_env()
    assert env.loader is not None
    names = _page_templates()
    assert {"base.html", "index.html", "set.html", "task.html", "content.html"} <= set(names)
    replay = _replay_env()
    for name in names:
        source = env.loader.get_source(env, name)[0]
        made = precompiled.code(env, name, source)
        assert made is not None, name
        # The replay sandbox has code of its own for every template (a comparison or an
        # arithmetic operator becomes a call of the environment), never the pages'.
        sandboxed = precompiled.code(replay, name, source)
        assert sandboxed is not None and sandboxed.co_filename != made.co_filename, name
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


@pytest.mark.parametrize(
    ("made_by", "attribute", "other"),
    [
        # The environments' finalize hooks run on constant output while Jinja compiles:
        # code made by other hooks would print other text.
        (code, "sources", lambda: "0.0+edited"),
        (jinja2, "__version__", "0.0"),
    ],
    ids=["other reportgen code", "another Jinja"],
)
def test_code_made_by_something_else_is_not_taken(
    reading: Path, monkeypatch: pytest.MonkeyPatch, made_by: Any, attribute: str, other: Any
) -> None:
    env = _pages_env()
    assert env.loader is not None
    source = env.loader.get_source(env, "base.html")[0]
    assert precompiled.code(env, "base.html", source) is not None
    monkeypatch.setattr(made_by, attribute, other)
    assert precompiled.code(env, "base.html", source) is None


def test_one_module_per_template_each_named_by_what_it_was_made_from(reading: Path) -> None:
    env = _pages_env()
    assert env.loader is not None
    names = _page_templates()
    replay = _replay_env()
    expected = {
        precompiled.module_file(each, name, env.loader.get_source(env, name)[0])
        for name in names
        for each in (env, replay)
    }
    content = content_environment()
    for path in THEME.content_pages().values():
        body = split_front_matter(path.read_text(encoding="utf-8"))[0]
        expected.add(precompiled.module_file(content, None, body))
    assert {p.name for p in reading.glob("*.py")} == expected
    assert len(expected) == 2 * len(names) + len(THEME.content_pages())


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
    modules = list(folder.glob("t_*.py"))
    if how == "module missing":
        for path in modules:
            path.unlink()
    elif how == "module not Python":
        for path in modules:
            path.write_text("def root(:\n")
    elif how == "module not text":
        for path in modules:
            path.write_bytes(b"\xff\xfe\x00root")
    elif how == "module a folder":
        for path in modules:
            path.unlink()
            path.mkdir()
    elif how == "module cut short":  # still Python, but no longer a template
        for path in modules:
            lines = path.read_text().splitlines(keepends=True)
            path.write_text("".join(lines[: len(lines) // 3]))
    elif how == "bytecode not Python's":
        for path in folder.glob("__pycache__/*.pyc"):
            path.write_bytes(b"\x00" * 40)
    elif how == "no folder":
        shutil.rmtree(folder)


@pytest.mark.parametrize(
    "how",
    [
        "module missing",
        "module not Python",
        "module not text",
        "module a folder",
        "module cut short",
        "bytecode not Python's",
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
    env = _pages_env()
    assert env.loader is not None
    template = env.get_template("index.html")
    assert template.filename == str(ROOT / "templates" / "index.html")
    if how == "bytecode not Python's":
        # Python sees that the bytecode is not its own and compiles the module's
        # source again: still the code made for this template.
        assert template.root_render_func.__code__.co_filename.startswith(str(folder))
        return
    assert template.root_render_func.__code__.co_filename == template.filename
    source = env.loader.get_source(env, "base.html")[0]
    template = precompiled.template(env, "base.html", source, "base.html", {})
    assert template is None


_BUILD = """
import sys
from pathlib import Path
from reportgen.website import precompiled
precompiled.FOLDER = Path(sys.argv[1])
found, noted = precompiled.code, sys.argv[4]

def counted(env, name, source):
    code = found(env, name, source)
    if code is not None:  # noted in a file: the content pages are made in a child
        with open(noted, "a") as hits:
            hits.write(f"{name or 'content page'}\\n")
    return code

precompiled.code = counted
from reportgen.__main__ import run
sys.argv = ["reportgen", "build", "--config", sys.argv[2], "-o", sys.argv[3], "--no-cache"]
run()
"""


def _build(folder: Path, output: Path) -> list[str]:
    """Build the example with `folder` as the compiled templates; the templates found there."""
    hits = output.with_name(output.name + ".hits")
    subprocess.run(
        [sys.executable, "-c", _BUILD, str(folder), str(EXAMPLE), str(output), str(hits)],
        check=True,
        capture_output=True,
        env={"SOURCE_DATE_EPOCH": "1700000000", "PATH": "/usr/bin:/bin"},
    )
    return sorted(hits.read_text().splitlines()) if hits.exists() else []


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
    found = _build(compiled, tmp_path / "ahead")
    assert _build(tmp_path / "none", tmp_path / "here") == []
    _same_tree(tmp_path / "ahead", tmp_path / "here")
    # The build took every page template it used and both content pages from the folder.
    assert found.count("content page") == len(THEME.content_pages())
    assert {"base.html", "index.html", "set.html", "task.html", "content.html"} <= set(found)


def test_writing_twice_gives_the_same_bytes(
    compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    again = tmp_path / "compiled"
    assert precompile.write(again) == len(list(compiled.glob("*.py")))
    # While the folders are swapped, every other name beside them starts with a dot:
    # code.py's hash of reportgen's own source leaves those out.
    beside: list[str] = []
    replace = os.replace

    def watched(source: Path, target: Path) -> None:
        beside.extend(p.name for p in tmp_path.iterdir())
        replace(source, target)

    monkeypatch.setattr(os, "replace", watched)
    precompile.write(again)  # over an existing folder
    assert beside and all(name == "compiled" or name.startswith(".") for name in beside)
    _same_tree(compiled, again)
    assert [p.name for p in tmp_path.iterdir()] == ["compiled"]


def test_a_folder_another_run_put_in_place_meanwhile_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "compiled"
    replace = os.replace

    def raced(source: Path, target: Path) -> None:
        if Path(target) == folder and not folder.exists():
            folder.mkdir()
            (folder / "theirs").write_text("")
        replace(source, target)

    monkeypatch.setattr(os, "replace", raced)
    precompile.write(folder)
    assert [p.name for p in folder.iterdir()] == ["theirs"]
    assert [p.name for p in tmp_path.iterdir()] == ["compiled"]
