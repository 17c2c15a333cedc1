"""Task ids sort naturally: digit runs by number, everything else as text."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from reportgen.stats.task_tests import natural_key


def _by_int(text: str) -> tuple[tuple[int, int | str], ...]:
    # The reference: Python integers, fine for digit runs of ordinary length.
    return tuple(
        (0, int(part)) if part[0] in "0123456789" else (1, part)
        for part in re.split(r"([0-9]+)", text)
        if part
    )


_IDS = st.text(alphabet=st.sampled_from("ab-_0123456789é²٣"), max_size=12)


@given(_IDS, _IDS)
def test_order_agrees_with_comparing_digit_runs_as_integers(a: str, b: str) -> None:
    assert (natural_key(a) < natural_key(b)) == (_by_int(a) < _by_int(b))
    assert (natural_key(a) == natural_key(b)) == (_by_int(a) == _by_int(b))


def test_examples_and_ids_too_long_for_int() -> None:
    ids = ["task-10", "task-2", "task-02b", "task-1", "9" * 5000, "8" * 5001, "x²", "x٣"]
    assert sorted(ids, key=natural_key) == [
        "9" * 5000,
        "8" * 5001,
        "task-1",
        "task-2",
        "task-02b",
        "task-10",
        "x²",
        "x٣",
    ]
