"""User codes of the device flow: short, unambiguous, read without case or dashes."""

from __future__ import annotations

import pytest

from auth_server.device_flow import (
    ALPHABET,
    display_user_code,
    new_user_code,
    normalise_user_code,
)


def test_the_alphabet_has_no_look_alikes_and_no_vowels() -> None:
    assert not set(ALPHABET) & set("01OIL")
    assert not set(ALPHABET) & set("AEIOUY")
    assert len(set(ALPHABET)) == len(ALPHABET) == 19


def test_new_codes_are_eight_characters_shown_in_two_halves() -> None:
    codes = {new_user_code() for _ in range(200)}
    assert len(codes) == 200
    for code in codes:
        assert len(code) == 9 and code[4] == "-"
        assert normalise_user_code(code) == code.replace("-", "")


@pytest.mark.parametrize(
    "typed", ["bcdf-ghjk", "BCDFGHJK", " bcdf ghjk ", "BcDf\u2013gHjK", "b-c-d-f-g-h-j-k"]
)
def test_case_spaces_and_dashes_do_not_matter(typed: str) -> None:
    assert normalise_user_code(typed) == "BCDFGHJK"
    assert display_user_code("BCDFGHJK") == "BCDF-GHJK"


@pytest.mark.parametrize(
    "typed", ["", "BCDF-GHJ", "BCDF-GHJKM", "BCDF-GHJ0", "AEIO-UBCD", "BCDF\x00GHJK"]
)
def test_anything_else_is_no_code(typed: str) -> None:
    assert normalise_user_code(typed) is None
