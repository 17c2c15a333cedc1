"""The project config, `reportgen.yaml`: one typed, validated object.

Every option is declared once, with its default. Paths in the file are relative
to the file's own folder. Command-line flags override a value only when given.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .counts import whole_number
from .errors import Problems, UserError
from .readers import FORMATS, Source
from .readers.documents import BadDocument, not_regular, yaml_document
from .readers.fields import describe, did_you_mean, key_text, unprintable
from .readers.source import ERROR_CHOICES
from .readers.table import FIELDS as COLUMN_FIELDS
from .stats.plain import MAX_K, confidence_extreme

CONFIG_NAME = "reportgen.yaml"


@dataclass
class Config:
    title: str = "Reliability report"
    description: str = ""
    confidence: float = 0.95
    k: int = 3
    output: Path = Path("site")
    #: The URL path the site is served under (for example /repo/ on GitHub Pages).
    base_path: str = "/"
    #: Absolute URL of the published site, for canonical links and sitemap.xml.
    base_url: str | None = None
    templates: Path | None = None
    content: Path | None = None
    #: history.jsonl of earlier builds to extend (a missing file starts a new history).
    history: Path | None = None
    #: This build's label in the history (default: the commit, else a counter).
    label: str | None = None
    result_sets: list[Source] = field(default_factory=list)
    #: Which tasks get a page: ("all", 0), ("flaky", 0), ("worst", N) or ("none", 0).
    task_pages: tuple[str, int] = ("all", 0)
    #: Where the config came from (None when built from files on the command line).
    path: Path | None = None
    #: The settings the config file gave and no flag replaced: messages name them there.
    from_file: set[str] = field(default_factory=set)

    def named(self, key: str) -> str:
        """How a message names a setting: "reportgen.yaml: output" when the config file
        gave it, else its flag ("--output")."""
        if key in self.from_file and self.path is not None:
            return f"{self.path}: {key}"
        return "--" + key.replace("_", "-")


_TOP_KEYS = {f.name for f in dataclasses.fields(Config)} - {"path"}
_SET_KEYS = {
    "path",
    "format",
    "suite",
    "model",
    "condition",
    "name",
    "scorer",
    "errors",
    "columns",
    "threshold",
}
_TEXT_KEYS = _SET_KEYS - {"columns", "threshold"}


def _text(where: str, value: Any, problems: Problems) -> str | None:
    if value is None:
        return None
    if isinstance(value, float):
        # YAML read it as a number: model: 1.10 would become "1.1", label: 2024.10 "2024.1".
        problems.add(
            f"{where}: {describe(value)} was read as a number; put the text in quotes to keep "
            'it as written (model: "1.10")'
        )
        return None
    if isinstance(value, dt.date):
        problems.add(f'{where}: {value} was read as a date; put it in quotes: "{value}"')
        return None
    if not isinstance(value, str | int) or isinstance(value, bool):
        problems.add(f"{where}: expected text, got {describe(value)}")
        return None
    problem = unprintable(str(value))
    if problem is not None:
        problems.add(f"{where}: {str(value)!r} {problem}")
        return None
    return str(value)


#: Settings that name something on every page or in the history: never blank.
NAMING_KEYS = ("title", "label")


#: A number with an exponent but no point (1e-3), which PyYAML reads as text.
_EXPONENT = re.compile(r"[-+]?[0-9]+[eE][-+]?[0-9]+")


def _yaml_number(value: Any) -> Any:
    """`value`, or the float that YAML 1.1 left as text for want of a decimal point."""
    if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
        return float(value)
    return value


def check_confidence(where: str, value: Any, problems: Problems) -> float | None:
    value = _yaml_number(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        problems.add(f"{where}: expected a number strictly between 0 and 1, got {describe(value)}")
        return None
    extreme = confidence_extreme(value)
    if extreme is not None:
        problems.add(f"{where}: {extreme}")
        return None
    return float(value)


def check_k(where: str, value: Any, problems: Problems) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        problems.add(f"{where}: expected a whole number of at least 1, got {describe(value)}")
        return None
    if value > MAX_K:
        problems.add(f"{where}: must be at most {MAX_K:,}, got {value}")
        return None
    return value


def load_config(path: Path) -> Config:
    """Read and validate reportgen.yaml; every problem names its key."""
    name = str(path)
    if not path.exists():
        raise UserError(f"{name}: no such file (give result files, or create {CONFIG_NAME})")
    if path.is_dir():
        raise UserError(f"{name}: is a directory; expected {CONFIG_NAME}")
    special = not_regular(path)
    if special is not None:
        raise UserError(f"{name}: {special}")
    try:
        doc = yaml_document(path)
    except BadDocument as error:
        raise UserError(str(error)) from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise UserError(f"{name}: expected a mapping of settings at the top level")
    problems = Problems()
    config = Config(path=path)
    base = path.parent
    # The default output folder, like every path in the file, is beside the config,
    # not in whatever folder the command happens to be run from.
    config.output = Path(os.path.normpath(base / config.output))
    for key, value in doc.items():
        where = f"{name}: {key}"
        if key not in _TOP_KEYS:
            problems.add(f"{name}: unknown key {key_text(key)}{did_you_mean(str(key), _TOP_KEYS)}")
        elif key in ("title", "description", "base_path", "base_url", "label"):
            text = _text(where, value, problems)
            if text is not None and key in NAMING_KEYS and not text.strip():
                problems.add(f"{where}: empty; leave the key out for the default")
            elif text is not None:
                setattr(config, key, text)
        elif key == "confidence":
            confidence = check_confidence(where, value, problems)
            if confidence is not None:
                config.confidence = confidence
        elif key == "k":
            k = check_k(where, value, problems)
            if k is not None:
                config.k = k
        elif key in ("output", "templates", "content", "history"):
            text = _text(where, value, problems)
            if text is not None:
                setattr(config, key, Path(os.path.normpath(base / text)))
        elif key == "result_sets":
            config.result_sets = _result_sets(name, value, base, problems)
        elif key == "task_pages":
            pages = check_task_pages(where, value, problems)
            if pages is not None:
                config.task_pages = pages
    if "result_sets" not in doc:
        problems.add(f"{name}: result_sets: missing; list the result files to report")
    problems.raise_if_any()
    config.from_file = {str(key) for key in doc if key in _TOP_KEYS}
    return config


def _result_sets(name: str, value: Any, base: Path, problems: Problems) -> list[Source]:
    if not isinstance(value, list) or not value:
        problems.add(f"{name}: result_sets: expected a non-empty list of {{path: ...}} entries")
        return []
    sources = []
    for i, item in enumerate(value):
        where = f"{name}: result_sets[{i}]"
        if isinstance(item, str):
            item = {"path": item}
        if not isinstance(item, dict):
            problems.add(f"{where}: expected a mapping with at least path")
            continue
        for key in item:
            if key not in _SET_KEYS:
                close = did_you_mean(str(key), _SET_KEYS)
                problems.add(f"{where}: unknown key {key_text(key)}{close}")
        fields = {key: _text(f"{where}.{key}", item.get(key), problems) for key in _TEXT_KEYS}
        blank = [key for key, text in fields.items() if text is not None and not text.strip()]
        if blank:
            # model: "  " named a set "   · support-desk"; path: "" read the config's folder.
            for key in sorted(blank):
                problems.add(f"{where}.{key}: empty; leave the key out for the default")
            continue
        errors = fields["errors"]
        if errors is not None and errors not in ERROR_CHOICES:
            problems.add(
                f"{where}.errors: expected {' or '.join(ERROR_CHOICES)}, got {describe(errors)}"
            )
            continue
        if fields["path"] is None:
            problems.add(f"{where}.path: missing")
            continue
        fmt = fields["format"]
        if fmt is not None and fmt not in FORMATS:
            problems.add(
                f"{where}.format: unknown format {fmt!r}{did_you_mean(fmt, FORMATS)}; "
                f"known formats: {', '.join(FORMATS)}"
            )
            continue
        sources.append(
            Source(
                path=Path(os.path.normpath(base / fields["path"])),
                format=fmt,
                suite=fields["suite"],
                model=fields["model"],
                condition=fields["condition"],
                name=fields["name"],
                scorer=fields["scorer"],
                errors=errors,
                columns=_columns(f"{where}.columns", item.get("columns"), problems),
                threshold=check_threshold(f"{where}.threshold", item.get("threshold"), problems),
            )
        )
    return sources


def _columns(where: str, value: Any, problems: Problems) -> tuple[tuple[str, str], ...]:
    """`columns: {task: instance_id, passed: resolved}`: which table column holds what."""
    if value is None:
        return ()
    if not isinstance(value, dict) or not value:
        problems.add(f"{where}: expected a mapping such as {{task: instance_id, passed: resolved}}")
        return ()
    pairs: list[tuple[str, str]] = []
    for what, column in value.items():
        text = _text(f"{where}.{what}", column, problems)
        if str(what) not in COLUMN_FIELDS:
            problems.add(
                f"{where}: unknown field {what!r}{did_you_mean(str(what), COLUMN_FIELDS)}; "
                f"known: {', '.join(COLUMN_FIELDS)}"
            )
        elif text is None or not text.strip():
            problems.add(f"{where}.{what}: expected a column name")
        elif (taken := next((f for f, c in pairs if c == text), None)) is not None:
            problems.add(
                f"{where}.{what}: column {text!r} is already given for {taken}; each field "
                "needs a column of its own"
            )
        else:
            pairs.append((str(what), text))
    return tuple(pairs)


TASK_PAGE_CHOICES = ("all", "flaky", "none")
_TASK_PAGES_HELP = "all, flaky, none or worst: N (N a whole number of at least 1)"


def check_task_pages(where: str, value: Any, problems: Problems) -> tuple[str, int] | None:
    """`task_pages: all | flaky | none | {worst: N}` (on the command line, worst:N)."""
    if isinstance(value, str):
        text = value.strip()
        mode, sep, number = text.partition(":")
        if not sep:
            mode, sep, number = text.partition("=")
        if sep and mode.strip() == "worst":
            value = {"worst": number.strip()}
        elif text in TASK_PAGE_CHOICES:
            return text, 0
    if isinstance(value, dict) and list(value) == ["worst"]:
        n = value["worst"]
        if isinstance(n, str):
            parsed = whole_number(n)
            n = n if parsed is None else parsed
        if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
            return "worst", n
        problems.add(f"{where}: worst: expected a whole number of at least 1, got {describe(n)}")
        return None
    problems.add(f"{where}: expected {_TASK_PAGES_HELP}, got {describe(value)}")
    return None


def check_threshold(where: str, value: Any, problems: Problems) -> float | None:
    """A finite number: scores at or above it count as passes."""
    value = _yaml_number(value)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problems.add(f"{where}: expected a number, got {describe(value)}")
        return None
    return float(value)


# An absolute http(s) URL with a plain host name (no user part, which can make a
# link look like it goes to one host while it goes to another) and a path of URL
# characters only: the value is written into pages, Markdown snippets and the
# sitemap, so quotes, spaces, brackets and backslashes are refused rather than escaped.
_SITE_URL = re.compile(r"(?i:https?)://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~!$&*+,;=:@%/-]*)?")
# A path on the same host: "/" then URL characters, never "//" (which a browser
# reads as another host) and never a scheme such as javascript:.
_SITE_PATH = re.compile(r"/([A-Za-z0-9._~!$&*+,;=:@%-][A-Za-z0-9._~!$&*+,;=:@%/-]*)?")


def site_urls(config: Config) -> tuple[str, str | None]:
    """(base path, base URL) of the site, checked; the path ends with "/" so links join."""
    problems = Problems()
    base_url = config.base_url
    if base_url is not None and not _SITE_URL.fullmatch(base_url):
        problems.add(
            f"{config.named('base_url')}: {base_url!r} is not an absolute http:// or https:// URL"
        )
    base_path = config.base_path
    if not _SITE_PATH.fullmatch(base_path):
        problems.add(
            f"{config.named('base_path')}: {base_path!r} is not a URL path such as / or /evals/"
        )
    problems.raise_if_any()
    return base_path if base_path.endswith("/") else base_path + "/", base_url
