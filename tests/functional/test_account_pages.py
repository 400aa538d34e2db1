"""The account area over real HTTP: authorized applications (revoke) and your applications."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from common.ids import utcnow
from common.models import Application, AuthorizationCode, Token
from common.settings import Settings
from common.tokens import IssuedToken
from tests.pages import Account, form, make_account, sign_in, text
from tests.servers import LiveServer


@pytest.fixture
def web() -> Iterator[requests.Session]:
    """A browser-like session."""
    with requests.Session() as s:
        yield s


@pytest.fixture
def account(clean_db: Any, sessions: sessionmaker[Session], base_settings: Settings) -> Account:
    """A user who owns an application."""
    return make_account(sessions, base_settings, name="Hilma")


def issue(stores: Any, sessions: sessionmaker[Session], app_id: str, user_id: str) -> IssuedToken:
    """Issue and publish an access token."""
    with sessions() as s, s.begin():
        issued: IssuedToken = stores.tokens.issue(
            s, kind="access", application_id=app_id, user_id=user_id, ttl=3600
        )
    stores.tokens.publish(issued.row)
    return issued


def xapp_status(base: str, client_id: str, client_secret: str) -> int:
    """Ask for an XAPP token; return the status."""
    r = requests.post(
        f"{base}/api/tokens/xapp_token",
        data={"client_id": client_id, "client_secret": client_secret},
        timeout=10,
    )
    return r.status_code


def test_revoke_expires_the_apps_tokens_for_this_user_only(
    combined_server: LiveServer,
    web: requests.Session,
    account: Account,
    sessions: sessionmaker[Session],
    base_settings: Settings,
    stores: Any,
) -> None:
    base = combined_server.url
    other = make_account(sessions, base_settings, app_name="Museum Guide")
    mine = [issue(stores, sessions, other.app_id, account.user_id) for _ in range(2)]
    theirs = issue(stores, sessions, other.app_id, other.user_id)
    own_app = issue(stores, sessions, account.app_id, account.user_id)
    sign_in(web, base, account.email)

    page = web.get(f"{base}/account/authorizations")
    assert page.status_code == 200
    body = text(page.text)
    assert "Museum Guide" in body and "Gallery Viewer" in body
    revoke = form(page.text, f"/account/authorizations/{other.app_id}/revoke")

    forged = web.post(base + revoke.action, data={}, allow_redirects=False)
    assert forged.status_code == 400
    assert all(stores.tokens.lookup(t.value) is not None for t in mine)

    r = web.post(base + revoke.action, data=revoke.fields, allow_redirects=False)
    assert r.status_code == 302 and r.headers["Location"] == "/account/authorizations"
    for t in mine:
        assert stores.tokens.lookup(t.value) is None
    with sessions() as s:
        rows = s.scalars(select(Token).where(Token.id.in_([t.row.id for t in mine]))).all()
        assert len(rows) == 2 and all(row.expired_at is not None for row in rows)
    assert stores.tokens.lookup(theirs.value) is not None
    assert stores.tokens.lookup(own_app.value) is not None

    after = web.get(f"{base}/account/authorizations")
    body = text(after.text)
    assert "Museum Guide can no longer use your account." in body
    assert "Revoke access for Museum Guide" not in after.text
    assert "Revoke access for Gallery Viewer" in after.text


def test_revoke_also_expires_codes_not_yet_redeemed(
    combined_server: LiveServer,
    web: requests.Session,
    account: Account,
    sessions: sessionmaker[Session],
    stores: Any,
) -> None:
    base = combined_server.url
    sign_in(web, base, account.email)
    consent = web.get(
        f"{base}/oauth2/authorize",
        params={
            "client_id": account.client_id,
            "redirect_uri": "https://c.example/cb",
            "response_type": "code",
        },
    )
    f = form(consent.text, "/oauth2/authorize")
    approved = web.post(
        f"{base}/oauth2/authorize", data={**f.fields, "approve": "Allow"}, allow_redirects=False
    )
    assert approved.status_code == 302
    issue(stores, sessions, account.app_id, account.user_id)
    page = web.get(f"{base}/account/authorizations")
    revoke = form(page.text, f"/account/authorizations/{account.app_id}/revoke")
    assert web.post(base + revoke.action, data=revoke.fields).status_code == 200
    with sessions() as s:
        code = s.scalar(select(AuthorizationCode))
        # It was good for ten minutes; the revoke ended it at once.
        assert code is not None and code.expires_at <= utcnow()


def test_register_an_application_and_see_its_secret_once(
    combined_server: LiveServer,
    web: requests.Session,
    account: Account,
    sessions: sessionmaker[Session],
) -> None:
    base = combined_server.url
    sign_in(web, base, account.email)
    page = web.get(f"{base}/account/applications")
    assert page.status_code == 200 and "Gallery Viewer" in page.text
    f = form(page.text, "/account/applications")

    bad = web.post(
        f"{base}/account/applications",
        data={
            **f.fields,
            "name": "Bad",
            "redirect_uris": "javascript:alert(1)\nhttps://ok.example/cb#frag\nhttp://evil.example/",
        },
    )
    assert bad.status_code == 400
    body = text(bad.text)
    assert "javascript:" in body and "fragment" in body and "must use https" in body
    assert 'aria-describedby="redirect_uris-hint redirect_uris-error"' in bad.text

    uris = "https://ok.example/cb\r\n\r\nhttp://127.0.0.1:9000/cb\r\ncom.example.app:/cb\r\n"
    created = web.post(
        f"{base}/account/applications",
        data={**f.fields, "name": "Print Shop", "browser_flow": "y", "redirect_uris": uris},
    )
    assert created.status_code == 201
    client_id = created.text.split('id="client-id">')[1].split("<")[0]
    secret = created.text.split('id="client-secret">')[1].split("<")[0]
    assert len(secret) >= 43
    assert created.headers["Cache-Control"] == "no-store"
    with sessions() as s:
        app = s.scalar(select(Application).where(Application.client_id == client_id))
        assert app is not None and app.user_id == account.user_id
        assert app.redirect_uris == [
            "https://ok.example/cb",
            "http://127.0.0.1:9000/cb",
            "com.example.app:/cb",
        ]
        assert secret not in app.client_secret_digest
        assert app.standard_token_response  # the box was left unticked
    assert xapp_status(base, client_id, secret) == 201
    listing = web.get(f"{base}/account/applications")
    assert "Print Shop" in listing.text and client_id in listing.text
    assert secret not in listing.text

    legacy = web.post(
        f"{base}/account/applications",
        data={
            **f.fields,
            "name": "Legacy Client",
            "redirect_uris": "https://ok.example/cb",
            "browser_flow": "y",
            "reference_token_response": "y",
        },
    )
    assert legacy.status_code == 201
    with sessions() as s:
        kept = s.scalar(select(Application).where(Application.name == "Legacy Client"))
        assert kept is not None and not kept.standard_token_response


def test_rotate_a_secret_the_old_one_stops_working(
    combined_server: LiveServer,
    web: requests.Session,
    account: Account,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    base = combined_server.url
    stranger = make_account(sessions, base_settings, app_name="Not Yours")
    sign_in(web, base, account.email)
    page = web.get(f"{base}/account/applications")
    rotate = form(page.text, f"/account/applications/{account.app_id}/rotate")
    assert web.post(base + rotate.action, data={}).status_code == 400  # no CSRF token
    assert xapp_status(base, account.client_id, account.client_secret) == 201

    r = web.post(base + rotate.action, data=rotate.fields)
    assert r.status_code == 200 and "The old secret no longer works." in r.text
    new_secret = r.text.split('id="client-secret">')[1].split("<")[0]
    assert xapp_status(base, account.client_id, account.client_secret) == 401
    assert xapp_status(base, account.client_id, new_secret) == 201

    theirs = web.post(f"{base}/account/applications/{stranger.app_id}/rotate", data=rotate.fields)
    assert theirs.status_code == 404
    assert xapp_status(base, stranger.client_id, stranger.client_secret) == 201
    bogus = web.post(f"{base}/account/applications/not-an-id/rotate", data=rotate.fields)
    assert bogus.status_code == 404
