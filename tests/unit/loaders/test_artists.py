"""The reconciliation rule: name keys, life dates, and the ids they give."""

from __future__ import annotations

import pytest

from artcat.loaders.artists import compatible_deaths, name_key, reconciled_id, year_of


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Turner, Joseph Mallord William", "Joseph Mallord William Turner"),
        ("Sir John Everett Millais, Bt", "Millais, Sir John Everett, Bt"),
        ('Charles "Teenie" Harris', "Harris, Charles"),
        ("Élisabeth Vigée Le Brun", "elisabeth vigee-le brun"),
        ("Georgia O\u2019Keeffe", "O'Keeffe, Georgia"),
        ("Jean Arp (Hans Arp)", "Arp, Jean"),
        ("Hablot Knight Browne (`Phiz')", "Browne, Hablot Knight"),
        ("Ai Weiwei", "Ai, Weiwei"),
        ("Gillian Ayres OBE", "Ayres, OBE Gillian"),
    ],
)
def test_one_person_written_two_ways_has_one_key(one: str, other: str) -> None:
    assert name_key(one) == name_key(other) != ""


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("J. M. W. Turner", "Joseph Mallord William Turner"),  # initials are not expanded
        ("Charles Turner", "Joseph Mallord William Turner"),
        ("John Smith", "John Smithson"),
    ],
)
def test_different_names_have_different_keys(one: str, other: str) -> None:
    assert name_key(one) != name_key(other)


def test_never_the_name_alone() -> None:
    assert reconciled_id("John Smith", None) is None
    assert reconciled_id("", 1900) is None
    assert reconciled_id("John Smith", 1900) != reconciled_id("John Smith", 1901)
    assert reconciled_id("Smith, John", 1900) == reconciled_id("John Smith", 1900)


def test_death_years_must_agree_where_both_are_known() -> None:
    assert compatible_deaths(1851, 1851)
    assert compatible_deaths(1851, 1852)  # sources round differently
    assert compatible_deaths(None, 1851) and compatible_deaths(1851, None)
    assert not compatible_deaths(1851, 1900)


def test_year_of_stored_texts() -> None:
    assert [year_of(t) for t in ("1851", "349 BCE", "", None, "c. 1800")] == [
        1851,
        -349,
        None,
        None,
        None,
    ]
