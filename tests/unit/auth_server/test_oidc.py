"""OpenID Connect's scopes, claims and discovery document."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from authlib.oauth2.rfc6749.errors import InvalidScopeError

from auth_server.oauth import parse_scope
from auth_server.oidc import user_claims
from auth_server.views.discovery import openid_metadata
from common.models import User

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_openid_scopes() -> None:
    assert parse_scope("email openid profile offline_access") == (
        "email offline_access openid profile"
    )
    assert parse_scope("openid") == "openid"
    for bad in ("email", "profile offline_access", "openid admin", "OPENID"):
        with pytest.raises(InvalidScopeError):
            parse_scope(bad)


def person(email: str, verified: datetime | None) -> User:
    return User(id="u1", name="Ada", email=email, email_verified_at=verified, updated_at=NOW)


def test_claims_follow_the_scope() -> None:
    ada = person("ada@example.org", None)
    assert dict(user_claims(ada, "openid")) == {"sub": "u1"}
    assert dict(user_claims(ada, "openid profile")) == {
        "sub": "u1",
        "name": "Ada",
        "updated_at": int(NOW.timestamp()),
    }
    assert dict(user_claims(ada, "openid email")) == {
        "sub": "u1",
        "email": "ada@example.org",
        "email_verified": False,
    }
    assert user_claims(person("ada@example.org", NOW), "openid email")["email_verified"] is True
    # A social account's undeliverable placeholder is no email at all.
    placeholder = person("twitter-42@users.invalid", None)
    assert "email" not in user_claims(placeholder, "openid email")


def test_the_discovery_document_is_valid() -> None:
    meta = openid_metadata("https://api.example.org")
    meta.validate()
    assert meta["jwks_uri"] == "https://api.example.org/oauth2/jwks"
    assert meta["subject_types_supported"] == ["public"]
    assert "implicit" not in meta["grant_types_supported"]
