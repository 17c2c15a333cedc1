"""The field checks every reader shares, and how a message quotes a value.

Whether a value is a task id, a pass or fail, optional text or a link; whether a
name can be shown (`unprintable`); a harness's own rate and names; and a value, a
key or a close match as a message writes them.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .documents import TOO_DEEP

#: Characters of a harness's own error message kept in a run's note.
NOTE_CHARS = 160


def short_note(*parts: Any) -> str:
    """A run's note from the harness's words: the text parts joined with "; ", each on
    one line and cut to NOTE_CHARS, so that a traceback does not fill the page."""
    kept = []
    for part in parts:
        if isinstance(part, str) and part.strip():
            text = " ".join(part.split())
            kept.append(text if len(text) <= NOTE_CHARS else text[: NOTE_CHARS - 1] + "…")
    return "; ".join(kept)


def fraction(value: Any) -> float | None:
    """A harness's own rate (accuracy) when it is a number from 0 to 1, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value <= 1 else None


def agent_with_model(agent: Any, model: Any) -> str | None:
    """One name for what was evaluated: "terminus-2 (claude-sonnet-4-5)", so that two
    agents run with one model are never one result set; either alone when the other
    is missing (or they are the same), None when both are."""
    named = [v if isinstance(v, str) and v.strip() else None for v in (agent, model)]
    who, what = named
    if who and what and who != what:
        return f"{who} ({what})"
    return who or what


def task_id_of(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


#: Characters no id, name or label may hold: controls (NUL, newline, escape, ...), which
#: broke the chart converter and split messages; lone surrogates, which cannot be
#: written as UTF-8; and the noncharacters U+FFFE and U+FFFF.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def unprintable(text: str) -> str | None:
    """Why text cannot be shown as an id or a name (its first bad character), or None."""
    found = _UNPRINTABLE.search(text)
    if found is None:
        return None
    char = found.group()
    if "\ud800" <= char <= "\udfff":
        kind = "a lone surrogate, which is not valid Unicode"
    elif char in "\ufffe\uffff":
        kind = "a Unicode noncharacter"
    else:
        kind = "a control character"
    return f"holds U+{ord(char):04X}, {kind}; ids and names must be printable text"


def measure_value(name: str, value: Any) -> float | None:
    """A run's measure (counts.MEASURES) as a float, or None when it is not one: a
    finite number of at least 0, and for "confidence" at most 1."""
    if type(value) is bool or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer wider than any float
        return None
    if not 0.0 <= number < math.inf or (name == "confidence" and number > 1.0):
        return None
    return number


def harness_measures(
    where: str, fields: dict[str, tuple[str, Any]], problems: Any
) -> dict[str, float] | None:
    """A run's measures from the fields its harness wrote them in ({measure: (field,
    value)}; a missing or null value is left out). A value that is not one the measure
    takes is a problem named by its field; None then."""
    measures = {}
    for name, (field, raw) in fields.items():
        if raw is None:
            continue
        value = measure_value(name, raw)
        if value is None:
            problems.add(f"{where}.{field}: {describe(raw)} is not {measure_rule(name)}")
            return None
        measures[name] = value
    return measures


def summed(*values: Any) -> Any:
    """Counts a harness records in parts (input and output tokens) as one: None when
    every part is missing, the first part that is not a whole number as it is (for
    harness_measures to name), else their sum."""
    total, seen = 0, False
    for value in values:
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            return value
        total, seen = total + value, True
    return total if seen else None


def measure_rule(name: str) -> str:
    """What measure_value accepts, for a message."""
    return "a number from 0 to 1" if name == "confidence" else "a number of at least 0"


def parse_passed(value: Any) -> tuple[bool, bool | None]:
    """(ok, outcome): true/false, 1/0, or null for a run that could not be evaluated."""
    if value is None or isinstance(value, bool):
        return True, value
    if isinstance(value, int) and value in (0, 1):
        return True, value == 1
    return False, None


def is_optional_text(value: Any) -> bool:
    return value is None or (isinstance(value, str) and bool(value.strip()))


def is_http_url(value: Any) -> bool:
    return isinstance(value, str) and value.lower().startswith(("http://", "https://"))


def _text_keys(value: Any) -> Any:
    """A parsed document with every mapping key as text, as JSON needs them."""
    if isinstance(value, dict):
        return {str(key): _text_keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_text_keys(item) for item in value]
    return value


def describe(value: Any) -> str:
    """A value as a message quotes it: as JSON spells it (true, null, "text"), which
    is also YAML's spelling, shortened; a YAML date or other object as its text."""
    try:
        text = (
            json.dumps(value, default=str, ensure_ascii=False)
            if not isinstance(value, float) or math.isfinite(value)
            else str(value)
        )
    except RecursionError:
        text = f"a {type(value).__name__} {TOO_DEEP}"
    except (TypeError, ValueError):  # a YAML mapping with a date or a list for a key
        text = describe(_text_keys(value))
    return text if len(text) <= 40 else text[:37] + "..."


def key_text(key: Any) -> str:
    """A mapping's key as a message quotes it: 'titel', or a YAML date or number as its text."""
    return repr(key) if isinstance(key, str) else describe(key)


def did_you_mean(key: str, known: set[str] | tuple[str, ...]) -> str:
    import difflib

    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
