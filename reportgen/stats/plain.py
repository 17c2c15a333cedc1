"""The statistics' plain-Python parts: limits on k and the level, and how numbers and
counts are written.

They need no numpy, and neither do the command line, the terminal tables and a
rebuild from records, which use them: those load this module, not the numpy
ones (tests/test_imports.py).
"""

from __future__ import annotations

import math
from fractions import Fraction

#: The level of every interval unless a user asks for another.
DEFAULT_CONFIDENCE = 0.95

#: The largest k: the estimates are checked against exact arithmetic up to k = n =
#: 1,000,000, and a k beyond 64-bit integers crashed numpy.
MAX_K = 10**6

#: The confidence levels reportgen accepts inside (0, 1). Beyond them a level has no
#: use, and nearer 0 or 1 double precision cannot hold its quantiles:
#: 0.9999999999999999 made every interval infinite, 1e-300 made Wilson's bounds 0/0.
MIN_CONFIDENCE = 1e-6
MAX_CONFIDENCE = 1 - 1e-12


def confidence_extreme(value: float) -> str | None:
    """Why a level strictly between 0 and 1 still cannot be used, or None."""
    if value < MIN_CONFIDENCE:
        return f"{value!r} is too close to 0 to compute intervals; use at least 0.000001"
    if value > MAX_CONFIDENCE:
        return f"{value!r} is too close to 1 to compute intervals; use at most 0.999999999999"
    return None


#: Said of a suite of one task; `estimate` for one task shows no suite to say it of.
ONE_TASK_WARNING = "one task only: the suite interval needs at least two tasks (null)"


def counted(count: int, one: str, many: str) -> str:
    """counted(1, "task has", "tasks have") -> "1 task has"; 3 -> "3 tasks have"."""
    return f"{count} {one if count == 1 else many}"


#: The suite intervals a coverage check measures (coverage.py), as pages name them.
COVERAGE_NAMES = {
    "plugin_t": "plug-in, Student-t across tasks",
    "unbiased_t": "unbiased, Student-t across tasks",
    "bootstrap": "two-stage bootstrap",
    "clustered_plugin": "plug-in, clustered by category",
    "clustered_unbiased": "unbiased, clustered by category",
}


def decimals(value: float, places: int, plus: bool = False) -> str:
    """`value` to `places` decimals (with its sign when `plus`), a tie rounded away from 0.

    Python's format rounds a value exactly halfway to even: 0.0625, which is
    (1/2)^4, to 0.062. Someone checking by hand, and the calculator's
    JavaScript (toFixed), get 0.063, so exact ties go away from zero here. Every
    other value rounds as format rounds it (1.0005 is a little below the tie in
    binary: 1.000).
    """
    value = float(value)  # a numpy scalar formats and multiplies as a float does
    text = f"{value:+.{places}f}" if plus else f"{value:.{places}f}"
    if not math.isfinite(value):
        return text
    doubled = value * (2 * 10**places)
    # An exact tie makes the exact product an odd whole number; below 2**53 the float
    # product is then that number exactly, so only values passing this cheap test are
    # checked in fractions. Larger products are all checked (such values are rare).
    if abs(doubled) < 2**53 and doubled % 2 != 1:
        return text
    exact = Fraction(value) * (2 * 10**places)
    if exact.denominator != 1 or exact.numerator % 2 == 0:
        return text
    away = (abs(exact.numerator) + 1) // 2  # |value| x 10^places, rounded up
    whole, part = divmod(away, 10**places)
    sign = "-" if value < 0 else ("+" if plus else "")
    return f"{sign}{whole}.{part:0{places}d}" if places else f"{sign}{whole}"
