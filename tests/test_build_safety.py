"""Security and data loss (issue 12, items 3 to 5): the cache, the output folder, and
hostile text in names, URLs and templates."""

from __future__ import annotations

import html
import io
import json
import os
import pickle
import re
import shutil
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from reportgen.cache import CACHE_DIR
from reportgen.cli import main
from tests.conftest import ROOT


def write_results(path: Path, tasks: int = 3, runs: int = 4, **fields: str) -> Path:
    lines = [
        json.dumps({"task": f"t{t}", "passed": (t + r) % 3 != 0, "run": r, **fields})
        for t in range(tasks)
        for r in range(runs)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stderr(err):
        status = main(list(argv))
    return status, err.getvalue()


def tree(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


# ---------------------------------------------------------------- item 3: the cache


class _RunsCode:
    """Unpickling this makes a folder: proof that a pickle in the cache would run."""

    def __init__(self, proof: Path) -> None:
        self.proof = proof

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.mkdir, (str(self.proof),)


@pytest.fixture(scope="module")
def first_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, bytes]]:
    """(results file, site with its cache, clean build's files): built once for the module."""
    folder = tmp_path_factory.mktemp("cached")
    results = write_results(folder / "r.jsonl")
    site = folder / "site"
    assert cli("build", str(results), "-o", str(site))[0] == 0
    clean = folder / "clean"
    assert cli("build", str(results), "-o", str(clean), "--no-cache")[0] == 0
    assert tree(site) == tree(clean)
    return results, site, tree(clean)


@pytest.fixture
def cached_build(
    first_build: tuple[Path, Path, dict[str, bytes]], tmp_path: Path
) -> tuple[Path, Path, dict[str, bytes]]:
    """A copy of the first build's site and cache for one test to change."""
    results, site, clean = first_build
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    shutil.copytree(site.parent / CACHE_DIR / site.name, tmp_path / CACHE_DIR / copy.name)
    return results, copy, clean


def cache_entries(site: Path) -> list[Path]:
    return sorted((site.parent / CACHE_DIR / site.name).glob("*-*.json"))


def test_cache_entry_cannot_execute_code(
    cached_build: tuple[Path, Path, dict[str, bytes]], tmp_path: Path
) -> None:
    results, site, clean = cached_build
    proof = tmp_path / "code-ran"
    payload = pickle.dumps(_RunsCode(proof))
    entries = cache_entries(site)
    assert {p.name.split("-")[0] for p in entries} == {
        "inputs",
        "charts",
        "site",
        "pages",
        "digests",
        "results",
    }
    for entry in entries:
        json.loads(entry.read_bytes())  # plain JSON, nothing else
        entry.write_bytes(payload)
        entry.with_suffix(".pickle").write_bytes(payload)  # the old format's name too
    status, note = cli("build", str(results), "-o", str(site))
    assert status == 0, note
    assert not proof.exists()
    assert "reused" not in note and "nothing changed" not in note
    assert tree(site) == clean


def _damage_counts(doc: dict) -> dict:
    doc["result_sets"][0]["tasks"][0]["successes"] += 1  # disagrees with its runs
    return doc


def _damage_svg(doc: dict) -> dict:
    chart = doc["by_set"][next(iter(doc["by_set"]))][0]
    chart["svg"] = chart["svg"].replace("<g", '<g onload="alert(1)"', 1)
    return doc


def _script_svg(doc: dict) -> dict:
    chart = doc["by_set"][next(iter(doc["by_set"]))][0]
    chart["svg"] = chart["svg"].replace("</svg>", "<script>alert(1)</script></svg>")
    return doc


def _missing_set(doc: dict) -> dict:
    doc["by_set"] = {}
    return doc


def _wrong_types(doc: dict) -> dict:
    doc["result_sets"][0]["tasks"][0]["runs"] = "4"
    return doc


@pytest.mark.parametrize(
    ("kind", "damage"),
    [
        ("inputs", lambda raw: raw[: len(raw) // 2]),
        ("inputs", lambda raw: json.dumps(_damage_counts(json.loads(raw))).encode()),
        ("inputs", lambda raw: json.dumps(_wrong_types(json.loads(raw))).encode()),
        ("inputs", lambda raw: b"[" * 100_000),
        ("charts", lambda raw: json.dumps(_damage_svg(json.loads(raw))).encode()),
        ("charts", lambda raw: json.dumps(_script_svg(json.loads(raw))).encode()),
        ("charts", lambda raw: json.dumps(_missing_set(json.loads(raw))).encode()),
    ],
)
def test_damaged_cache_entry_is_ignored_and_rebuilt(
    cached_build: tuple[Path, Path, dict[str, bytes]], kind: str, damage: object
) -> None:
    results, site, clean = cached_build
    for entry in cache_entries(site):
        if entry.name.startswith("site-"):
            entry.unlink()  # else the unchanged build keeps the site without reading more
        elif entry.name.startswith(kind):
            entry.write_bytes(damage(entry.read_bytes()))  # type: ignore[operator]
    status, note = cli("build", str(results), "-o", str(site))
    assert status == 0, note
    reused = "parsed inputs" if kind == "inputs" else "charts from the cache"
    assert reused not in note
    assert tree(site) == clean


def test_cache_entry_that_is_not_a_file_is_ignored(
    cached_build: tuple[Path, Path, dict[str, bytes]], tmp_path: Path
) -> None:
    results, site, clean = cached_build
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    for entry in cache_entries(site):
        entry.unlink()
        if entry.name.startswith("inputs"):
            os.mkfifo(entry)  # opening it to read would wait for a writer forever
        elif entry.name.startswith("charts"):
            entry.symlink_to(outside)
        else:
            entry.mkdir()
    status, note = cli("build", str(results), "-o", str(site))
    assert status == 0, note
    assert tree(site) == clean
    assert outside.read_text() == "{}"


def test_symlinked_cache_folder_is_not_used(
    cached_build: tuple[Path, Path, dict[str, bytes]], tmp_path: Path
) -> None:
    results, site, _ = cached_build
    folder = site.parent / CACHE_DIR / site.name
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    before = sorted(p.name for p in elsewhere.iterdir())
    status, note = cli("build", str(results), "-o", str(site), "--title", "changed")
    assert status == 0, note
    assert "reused" not in note
    assert sorted(p.name for p in elsewhere.iterdir()) == before


# ---------------------------------------------------------------- item 4: the output folder


def test_a_first_build_refused_for_bad_input_writes_nothing(tmp_path: Path) -> None:
    """Not even the cache's record of the inputs' digests."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": "a", "passed": "yes"}\n')
    with redirect_stderr(io.StringIO()):
        status = main(["build", str(bad), "-o", str(tmp_path / "site")], out=io.StringIO())
    assert status == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_output_folder_holding_an_input_is_refused_without_force(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    site = tmp_path / "site"
    assert cli("build", str(results), "-o", str(site))[0] == 0
    moved = results.rename(site / "r.jsonl")  # the steps: mv r.jsonl site/
    before = tree(site)
    status, err = cli("build", str(moved), "-o", str(site))
    assert status == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"--output: {site} holds {moved}, which this build reads" in err
    assert tree(site) == before


def test_force_refuses_folder_holding_an_input(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    results = write_results(data / "r.jsonl")
    (data / "notes.txt").write_text("keep me")
    before = tree(data)
    for output in (data, tmp_path):  # the folder, or one above it
        status, err = cli("build", str(results), "-o", str(output), "--force")
        assert status == 2 and "which this build reads" in err
    assert tree(data) == before


def test_force_refuses_folder_holding_the_config_or_templates(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    results = write_results(tmp_path / "r.jsonl")
    config = project / "reportgen.yaml"
    config.write_text(f"result_sets: [{results}]\noutput: .\n")
    status, err = cli("build", "--config", str(config), "--force")
    assert status == 2 and f"holds {config}" in err
    theme = tmp_path / "theme"
    theme.mkdir()
    status, err = cli("build", str(results), "--templates", str(theme), "-o", str(tmp_path))
    assert status == 2 and "which this build reads" in err
    assert config.exists() and theme.is_dir()


def test_force_refuses_working_folder_its_parents_and_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "home" / "work"
    work.mkdir(parents=True)
    results = write_results(tmp_path / "elsewhere.jsonl")
    (work / "precious.txt").write_text("keep me")
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for output in (".", str(work), "..", "/", str(tmp_path / "home"), "~"):
        status, err = cli("build", str(results), "-o", os.path.expanduser(output), "--force")
        assert status == 2, output
        assert "the working folder, the home folder or a folder above them" in err
    assert (work / "precious.txt").read_text() == "keep me"


def test_force_still_replaces_a_site_that_is_not_reportgens(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    old = tmp_path / "old"
    old.mkdir()
    (old / "stale.html").write_text("old")
    (old / "index.html").write_text("another tool's site")
    assert cli("build", str(results), "-o", str(old))[0] == 2  # not reportgen's
    assert cli("build", str(results), "-o", str(old), "--force")[0] == 0
    assert not (old / "stale.html").exists() and "reliability" in (old / "index.html").read_text()


def test_force_never_replaces_what_is_not_a_site(tmp_path: Path) -> None:
    """`-o .git --force`, or a typo naming a folder of notes: nothing is touched."""
    results = write_results(tmp_path / "r.jsonl")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("mine")
    status, err = cli("build", str(results), "-o", str(notes), "--force")
    assert status == 2 and "is not a site (no index.html), so even --force" in err
    assert (notes / "todo.txt").read_text() == "mine"
    for repository in (".git", ".hg", ".svn"):
        project = tmp_path / f"project{repository}"
        (project / "docs" / repository).mkdir(parents=True)
        (project / "docs" / "index.html").write_text("docs with a repository inside")
        (project / repository).mkdir()
        (project / "index.html").write_text("a repository that is also a site")
        for output in (project, project / repository, project / "docs"):
            status, err = cli("build", str(results), "-o", str(output), "--force")
            assert status == 2 and "is or holds a version-control repository" in err, output
        assert (project / repository).is_dir() and (project / "docs" / repository).is_dir()


def test_symlinked_output_is_followed_not_replaced(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    real = tmp_path / "published" / "site"
    assert cli("build", str(results), "-o", str(real))[0] == 0
    link = tmp_path / "site"
    link.symlink_to(real, target_is_directory=True)
    status, err = cli("build", str(results), "-o", str(link), "--title", "Second build")
    assert status == 0, err
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert "Second build" in (real / "index.html").read_text()
    # No staging or retired folder is left beside either of them.
    beside = [*real.parent.iterdir(), *tmp_path.iterdir()]
    assert not [p.name for p in beside if p.name.startswith(".site.")]


def test_output_path_through_dotdot_makes_no_stray_folder(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    status, err = cli("build", str(results), "-o", str(tmp_path / "out" / ".." / "site"))
    assert status == 0, err
    assert (tmp_path / "site" / "index.html").is_file()
    # The cache sits beside the site as the system found it, not under out/.
    assert not (tmp_path / "out").exists()
    assert (tmp_path / ".reportgen-cache" / "site").is_dir()
    # The same site named plainly finds that cache and keeps every file.
    status, err = cli("build", str(results), "-o", str(tmp_path / "site"))
    assert status == 0 and "nothing changed" in err, err


def test_output_ending_in_dotdot_keeps_its_cache_outside_the_site(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    (tmp_path / "site" / "sub").mkdir(parents=True)
    (tmp_path / "site" / "index.html").write_text("an old site")
    status, err = cli("build", str(results), "-o", str(tmp_path / "site" / "sub" / ".."), "--force")
    assert status == 0, err
    assert (tmp_path / "site" / "index.html").is_file()
    assert not (tmp_path / "site" / ".reportgen-cache").exists()
    assert (tmp_path / ".reportgen-cache" / "site").is_dir()


@pytest.mark.parametrize(("flag", "value"), [("--title", ""), ("--title", "  "), ("--label", "")])
def test_an_empty_title_or_label_is_refused(tmp_path: Path, flag: str, value: str) -> None:
    # Typically an unset CI variable: "--title $TITLE".
    results = write_results(tmp_path / "r.jsonl")
    extra = ["--history", str(tmp_path / "h.jsonl")] if flag == "--label" else []
    status, err = cli("build", str(results), "-o", str(tmp_path / "site"), flag, value, *extra)
    assert status == 2 and f"{flag}: empty; leave it out for the default" in err
    assert not (tmp_path / "site").exists()


def test_dangling_symlinked_output_is_refused(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    link = tmp_path / "site"
    link.symlink_to(tmp_path / "nowhere")
    status, err = cli("build", str(results), "-o", str(link))
    assert status == 2 and "does not exist" in err
    assert not (tmp_path / "nowhere").exists()


# ---------------------------------------------------------------- item 5: hostile text


PHISH = "m](https://evil.example/phish) [x"


def test_markdown_badge_cannot_load_an_image_from_elsewhere(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    results = write_results(tmp_path / "r.jsonl", model=PHISH, suite="s")
    site = tmp_path / "site"
    base = "https://acme.example/evals/"
    assert cli("build", str(results), "-o", str(site), "--base-url", base)[0] == 0
    (snippet,) = sorted((site / "badges").glob("*.md"))
    page = MarkdownIt().render(snippet.read_text())
    sources = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert sources and all(url.startswith(base) for url in sources), sources
    assert PHISH in html.unescape(re.sub(r"<[^>]+>", "", page).replace("\\", ""))


def test_terminal_escapes_in_names_are_printed_spelled_out(tmp_path: Path) -> None:
    hostile = "t\x1b[2J\x1b]0;owned\x07\r\u009b31m"
    results = tmp_path / "r.jsonl"
    results.write_text(
        "".join(
            json.dumps({"task": f"t{t}", "passed": (t + r) % 3 != 0, "model": "m"}) + "\n"
            for t in range(3)
            for r in range(4)
        )
    )
    # A result file with such a name is refused, and the refusal spells the name out.
    refused = tmp_path / "hostile.jsonl"
    refused.write_text(json.dumps({"task": hostile, "passed": True}) + "\n")
    status, err = cli("summary", str(refused))
    assert status == 2 and ("\\x1b[2J" in err or "\\u001b[2J" in err)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", err)
    # A report.json edited by hand can still carry them: check prints them spelled out.
    site = tmp_path / "site"
    assert cli("build", str(results), "-o", str(site))[0] == 0
    report = json.loads((site / "report.json").read_text())
    report["result_sets"][0]["name"] = hostile
    edited = tmp_path / "report.json"
    edited.write_text(json.dumps(report))
    out, err_text = io.StringIO(), io.StringIO()
    with redirect_stderr(err_text):
        main(["check", str(edited), "--min-reliability", "0.99"], out=out)
    printed = out.getvalue() + err_text.getvalue()
    assert "\\u001b[2J" in printed
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", printed)
    # Error messages too, with the escape in the file's name.
    bad = tmp_path / "bad\x1b[31m.jsonl"
    bad.write_text("not json\n")
    status, err = cli("summary", str(bad))
    assert status == 2 and "\x1b" not in err and "bad\\u001b[31m.jsonl:1" in err


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--base-url", "javascript:alert(1)//"),
        ("--base-url", "data:text/html,<script>alert(1)</script>"),
        ("--base-url", 'https://acme.example/" onmouseover="alert(1)'),
        ("--base-url", "https://acme.example@evil.example/"),
        ("--base-url", "acme.example/evals/"),
        ("--base-path", "javascript:alert(1)//"),
        ("--base-path", "//evil.example/"),
        ("--base-path", "/\\evil.example/"),
        ("--base-path", 'evals/" onload="x'),
    ],
)
def test_base_url_and_base_path_refuse_other_schemes(tmp_path: Path, flag: str, value: str) -> None:
    results = write_results(tmp_path / "r.jsonl")
    status, err = cli("build", str(results), "-o", str(tmp_path / "site"), flag, value)
    assert status == 2
    assert f"error: {flag}: {value!r} is not" in err
    assert not (tmp_path / "site").exists()


def test_settings_from_the_config_are_named_there_not_as_flags(tmp_path: Path) -> None:
    """templates: tpl in the config said "--templates: tpl is not a folder"."""
    write_results(tmp_path / "r.jsonl")
    config = tmp_path / "reportgen.yaml"
    config.write_text("result_sets: [r.jsonl]\ntemplates: tpl\n")
    status, err = cli("build", "--config", str(config))
    assert status == 2 and err.startswith(f"reportgen: error: {config}: templates: {tmp_path}")
    status, err = cli("build", "--config", str(config), "--templates", str(tmp_path / "no"))
    assert status == 2 and "error: --templates: " in err  # a flag replaces the file's value
    config.write_text("result_sets: [r.jsonl]\nbase_url: ftp://x/\n")
    status, err = cli("build", "--config", str(config))
    assert status == 2 and f"error: {config}: base_url: 'ftp://x/' is not" in err


def test_an_output_below_a_file_and_a_looping_input_are_said_plainly(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    (tmp_path / "afile").write_text("x")
    status, err = cli("build", str(results), "-o", str(tmp_path / "afile" / "sub"))
    assert status == 2 and f"{tmp_path / 'afile'} is not a folder" in err
    (tmp_path / "one").symlink_to(tmp_path / "two")
    (tmp_path / "two").symlink_to(tmp_path / "one")
    status, err = cli("build", str(tmp_path / "one"), "-o", str(tmp_path / "site"))
    assert status == 2 and "a symbolic link to nothing, or in a loop" in err
    status, err = cli("build", str(results), "-o", str(tmp_path / "one"))
    assert (
        status == 2
        and err == f"reportgen: error: --output: {tmp_path / 'one'} is a symbolic link in a loop\n"
    )


def test_a_base_url_scheme_in_capitals_is_a_url(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    argv = ["build", str(results), "-o", str(tmp_path / "site"), "--base-url", "HTTPS://X.ORG/"]
    assert cli(*argv)[0] == 0


def test_base_path_without_trailing_slash_still_joins(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    site = tmp_path / "site"
    assert cli("build", str(results), "-o", str(site), "--base-path", "/evals")[0] == 0
    assert 'href="/evals/index.html"' in (site / "404.html").read_text()


@pytest.mark.parametrize("flag", ["--templates", "--content"])
def test_symlink_in_theme_folders_is_refused(tmp_path: Path, flag: str) -> None:
    results = write_results(tmp_path / "r.jsonl")
    theme = tmp_path / "theme"
    (theme / "assets").mkdir(parents=True)
    link = theme / "assets" / "passwd.md"
    link.symlink_to("/etc/passwd")
    status, err = cli("build", str(results), "-o", str(tmp_path / "site"), flag, str(theme))
    assert status == 2
    assert f"{flag}: {link} is a symbolic link" in err
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize(
    ("flag", "name", "text", "expected"),
    [
        ("--templates", "index.html", b"\xff{% extends 'base.html' %}", "not UTF-8 text (byte 1)"),
        ("--content", "faq.md", b"# FAQ\n\xfe\n", "not UTF-8 text (byte 7)"),
        ("--templates", "index.html", b'{% include "index.html" %}', "includes, imports or"),
        ("--templates", "set.html", b'{% extends "set.html" %}', "includes, imports or"),
    ],
)
def test_a_theme_file_that_cannot_be_used_is_named(
    tmp_path: Path, flag: str, name: str, text: bytes, expected: str
) -> None:
    results = write_results(tmp_path / "r.jsonl")
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / name).write_bytes(text)
    status, err = cli("build", str(results), "-o", str(tmp_path / "site"), flag, str(theme))
    assert status == 2 and "Traceback" not in err, err
    assert f"{name}: " in err and expected in err, err
    assert not (tmp_path / "site").exists()


def test_a_theme_overrides_the_calculator_script_file_by_file(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    theme = tmp_path / "theme"
    (theme / "calculator").mkdir(parents=True)
    own = (ROOT / "templates" / "calculator" / "calculator.js").read_text() + "// ours\n"
    (theme / "calculator" / "calculator.js").write_text(own)
    site = tmp_path / "site"
    assert cli("build", str(results), "-o", str(site), "--templates", str(theme))[0] == 0
    script = (site / "assets" / "calculator.js").read_text()
    assert script.endswith("// ours\n") and "jStat" in script  # jStat still the package's
    (theme / "calculator" / "calculator.js").write_bytes(b"\xff")
    status, err = cli("build", str(results), "-o", str(site), "--templates", str(theme))
    assert status == 2 and "calculator.js: not UTF-8 text (byte 1)" in err, err


def test_content_pages_need_no_front_matter(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl")
    content = tmp_path / "content"
    content.mkdir()
    (content / "plain.md").write_text("# Plain\n\nNo front matter.\n")
    (content / "titled.md").write_text("---\ntitle: Titled\n---\n# Titled\n")
    site = tmp_path / "site"
    status, err = cli("build", str(results), "-o", str(site), "--content", str(content))
    assert status == 0, err
    for page, title in (("plain.html", "Page"), ("titled.html", "Titled")):
        html = (site / page).read_text()
        assert f"<title>{title} · " in html and 'name="description"' not in html


def test_bidi_override_in_names_is_isolated(tmp_path: Path) -> None:
    name = "evil\u202eexe.txt"
    results = write_results(tmp_path / "r.jsonl", model=name, suite="s")
    site = tmp_path / "site"
    assert cli("build", str(results), "-o", str(site))[0] == 0
    # The name starts each text it is in (the set is "NAME · s"), so each occurrence
    # must open an isolate; a chart's SVG keeps an override inside its own label.
    isolated = "\u2068" + name
    pages = [p.read_text() for p in site.rglob("*.html")]
    shown = [re.sub(r"<svg.*?</svg>", "", page, flags=re.DOTALL) for page in pages]
    assert sum(text.count(isolated) for text in shown) > 5
    for text in shown:
        assert text.count(name) == text.count(isolated)
        assert text.count("\u2068") == text.count("\u2069")
    snippet = next((site / "badges").glob("*.md")).read_text()
    assert isolated in snippet and "\\u202E" in snippet  # escaped in the YAML entry
    out = io.StringIO()
    main(["summary", str(results)], out=out)
    assert "\u202e" not in out.getvalue() and "evil\\u202eexe.txt" in out.getvalue()
