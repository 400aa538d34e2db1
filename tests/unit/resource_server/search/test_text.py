"""Folding and query parsing."""

from __future__ import annotations

import pytest

from common.search.text import MAX_WORDS, fold, parse_query, split_kind_filter


@pytest.mark.parametrize(
    ("raw", "folded"),
    [
        ("Paul C\u00e9zanne", "paul cezanne"),
        ("Pauls Ce\u0301zanne", "pauls cezanne"),  # decomposed accent
        ("Saint-R\u00e9my, 1889", "saint remy 1889"),
        ("\u00d8yvind Fahlstr\u00f6m", "oyvind fahlstrom"),
        ("Stra\u00dfe \u0141\u00f3d\u017a", "strasse lodz"),
        ('Charles "Teenie" Harris', "charles teenie harris"),
        ("Doge\u2019s Palace", "doge s palace"),
        ("snake_case", "snake case"),
        ("\u6771\u4eac Tower", "\u6771\u4eac tower"),
        ("  ", ""),
        (None, ""),
    ],
)
def test_fold(raw: str | None, folded: str) -> None:
    assert fold(raw) == folded


def test_kind_filter_terms_are_taken_out_of_the_query() -> None:
    text, kinds = split_kind_filter("Turner MORE:pagemap:metatags-og_type:Artist sunset")
    assert (text, kinds) == ("Turner   sunset", ["artist"])
    assert split_kind_filter("Turner") == ("Turner", [])


def test_parse_query_marks_the_last_word_as_a_prefix_from_three_letters() -> None:
    query = parse_query("Andy WARH", ("artist",))
    assert (query.words, query.prefix, query.kinds, query.key) == (
        ("andy", "warh"),
        True,
        ("artist",),
        "andy warh",
    )
    assert not parse_query("Turner of").prefix
    assert parse_query("!!!").words == ()
    assert len(parse_query(" ".join(["w"] * 40)).words) == MAX_WORDS


def test_a_correction_keeps_the_filter_and_recomputes_the_prefix() -> None:
    query = parse_query("Picaso", ("artist",))
    fixed = query.with_words(("picasso",))
    assert (fixed.words, fixed.kinds, fixed.prefix) == (("picasso",), ("artist",), True)
