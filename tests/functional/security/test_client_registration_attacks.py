"""Dynamic client registration under attack, over real HTTP: registering without the operator's
initial access token (none, a wrong one, one used up or expired), managing another client's
registration with one's own registration access token, registering redirect URIs that
would send codes to a script or over plain http, and refresh tokens beyond the registration."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
import requests
from redis import Redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from common.settings import AuthSettings
from tests.functional.registration_support import (
    PUBLIC_CLIENT,
    REGISTER,
    bearer,
    code_with_pkce,
    forget_registrations,
    initial_token,
    redeem,
    register,
)
from tests.pages import Account, sign_in
from tests.servers import LiveServer

pytestmark = pytest.mark.functional


@pytest.fixture(autouse=True)
def fresh(clean_db: Any, redis_client: Redis, auth_settings: AuthSettings) -> None:
    """An empty database, no registration counted."""
    forget_registrations(redis_client, auth_settings.redis_prefix)


def app_count(sessions: sessionmaker[Session]) -> int:
    """Return how many applications exist."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(Application)) or 0)


def test_registration_needs_a_valid_initial_access_token(
    auth_server: LiveServer, sessions: sessionmaker[Session]
) -> None:
    base = auth_server.url
    expired = initial_token(sessions, expires=timedelta(seconds=-1))
    for token in (None, "", "wrong-token", "x" * 600, expired):
        r = register(base, token)
        assert r.status_code == 401, (token, r.text)
        assert r.json()["error"] == "invalid_token"
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
    basic = requests.post(
        f"{base}{REGISTER}", json=PUBLIC_CLIENT, auth=("client", "secret"), timeout=10
    )
    assert basic.status_code == 401
    assert app_count(sessions) == 0


def test_an_initial_access_token_is_used_up(
    auth_server: LiveServer, sessions: sessionmaker[Session]
) -> None:
    token = initial_token(sessions, uses=2)
    assert register(auth_server.url, token).status_code == 201
    assert register(auth_server.url, token).status_code == 201
    third = register(auth_server.url, token)
    assert third.status_code == 401 and third.json()["error"] == "invalid_token"
    assert app_count(sessions) == 2


def test_a_burst_spends_no_more_uses_than_the_token_has(
    auth_server: LiveServer, sessions: sessionmaker[Session]
) -> None:
    token = initial_token(sessions, uses=3)
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda _: register(auth_server.url, token).status_code, range(8)))
    assert sorted(statuses) == [201] * 3 + [401] * 5
    assert app_count(sessions) == 3


def test_a_registration_token_manages_its_own_client_only(
    auth_server: LiveServer, sessions: sessionmaker[Session]
) -> None:
    token = initial_token(sessions, uses=2)
    mine = register(auth_server.url, token).json()
    theirs = register(auth_server.url, token).json()
    theirs_uri = theirs["registration_client_uri"]
    mine_token = bearer(mine["registration_access_token"])
    read = requests.get(theirs_uri, headers=mine_token, timeout=10)
    assert read.status_code == 401 and theirs["client_id"] not in read.text
    update = {
        **PUBLIC_CLIENT,
        "client_id": theirs["client_id"],
        "redirect_uris": ["https://evil.example/cb"],
    }
    put = requests.put(theirs_uri, json=update, headers=mine_token, timeout=10)
    assert put.status_code == 401
    gone = requests.delete(theirs_uri, headers=mine_token, timeout=10)
    assert gone.status_code == 401
    # Nor do the initial access token or the client's own secret open it.
    assert requests.get(theirs_uri, headers=bearer(token), timeout=10).status_code == 401
    assert requests.get(theirs_uri, timeout=10).status_code == 401
    # Their registration is as it was, and still theirs to read.
    own = requests.get(theirs_uri, headers=bearer(theirs["registration_access_token"]), timeout=10)
    assert own.status_code == 200
    assert own.json()["redirect_uris"] == PUBLIC_CLIENT["redirect_uris"]
    with sessions() as s:
        app = s.scalar(select(Application).where(Application.client_id == theirs["client_id"]))
        assert app is not None and app.enabled


@pytest.mark.parametrize(
    "uri",
    [
        "javascript:alert(document.cookie)",
        "JavaScript:alert(1)//https://client.example/",
        "http://evil.example/cb",
        "http://127.0.0.1.evil.example/cb",
        "data:text/html,<script>alert(1)</script>",
        "https://client.example/cb#fragment",
        "https://user@client.example/cb",
    ],
)
def test_unsafe_redirect_uris_are_refused(
    auth_server: LiveServer, sessions: sessionmaker[Session], uri: str
) -> None:
    token = initial_token(sessions)
    r = register(auth_server.url, token, {**PUBLIC_CLIENT, "redirect_uris": [uri]})
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_redirect_uri"
    # ...and as a place to be sent after signing out.
    r = register(auth_server.url, token, {**PUBLIC_CLIENT, "post_logout_redirect_uris": [uri]})
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_client_metadata"
    assert app_count(sessions) == 0
    # Nor can an update bring one in.
    client = register(auth_server.url, token).json()
    change = {**PUBLIC_CLIENT, "client_id": client["client_id"], "redirect_uris": [uri]}
    headers = bearer(client["registration_access_token"])
    put = requests.put(client["registration_client_uri"], json=change, headers=headers, timeout=10)
    assert put.status_code == 400 and put.json()["error"] == "invalid_redirect_uri"


def test_refresh_tokens_only_as_registered(
    auth_server: LiveServer,
    sessions: sessionmaker[Session],
    account: Account,
    web: requests.Session,
) -> None:
    """refresh_token without the code flow is refused and writes nothing; a client whose
    registration dropped the grant can no longer refresh with the tokens it held."""
    base = auth_server.url
    alone = {**PUBLIC_CLIENT, "grant_types": ["refresh_token"], "response_types": []}
    r = register(base, initial_token(sessions), alone)
    assert (r.status_code, r.json()["error"]) == (400, "invalid_client_metadata")
    assert app_count(sessions) == 1  # the account's own application only

    grants = ["authorization_code", "refresh_token"]
    client = register(base, initial_token(sessions), {**PUBLIC_CLIENT, "grant_types": grants})
    assert client.status_code == 201, client.text
    client_id = client.json()["client_id"]
    assert sign_in(web, base, account.email).status_code == 302
    held = redeem(base, client_id, code_with_pkce(web, base, client_id, scope="offline_access"))
    refresh_token = held.json()["refresh_token"]
    plain = {**PUBLIC_CLIENT, "client_id": client_id}  # grant_types: authorization_code only
    uri = client.json()["registration_client_uri"]
    management = client.json()["registration_access_token"]
    assert requests.put(uri, json=plain, headers=bearer(management), timeout=10).ok
    r = requests.post(
        f"{base}/oauth2/access_token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": client_id,
        },
        timeout=10,
    )
    assert (r.status_code, r.json()["error"]) == (400, "unauthorized_client")
