"""Forgotten password over real HTTP and real SMTP (a local aiosmtpd server on a free port)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from sqlalchemy.orm import Session, sessionmaker

from auth_server.views.password import SALT
from common.ids import utcnow
from common.models import Token
from common.settings import AuthSettings, Settings
from common.stores import Stores
from tests.functional.mail_support import Inbox, link_in
from tests.pages import Account, form, make_account, sign_in, text
from tests.servers import LiveServer

NEW_PASSWORD = "Water lilies 1899"


@pytest.fixture
def web() -> Iterator[requests.Session]:
    """A browser-like session."""
    with requests.Session() as s:
        yield s


@pytest.fixture
def account(clean_db: Any, sessions: sessionmaker[Session], base_settings: Settings) -> Account:
    """A user with a known password and a confirmed address (where mail confirms addresses,
    an unconfirmed account's password signs nothing in)."""
    return make_account(sessions, base_settings, name="Claude Monet", email_verified_at=utcnow())


def ask_for_reset(web: requests.Session, base: str, email: str) -> requests.Response:
    """Submit the forgotten-password form."""
    f = form(web.get(f"{base}/account/password/forgot").text, "/account/password/forgot")
    return web.post(f"{base}/account/password/forgot", data={**f.fields, "email": email})


def test_email_disabled_is_said_plainly(combined_server: LiveServer) -> None:
    r = requests.get(f"{combined_server.url}/account/password/forgot", timeout=10)
    assert r.status_code == 200
    assert "does not send email" in text(r.text)
    assert "<form" not in r.text.split("<main")[1]


def test_reset_by_email_end_to_end(
    mail_server: LiveServer,
    inbox: tuple[Inbox, int],
    web: requests.Session,
    account: Account,
    stores: Stores,
    sessions: sessionmaker[Session],
) -> None:
    base = mail_server.url
    with sessions() as s, s.begin():
        issued = stores.tokens.issue(
            s, kind="access", application_id=account.app_id, user_id=account.user_id, ttl=3600
        )
    stores.tokens.publish(issued.row)
    assert stores.tokens.lookup(issued.value) is not None

    unknown = ask_for_reset(web, base, "nobody@example.org")
    known = ask_for_reset(web, base, account.email.upper())
    assert unknown.status_code == known.status_code == 200
    # The same answer whether or not the address has an account.
    assert text(unknown.text).replace("nobody@example.org", "X") == text(known.text).replace(
        account.email, "X"
    )
    again = ask_for_reset(web, base, account.email)  # within a minute: not sent twice
    assert again.status_code == 200
    (message,) = inbox[0].wait_for(1)
    time.sleep(0.3)
    assert len(inbox[0].messages) == 1
    assert inbox[0].envelopes[0] == ("catalog@example.org", [account.email])
    assert message["Subject"] == "Reset your password"
    link = link_in(message)
    assert link.startswith(base + "/account/password/reset/")

    page = web.get(link)
    assert page.status_code == 200 and page.headers["Referrer-Policy"] == "no-referrer"
    f = form(page.text, "/account/password/reset/")
    weak = web.post(base + f.action, data={**f.fields, "password": "short", "confirm": "short"})
    assert weak.status_code == 400 and "at least 8 characters" in weak.text
    differ = web.post(
        base + f.action, data={**f.fields, "password": NEW_PASSWORD, "confirm": NEW_PASSWORD + "x"}
    )
    assert differ.status_code == 400 and "The passwords differ." in differ.text
    done = web.post(
        base + f.action,
        data={**f.fields, "password": NEW_PASSWORD, "confirm": NEW_PASSWORD},
        allow_redirects=False,
    )
    assert done.status_code == 302 and done.headers["Location"] == "/account/sign_in"

    # The user's access tokens were expired, in SQL and for every resource server.
    assert stores.tokens.lookup(issued.value) is None
    with sessions() as s:
        row = s.get(Token, issued.row.id)
        assert row is not None and row.expired_at is not None
    # The link worked once.
    reused = web.get(link)
    assert reused.status_code == 400 and "no longer works" in text(reused.text)
    assert sign_in(web, base, account.email, account.password).status_code == 400
    assert sign_in(web, base, account.email, NEW_PASSWORD).status_code == 302


def test_reset_without_csrf_changes_nothing(
    mail_server: LiveServer, inbox: tuple[Inbox, int], web: requests.Session, account: Account
) -> None:
    base = mail_server.url
    ask_for_reset(web, base, account.email)
    link = link_in(inbox[0].wait_for(1)[0])
    with requests.Session() as attacker:
        r = attacker.post(link, data={"password": NEW_PASSWORD, "confirm": NEW_PASSWORD})
    assert r.status_code == 400
    assert web.get(link).status_code == 200  # still unused
    assert sign_in(web, base, account.email, account.password).status_code == 302


def test_expired_or_tampered_links_are_refused(
    mail_server: LiveServer, auth_settings: AuthSettings, web: requests.Session, account: Account
) -> None:
    base = mail_server.url

    class LongAgo(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - auth_settings.password_reset_ttl - 60

    old = URLSafeTimedSerializer(auth_settings.secret_key, salt=SALT, signer=LongAgo)
    token = old.dumps({"u": account.user_id, "f": "whatever"})
    for bad in (token, "garbage", token[:-3] + "abc"):
        r = web.get(f"{base}/account/password/reset/{bad}")
        assert r.status_code == 400 and "no longer works" in text(r.text)
