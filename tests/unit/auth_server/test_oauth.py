"""Unit tests of the OAuth building blocks: scopes, lifetimes, inputs, paging, metadata, PKCE."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from authlib.oauth2 import rfc9207
from authlib.oauth2.rfc6749.errors import InvalidScopeError

from auth_server.clients import grant_allowed
from auth_server.codes import issue_code
from auth_server.grants.oauth_token import placeholder_email
from auth_server.inputs import is_clean
from auth_server.oauth import parse_scope, token_ttl
from auth_server.social import ProviderIdentity
from auth_server.views.discovery import server_metadata
from common.api.errors import ParamError
from common.api.paging import decode_cursor, encode_cursor, parse_page_params
from common.api.params import parse_bool
from common.models import Application
from common.settings import AuthSettings

# The paging of /api/applications.
APPLICATIONS: dict[str, Any] = {"default_size": 5, "max_size": 100, "extras": False}


def test_scopes() -> None:
    assert parse_scope(None) is None
    assert parse_scope("") == ""
    assert parse_scope(" offline_access  offline_access ") == "offline_access"
    for bad in ("write", "offline_access admin", "OFFLINE_ACCESS"):
        with pytest.raises(InvalidScopeError):
            parse_scope(bad)


def test_lifetimes() -> None:
    s = AuthSettings(secret_key="x")
    assert token_ttl(s, "") == 60 * 86400
    assert token_ttl(s, "offline_access") == s.offline_token_ttl == 9131 * 86400


def test_is_clean() -> None:
    assert is_clean("hello é")
    assert not is_clean("a\x00b")
    assert not is_clean("\ud800")
    assert not is_clean("x" * 5000)
    assert is_clean("x" * 5000, max_length=5000)


def test_parse_bool() -> None:
    assert parse_bool("f", "True") is True and parse_bool("f", "0") is False
    with pytest.raises(ParamError):
        parse_bool("f", "maybe")


def test_cursor_round_trip_and_garbage() -> None:
    assert decode_cursor(encode_cursor(["0123456789abcdef01234567"])) == [
        "0123456789abcdef01234567"
    ]
    for bad in ("%%%", "", "AAAA", "x" * 50):
        with pytest.raises(ParamError):
            decode_cursor(bad)
    assert parse_page_params({"size": "7", "total_count": "1"}, **APPLICATIONS).echo() == {
        "size": 7,
        "total_count": 1,
    }
    for bad_size in ("0", "101", "-1", "1.5"):
        with pytest.raises(ParamError):
            parse_page_params({"size": bad_size}, **APPLICATIONS)


def test_grants_are_open_unless_restricted_by_role() -> None:
    app = Application(roles=[])
    assert grant_allowed(app, "credentials")
    app.roles = ["grant:authorization_code", "other-role"]
    assert grant_allowed(app, "authorization_code")
    assert not grant_allowed(app, "credentials")


def test_metadata_is_valid_rfc_8414() -> None:
    doc = server_metadata("https://auth.example.org")
    # Authlib's RFC 8414 validation (https issuer, endpoints, methods), and RFC 9207's key.
    doc.validate(metadata_classes=[rfc9207.AuthorizationServerMetadata])
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["authorization_response_iss_parameter_supported"] is True


@pytest.mark.parametrize(
    "kw",
    [
        {"code_challenge": "x" * 43, "code_challenge_method": "plain"},
        {"code_challenge": "short", "code_challenge_method": "S256"},
        {"code_challenge": None, "code_challenge_method": "S256"},
    ],
)
def test_issue_code_accepts_only_s256_challenges(kw: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        issue_code(
            None,  # type: ignore[arg-type]  # refused before any database work
            application=Application(id="a" * 24),
            user=None,  # type: ignore[arg-type]
            redirect_uri="https://x.example.org/cb",
            ttl=600,
            **kw,
        )


def test_placeholder_email_is_undeliverable_and_safe() -> None:
    ident = ProviderIdentity("twitter", "12/34@x", "T", None)
    assert placeholder_email(ident) == "twitter-12-34-x@users.invalid"


def test_urllib3_debug_lines_lose_their_query_strings(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("urllib3.connectionpool")
    with caplog.at_level(logging.DEBUG, logger="urllib3.connectionpool"):
        logger.debug('%s "%s %s" %s', "http://h", "GET", "/me?access_token=SECRET", 200)
    assert "SECRET" not in caplog.text and "/me?..." in caplog.text
