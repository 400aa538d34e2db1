"""Pure helpers of the HTML pages: `next` paths and password strength."""

from __future__ import annotations

import pytest

from auth_server.forms import password_problem
from auth_server.web import safe_next


@pytest.mark.parametrize(
    "value",
    ["/account", "/oauth2/authorize?client_id=a&redirect_uri=https%3A%2F%2Fx", "/a?next=//b"],
)
def test_safe_next_keeps_paths_on_this_site(value: str) -> None:
    assert safe_next(value) == value


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "//evil.example",
        "///evil.example",
        "https://evil.example/",
        "http:/evil.example",
        "/\\evil.example",
        "\\\\evil.example",
        "/a\\b",
        "javascript:alert(1)",
        "evil.example",
        "/\tx",
        "/a\r\nLocation: x",
        "/a\x00",
        "/a b",
        "/" + "a" * 9000,
    ],
)
def test_safe_next_refuses_everything_else(value: str | None) -> None:
    assert safe_next(value) is None


def test_password_strength() -> None:
    assert password_problem("Tulips in 1637") is None
    assert password_problem("correct horse battery") is None  # no composition rules
    assert password_problem("vermilion ochre umber") is None
    assert password_problem("Lilac dusk over Giverny " * 4) is None  # 64 and more are fine
    assert password_problem("Short1") is not None
    assert password_problem("abcdefghijkl") is not None  # a sequence
    assert password_problem("aaaaaaaaaa12") is not None  # a repeat
    assert password_problem("P@ssw0rd2024") is not None  # a common password, dressed up
    assert password_problem("Ada@Example.org", email="ada@example.org") is not None
    assert password_problem("x" * 1001 + "A1") is not None


def test_passwords_built_from_the_user_are_refused() -> None:
    # Unguessable for a stranger, guessable for someone who knows the user's name.
    assert password_problem("adalovelace1") is None
    assert password_problem("adalovelace1", email="ada@example.org", name="Ada Lovelace")
    assert password_problem("Lovelace!!", email="ada@example.org", name="Ada Lovelace")
