"""The package's own templates and content pages, compiled to Python ahead of time.

Jinja turns a template into Python source and compiles that on first use. For the
methodology and FAQ (100 kB of Markdown with hundreds of computed numbers) and the
theme's pages this took about 0.2 s of CPU in every build, one of the largest
steps of a small one. `python -m reportgen.website.precompile` (which `make`
runs, and which the wheel is built after) writes that Python source once, into
the `compiled` folder beside this module. A build then takes a template's code
from there, and Python's own bytecode cache (`__pycache__`, checked against the
file's hash) spares it the compiling too.

Each module is named by a hash of everything that shaped its code: the
template's name and exact text, Jinja's version, the environment's settings,
and reportgen's own source (Jinja runs the environment's `finalize` on constant
output while compiling, so its code is in the result).
A build asks for the module of that hash, so it finds code made from exactly
what it would compile, or nothing; anything else (a user's template, an edited
one, another Jinja, a missing or damaged folder) is compiled as usual, and using
the folder never changes a page. Nor can a stale file be taken for a fresh one:
a changed template has another hash.

The folder is part of the installed package, written from the package's own
files by the package's own code, as trusted as the modules beside it; a build
never writes it, and nothing in a project or its cache can reach it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, MutableMapping
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import CodeType
from typing import Any

import jinja2

from .. import code as code_identity

#: Where the compiled templates are; a test may point it elsewhere.
FOLDER = Path(__file__).resolve().parent / "compiled"


def settings(env: jinja2.Environment) -> str:
    """Everything about an environment that changes the code Jinja makes of a template."""
    finalize = env.finalize
    parts = (
        type(env).__module__,
        type(env).__qualname__,
        jinja2.__version__,
        env.autoescape if isinstance(env.autoescape, bool) else repr(env.autoescape),
        env.optimized,
        env.is_async,
        env.trim_blocks,
        env.lstrip_blocks,
        env.keep_trailing_newline,
        env.newline_sequence,
        env.block_start_string,
        env.block_end_string,
        env.variable_start_string,
        env.variable_end_string,
        env.comment_start_string,
        env.comment_end_string,
        env.line_statement_prefix,
        env.line_comment_prefix,
        None if finalize is None else getattr(finalize, "jinja_pass_arg", "plain"),
        sorted(env.extensions),
        sorted(env.filters),
        sorted(env.tests),
    )
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()


def module_file(env: jinja2.Environment, name: str | None, source: str) -> str:
    """The file name of the module compiled from template `name` (none for a content
    page's body) with text `source` in `env`."""
    digest = hashlib.sha256()
    for part in (code_identity.sources(), settings(env), name or "", source):
        digest.update(part.encode("utf-8") + b"\0")
    return f"t_{digest.hexdigest()[:40]}.py"


def code(env: jinja2.Environment, name: str | None, source: str) -> CodeType | None:
    """The compiled code of template `name` with text `source` in `env`, if the folder
    has it; None otherwise (the caller compiles)."""
    path = FOLDER / module_file(env, name, source)
    try:
        # Python's loader for a module file: the bytecode from __pycache__ when it is
        # current (the generator writes it checked against the source's hash), else
        # the source compiled (and cached, where the folder is writable).
        loader = SourceFileLoader(f"reportgen_compiled_{path.stem}", str(path))
        found = loader.get_code(loader.name)
    except (OSError, SyntaxError, ValueError, EOFError, ImportError):
        return None
    return found


def template(
    env: jinja2.Environment,
    name: str | None,
    source: str,
    filename: str | None,
    globals: MutableMapping[str, Any],
    uptodate: Callable[[], bool] | None = None,
) -> jinja2.Template | None:
    """A template made from the precompiled code, as Jinja would make it from source;
    None without such code."""
    found = code(env, name, source)
    if found is None:
        return None
    made = env.template_class.from_code(env, found, globals, uptodate)
    # Errors name the template's own file and line (Jinja reads this name when it
    # rewrites a traceback), not the compiled module's; "<template>" as from_string.
    made.filename = filename or "<template>"
    return made
