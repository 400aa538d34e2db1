"""The demo application's redirect URI is a page that exists: signing in ends on it, with the
code and how to exchange it, and the code it shows is exchanged as it says."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest
import requests
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from artcat.loaders.demo import (
    DEMO_REDIRECT_URIS,
    OLD_DEMO_REDIRECT_URIS,
    demo_credentials,
    load_demo,
)
from common.models import Application
from common.settings import Settings
from tests.functional.authorize_support import approve, authorize_url
from tests.pages import SECURITY_HEADERS, query, sign_in

pytestmark = pytest.mark.functional

VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"


def challenge(verifier: str) -> str:
    """Return the S256 code challenge of a verifier (RFC 7636)."""
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_signing_in_with_the_demo_application_ends_on_a_page_with_the_code(
    clean_db: Engine, base_settings: Settings, combined_server: Any
) -> None:
    load_demo(clean_db, base_settings, artworks=5)
    creds = demo_credentials(base_settings)
    base = combined_server.url
    port = base.rsplit(":", 1)[1]
    # The registered URI names port 8000; a loopback URI matches on any port (RFC 8252 7.3).
    redirect_uri = f"http://127.0.0.1:{port}/oauth2/callback"
    web = requests.Session()
    assert sign_in(web, base, creds.user_email, creds.user_password).status_code == 302
    url = authorize_url(
        base,
        response_type="code",
        client_id=creds.client_id,
        redirect_uri=redirect_uri,
        state="xyz",
        code_challenge=challenge(VERIFIER),
        code_challenge_method="S256",
    )
    location = approve(web, base, url)
    assert location.startswith(redirect_uri + "?")
    code = query(location)["code"]
    page = web.get(location)
    assert page.status_code == 200
    for name, value in SECURITY_HEADERS.items():
        assert page.headers[name] == value
    assert "You are signed in" in page.text and code in page.text
    assert "/oauth2/access_token" in page.text and "grant_type=authorization_code" in page.text
    token = requests.post(
        f"{base}/oauth2/access_token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "client_id": creds.client_id,
            "client_secret": creds.client_secret,
            "code_verifier": VERIFIER,
        },
        timeout=20,
    )
    assert token.status_code == 200, token.text
    bearer = {"Authorization": f"Bearer {token.json()['access_token']}"}
    me = requests.get(f"{base}/api/current_user", headers=bearer, timeout=20)
    assert me.status_code == 200 and me.json()["email"] == creds.user_email


def test_the_page_explains_an_error_and_itself(combined_server: Any) -> None:
    base = combined_server.url
    denied = requests.get(
        f"{base}/oauth2/callback",
        params={"error": "access_denied", "error_description": "<b>no</b>"},
        timeout=20,
    )
    assert denied.status_code == 200
    assert "did not complete" in denied.text and "access_denied" in denied.text
    assert "<b>no</b>" not in denied.text and "&lt;b&gt;no&lt;/b&gt;" in denied.text
    bare = requests.get(f"{base}/oauth2/callback", timeout=20)
    assert bare.status_code == 200 and "redirect URI" in bare.text


def test_a_demo_application_registered_before_moves_to_the_page(
    clean_db: Engine, base_settings: Settings
) -> None:
    load_demo(clean_db, base_settings, artworks=5)
    creds = demo_credentials(base_settings)
    with Session(clean_db) as s, s.begin():
        app = s.scalars(select(Application).where(Application.client_id == creds.client_id)).one()
        assert app.redirect_uris == DEMO_REDIRECT_URIS
        app.redirect_uris = list(OLD_DEMO_REDIRECT_URIS)
    assert load_demo(clean_db, base_settings).skipped  # what serve does on every start
    with Session(clean_db) as s:
        uris = s.scalars(
            select(Application.redirect_uris).where(Application.client_id == creds.client_id)
        ).one()
    assert uris == DEMO_REDIRECT_URIS
