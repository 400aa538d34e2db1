"""The keys by which a query names an artist."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from common.search.people import LEAD_GAP, name_keys, query_key, split_keys, split_leads
from common.search.plan import (
    ANY,
    EXACT,
    NAMESAKES,
    PERSON,
    PHRASE,
    PREFIX,
    STARTS,
    TITLE,
    WORKS,
    WORKS_ANY,
    before,
    cover,
    starts_keys,
    tiers_for,
)
from common.search.text import ParsedQuery, fold, parse_query


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
        # Initials, as museums and people write them.
        ("Joseph Mallord William Turner", "J.M.W. Turner"),
        ("Joseph Mallord William Turner", "J. M. W. Turner"),
        ("Joseph Mallord William Turner", "JMW Turner"),
        ("Joseph Mallord William Turner", "Turner, J.M.W."),
        ("Joseph Mallord William Turner", "W. Turner"),
        ("Joseph Mallord William Turner", "Joseph M. W. Turner"),
        ("Dante Gabriel Rossetti", "D.G. Rossetti"),
        ("Dante Gabriel Rossetti", "DG Rossetti"),
        ("Sir John Everett Millais, Bt", "J.E. Millais"),
        ("Sir John Everett Millais, Bt", "Sir J. E. Millais"),
        # The museums' spellings: surname first, honours after.
        ("Joseph Mallord William Turner", "Turner, Joseph Mallord William"),
        ("Henry Moore OM, CH", "Henry Moore"),
        ("Henry Moore OM, CH", "Moore"),
        ("Dame Barbara Hepworth", "Barbara Hepworth"),
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
        ("Joseph Mallord William Turner", "J"),  # an initial alone
        ("Joseph Mallord William Turner", "MJW Turner"),  # initials out of order
        ("Sir John Everett Millais, Bt", "S Millais"),  # a title is no forename
        ("Henry Moore OM, CH", "om"),
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
def test_every_key_is_made_of_words_of_the_title_or_their_initials(name: str) -> None:
    title = set(fold(name).split())
    initials = {w[0] for w in title}
    for key in name_keys(name):
        for word in key.split():
            assert word in title or set(word) <= initials, (key, word)


def test_the_keys_of_a_long_name_stay_few() -> None:
    # Forenames in full, as initials or left out: 3^4 keys and a few more for four of them.
    assert len(name_keys("Anna Berta Carla Dora Evans")) < 120
    assert len(name_keys("A B C D E F G H")) < 10  # past MAX_NAME_WORDS: the surname only


def test_a_query_of_a_name_and_a_subject_splits_at_either_end() -> None:
    parts = split_keys(parse_query("turner venice").words)
    assert parts == {"turner": ("venice",), "venice": ("turner",)}
    # A subject needs a word of three letters that is no stopword.
    assert "turner" not in split_keys(parse_query("the turner").words)
    assert split_keys(parse_query("monet waterloo bridge").words)["monet"] == (
        "waterloo",
        "bridge",
    )
    # The name part is at most four words.
    words = ("anna", "berta", "carla", "dora", "emma", "frieda")
    assert max(len(key.split()) for key in split_keys(words)) == 4


def _artist(doc_id: int, popularity: float) -> SimpleNamespace:
    return SimpleNamespace(id=doc_id, popularity=popularity)


def test_the_artists_about_as_popular_as_the_first_lead() -> None:
    top, close, far = _artist(1, 0.9), _artist(2, 0.9 - LEAD_GAP / 2), _artist(3, 0.5)
    assert split_leads([top, close, far]) == ([top, close], [far])
    assert split_leads([top]) == ([top], [])


def test_a_title_starting_with_the_query_comes_after_the_exact_title() -> None:
    query = parse_query("lady of shalott")
    assert tiers_for(query) == (EXACT, STARTS, PHRASE, PREFIX, TITLE, ANY)
    assert before(query, STARTS) == (EXACT,) and before(query, PHRASE) == (STARTS,)
    assert starts_keys(query) == ("lady of shalott", "the lady of shalott")
    assert starts_keys(parse_query("the kiss")) == ("the kiss", "the kiss")


def test_the_tiers_of_a_query_naming_an_artist() -> None:
    plain = parse_query("warhol")
    assert tiers_for(plain) == (EXACT, PHRASE, PREFIX, ANY)
    named = ParsedQuery(plain.words, prefix=True, people=(1,), makers=("andy warhol",))
    assert tiers_for(named) == (PERSON, WORKS, NAMESAKES, EXACT, PHRASE, PREFIX, ANY)
    # Each tier less the works before it; the usual tiers nest.
    assert before(named, WORKS) == ()
    assert before(named, EXACT) == (WORKS,)
    assert before(named, PHRASE) == (EXACT, WORKS)
    assert cover(named, ANY) == (ANY, WORKS)


def test_the_tiers_of_a_query_of_a_name_and_a_subject() -> None:
    query = ParsedQuery(
        ("turner", "venice"), prefix=True, makers=("joseph mallord william turner",),
        subject=("venice",),
    )  # fmt: skip
    assert tiers_for(query) == (EXACT, WORKS, WORKS_ANY, STARTS, PHRASE, PREFIX, TITLE, ANY)
    assert before(query, WORKS) == (EXACT,)
    assert before(query, WORKS_ANY) == (EXACT, WORKS)
    assert before(query, STARTS) == (EXACT, WORKS_ANY)
    assert before(query, PHRASE) == (STARTS, WORKS_ANY)
    assert before(query, PREFIX) == (PHRASE, WORKS_ANY)
