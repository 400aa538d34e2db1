"""Lower finding: sign-up took addresses in reserved domains, the social placeholder among them.

Signing up as ``facebook-<uid>@users.invalid`` took the address a later facebook sign-in without
an email is given, and that sign-in then failed with a 500. Reserved domains (``.invalid``,
``.test``, ``.example``, ``.localhost``) can receive no mail, so no confirmation could reach
them either: sign-up now refuses them, and the social sign-in keeps its address.
"""

from __future__ import annotations

import secrets
from typing import Any

import pytest
import requests
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import User
from tests.functional.oauth_support import (
    StubProvider,
    World,
    post,
)
from tests.pages import form, text
from tests.servers import LiveServer


def sign_up(base: str, email: str) -> requests.Response:
    """Sign up from a fresh browser."""
    with requests.Session() as web:
        f = form(web.get(f"{base}/account/sign_up").text, "/account/sign_up")
        data = {**f.fields, "name": "Squatter", "email": email, "password": "Impression sunrise"}
        return web.post(f"{base}/account/sign_up", data=data, allow_redirects=False)


def count_users(sessions: sessionmaker[Session], email: str) -> int:
    """Count the accounts with this address."""
    with sessions() as s:
        query = select(func.count()).select_from(User).where(User.email == email)
        return int(s.scalar(query) or 0)


@pytest.mark.parametrize(
    "email",
    [
        "someone@mail.invalid",
        "someone@lab.test",
        "someone@site.example",
        "someone@app.localhost",
        "SOMEONE@Users.Invalid",
        "someone@users.invalid.",
    ],
)
def test_reserved_domains_are_refused(
    oauth_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session], email: str
) -> None:
    r = sign_up(oauth_server.url, email)
    assert r.status_code == 400
    assert "cannot receive email" in text(r.text)
    assert count_users(sessions, email.lower()) == 0


def test_the_social_placeholder_address_cannot_be_taken_first(
    oauth_server: LiveServer,
    app_and_user: World,
    provider: StubProvider,
    sessions: sessionmaker[Session],
    clean_db: Any,
) -> None:
    provider.mode = "up"
    uid = str(secrets.randbelow(10**12))
    placeholder = f"facebook-{uid}@users.invalid"
    assert sign_up(oauth_server.url, placeholder).status_code == 400
    token = secrets.token_urlsafe(24)
    provider.facebook[token] = {"app_id": "fb-app-1", "user": {"id": uid, "name": "No Email"}}
    grant = {
        **app_and_user.creds,
        "grant_type": "oauth_token",
        "oauth_provider": "facebook",
        "oauth_token": token,
    }
    r = post(oauth_server, grant)
    assert r.status_code == 200, r.text
    assert count_users(sessions, placeholder) == 1
