"""The keys by which a query names an artist."""

from __future__ import annotations

import pytest

from common.search.people import name_keys, query_key
from common.search.text import fold, parse_query


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("Thomas Gainsborough", "Gainsborough"),
        ("Thomas Gainsborough", "gainsborough, thomas"),
        ("Joseph Mallord William Turner", "William Turner"),
        ("Joseph Mallord William Turner", "turner joseph"),
        ('Charles "Teenie" Harris', "Teenie"),
        ('Charles "Teenie" Harris', "teenie harris"),
        ('Charles "Teenie" Harris', 'Charles "Teenie" Harris'),
        ("Jean Arp (Hans Arp)", "Hans Arp"),
        ("Hablot Knight Browne (`Phiz')", "Phiz"),
        ("Sir John Everett Millais, Bt", "Millais"),
        ("Sir John Everett Millais, Bt", "sir john millais"),
        ("Gustave Doré", "gustave dore"),
        ("Arman", "arman"),
    ],
)
def test_a_query_names_the_artist(name: str, query: str) -> None:
    assert query_key(parse_query(query)) in name_keys(name)


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("Thomas Gainsborough", "Thomas"),  # a forename alone
        ("Thomas Gainsborough", "portrait of thomas gainsborough"),
        ("Sir John Everett Millais, Bt", "bt"),  # an honour is no name
        ("British School 18th century", "century"),  # not a person: the whole name only
        ("unknown American", "american"),
        ("Joseph Mallord William Turner", "turn"),  # no prefixes
    ],
)
def test_a_query_names_nobody(name: str, query: str) -> None:
    assert query_key(parse_query(query)) not in name_keys(name)


@pytest.mark.parametrize(
    "name",
    [
        'Charles "Teenie" Harris',
        "Sir John Everett Millais, Bt",
        "Jean Arp (Hans Arp)",
        "A B C D E F G H",
    ],
)
def test_every_key_is_made_of_words_of_the_title(name: str) -> None:
    # So an artist a query names is also a match of its other tiers: the count is unchanged.
    title = set(fold(name).split())
    assert all(set(key.split()) <= title for key in name_keys(name))
