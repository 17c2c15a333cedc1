"""Rebuilds redo only what changed, and the site they leave is the clean build's.

Each step of a seeded random sequence edits one thing (a template, a content
page, one run of one result set, the title, k), rebuilds the site in place with
the cache, and compares every file, byte for byte, with a clean build of the
same project into a new folder.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from reportgen import __version__, code
from reportgen.build import build
from reportgen.config import load_config
from reportgen.errors import UserError

from .conftest import ROOT, examples, first_fast

TEMPLATES = ("task.html", "set.html", "index.html", "base.html", "content.html", "compare.html")


def _write_runs(path: Path, model: str, rng: random.Random) -> None:
    lines = []
    for task in range(6):
        for run in range(1, 6):
            passed = rng.random() < (0.3 + 0.12 * task)
            record = {
                "suite": "desk",
                "model": model,
                "task": f"task-{task}",
                "run": run,
                "passed": passed,
            }
            lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "results").mkdir(parents=True)
    rng = random.Random(7)
    for model in ("alpha", "beta"):
        _write_runs(folder / "results" / f"{model}.jsonl", model, rng)
    shutil.copytree(ROOT / "templates", folder / "templates")
    shutil.copytree(ROOT / "content", folder / "content")
    (folder / "reportgen.yaml").write_text(
        "title: Incremental\nk: 2\noutput: site\ntemplates: templates\ncontent: content\n"
        "history: history.jsonl\nlabel: now\n"
        "result_sets:\n  - path: results/alpha.jsonl\n  - path: results/beta.jsonl\n"
    )
    return folder


def _files(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


def _edit(project: Path, step: int, rng: random.Random, kind: str | None = None) -> str:
    """One random edit (of `kind`, if given); returns what it was, for the failure message."""
    kind = kind or rng.choice(["template", "template", "content", "run", "title", "k", "nothing"])
    if kind == "across":
        # Templates that read across result sets: the overview every set's trend and
        # tasks, a comparison both of its sets, a set page all it is given. An edit of
        # one set's runs must still leave each page as a clean build makes it.
        edits = {
            "index.html": "{% for id, points in history.trends.items() %}{{ id }} "
            "{{ points | length }} {{ points[-1].label }}{% endfor %}"
            "{% for s in report.sets %}{{ s.tasks | map(attribute='successes') | list }}"
            "{% endfor %}",
            "compare.html": "{{ c.a.tasks | map(attribute='successes') | list }} "
            "{{ c.b.tasks | map(attribute='successes') | list }}",
            "set.html": "{{ trend | length }} {{ trend[-1].label }} "
            "{{ s.tasks | map(attribute='successes') | list }}"
            "{% if history is defined %}{{ history.trends }}{% endif %}",
        }
        name = rng.choice(sorted(edits))
        path = project / "templates" / name
        text = path.read_text().replace(
            "{% block main %}", f"{{% block main %}}<p>edit {step} {edits[name]}</p>", 1
        )
        path.write_text(text)
        return f"across {name}"
    if kind == "template":
        name = rng.choice(TEMPLATES)
        path = project / "templates" / name
        text = path.read_text()
        if "{% block main %}" in text:
            text = text.replace("{% block main %}", f"{{% block main %}}<p>edit {step}</p>", 1)
        else:
            text = text.replace("</body>", f"<p>edit {step}</p></body>", 1)
        path.write_text(text)
        return f"template {name}"
    if kind == "content":
        path = project / "content" / "faq.md"
        path.write_text(path.read_text() + f"\nA sentence added in step {step}.\n")
        return "content faq.md"
    if kind == "run":
        path = project / "results" / rng.choice(["alpha.jsonl", "beta.jsonl"])
        lines = path.read_text().splitlines()
        i = rng.randrange(len(lines))
        record = json.loads(lines[i])
        record["passed"] = not record["passed"]
        lines[i] = json.dumps(record)
        path.write_text("\n".join(lines) + "\n")
        return f"one run of {path.name}"
    config = project / "reportgen.yaml"
    text = config.read_text()
    if kind == "title":
        config.write_text(re.sub(r"title: .*", f"title: Incremental {step}", text))
    elif kind == "k":
        config.write_text(re.sub(r"k: \d+", f"k: {rng.choice([1, 2, 3])}", text))
    return kind


def _kept_pages(reused: str) -> int:
    found = re.search(r"(\d+) unchanged pages", reused)
    return int(found.group(1)) if found else 0


def test_random_edits_leave_the_clean_build(project: Path, tmp_path: Path) -> None:
    rng = random.Random(2026)
    config_path = project / "reportgen.yaml"
    build(load_config(config_path))
    for step in range(examples(12)):  # every third step reads across sets, then a run
        kind = "across" if step % 3 == 1 else "run" if step % 3 == 2 else None
        what = _edit(project, step, rng, kind)
        config = load_config(config_path)
        build(config)
        clean = load_config(config_path)
        clean.output = tmp_path / f"clean-{step}"
        build(clean, use_cache=False)
        incremental, expected = _files(config.output), _files(clean.output)
        assert incremental.keys() == expected.keys(), f"step {step}: {what}"
        differ = [name for name in expected if incremental[name] != expected[name]]
        assert differ == [], f"step {step} ({what}): files differ from a clean build"


def test_an_edit_redoes_only_the_pages_it_touches(project: Path) -> None:
    config_path = project / "reportgen.yaml"
    first = build(load_config(config_path))
    site = project / "site"
    task_pages = len(list(site.glob("sets/*/tasks/*.html")))
    data_files = ["report.json", *(p.relative_to(site) for p in site.glob("sets/*/tasks.csv"))]
    first_inodes = {name: (site / name).stat().st_ino for name in data_files}

    faq = project / "content" / "faq.md"
    faq.write_text(faq.read_text() + "\nOne more answer.\n")
    after_content = build(load_config(config_path))
    assert _kept_pages(after_content.reused) == first.pages - 1  # all but faq.html
    assert "One more answer." in (site / "faq.html").read_text()

    task = project / "templates" / "task.html"
    task.write_text(task.read_text().replace("{% block main %}", "{% block main %}<p>new</p>", 1))
    after_task = build(load_config(config_path))
    assert _kept_pages(after_task.reused) == first.pages - task_pages
    assert all("<p>new</p>" in p.read_text() for p in site.glob("sets/*/tasks/*.html"))
    # Files made without a template are kept (linked, not written again) while their
    # data is unchanged.
    assert {name: (site / name).stat().st_ino for name in data_files} == first_inodes

    # One run of one result set: that set's pages, the overview and the comparison.
    runs = project / "results" / "beta.jsonl"
    lines = runs.read_text().splitlines()
    record = json.loads(lines[0])
    record["passed"] = not record["passed"]
    runs.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    after_run = build(load_config(config_path))
    beta_pages = len(list(site.glob("sets/*beta*/**/*.html")))
    comparisons = len(list(site.glob("compare/*.html")))
    assert beta_pages > 0 and comparisons == 1
    redone = first.pages - _kept_pages(after_run.reused)
    assert redone == beta_pages + 1 + comparisons  # and the overview
    written = {name for name in data_files if (site / name).stat().st_ino != first_inodes[name]}
    beta_table = next(name for name in data_files if "beta" in str(name))
    assert written == {"report.json", beta_table}


def test_a_template_that_cannot_be_followed_is_always_rendered(project: Path) -> None:
    # An include that is never reached and does not exist renders fine but cannot be
    # hashed: the pages using it must be rendered every time, not kept.
    config_path = project / "reportgen.yaml"
    task = project / "templates" / "task.html"
    base = task.read_text().replace(
        "{% block main %}", '{% block main %}{% if false %}{% include "gone.html" %}{% endif %}', 1
    )
    task.write_text(base.replace("{% block main %}", "{% block main %}<p>first</p>", 1))
    build(load_config(config_path))
    task.write_text(base.replace("{% block main %}", "{% block main %}<p>second</p>", 1))
    build(load_config(config_path))
    pages = list((project / "site").glob("sets/*/tasks/*.html"))
    assert pages and all("<p>second</p>" in p.read_text() for p in pages)


def test_changed_reportgen_code_keeps_nothing(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An editable install keeps its version number across a `git pull`: pages the
    # new code would write differently must not be kept because the version agrees.
    config_path = project / "reportgen.yaml"
    first = build(load_config(config_path))
    again = build(load_config(config_path))
    assert again.reused.startswith("nothing changed")
    monkeypatch.setattr(code, "identity", lambda: "0.1.0+other-source")
    after = build(load_config(config_path))
    assert "nothing changed" not in after.reused
    assert _kept_pages(after.reused) == 0 and "parsed inputs" not in after.reused
    assert after.pages == first.pages


def test_code_identity_follows_the_source(tmp_path: Path) -> None:
    identity = code.identity()
    assert identity.startswith(__version__ + "+") and identity == code.identity()
    # A copy of the package with one changed line has another identity.
    copy = tmp_path / "reportgen"
    shutil.copytree(ROOT / "reportgen", copy, ignore=shutil.ignore_patterns("__pycache__"))
    views = copy / "views.py"
    views.write_text(views.read_text() + "\n# changed\n")
    probe = "import reportgen.code as c; print(c.identity())"

    def identity_of(root: Path) -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, cwd=root, check=True
        )
        return done.stdout.strip()

    assert identity_of(ROOT) == identity
    changed = identity_of(tmp_path)
    assert changed != identity
    # An editor's lock file (a dangling link named .#views.py) is no source.
    (copy / ".#views.py").symlink_to("user@host.123:456")
    assert identity_of(tmp_path) == changed
    # The chart engine's font configuration draws the charts every overview holds.
    fonts = copy / "website" / "fontconfig" / "fonts.conf"
    fonts.write_text(fonts.read_text().replace("</fontconfig>", "<!-- x --></fontconfig>"))
    assert identity_of(tmp_path) not in (changed, identity)


def test_a_rebuild_under_another_umask_gives_the_clean_builds_modes(
    project: Path, tmp_path: Path
) -> None:
    def modes(site: Path) -> dict[str, int]:
        return {p.relative_to(site).as_posix(): p.stat().st_mode & 0o777 for p in site.rglob("*")}

    config_path = project / "reportgen.yaml"
    previous = os.umask(0o077)
    try:
        build(load_config(config_path))  # a private site
        os.umask(0o022)
        faq = project / "content" / "faq.md"
        faq.write_text(faq.read_text() + "\nOne more answer.\n")
        rebuilt = load_config(config_path)
        build(rebuilt)
        clean = load_config(config_path)
        clean.output = tmp_path / "clean"
        build(clean, use_cache=False)
    finally:
        os.umask(previous)
    assert modes(rebuilt.output) == modes(clean.output)
    assert set(modes(clean.output).values()) == {0o644, 0o755}
    assert clean.output.stat().st_mode & 0o777 == 0o755


def test_code_identity_follows_the_libraries_behind_the_numbers_and_charts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # After an upgrade of scipy (numbers in their last digits) or vl-convert (the
    # inline SVG of the overview), a kept page would show what the old one made.
    real = metadata.version
    before = code.identity()
    try:
        for library in ("numpy", "scipy", "altair", "vl-convert-python", "jinja2"):
            monkeypatch.setattr(
                metadata, "version", lambda name, lib=library: "9.9" if name == lib else real(name)
            )
            code.identity.cache_clear()
            assert code.identity() != before, library
    finally:
        monkeypatch.undo()
        code.identity.cache_clear()
    assert code.identity() == before


def _edit_overview(project: Path, text: str) -> None:
    path = project / "templates" / "index.html"
    path.write_text(path.read_text().replace("{% block main %}", "{% block main %}" + text, 1))


def _clean_files(project: Path, folder: Path) -> dict[str, bytes]:
    clean = load_config(project / "reportgen.yaml")
    clean.output = folder
    build(clean, use_cache=False)
    return _files(folder)


def test_an_overview_edit_renders_the_overview_alone(project: Path, tmp_path: Path) -> None:
    config_path = project / "reportgen.yaml"
    first = build(load_config(config_path))
    _edit_overview(project, "<p>{{ report.sets | length }} sets, {{ site.title }}</p>")
    result = build(load_config(config_path))
    assert _kept_pages(result.reused) == first.pages - 1
    assert (result.files, result.pages, result.result_sets) == (
        first.files,
        first.pages,
        first.result_sets,
    )
    assert result.warnings == first.warnings
    assert "<p>2 sets, Incremental</p>" in (project / "site" / "index.html").read_text()
    assert _files(project / "site") == _clean_files(project, tmp_path / "clean")
    # What it wrote is what the next build finds: nothing to do.
    assert build(load_config(config_path)).reused.startswith("nothing changed")


def test_a_page_changed_by_hand_is_rendered_again(project: Path, tmp_path: Path) -> None:
    config_path = project / "reportgen.yaml"
    build(load_config(config_path))
    page = next((project / "site").glob("sets/*/tasks/*.html"))
    page.write_text(page.read_text().replace("<h1", "<h1 data-changed", 1))
    assert "nothing changed" not in build(load_config(config_path)).reused
    assert _files(project / "site") == _clean_files(project, tmp_path / "clean-1")
    _edit_overview(project, "<p>edited</p>")
    page.write_text(page.read_text().replace("<h1", "<h1 data-changed", 1))
    build(load_config(config_path))
    assert _files(project / "site") == _clean_files(project, tmp_path / "clean-2")


@pytest.mark.parametrize(
    "damage", first_fast([b"", b"{not json", b"[]", b'{"index.html": [1]}', b"null"])
)
def test_damaged_cache_entries_only_cost_time(project: Path, tmp_path: Path, damage: bytes) -> None:
    config_path = project / "reportgen.yaml"
    build(load_config(config_path))
    entries = sorted((project / ".reportgen-cache" / "site").glob("*.json"))
    kinds = {entry.name.split("-")[0] for entry in entries}
    assert kinds == {"charts", "digests", "inputs", "pages", "results", "site"}
    for entry in entries:
        entry.write_bytes(damage)
    _edit_overview(project, "<p>edited</p>")
    result = build(load_config(config_path))
    assert result.reused == ""
    assert _files(project / "site") == _clean_files(project, tmp_path / "clean")


def test_a_broken_overview_template_is_reported_with_its_place(project: Path) -> None:
    config_path = project / "reportgen.yaml"
    build(load_config(config_path))
    before = _files(project / "site")
    _edit_overview(project, "<p>{{ report.sets | length }</p>")
    with pytest.raises(UserError, match=r"index\.html:\d+: template error"):
        build(load_config(config_path))
    assert _files(project / "site") == before


@pytest.mark.parametrize("template", ["index.html", "set.html"])
def test_an_edit_undone_after_one_of_the_same_size_is_built(
    project: Path, tmp_path: Path, template: str
) -> None:
    # A, then B, then A again: the third build's whole-site key is the first's, and
    # the site on disk (B's) has the same files and sizes as A's. It must still be
    # rebuilt, not kept as "nothing changed".
    config_path = project / "reportgen.yaml"
    path = project / "templates" / template
    original = path.read_text()
    for text in ("AAAA", "BBBB", "AAAA"):
        path.write_text(original.replace("{% block main %}", "{% block main %}" + text, 1))
        result = build(load_config(config_path))
    assert not result.reused.startswith("nothing changed")
    assert _files(project / "site") == _clean_files(project, tmp_path / "clean")


def test_a_set_template_reading_every_sets_trend_is_never_stale(
    project: Path, tmp_path: Path
) -> None:
    # A set page's context holds its own set and trend, which its key covers. Before,
    # it held the whole history: a set.html that listed every set's trend kept
    # alpha's old numbers on beta's page after an edit of alpha's runs alone.
    path = project / "templates" / "set.html"
    every_trend = (
        "{% if history is defined %}{% for id, points in history.trends.items() %}"
        "<p class=every>{{ id }} {{ points[-1].plugin.estimate }}</p>{% endfor %}{% endif %}"
        "{% if trend is defined %}<p class=own>{{ trend[-1].plugin.estimate }} "
        "{{ trend[-1].tasks }}</p>{% endif %}"
    )
    path.write_text(path.read_text().replace("{% block main %}", "{% block main %}" + every_trend))
    config_path = project / "reportgen.yaml"
    build(load_config(config_path))
    runs = project / "results" / "alpha.jsonl"
    runs.write_text(runs.read_text().replace('"passed": false', '"passed": true'))
    result = build(load_config(config_path))
    assert _kept_pages(result.reused) > 0  # beta's task pages, the content pages
    assert _files(project / "site") == _clean_files(project, tmp_path / "clean")
    beta = next((project / "site" / "sets").glob("*beta*/index.html")).read_text()
    assert "<p class=own>" in beta and "<p class=every>" not in beta


def test_a_template_added_in_front_of_the_packages_is_followed(
    project: Path, tmp_path: Path
) -> None:
    # The user's folder holds only index.html; the page also extends the package's
    # base.html. A base.html added to the user's folder shadows it: the overview (and
    # every page) must follow, as a clean build would.
    theme = project / "templates"
    shutil.rmtree(theme)
    theme.mkdir()
    (theme / "index.html").write_text((ROOT / "templates" / "index.html").read_text())
    config_path = project / "reportgen.yaml"
    build(load_config(config_path))
    base = (ROOT / "templates" / "base.html").read_text()
    (theme / "base.html").write_text(base.replace("<body", "<body data-shadowed", 1))
    _edit_overview(project, "<p>edited</p>")
    build(load_config(config_path))
    assert "data-shadowed" in (project / "site" / "faq.html").read_text()
    assert _files(project / "site") == _clean_files(project, tmp_path / "clean-1")
    # An include that is not an .html file is followed as well.
    (theme / "note.txt").write_text("first note")
    _edit_overview(project, '{% include "note.txt" %}')
    build(load_config(config_path))
    (theme / "note.txt").write_text("second note")
    build(load_config(config_path))
    assert "second note" in (project / "site" / "index.html").read_text()
    assert _files(project / "site") == _clean_files(project, tmp_path / "clean-2")
