"""Unit tests of the client adapter Authlib sees, and of the Basic credentials guard."""

from __future__ import annotations

import base64

import pytest

from auth_server.clients import OAuthClient
from auth_server.server import basic_credentials
from common.models import Application
from common.tokens import digest


def client(**fields: object) -> OAuthClient:
    """Return the adapter of an application with the given columns."""
    values: dict[str, object] = {
        "client_id": "cid",
        "client_secret_digest": digest("s3cret"),
        "redirect_uris": ["https://a.example/cb", "http://127.0.0.1/cb"],
        "roles": [],
        "public_client": False,
        **fields,
    }
    return OAuthClient(Application(**values))


def test_a_confidential_client_authenticates_with_its_secret_only() -> None:
    c = client()
    assert c.check_client_secret("s3cret") and not c.check_client_secret("other")
    assert not c.check_client_secret("\x00")
    assert c.check_endpoint_auth_method("client_secret_basic", "token")
    assert c.check_endpoint_auth_method("client_secret_post", "revocation")
    assert not c.check_endpoint_auth_method("none", "token")
    assert c.check_grant_type("client_credentials")


def test_a_public_client_has_no_secret_and_no_xapp() -> None:
    c = client(public_client=True)
    assert not c.check_client_secret("s3cret")
    assert c.check_endpoint_auth_method("none", "token")
    assert not c.check_endpoint_auth_method("client_secret_post", "token")
    assert not c.check_grant_type("client_credentials")
    assert c.check_grant_type("authorization_code")


def test_roles_restrict_grants_and_redirects_are_registered_ones() -> None:
    c = client(roles=["grant:authorization_code"])
    assert c.check_grant_type("authorization_code") and not c.check_grant_type("password")
    assert c.check_redirect_uri("https://a.example/cb")
    assert c.check_redirect_uri("http://127.0.0.1:5123/cb")
    assert not c.check_redirect_uri("https://a.example/cb2")
    assert c.get_default_redirect_uri() is None
    assert c.check_response_type("code") and not c.check_response_type("token")


def basic(raw: bytes) -> str:
    """Return a Basic header value for raw credentials."""
    return "Basic " + base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("Bearer x", None),
        ("", None),
        (basic(b"id:secret"), ("id", "secret")),
        (basic(b"a%3Ab:s%20t"), ("a:b", "s t")),  # RFC 6749 2.3.1 form-encoding
        (basic(b"\xff\xfe:x"), ("", "")),
        (basic(b"id\x00:x"), ("", "")),
        (basic(b"nocolon"), ("", "")),
        (basic(b":secret"), ("", "")),
        ("Basic !!!", ("", "")),
    ],
)
def testbasic_credentials(header: str, expected: tuple[str, str] | None) -> None:
    assert basic_credentials(header) == expected
