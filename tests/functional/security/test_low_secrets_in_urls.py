"""Secrets and tokens in URLs: query strings end up in access logs, proxies and browser history.

Every POST route of the auth server (and the token endpoint, whatever the method) refuses a
client secret, password, code, verifier or token in the query string with a clear 400 that says
to send it in the body, before any other work: nothing is issued, revoked or signed in.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from auth_server.params import SECRET_PARAMS
from common.models import Token
from tests.functional.conftest import LiveServer
from tests.pages import Account

OAUTH_ROUTES = ("/oauth2/access_token", "/oauth2/revoke", "/oauth2/introspect")
API_ROUTES = ("/api/tokens/xapp_token", "/api/applications")
PAGE_ROUTES = ("/account/sign_in", "/account/sign_up", "/oauth2/authorize")


def tokens(sessions: sessionmaker[Session]) -> int:
    """Return how many tokens exist."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(Token)) or 0)


@pytest.mark.parametrize("name", SECRET_PARAMS)
@pytest.mark.parametrize("path", OAUTH_ROUTES)
def test_oauth_routes_refuse_secrets_in_the_query_string(
    auth_server: LiveServer, account: Account, path: str, name: str
) -> None:
    r = requests.post(
        f"{auth_server.url}{path}",
        params={name: "s3cret-value"},
        data={"client_id": account.client_id, "client_secret": account.client_secret},
        timeout=10,
    )
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error"] == "invalid_request"
    assert name in body["error_description"] and "request body" in body["error_description"]
    assert r.headers["Cache-Control"] == "no-store"


def test_the_reference_xapp_request_with_credentials_in_the_url_is_refused(
    auth_server: LiveServer, account: Account, sessions: sessionmaker[Session]
) -> None:
    # The reference API's Getting Started page did exactly this; it is refused on purpose.
    r = requests.post(
        f"{auth_server.url}/api/tokens/xapp_token",
        params={"client_id": account.client_id, "client_secret": account.client_secret},
        timeout=10,
    )
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["type"] == "param_error"
    assert "client_secret" in body["message"] and "request body" in body["message"]
    assert tokens(sessions) == 0
    # The same credentials in the body work.
    ok = requests.post(
        f"{auth_server.url}/api/tokens/xapp_token",
        data={"client_id": account.client_id, "client_secret": account.client_secret},
        timeout=10,
    )
    assert ok.status_code == 201


@pytest.mark.parametrize("path", API_ROUTES)
def test_api_routes_answer_the_api_envelope(auth_server: LiveServer, path: str) -> None:
    r = requests.post(f"{auth_server.url}{path}", params={"access_token": "t0ken"}, timeout=10)
    assert r.status_code == 400
    assert r.json()["type"] == "param_error" and "access_token" in r.json()["message"]


@pytest.mark.parametrize("path", PAGE_ROUTES)
def test_pages_answer_an_error_page(auth_server: LiveServer, path: str) -> None:
    r = requests.post(
        f"{auth_server.url}{path}", params={"password": "hunter2 hunter2"}, timeout=10
    )
    assert r.status_code == 400
    assert r.headers["Content-Type"].startswith("text/html")
    assert "request body" in r.text


def test_a_token_request_by_get_with_a_password_is_refused_before_any_work(
    auth_server: LiveServer, account: Account, sessions: sessionmaker[Session]
) -> None:
    params: dict[str, Any] = {
        "grant_type": "credentials",
        "client_id": account.client_id,
        "client_secret": account.client_secret,
        "email": account.email,
        "password": account.password,
    }
    r = requests.get(f"{auth_server.url}/oauth2/access_token", params=params, timeout=10)
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"
    assert tokens(sessions) == 0


def test_percent_encoded_names_are_refused_too(auth_server: LiveServer, account: Account) -> None:
    r = requests.post(
        f"{auth_server.url}/oauth2/access_token?client%5Fsecret=x&%70assword=y",
        data={"grant_type": "credentials", "client_id": account.client_id},
        timeout=10,
    )
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"
    assert "client_secret" in r.json()["error_description"]


def test_secrets_in_the_body_still_work(auth_server: LiveServer, account: Account) -> None:
    r = requests.post(
        f"{auth_server.url}/oauth2/access_token",
        params={"grant_type": "credentials", "client_id": account.client_id},
        data={
            "client_secret": account.client_secret,
            "email": account.email,
            "password": account.password,
        },
        timeout=10,
    )
    assert r.status_code == 200, r.text
