"""The authorization code grant over real HTTP: binding, PKCE, single use under concurrency."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from common.ids import utcnow
from common.models import Application, AuthorizationCode, Token
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.catalog_support import race
from tests.functional.oauth_support import (
    REDIRECT_URI,
    World,
    assert_oauth_error,
    code_params,
    get_artists,
    make_code,
    make_world,
    post,
    serve_auth,
    token_url,
)
from tests.servers import LiveServer


def count_tokens(sessions: sessionmaker[Session]) -> int:
    """Return the number of token rows."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(Token)) or 0)


def test_code_exchange_issues_a_token_bound_to_the_code(
    oauth_server: LiveServer,
    resource_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
) -> None:
    code = make_code(sessions, app_and_user, scope="offline_access")
    r = post(oauth_server, code_params(app_and_user, code, state="abc"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["scope"] == "offline_access" and body["state"] == "abc"
    assert get_artists(resource_server, body["access_token"]) == 200
    with sessions() as s:
        row = s.scalars(select(Token)).one()
        code_row = s.scalars(select(AuthorizationCode)).one()
    assert row.code_id == code_row.id and row.user_id == app_and_user.user_id
    assert code_row.used_at is not None
    assert code not in (code_row.digest, row.digest)  # only digests are stored


def test_code_errors_do_not_burn_the_code(
    oauth_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    code = make_code(sessions, app_and_user)
    missing_uri = post(
        oauth_server,
        {k: v for k, v in code_params(app_and_user, code).items() if k != "redirect_uri"},
    )
    assert_oauth_error(missing_uri, 400, "invalid_request")
    other_uri = post(oauth_server, code_params(app_and_user, code, redirect_uri=REDIRECT_URI + "x"))
    assert (
        "redirect_uri" in assert_oauth_error(other_uri, 400, "invalid_grant")["error_description"]
    )
    more_scope = post(oauth_server, code_params(app_and_user, code, scope="offline_access"))
    assert_oauth_error(more_scope, 400, "invalid_scope")
    assert post(oauth_server, code_params(app_and_user, code)).status_code == 200


def test_code_is_bound_to_its_client(
    oauth_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    code = make_code(sessions, app_and_user)
    other = make_world(sessions, oauth_settings)
    r = post(oauth_server, {**code_params(app_and_user, code), **other.creds})
    assert_oauth_error(r, 400, "invalid_grant")
    assert post(oauth_server, code_params(app_and_user, code)).status_code == 200


def test_unknown_missing_and_expired_codes(
    oauth_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    assert_oauth_error(post(oauth_server, code_params(app_and_user, "nope")), 400, "invalid_grant")
    no_code = {k: v for k, v in code_params(app_and_user, "x").items() if k != "code"}
    assert_oauth_error(post(oauth_server, no_code), 400, "invalid_request")
    expired = make_code(sessions, app_and_user)
    with sessions() as s, s.begin():
        s.execute(update(AuthorizationCode).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert_oauth_error(post(oauth_server, code_params(app_and_user, expired)), 400, "invalid_grant")
    # A code issued with a longer lifetime still dies 10 minutes (code_ttl) after issue.
    old = make_code(sessions, app_and_user, ttl=3600)
    with sessions() as s, s.begin():
        s.execute(
            update(AuthorizationCode)
            .where(AuthorizationCode.used_at.is_(None))
            .values(created_at=utcnow() - timedelta(seconds=601))
        )
    assert_oauth_error(post(oauth_server, code_params(app_and_user, old)), 400, "invalid_grant")
    assert count_tokens(sessions) == 0


def test_pkce(
    oauth_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    verifier = secrets.token_urlsafe(48)
    code = make_code(sessions, app_and_user, challenge=create_s256_code_challenge(verifier))
    missing = post(oauth_server, code_params(app_and_user, code))
    assert_oauth_error(missing, 400, "invalid_request")
    malformed = post(oauth_server, code_params(app_and_user, code, code_verifier="short"))
    assert_oauth_error(malformed, 400, "invalid_request")
    wrong = post(
        oauth_server, code_params(app_and_user, code, code_verifier=secrets.token_urlsafe(48))
    )
    assert_oauth_error(wrong, 400, "invalid_grant")
    ok = post(oauth_server, code_params(app_and_user, code, code_verifier=verifier))
    assert ok.status_code == 200, ok.text


def test_pkce_downgrade_is_refused(
    oauth_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    code = make_code(sessions, app_and_user)  # no challenge at the authorization request
    r = post(oauth_server, code_params(app_and_user, code, code_verifier=secrets.token_urlsafe(48)))
    assert_oauth_error(r, 400, "invalid_request")  # RFC 9700 4.8 (Authlib's answer)
    assert post(oauth_server, code_params(app_and_user, code)).status_code == 200


def test_replay_expires_the_token_issued_from_the_code(
    oauth_server: LiveServer,
    resource_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
) -> None:
    code = make_code(sessions, app_and_user)
    token = post(oauth_server, code_params(app_and_user, code)).json()["access_token"]
    assert get_artists(resource_server, token) == 200
    replay = post(oauth_server, code_params(app_and_user, code))
    assert_oauth_error(replay, 400, "invalid_grant")
    assert get_artists(resource_server, token) == 401
    assert count_tokens(sessions) == 1


RACERS = 50


@pytest.fixture
def racing_server(oauth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server over real HTTP with a thread per racer, so that every redemption runs at
    the same time (the shared test server has 4 threads: it would queue most of them)."""
    with serve_auth(oauth_settings, stores, threads=RACERS) as live:
        yield live


def test_fifty_concurrent_redemptions_one_winner(
    racing_server: LiveServer,
    resource_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
) -> None:
    code = make_code(sessions, app_and_user)

    def redeem(http: requests.Session, _n: int) -> requests.Response:
        return http.post(
            token_url(racing_server),
            data=code_params(app_and_user, code),
            headers={"Connection": "close"},
            timeout=60,
        )

    results = race(racing_server.url, RACERS, redeem, timeout=30)
    statuses = sorted(r.status_code for r in results)
    assert statuses == [200] + [400] * (RACERS - 1), [
        r.text for r in results if r.status_code != 400
    ]
    assert all(r.json()["error"] == "invalid_grant" for r in results if r.status_code == 400)
    assert count_tokens(sessions) == 1
    # The losers are replays of a used code (RFC 6749 4.1.2: the authorization server SHOULD
    # revoke the tokens issued from it): the one token issued from it is expired too.
    winner = next(r for r in results if r.status_code == 200).json()["access_token"]
    assert get_artists(resource_server, winner) == 401
    with sessions() as s:
        assert s.scalars(select(Token)).one().expired_at is not None


@pytest.mark.parametrize("auth_method", ["client_secret_basic", "client_secret_post"])
def test_stock_client_library_with_pkce(
    oauth_server: LiveServer,
    resource_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    auth_method: str,
) -> None:
    with sessions() as s, s.begin():
        s.execute(update(Application).values(standard_token_response=True))
    # A with-block: an open keep-alive connection would hold up the server's shutdown.
    with OAuth2Session(
        app_and_user.client_id,
        app_and_user.client_secret,
        scope="offline_access",
        redirect_uri=REDIRECT_URI,
        code_challenge_method="S256",
        token_endpoint_auth_method=auth_method,
    ) as client:
        verifier = secrets.token_urlsafe(64)
        url, state = client.create_authorization_url(
            f"{oauth_server.url}/oauth2/authorize", code_verifier=verifier
        )
        query = parse_qs(urlsplit(url).query)
        assert query["code_challenge_method"] == ["S256"]
        # The consent page (not under test here) would issue this code and redirect back.
        code = make_code(
            sessions, app_and_user, scope=query["scope"][0], challenge=query["code_challenge"][0]
        )
        token = client.fetch_token(
            token_url(oauth_server),
            authorization_response=f"{REDIRECT_URI}?code={code}&state={state}",
            code_verifier=verifier,
        )
        assert token["token_type"] == "Bearer" and token["scope"] == "offline_access"
        assert isinstance(token["expires_in"], int) and token["expires_at"] > 0
        r = client.get(f"{resource_server.url}/api/artists", timeout=10)
    assert r.status_code == 200
