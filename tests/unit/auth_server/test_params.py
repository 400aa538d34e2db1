"""Form bodies parsed as werkzeug's form parser parses them, through public interfaces only."""

from __future__ import annotations

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from auth_server.params import FORM, parse_form


@pytest.mark.parametrize(
    "body",
    [
        b"grant_type=refresh_token&refresh_token=abc",
        b"a=1&a=2&b=&c",
        b"name=caf%C3%A9+au+lait&x=%26%3D%2B",
        "k=\u00e9t\u00e9&e=%E2%82%AC".encode(),
        b"&&a=1;b=2&=empty",
    ],
)
def test_a_valid_body_parses_as_werkzeug_parses_it(body: bytes) -> None:
    req = Request(EnvironBuilder(method="POST", data=body, content_type=FORM).get_environ())
    assert parse_form(body) == list(req.form.items(multi=True))


@pytest.mark.parametrize("body", [b"a=%FF", b"a=%C3", b"a=\xff", b"a=%ED%A0%80"])
def test_a_body_that_is_not_utf8_is_none(body: bytes) -> None:
    assert parse_form(body) is None
