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
files by the package's own code, as trusted as the modules beside it: a build
never writes a module there (Python may cache a module's bytecode beside it, as
it does for every module of the package, and trusts that cache as it does for
them), and nothing in a project, its cache or a user's templates can reach it.
A module missing, unreadable or failing to load means compiling as usual.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, MutableMapping
from importlib import metadata
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import CodeType
from typing import Any

import jinja2

from .. import code as code_identity

#: Where the compiled templates are; a test may point it elsewhere.
FOLDER = Path(__file__).resolve().parent / "compiled"


@functools.cache
def _version(library: str) -> str:
    return metadata.version(library)


def _function(value: Any) -> tuple[str, str, str]:
    """A filter's, test's or hook's name and how Jinja calls it (the generated call
    passes the context or the environment first when the function asks for it)."""
    return (
        getattr(value, "__module__", "") or "",
        getattr(value, "__qualname__", type(value).__qualname__),
        str(getattr(value, "jinja_pass_arg", "")),
    )


def settings(env: jinja2.Environment) -> str:
    """The environment's side of what Jinja makes of a template: its class, its syntax and
    options, and which filters, tests and hooks it calls and how. What those functions
    do is reportgen's code, which module_file hashes as a whole."""
    parts = (
        type(env).__module__,
        type(env).__qualname__,
        jinja2.__version__,
        _version("markupsafe"),  # its escape runs on constant output while compiling
        env.sandboxed,
        # Set on the sandbox (the replay environment): its operators go through calls.
        sorted(getattr(env, "intercepted_binops", ())),
        sorted(getattr(env, "intercepted_unops", ())),
        _function(env.code_generator_class),
        _function(env.undefined),
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
        None if env.finalize is None else _function(env.finalize),
        sorted(env.extensions),
        sorted((name, _function(f)) for name, f in env.filters.items()),
        sorted((name, _function(f)) for name, f in env.tests.items()),
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
    try:
        path = FOLDER / module_file(env, name, source)
        # Python's loader for a module file: the bytecode from __pycache__ when it is
        # current (the generator writes it checked against the source's hash), else
        # the source compiled (and cached, where the folder is writable).
        loader = SourceFileLoader(f"reportgen_compiled_{path.stem}", str(path))
        found = loader.get_code(loader.name)
    except Exception:  # whatever is wrong with the folder, compiling is always right
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
    try:
        made = env.template_class.from_code(env, found, globals, uptodate)
    except Exception:  # a module that loads but is not a template (cut short, say)
        return None
    # Errors name the template's own file and line (Jinja reads this name when it
    # rewrites a traceback), not the compiled module's; "<template>" as from_string.
    made.filename = filename or "<template>"
    return made
