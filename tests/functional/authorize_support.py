"""Fixtures and helpers shared by the ``/oauth2/authorize`` tests."""

from __future__ import annotations

from urllib.parse import urlencode

import requests
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import AuthorizationCode
from tests.pages import SECURITY_HEADERS

HTTPS_CB = "https://client.example/callback"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGjSstw-cM"  # RFC 7636 appendix B
# What the ``account`` fixture's application registered: a web callback, a native app's
# loopback (any port matches) and private-use scheme callbacks.
ACCOUNT_REDIRECT_URIS = [
    HTTPS_CB,
    "https://client.example:8443/cb",
    "http://127.0.0.1/cb",
    "com.example.app:/cb",
    "com.example.app:/oauth2redirect",
]


def authorize_url(base: str, **params: str) -> str:
    """Return an authorize URL."""
    return f"{base}/oauth2/authorize?{urlencode(params)}"


def assert_error_page(r: requests.Response) -> None:
    """An HTML error page: 400, no redirect, the security headers."""
    assert r.status_code == 400, r.text
    assert "Location" not in r.headers
    assert r.headers["Content-Type"].startswith("text/html")
    for name, value in SECURITY_HEADERS.items():
        assert r.headers[name] == value


def code_count(sessions: sessionmaker[Session]) -> int:
    """Return how many authorization codes exist."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(AuthorizationCode)) or 0)


def approve(web: requests.Session, base: str, url: str) -> str:
    """Open an authorization URL's consent page as the signed-in user, allow, and return where
    the browser is sent (the client's redirect URI with the code)."""
    from tests.pages import form  # tests.pages imports the functional conftest

    page = web.get(url, allow_redirects=False)
    assert page.status_code == 200, page.text
    fields = form(page.text, "/oauth2/authorize").fields
    r = web.post(
        f"{base}/oauth2/authorize", data={**fields, "approve": "Allow"}, allow_redirects=False
    )
    assert r.status_code == 302, r.text
    return str(r.headers["Location"])
