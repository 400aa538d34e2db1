"""Token expiry (DELETE access_token), RFC 7009 revocation, RFC 7662 introspection, RFC 8414."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from redis import Redis
from sqlalchemy.orm import Session, sessionmaker

from common.settings import AuthSettings
from common.stores import Stores
from common.tokens import TOMBSTONE, digest
from tests.functional.oauth_support import (
    PASSWORD,
    World,
    assert_oauth_error,
    code_params,
    get_artists,
    make_code,
    make_world,
    post,
)
from tests.servers import LiveServer

INVALID = {"type": "auth_error", "message": "The access token is invalid or has expired."}


def user_token(live: LiveServer, w: World, **extra: str) -> str:
    """Sign the world's user in and return the access token."""
    r = post(live, w.password_grant(**extra))
    assert r.status_code == 200, r.text
    return str(r.json()["access_token"])


@pytest.mark.parametrize("how", ["query", "form", "json", "x-access-token", "x-auth-token"])
def test_expire_access_token_then_every_resource_server_refuses_it(
    oauth_server: LiveServer, resource_server: LiveServer, app_and_user: World, how: str
) -> None:
    token = user_token(oauth_server, app_and_user)
    assert get_artists(resource_server, token) == 200
    url = f"{oauth_server.url}/api/tokens/access_token"
    kwargs: dict[str, Any] = {
        "query": {"params": {"access_token": token}},
        "form": {"data": {"access_token": token}},
        "json": {"json": {"access_token": token}},
        "x-access-token": {"headers": {"X-Access-Token": token}},
        "x-auth-token": {"headers": {"X-Auth-Token": token}},
    }[how]
    r = requests.delete(url, timeout=10, **kwargs)
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["id", "type", "token", "expired_at"]
    assert body["type"] == "access_token" and body["token"] == token and len(body["id"]) == 24
    expired_at = datetime.strptime(body["expired_at"], "%Y-%m-%dT%H:%M:%S+00:00")
    assert abs(expired_at.replace(tzinfo=UTC) - datetime.now(UTC)) < timedelta(minutes=1)
    assert r.headers["Cache-Control"] == "no-store"
    assert get_artists(resource_server, token) == 401
    again = requests.delete(url, params={"access_token": token}, timeout=10)
    assert again.status_code == 401 and again.json() == INVALID


def test_expiry_survives_the_loss_of_the_redis_key(
    oauth_server: LiveServer,
    resource_server: LiveServer,
    app_and_user: World,
    stores: Stores,
    redis_client: Redis,
) -> None:
    token = user_token(oauth_server, app_and_user, scope="offline_access")
    requests.delete(
        f"{oauth_server.url}/api/tokens/access_token", params={"access_token": token}, timeout=10
    )
    key = stores.tokens.key(digest(token))
    assert redis_client.get(key) == TOMBSTONE
    redis_client.delete(key)
    assert get_artists(resource_server, token) == 401  # read through: SQL says expired


def test_expire_errors(oauth_server: LiveServer) -> None:
    url = f"{oauth_server.url}/api/tokens/access_token"
    missing = requests.delete(url, timeout=10)
    assert missing.status_code == 400 and missing.json()["type"] == "param_error"
    unknown = requests.delete(url, params={"access_token": "nope"}, timeout=10)
    assert unknown.status_code == 401 and unknown.json() == INVALID
    for odd in ("\x00", "x" * 10_000):
        assert requests.delete(url, data={"access_token": odd}, timeout=10).status_code == 401


def test_xapp_token_refuses_unstorable_text_without_a_5xx(oauth_server: LiveServer) -> None:
    url = f"{oauth_server.url}/api/tokens/xapp_token"
    for creds in (
        {"client_id": "a\x00", "client_secret": "x"},
        {"client_id": "\ud800", "client_secret": "x"},
    ):
        r = requests.post(url, json=creds, timeout=10)
        assert r.status_code == 401 and r.json()["type"] == "auth_error"


def test_expire_through_the_combined_server(
    combined_server: LiveServer, app_and_user: World
) -> None:
    token = user_token(combined_server, app_and_user)
    r = requests.delete(
        f"{combined_server.url}/api/tokens/access_token",
        headers={"X-Access-Token": token},
        timeout=10,
    )
    assert r.status_code == 200
    assert get_artists(combined_server, token) == 401


def revoke(live: LiveServer, w: World, token: str) -> requests.Response:
    """Call RFC 7009 revocation as the world's client."""
    return requests.post(f"{live.url}/oauth2/revoke", data={**w.creds, "token": token}, timeout=10)


def introspect(live: LiveServer, w: World, token: str) -> dict[str, Any]:
    """Call RFC 7662 introspection as the world's client."""
    r = requests.post(f"{live.url}/oauth2/introspect", data={**w.creds, "token": token}, timeout=10)
    assert r.status_code == 200 and r.headers["Cache-Control"] == "no-store"
    body: dict[str, Any] = r.json()
    return body


def test_revoke_only_the_clients_own_tokens(
    oauth_server: LiveServer,
    resource_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    other = make_world(sessions, oauth_settings)
    mine, theirs = user_token(oauth_server, app_and_user), user_token(oauth_server, other)
    r = revoke(oauth_server, app_and_user, theirs)
    assert r.status_code == 200 and r.json() == {}
    assert get_artists(resource_server, theirs) == 200  # not ours: left alone, silently
    assert revoke(oauth_server, app_and_user, mine).status_code == 200
    assert get_artists(resource_server, mine) == 401
    assert revoke(oauth_server, app_and_user, mine).status_code == 200  # already revoked: still 200
    assert revoke(oauth_server, app_and_user, "unknown").status_code == 200


def test_revoke_and_introspect_errors(oauth_server: LiveServer, app_and_user: World) -> None:
    for path in ("revoke", "introspect"):
        url = f"{oauth_server.url}/oauth2/{path}"
        no_token = requests.post(url, data=app_and_user.creds, timeout=10)
        assert_oauth_error(no_token, 400, "invalid_request")
        bad_client = requests.post(
            url, data={**app_and_user.creds, "client_secret": "x", "token": "t"}, timeout=10
        )
        assert_oauth_error(bad_client, 401, "invalid_client")


def test_introspection(
    oauth_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    token = user_token(oauth_server, app_and_user, scope="offline_access")
    info = introspect(oauth_server, app_and_user, token)
    assert info["active"] is True and info["sub"] == app_and_user.user_id
    assert info["client_id"] == app_and_user.client_id and info["scope"] == "offline_access"
    assert info["token_type"] == "Bearer" and info["iss"] == oauth_server.url
    assert info["exp"] - info["iat"] == oauth_settings.offline_token_ttl
    other = make_world(sessions, oauth_settings)
    assert introspect(oauth_server, other, token) == {"active": False}  # not its token
    xapp = requests.post(
        f"{oauth_server.url}/api/tokens/xapp_token", data=app_and_user.creds, timeout=10
    ).json()["token"]
    xapp_info = introspect(oauth_server, app_and_user, xapp)
    assert xapp_info["active"] is True and "sub" not in xapp_info
    revoke(oauth_server, app_and_user, token)
    assert introspect(oauth_server, app_and_user, token) == {"active": False}
    assert introspect(oauth_server, app_and_user, "garbage") == {"active": False}


def test_authorization_server_metadata(oauth_server: LiveServer) -> None:
    r = requests.get(f"{oauth_server.url}/.well-known/oauth-authorization-server", timeout=10)
    assert r.status_code == 200
    doc = r.json()
    base = oauth_server.url
    assert doc["issuer"] == base
    assert doc["authorization_endpoint"] == f"{base}/oauth2/authorize"
    assert doc["token_endpoint"] == f"{base}/oauth2/access_token"
    assert doc["revocation_endpoint"] == f"{base}/oauth2/revoke"
    assert doc["introspection_endpoint"] == f"{base}/oauth2/introspect"
    assert doc["grant_types_supported"] == [
        "authorization_code",
        "client_credentials",
        "credentials",
        "oauth_token",
        "password",
        "urn:ietf:params:oauth:grant-type:device_code",
        "refresh_token",
    ]
    assert doc["token_endpoint_auth_methods_supported"] == [
        "client_secret_basic",
        "client_secret_post",
        "none",
    ]
    assert doc["authorization_response_iss_parameter_supported"] is True
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["scopes_supported"] == ["offline_access"]
    assert doc["response_types_supported"] == ["code"]


def test_audit_lines_name_every_event_and_no_secret(
    oauth_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="artcat.audit")
    code = make_code(sessions, app_and_user)
    exchanged = post(oauth_server, code_params(app_and_user, code)).json()["access_token"]
    post(oauth_server, code_params(app_and_user, code))  # a replay
    signed = user_token(oauth_server, app_and_user)
    requests.delete(
        f"{oauth_server.url}/api/tokens/access_token", params={"access_token": signed}, timeout=10
    )
    revoked = user_token(oauth_server, app_and_user)
    revoke(oauth_server, app_and_user, revoked)
    post(oauth_server, app_and_user.password_grant(password="wrong horse"))
    post(oauth_server, {**app_and_user.password_grant(), "client_secret": "bad secret"})
    lines = [r.getMessage() for r in caplog.records if r.name == "artcat.audit"]
    events = [json.loads(line)["event"] for line in lines]
    for event in (
        "code.issued",
        "token.issued",
        "code.replayed",
        "token.expired",
        "token.revoked",
        "signin.failed",
        "client.auth_failed",
    ):
        assert event in events, event
    secrets = (
        code,
        exchanged,
        signed,
        revoked,
        app_and_user.client_secret,
        PASSWORD,
        "wrong horse",
        "bad secret",
    )
    assert not any(s in line for s in secrets for line in lines)
