"""Edit distances, one-edit neighbours and rewriting the user's query."""

from __future__ import annotations

import pytest

from common.search.spelling import edit_distance, max_edits, one_edit, rewrite
from common.search.text import parse_query


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("turner", "turner", 0),
        ("tunrer", "turner", 1),  # a transposition is one edit
        ("picaso", "picasso", 1),
        ("cezzane", "cezanne", 2),
        ("orbach", "auerbach", 3),
        ("", "abc", 3),
    ],
)
def test_edit_distance(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b) == distance == edit_distance(b, a)


def test_one_edit_neighbours() -> None:
    found = one_edit("tunrer")
    assert {"turner", "tuner", "tunrers", "tunner"} <= found
    assert "tunrer" not in found
    assert all(edit_distance("tunrer", w) == 1 for w in found)
    assert "\u00e9te" in one_edit("\u00e9t")  # the word's own letters are used too


def test_longer_words_may_take_more_edits() -> None:
    assert [max_edits(w) for w in ("monet", "mone", "rembrant", "gainsborugh")] == [2, 1, 2, 3]


def test_rewrite_keeps_the_users_text_and_case() -> None:
    original = parse_query("Pablo Picaso, 1937")
    corrected = original.with_words(("pablo", "picasso", "1937"))
    assert rewrite("Pablo Picaso, 1937", original, corrected) == "Pablo Picasso, 1937"
    shout = parse_query("TUNRER")
    assert rewrite("TUNRER", shout, shout.with_words(("turner",))) == "TURNER"
    low = parse_query("honore daumeir")
    assert rewrite("honore daumeir", low, low.with_words(("honore", "daumier"))) == (
        "honore daumier"
    )
