"""The token endpoint over real HTTP: client authentication, parameters, errors, lifetimes."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application, Token
from common.settings import AuthSettings
from tests.functional.oauth_support import (
    PASSWORD,
    World,
    assert_oauth_error,
    make_world,
    post,
    token_url,
)
from tests.servers import LiveServer

DAY = timedelta(days=1)


def parse_ts(value: str) -> datetime:
    """Parse the reference timestamp form."""
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S+00:00").replace(tzinfo=UTC)


def close_to(value: datetime, delta: timedelta) -> bool:
    """Tell whether ``value`` is ``delta`` from now, give or take a minute."""
    return abs(value - datetime.now(UTC) - delta) < timedelta(minutes=1)


def basic(client_id: str, secret: str) -> str:
    """Return an HTTP Basic header value."""
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


@pytest.fixture
def reference(sessions: sessionmaker[Session], app_and_user: World) -> None:
    """Switch the world's applications to the reference API's token response."""
    with sessions() as s, s.begin():
        s.execute(update(Application).values(standard_token_response=False))


def test_credentials_grant_default_lifetime_is_60_days(
    oauth_server: LiveServer, app_and_user: World, reference: None
) -> None:
    r = post(oauth_server, app_and_user.password_grant())
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["access_token", "token_type", "expires_in"]
    assert body["token_type"] == "Bearer"  # every token response says so (RFC 6749 5.1)
    assert len(body["access_token"]) >= 43
    assert close_to(parse_ts(body["expires_in"]), 60 * DAY)
    assert r.headers["Cache-Control"] == "no-store" and r.headers["Pragma"] == "no-cache"


def test_offline_access_lasts_25_years_and_state_is_echoed(
    oauth_server: LiveServer, app_and_user: World, reference: None
) -> None:
    r = post(oauth_server, app_and_user.password_grant(scope="offline_access", state="xyz 1"))
    body = r.json()
    assert list(body) == ["access_token", "token_type", "expires_in", "scope", "state"]
    assert body["scope"] == "offline_access" and body["state"] == "xyz 1"
    expires = parse_ts(body["expires_in"])
    years = (expires - datetime.now(UTC)).days / 365.25
    assert 24.99 < years < 25.01


def test_xapp_lifetime_is_unaffected(oauth_server: LiveServer, app_and_user: World) -> None:
    r = requests.post(
        f"{oauth_server.url}/api/tokens/xapp_token", data=app_and_user.creds, timeout=10
    )
    assert close_to(parse_ts(r.json()["expires_at"]), 7 * DAY)


def test_standard_token_response_is_the_default(
    oauth_server: LiveServer, app_and_user: World, oauth_settings: AuthSettings
) -> None:
    r = post(oauth_server, app_and_user.password_grant(state="s"))
    body = r.json()
    assert list(body) == ["access_token", "token_type", "expires_in", "state"]
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 60 * 86400
    offline = post(oauth_server, app_and_user.password_grant(scope="offline_access")).json()
    assert offline["expires_in"] == oauth_settings.offline_token_ttl == 9131 * 86400


@pytest.mark.parametrize("how", ["form", "query", "json", "basic", "get"])
def test_client_authentication_transports(
    oauth_server: LiveServer, app_and_user: World, how: str
) -> None:
    grant = app_and_user.password_grant()
    url = token_url(oauth_server)
    if how == "form":
        r = requests.post(url, data=grant, timeout=10)
    elif how == "json":
        r = requests.post(url, json=grant, timeout=10)
    elif how == "query":  # the client id and the grant in the query string, secrets in the body
        body = {k: grant.pop(k) for k in ("client_secret", "password")}
        r = requests.post(url, params=grant, data=body, timeout=10)
    elif how == "basic":
        body = {k: v for k, v in grant.items() if k not in ("client_id", "client_secret")}
        header = basic(app_and_user.client_id, app_and_user.client_secret)
        r = requests.post(url, data=body, headers={"Authorization": header}, timeout=10)
    else:  # the reference's old clients GET the endpoint, every parameter in the URL
        r = requests.get(
            url, params={**app_and_user.creds, "grant_type": "client_credentials"}, timeout=10
        )
    assert r.status_code == 200, r.text


def test_password_in_query_string_is_refused(oauth_server: LiveServer, app_and_user: World) -> None:
    grant = app_and_user.password_grant()
    for r in (
        requests.get(token_url(oauth_server), params=grant, timeout=10),
        requests.post(
            token_url(oauth_server),
            params={"password": PASSWORD},
            data={k: v for k, v in grant.items() if k != "password"},
            timeout=10,
        ),
    ):
        body = assert_oauth_error(r, 400, "invalid_request")
        assert "never in the URL" in body["error_description"]


def test_invalid_client(oauth_server: LiveServer, app_and_user: World) -> None:
    url = token_url(oauth_server)
    wrong = post(oauth_server, {**app_and_user.password_grant(), "client_secret": "nope"})
    assert_oauth_error(wrong, 401, "invalid_client")
    assert "WWW-Authenticate" not in wrong.headers
    missing = post(oauth_server, {"grant_type": "credentials", "state": "s1"})
    assert assert_oauth_error(missing, 401, "invalid_client")["state"] == "s1"
    header = basic(app_and_user.client_id, "wrong")
    via_basic = requests.post(
        url, data={"grant_type": "credentials"}, headers={"Authorization": header}, timeout=10
    )
    assert_oauth_error(via_basic, 401, "invalid_client")
    assert via_basic.headers["WWW-Authenticate"].startswith("Basic ")
    garbled = requests.post(
        url, data={"grant_type": "credentials"}, headers={"Authorization": "Basic !!!"}, timeout=10
    )
    assert_oauth_error(garbled, 401, "invalid_client")
    both = requests.post(
        url,
        data={"grant_type": "credentials", "client_secret": app_and_user.client_secret},
        headers={"Authorization": basic(app_and_user.client_id, app_and_user.client_secret)},
        timeout=10,
    )
    assert_oauth_error(both, 400, "invalid_request")


def test_disabled_application_is_an_invalid_client(
    oauth_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    with sessions() as s, s.begin():
        s.execute(update(Application).values(enabled=False))
    assert_oauth_error(post(oauth_server, app_and_user.password_grant()), 401, "invalid_client")


def test_grant_type_errors(oauth_server: LiveServer, app_and_user: World) -> None:
    missing = post(oauth_server, {**app_and_user.creds, "state": "st"})
    assert assert_oauth_error(missing, 400, "invalid_request")["state"] == "st"
    unknown = post(oauth_server, {**app_and_user.creds, "grant_type": "implicit"})
    assert_oauth_error(unknown, 400, "unsupported_grant_type")
    bare = post(oauth_server, {**app_and_user.creds, "grant_type": "refresh_token"})
    assert_oauth_error(bare, 400, "invalid_request")


def test_unauthorized_client_when_the_application_is_restricted(
    oauth_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    with sessions() as s, s.begin():
        s.execute(update(Application).values(roles=["grant:authorization_code"]))
    r = post(oauth_server, app_and_user.password_grant(state="q"))
    assert assert_oauth_error(r, 400, "unauthorized_client")["state"] == "q"


def test_invalid_scope(
    oauth_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    for scope in ("admin", "offline_access write"):
        r = post(oauth_server, app_and_user.password_grant(scope=scope))
        assert_oauth_error(r, 400, "invalid_scope")
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(Token)) == 0


def test_unsupported_body_type_is_406(oauth_server: LiveServer) -> None:
    r = requests.post(
        token_url(oauth_server), data="x=y", headers={"Content-Type": "invalid/type"}, timeout=10
    )
    assert r.status_code == 406
    assert r.json() == {"error": "The requested content-type 'invalid/type' is not supported."}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"data": {"client_id": "a\x00b", "client_secret": "x", "grant_type": "credentials"}},
        {"json": {"client_id": "\ud800", "client_secret": "x"}},
        {"json": {"client_id": "x" * 100_000, "client_secret": "y"}},
        {"json": ["not", "an", "object"]},
        {"data": b"{not json", "headers": {"Content-Type": "application/json"}},
        {"data": {"grant_type": "\"'<>\x01\u00e9"}},
        {"headers": {"Authorization": "Basic " + base64.b64encode(b"\xff\x00:\x00").decode()}},
        {"data": {"code": "\x00", "grant_type": "authorization_code"}},
        {"params": {"state": "\x00" * 10}},
    ],
)
def test_malformed_requests_never_get_a_5xx(
    oauth_server: LiveServer, app_and_user: World, kwargs: dict[str, Any]
) -> None:
    r = requests.post(token_url(oauth_server), timeout=10, **kwargs)
    assert 400 <= r.status_code < 500, r.text
    assert "error" in r.json()


def test_malformed_grant_values_never_get_a_5xx(
    oauth_server: LiveServer, app_and_user: World
) -> None:
    for extra in (
        {"email": "\x00@x.org"},
        {"email": "a" * 5000},
        {"code": "\x00", "grant_type": "authorization_code", "redirect_uri": "x"},
        {"grant_type": "oauth_token", "oauth_provider": "facebook", "oauth_token": "\x00"},
        {"scope": "\x00"},
    ):
        r = post(oauth_server, {**app_and_user.password_grant(), **extra})
        assert 400 <= r.status_code < 500, (extra, r.text)


def test_a_second_application_gets_its_own_tokens(
    oauth_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    other = make_world(sessions, oauth_settings)
    a = post(oauth_server, app_and_user.password_grant()).json()["access_token"]
    b = post(oauth_server, other.password_grant()).json()["access_token"]
    assert a != b
    with sessions() as s:
        apps = set(s.scalars(select(Token.application_id)))
    assert apps == {app_and_user.application_id, other.application_id}
