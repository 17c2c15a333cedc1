"""Write the package's templates and content pages compiled to Python (see precompiled.py).

`python -m reportgen.website.precompile [FOLDER]` (run by `make`) compiles every
template of the built-in theme and the body of every built-in content page with
the environments a build uses, and writes one module per template, named by
what it was made from, into FOLDER (by default the `compiled` folder the build
reads). The folder is
replaced whole, so a reader sees the old set or the new one, never a mix; the
same package files always give the same bytes.
"""

from __future__ import annotations

import compileall
import contextlib
import os
import py_compile
import shutil
import sys
import tempfile
from pathlib import Path

from . import precompiled
from .content import content_environment, split_front_matter
from .replay import ReplayEnvironment, guard
from .theme import Theme, environment


def compiled_sources() -> dict[str, str]:
    """Module file -> Python source, for each built-in template and content page."""
    theme = Theme.from_folders(None, None)
    modules: dict[str, str] = {}
    # The pages' environment, and the one that records and replays the overview
    # (replay.py), whose sandbox compiles the same templates to other code.
    for pages in (environment(theme), guard(environment(theme, ReplayEnvironment))):
        assert pages.loader is not None
        for name in pages.loader.list_templates():
            if not name.endswith((".html", ".xml", ".svg", ".txt")) or name.startswith("assets/"):
                continue
            source = pages.loader.get_source(pages, name)[0]
            # Named at its end, for a reader: a line at the top would shift the line
            # numbers Jinja maps back to the template's.
            code = pages.compile(source, name, raw=True) + f"\n# {name}\n"
            modules[precompiled.module_file(pages, name, source)] = code
    content = content_environment()
    for path in theme.content_pages().values():
        body = split_front_matter(path.read_text(encoding="utf-8"))[0]
        # As content.py compiles a body: from_string, without a name.
        code = content.compile(body, raw=True) + f"\n# {path.name}\n"
        modules[precompiled.module_file(content, None, body)] = code
    return modules


def write(folder: Path) -> int:
    """Write the modules and their bytecode into `folder`; the module count."""
    modules = compiled_sources()
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".compiled-", dir=folder.parent))
    try:
        staging.chmod(0o755)  # mkdtemp's 0o700 would keep it from other users
        for module, text in sorted(modules.items()):
            (staging / module).write_text(text, encoding="utf-8")
        # Bytecode checked against each source's hash, not its time: a module rewritten
        # within the same second is never run from the bytecode of the one before.
        if not compileall.compile_dir(
            staging,
            quiet=1,
            invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
        ):
            raise RuntimeError(f"{staging}: a compiled template is not valid Python")
        # The folder before is moved aside under a dotted name, which code.py's hash of
        # reportgen's own source leaves out, as it leaves out the staging folder.
        old = Path(tempfile.mkdtemp(prefix=".compiled-old-", dir=folder.parent))
        try:
            with contextlib.suppress(FileNotFoundError):
                os.replace(folder, old / "compiled")
            try:
                os.replace(staging, folder)
            except OSError:
                if not folder.is_dir():
                    with contextlib.suppress(OSError):
                        os.replace(old / "compiled", folder)  # the one before, back
                    raise
                # Another run put its folder in place meanwhile, made from the same
                # files or newer ones: it stays.
                shutil.rmtree(staging, ignore_errors=True)
        finally:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return len(modules)


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else precompiled.FOLDER
    count = write(folder)
    print(f"compiled {count} templates into {folder}")


if __name__ == "__main__":
    main()
