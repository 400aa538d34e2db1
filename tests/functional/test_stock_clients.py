"""Stock OAuth client libraries, unmodified, against the live servers: requests-oauthlib and
Authlib's client for the code flow with PKCE, the password grant and client credentials, and an
AppAuth-style public client (no secret, PKCE, a loopback redirect on a port of its choosing)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session as AuthlibSession
from oauthlib.oauth2 import BackendApplicationClient, LegacyApplicationClient
from requests_oauthlib import OAuth2Session as OAuthlibSession
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from common.settings import Settings
from tests.functional.authorize_support import approve
from tests.functional.process_support import free_port
from tests.pages import Account, make_account, query, sign_in
from tests.servers import LiveServer

WEB_CB = "https://client.example/callback"
LOOPBACK = "http://127.0.0.1/cb"  # registered without a port: any port matches (RFC 8252 7.3)


@pytest.fixture(autouse=True)
def plain_http_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let oauthlib talk to the test servers, which listen on http://127.0.0.1."""
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")


def make_app(
    sessions: sessionmaker[Session], settings: Settings, *, public: bool = False
) -> Account:
    """A user and a new application as registered by default (no token-response option)."""
    account = make_account(sessions, settings, redirect_uris=[WEB_CB, LOOPBACK])
    if public:
        with sessions() as s, s.begin():
            s.execute(
                update(Application)
                .where(Application.id == account.app_id)
                .values(public_client=True)
            )
    return account


@pytest.fixture
def stock(clean_db: Any, sessions: sessionmaker[Session], base_settings: Settings) -> Account:
    """A confidential application for stock clients."""
    return make_app(sessions, base_settings)


@pytest.fixture
def signed_in(combined_server: LiveServer, stock: Account) -> Iterator[requests.Session]:
    """A browser-like session signed in as the application's user."""
    with requests.Session() as web:
        assert sign_in(web, combined_server.url, stock.email).status_code == 302
        yield web


def catalog(base: str, client: Any) -> int:
    """Return the status of a catalog call through the stock client (its Bearer header)."""
    return int(client.get(f"{base}/api/artists", timeout=10).status_code)


def test_requests_oauthlib_code_flow_with_pkce(
    combined_server: LiveServer, stock: Account, signed_in: requests.Session
) -> None:
    base = combined_server.url
    with OAuthlibSession(
        stock.client_id, redirect_uri=WEB_CB, scope=["offline_access"], pkce="S256"
    ) as client:
        url, state = client.authorization_url(f"{base}/oauth2/authorize")
        assert query(url)["code_challenge_method"] == "S256"
        location = approve(signed_in, base, url)
        assert query(location)["state"] == state
        token = client.fetch_token(
            f"{base}/oauth2/access_token",
            authorization_response=location,
            client_secret=stock.client_secret,
        )
        assert token["token_type"] == "Bearer" and token["scope"] == ["offline_access"]
        assert isinstance(token["expires_in"], int)
        assert catalog(base, client) == 200


@pytest.mark.parametrize("auth_method", ["client_secret_basic", "client_secret_post"])
def test_authlib_client_code_flow_with_pkce(
    combined_server: LiveServer, stock: Account, signed_in: requests.Session, auth_method: str
) -> None:
    base = combined_server.url
    verifier = secrets.token_urlsafe(64)
    with AuthlibSession(
        stock.client_id,
        stock.client_secret,
        scope="offline_access",
        redirect_uri=WEB_CB,
        code_challenge_method="S256",
        token_endpoint_auth_method=auth_method,
    ) as client:
        url, _state = client.create_authorization_url(
            f"{base}/oauth2/authorize", code_verifier=verifier
        )
        location = approve(signed_in, base, url)
        token = client.fetch_token(
            f"{base}/oauth2/access_token", authorization_response=location, code_verifier=verifier
        )
        assert token["token_type"] == "Bearer" and token["scope"] == "offline_access"
        assert catalog(base, client) == 200


def test_password_grant(combined_server: LiveServer, stock: Account) -> None:
    base = combined_server.url
    token_url = f"{base}/oauth2/access_token"
    with OAuthlibSession(client=LegacyApplicationClient(client_id=stock.client_id)) as client:
        token = client.fetch_token(
            token_url,
            username=stock.email,
            password=stock.password,
            client_id=stock.client_id,
            client_secret=stock.client_secret,
        )
        assert token["token_type"] == "Bearer" and isinstance(token["expires_in"], int)
        assert catalog(base, client) == 200
    with AuthlibSession(stock.client_id, stock.client_secret) as authlib_client:
        token = authlib_client.fetch_token(token_url, username=stock.email, password=stock.password)
        assert token["token_type"] == "Bearer"
        assert catalog(base, authlib_client) == 200


def test_client_credentials(combined_server: LiveServer, stock: Account) -> None:
    base = combined_server.url
    token_url = f"{base}/oauth2/access_token"
    with OAuthlibSession(client=BackendApplicationClient(client_id=stock.client_id)) as client:
        token = client.fetch_token(
            token_url, client_id=stock.client_id, client_secret=stock.client_secret
        )
        assert token["token_type"] == "Bearer"
        assert token["expires_in"] == 7 * 86400  # an XAPP token
        assert catalog(base, client) == 200
    with AuthlibSession(stock.client_id, stock.client_secret) as authlib_client:
        token = authlib_client.fetch_token(token_url, grant_type="client_credentials")
        assert catalog(base, authlib_client) == 200


def test_appauth_style_public_client(
    combined_server: LiveServer, sessions: sessionmaker[Session], base_settings: Settings
) -> None:
    base = combined_server.url
    public = make_app(sessions, base_settings, public=True)
    redirect_uri = f"http://127.0.0.1:{free_port()}/cb"
    verifier = secrets.token_urlsafe(64)
    with (
        requests.Session() as web,
        AuthlibSession(
            public.client_id,
            scope="offline_access",
            redirect_uri=redirect_uri,
            code_challenge_method="S256",
            token_endpoint_auth_method="none",
        ) as client,
    ):
        assert sign_in(web, base, public.email).status_code == 302
        url, _ = client.create_authorization_url(f"{base}/oauth2/authorize", code_verifier=verifier)
        location = approve(web, base, url)
        assert location.startswith(redirect_uri + "?")
        token = client.fetch_token(
            f"{base}/oauth2/access_token", authorization_response=location, code_verifier=verifier
        )
        assert token["token_type"] == "Bearer"
        assert catalog(base, client) == 200
        # Without the verifier the public client's code is worth nothing.
        location = approve(
            web,
            base,
            client.create_authorization_url(f"{base}/oauth2/authorize", code_verifier=verifier)[0],
        )
        bare = requests.post(
            f"{base}/oauth2/access_token",
            data={
                "grant_type": "authorization_code",
                "client_id": public.client_id,
                "code": query(location)["code"],
                "redirect_uri": redirect_uri,
            },
            timeout=10,
        )
        assert bare.status_code == 400 and bare.json()["error"] == "invalid_request"
        # Nor may a public client leave PKCE out of the authorization request (RFC 9700 2.1.1).
        no_pkce = web.get(
            f"{base}/oauth2/authorize",
            params={
                "client_id": public.client_id,
                "redirect_uri": redirect_uri,
                "response_type": "code",
            },
            allow_redirects=False,
        )
        assert no_pkce.status_code == 302
        assert query(no_pkce.headers["Location"])["error"] == "invalid_request"


def test_reference_token_response_only_when_asked(
    combined_server: LiveServer, stock: Account, sessions: sessionmaker[Session]
) -> None:
    with sessions() as s, s.begin():
        s.execute(
            update(Application)
            .where(Application.id == stock.app_id)
            .values(standard_token_response=False)
        )
    body = requests.post(
        f"{combined_server.url}/oauth2/access_token",
        data={
            "grant_type": "password",
            "username": stock.email,
            "password": stock.password,
            "client_id": stock.client_id,
            "client_secret": stock.client_secret,
        },
        timeout=10,
    ).json()
    assert body["token_type"] == "Bearer"
    assert isinstance(body["expires_in"], str) and body["expires_in"].endswith("+00:00")
