"""``Authorization: Bearer``: a token, no token (another scheme), or a malformed credential."""

from __future__ import annotations

import pytest

from common.api.errors import AuthError
from common.bearer import bearer_credential


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("BEARER   abc  ", "abc"),
        (None, None),
        ("", None),
        ("Basic dXNlcjpwYXNz", None),
        ("Token abc", None),
    ],
)
def test_a_bearer_token_is_read_and_other_schemes_present_none(
    header: str | None, token: str | None
) -> None:
    assert bearer_credential(header) == token


@pytest.mark.parametrize("header", ["Bearer", "Bearer ", "bearer    ", "  Bearer  "])
def test_a_bearer_without_a_token_is_a_malformed_credential(header: str) -> None:
    with pytest.raises(AuthError):
        bearer_credential(header)
