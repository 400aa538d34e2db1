"""``/oauth2/authorize`` over real HTTP: the redirect URI policy and request errors."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from common.settings import Settings
from tests.functional.authorize_support import (
    CHALLENGE,
    HTTPS_CB,
    assert_error_page,
    authorize_url,
)
from tests.pages import Account, make_account, query, text
from tests.servers import LiveServer


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "javascript:alert(1)",
        "JavaScript://client.example/%0aalert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
        "https://client.example/callback#fragment",
        "https://client.example/callback#",
        "http://client.example/callback",
        "myapp://cb",
        "https://client.example/callback/",
        "https://client.example/callback?x=1",
        "//client.example/callback",
        "/callback",
        "https://client.example@evil.example/callback",
        " https://client.example/callback",
        "https:///callback",
        "",
    ],
)
def test_bad_redirect_uri_is_an_error_page_never_a_redirect(
    combined_server: LiveServer, web: requests.Session, account: Account, redirect_uri: str
) -> None:
    url = authorize_url(
        combined_server.url,
        client_id=account.client_id,
        redirect_uri=redirect_uri,
        response_type="code",
        state="s1",
    )
    r = web.get(url, allow_redirects=False)
    assert_error_page(r)
    assert "redirect" in text(r.text).lower()


def test_unknown_missing_or_disabled_client_is_an_error_page(
    combined_server: LiveServer,
    web: requests.Session,
    account: Account,
    sessions: sessionmaker[Session],
) -> None:
    base = combined_server.url
    for client_id in ("nope", "", "x" * 500):
        r = web.get(authorize_url(base, client_id=client_id, redirect_uri=HTTPS_CB), timeout=10)
        assert_error_page(r)
    with sessions() as s, s.begin():
        s.execute(update(Application).values(enabled=False))
    r = web.get(authorize_url(base, client_id=account.client_id, redirect_uri=HTTPS_CB), timeout=10)
    assert_error_page(r)
    assert "Unknown application" in r.text


def test_registered_redirect_uris_need_an_exact_match(
    combined_server: LiveServer, web: requests.Session, registered: Account
) -> None:
    base = combined_server.url
    for near_miss in (
        HTTPS_CB + "/",
        HTTPS_CB + "?x=1",
        HTTPS_CB.upper(),
        "https://other.example/",
    ):
        r = web.get(
            authorize_url(base, client_id=registered.client_id, redirect_uri=near_miss),
            allow_redirects=False,
        )
        assert_error_page(r)
    r = web.get(
        authorize_url(
            base, client_id=registered.client_id, redirect_uri=HTTPS_CB, response_type="code"
        ),
        allow_redirects=False,
    )
    assert r.status_code == 302 and "/account/sign_in" in r.headers["Location"]


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "https://client.example/callback",
        "https://client.example:8443/cb",
        "http://127.0.0.1:8765/cb",
        "http://127.0.0.1/cb",
        "com.example.app:/oauth2redirect",
    ],
)
def test_registered_https_loopback_and_private_schemes_are_accepted(
    combined_server: LiveServer, web: requests.Session, account: Account, redirect_uri: str
) -> None:
    r = web.get(
        authorize_url(
            combined_server.url,
            client_id=account.client_id,
            redirect_uri=redirect_uri,
            response_type="code",
        ),
        allow_redirects=False,
    )
    # Signed out: the request is valid, so the browser is sent to sign in (on this site).
    assert r.status_code == 302
    assert r.headers["Location"].startswith("/account/sign_in?next=")


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"response_type": "token"}, "unsupported_response_type"),
        ({}, "invalid_request"),
        ({"response_type": "code", "scope": "admin"}, "invalid_scope"),
        ({"response_type": "code", "scope": "offline_access email"}, "invalid_scope"),
        (
            {
                "response_type": "code",
                "code_challenge": CHALLENGE,
                "code_challenge_method": "plain",
            },
            "invalid_request",
        ),
        ({"response_type": "code", "code_challenge": CHALLENGE}, "invalid_request"),
        ({"response_type": "code", "code_challenge_method": "S256"}, "invalid_request"),
        (
            {"response_type": "code", "code_challenge": "short", "code_challenge_method": "S256"},
            "invalid_request",
        ),
    ],
)
def test_request_errors_go_back_to_a_registered_redirect_uri(
    combined_server: LiveServer,
    web: requests.Session,
    params: dict[str, str],
    error: str,
    sessions: sessionmaker[Session],
    base_settings: Settings,
    clean_db: Any,
) -> None:
    app = make_account(sessions, base_settings, redirect_uris=[HTTPS_CB + "?keep=1"])
    url = authorize_url(
        combined_server.url,
        client_id=app.client_id,
        redirect_uri=HTTPS_CB + "?keep=1",
        state="xyz",
        **params,
    )
    r = web.get(url, allow_redirects=False)
    assert r.status_code == 302
    location = r.headers["Location"]
    assert location.startswith(HTTPS_CB + "?keep=1&")
    q = query(location)
    assert q["error"] == error and q["state"] == "xyz" and q["keep"] == "1"
    assert "code" not in q


def test_request_errors_for_an_unregistered_uri_are_not_an_open_redirect(
    combined_server: LiveServer, web: requests.Session, account: Account
) -> None:
    url = authorize_url(
        combined_server.url,
        client_id=account.client_id,
        redirect_uri="https://anywhere.example/phish",
        response_type="token",
        state="xyz",
    )
    r = web.get(url, allow_redirects=False)
    # Not registered: an error page, and no link to the URI either.
    assert_error_page(r)
    assert "anywhere.example" not in r.text


def test_repeated_parameters_are_refused(
    combined_server: LiveServer, web: requests.Session, registered: Account
) -> None:
    base = f"{combined_server.url}/oauth2/authorize?client_id={registered.client_id}"
    r = web.get(f"{base}&client_id={registered.client_id}&redirect_uri={HTTPS_CB}")
    assert_error_page(r)
    r = web.get(
        f"{base}&redirect_uri={HTTPS_CB}&response_type=code&state=a&state=b", allow_redirects=False
    )
    assert r.status_code == 302 and query(r.headers["Location"])["error"] == "invalid_request"
