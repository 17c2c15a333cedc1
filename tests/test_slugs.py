"""Page file names for ids (slugs.slugify, unique_slugs), against a plain reference."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.slugs import slugify, unique_slugs

from .conftest import examples


def reference_slug(text: str, max_length: int = 60) -> str:
    """The rule written out in full: ASCII by NFKD, lowercase, every run of other
    characters one '-', no '-' or '_' at the ends, at most max_length long."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9_]+", "-", ascii_text.lower())
    return slug.strip("-_")[:max_length].rstrip("-_")


# Mostly the characters of plain ids, so that the shortcut for them is exercised.
id_text = st.text(alphabet=st.sampled_from("ab09-_ .A/é\u00b2"), max_size=70)


@settings(max_examples=examples(500), deadline=None)
@given(id_text | st.text(max_size=70))
def test_slugify_follows_the_rule(text: str) -> None:
    assert slugify(text) == reference_slug(text)
    assert slugify(text, 8) == reference_slug(text, 8)


def test_plain_ids_keep_their_names_and_the_rest_get_a_hash() -> None:
    assert slugify("task-00017") == "task-00017"
    assert slugify("a" * 61) == "a" * 60
    assert slugify("_x_") == "x" and slugify("a--b") == "a-b"
    slugs = unique_slugs(["task-1", "Task-1", "con", "a/b", "task-1 "], "task")
    assert slugs[0] == "task-1"
    assert all(re.fullmatch(r"[a-z0-9-]+-[0-9a-f]{8}", s) for s in slugs[1:])
    assert len({s.lower() for s in slugs}) == len(slugs)
