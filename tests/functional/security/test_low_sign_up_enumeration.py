"""Lower finding: sign-up told which emails have an account, and never checked the address.

Before the fix, signing up with a registered address answered "An account with this email
already exists", and a new address was signed in at once, unverified. Now both get the same
"check your email" page, at the same cost (no argon2 hash either: where mail confirms
addresses, sign-up keeps no password); the new address gets a confirmation link, where its
owner chooses the password, the owner of the known one a note that someone tried. (What a
sign-in after the sign-up tells: ``test_signup_squatting.py``.)
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from argon2 import PasswordHasher
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from common.ids import utcnow
from common.models import User
from common.settings import Settings
from tests.functional.mail_support import Inbox, body_of, link_in
from tests.pages import Account, form, make_account, sign_in, text
from tests.servers import LiveServer

NEW_EMAIL = "newcomer@example.org"
PASSWORD = "Haystacks at sunset"


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count argon2 hashes (counted, not timed: the machines are shared)."""
    calls: list[str] = []
    original = PasswordHasher.hash

    def counting(self: PasswordHasher, password: str | bytes, *, salt: bytes | None = None) -> str:
        calls.append("hash")
        return original(self, password, salt=salt)

    monkeypatch.setattr(PasswordHasher, "hash", counting)
    return calls


def sign_up(base: str, email: str) -> tuple[requests.Response, bool]:
    """Sign up from a fresh browser; return the answer and whether the browser is signed in."""
    with requests.Session() as web:
        f = form(web.get(f"{base}/account/sign_up").text, "/account/sign_up")
        data = {**f.fields, "name": "Someone", "email": email, "password": PASSWORD}
        r = web.post(f"{base}/account/sign_up", data=data, allow_redirects=False)
        return r, web.get(f"{base}/account", allow_redirects=False).status_code == 200


def shape(r: requests.Response, email: str) -> tuple[Any, ...]:
    """Return what a requester can see of an answer, with the typed address blanked out."""
    headers = sorted(k.lower() for k in r.headers if k.lower() not in ("date", "content-length"))
    body = r.text.replace(email, "EMAIL")
    return r.status_code, headers, body, r.cookies.keys()


def test_a_known_and_a_new_address_get_the_same_answer(
    mail_server: LiveServer,
    inbox: tuple[Inbox, int],
    clean_db: Any,
    sessions: sessionmaker[Session],
    base_settings: Settings,
    hashed: list[str],
) -> None:
    base = mail_server.url
    known: Account = make_account(
        sessions, base_settings, name="Camille Pissarro", email_verified_at=utcnow()
    )
    hashed.clear()
    taken, taken_signed_in = sign_up(base, known.email)
    hashes_for_known = len(hashed)
    new, new_signed_in = sign_up(base, NEW_EMAIL)
    assert hashes_for_known == len(hashed) - hashes_for_known == 0  # the same work either way
    assert taken.status_code == new.status_code == 200
    assert shape(taken, known.email) == shape(new, NEW_EMAIL)
    assert "Check your email" in text(new.text)
    assert not taken_signed_in and not new_signed_in

    messages = {m["To"]: m for m in inbox[0].wait_for(2)}
    note, welcome = messages[known.email], messages[NEW_EMAIL]
    assert note["Subject"] == "Someone tried to sign up with your address"
    assert "/account/password/forgot" in body_of(note)
    assert "/account/email/verify" not in body_of(note)
    assert welcome["Subject"] == "Confirm your email address"

    # The known account is untouched: its password still works, no second account appeared.
    with requests.Session() as web:
        assert sign_in(web, base, known.email, PASSWORD).status_code == 400
    with requests.Session() as web:
        assert sign_in(web, base, known.email, known.password).status_code == 302
    with sessions() as s:
        count = select(func.count()).select_from(User).where(User.email == known.email)
        assert s.scalar(count) == 1

    # The newcomer's link confirms the address, sets the password and signs in.
    with requests.Session() as web:
        confirm = web.get(link_in(welcome, "/account/email/verify?token="))
        f = form(confirm.text, "/account/email/verify")
        chosen = {"password": "Boulevard Montmartre", "confirm": "Boulevard Montmartre"}
        done = web.post(base + f.action, data={**f.fields, **chosen}, allow_redirects=False)
        assert done.status_code == 302 and done.headers["Location"] == "/account"
        assert web.get(f"{base}/account", allow_redirects=False).status_code == 200
    with sessions() as s:
        user = s.scalars(select(User).where(User.email == NEW_EMAIL)).one()
        assert user.email_verified_at is not None


def test_a_confirmation_link_is_bound_to_its_user_and_address(
    mail_server: LiveServer,
    inbox: tuple[Inbox, int],
    clean_db: Any,
    sessions: sessionmaker[Session],
) -> None:
    base = mail_server.url
    assert sign_up(base, NEW_EMAIL)[0].status_code == 200
    link = link_in(inbox[0].wait_for(1)[0], "/account/email/verify?token=")
    with sessions() as s, s.begin():
        s.scalars(select(User).where(User.email == NEW_EMAIL)).one().email = "moved@example.org"
    r = requests.get(link, timeout=10)
    assert r.status_code == 400 and "no longer works" in text(r.text)
    token = link.split("?token=", 1)[1]
    for target in (
        f"{base}/account/email/verify?token={token[:-2]}xy",
        f"{base}/account/email/verify?token=garbage",
        f"{base}/account/email/verify",
        f"{base}/account/password/reset/{token}",  # single-purpose: not a reset link either
    ):
        assert requests.get(target, timeout=10).status_code == 400
