"""How numbers are written: for people (three decimals, intervals in brackets,
levels as percentages) and for JSON (full precision, an undefined value as null).

The terminal tables, the pages, the badges and the JSON views all write numbers
through these functions, so a value reads the same everywhere. Plain Python only:
the command line loads this module without numpy (tests/test_imports.py).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .stats.plain import decimals

if TYPE_CHECKING:  # only the type: the statistics (numpy) load where they are used
    from .stats.estimate import SuiteInterval

# ---------------------------------------------------------------- for people


def percent(confidence: float) -> str:
    """0.95 -> '95%', 0.995 -> '99.5%'."""
    return f"{confidence * 100:.10g}%"


def percent1(share: float | None) -> str:
    """0.8295 -> '83.0%': a measured share, one decimal."""
    if share is None or math.isnan(share):
        return "n/a"
    return f"{decimals(share * 100, 1)}%"


def p_value(value: float | None) -> str:
    """Three decimals, or two significant digits below 0.001; '–' when not tested."""
    if value is None:
        return "–"
    return decimals(value, 3) if value >= 0.001 else f"{value:.1e}"


def significant(value: float | None) -> str:
    """An amount to three significant digits, as costs and times vary in scale:
    0.000412, 0.0123, 12.3, 1,234; 'n/a' for an undefined value."""
    if value is None or math.isnan(value):
        return "n/a"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:#.3g}".rstrip(".") if value else "0"


def fixed(value: float | None) -> str:
    """Three decimals, or 'n/a' for an undefined value."""
    if value is None or math.isnan(value):
        return "n/a"
    return decimals(value, 3)


def signed(value: float | None) -> str:
    """A difference with its sign, three decimals: +0.029, -0.084; 0.000 when it
    rounds to nothing; 'n/a' for an undefined one."""
    if value is None or math.isnan(value):
        return "n/a"
    text = decimals(value, 3, plus=True)
    return "0.000" if text[1:] == "0.000" else text


def bracket(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "[n/a]"
    return f"[{fixed(low)}, {fixed(high)}]"


def signed_bound(value: float) -> str:
    """Three decimals, unless a value that is not 0 would print as 0.000: then the
    digits that show its sign (4.98e-05 -> 0.00005, -3.2e-09 -> -3e-09). For the
    bounds of a difference whose reading says whether its interval excludes 0."""
    if value == 0.0:
        return "0.000"  # -0.0 too
    if math.isnan(value) or abs(value) >= 0.0005:
        return fixed(value)
    if abs(value) < 1e-6:
        return f"{value:.0e}"
    return f"{value:.{-math.floor(math.log10(abs(value)))}f}"


def signed_bracket(low: float | None, high: float | None) -> str:
    """bracket() with signed_bound()s: [0.00005, 0.136], never [0.000, 0.136] > 0."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return "[n/a]"
    return f"[{signed_bound(low)}, {signed_bound(high)}]"


# ---------------------------------------------------------------- for JSON


def number(value: float | None) -> float | None:
    """A float for JSON: NaN and None become null."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def interval_json(interval: SuiteInterval) -> dict[str, Any]:
    """A suite interval as report.json, the commands' JSON and history.jsonl write it."""
    return {
        "estimate": number(interval.estimate),
        "low": number(interval.low),
        "high": number(interval.high),
        "sd": number(interval.sd),
        "t": number(interval.t),
        "df": interval.df,
    }
