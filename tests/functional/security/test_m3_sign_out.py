"""M3: sign-out, a password change and a reset end every session of the user, copies included.

The browser session is a signed cookie. Before the fix, signing out only told the browser to drop
it: a copy taken earlier (from a shared computer, a proxy log, malware) stayed valid for twelve
hours. Now each session carries the user's session generation, which these three events move on.
"""

from __future__ import annotations

from typing import Any

import requests
from sqlalchemy.orm import Session, sessionmaker

from common.ids import utcnow
from common.settings import Settings
from tests.functional.mail_support import Inbox, link_in
from tests.pages import Account, form, make_account, post_form, sign_in, text
from tests.servers import LiveServer

NEW_PASSWORD = "Lilac dusk over Giverny"


def new_device(base: str, account: Account) -> requests.Session:
    """Sign in from a fresh browser; return it."""
    device = requests.Session()
    assert sign_in(device, base, account.email, account.password).status_code == 302
    return device


def replay(base: str, cookie: str) -> requests.Response:
    """Present a copied session cookie from a browser of its own; return the account page answer."""
    with requests.Session() as thief:
        thief.cookies.set("session", cookie)
        return thief.get(f"{base}/account", allow_redirects=False)


def assert_signed_in(r: requests.Response, account: Account) -> None:
    """Check the answer is the account page of ``account``."""
    assert r.status_code == 200, r.status_code
    assert account.email in text(r.text)


def assert_refused(r: requests.Response) -> None:
    """Check the answer sends the browser to the sign-in page (no account shown)."""
    assert r.status_code == 302, r.status_code
    assert r.headers["Location"].startswith("/account/sign_in")


def fresh_account(sessions: sessionmaker[Session], settings: Settings) -> Account:
    """A user with a known password and a confirmed address."""
    return make_account(sessions, settings, name="Berthe Morisot", email_verified_at=utcnow())


def test_a_cookie_copied_before_sign_out_is_refused_after_it(
    combined_server: LiveServer,
    clean_db: Any,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    base = combined_server.url
    account = fresh_account(sessions, base_settings)
    with new_device(base, account) as laptop, new_device(base, account) as phone:
        copied = laptop.cookies["session"]
        assert_signed_in(replay(base, copied), account)  # the copy works while signed in
        r = post_form(laptop, base, "/account/sign_out", "/account/sign_out")
        assert r.status_code == 302
        assert_refused(replay(base, copied))
        # The replayed cookie lands on the sign-in page, not the account.
        with requests.Session() as thief:
            thief.cookies.set("session", copied)
            page = thief.get(f"{base}/account")
        assert page.url.startswith(f"{base}/account/sign_in")
        assert account.email not in page.text and "Sign in" in page.text
        # Every session of the user ended: the other device's too.
        assert_refused(phone.get(f"{base}/account", allow_redirects=False))
        assert "every session" in text(laptop.get(f"{base}/account/sign_out").text).lower()
    # Signing in again works, with a session of the new generation.
    with new_device(base, account) as again:
        assert_signed_in(again.get(f"{base}/account", allow_redirects=False), account)


def test_a_password_change_ends_the_other_sessions(
    combined_server: LiveServer,
    clean_db: Any,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    base = combined_server.url
    account = fresh_account(sessions, base_settings)
    with new_device(base, account) as laptop, new_device(base, account) as phone:
        copied = phone.cookies["session"]
        r = post_form(
            laptop,
            base,
            "/account/password/change",
            "/account/password/change",
            current_password=account.password,
            new_password=NEW_PASSWORD,
            confirm=NEW_PASSWORD,
        )
        assert r.status_code == 302 and r.headers["Location"] == "/account"
        # The device that changed it stays signed in; the other one and the copy do not.
        assert_signed_in(laptop.get(f"{base}/account", allow_redirects=False), account)
        assert_refused(phone.get(f"{base}/account", allow_redirects=False))
        assert_refused(replay(base, copied))
    with requests.Session() as web:
        assert sign_in(web, base, account.email, account.password).status_code == 400
        assert sign_in(web, base, account.email, NEW_PASSWORD).status_code == 302


def test_a_password_change_needs_the_current_password_and_csrf(
    combined_server: LiveServer,
    clean_db: Any,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    base = combined_server.url
    account = fresh_account(sessions, base_settings)
    with new_device(base, account) as laptop, new_device(base, account) as phone:
        wrong = post_form(
            laptop,
            base,
            "/account/password/change",
            "/account/password/change",
            current_password="Not the password 7",
            new_password=NEW_PASSWORD,
            confirm=NEW_PASSWORD,
        )
        assert wrong.status_code == 400
        assert "current password is incorrect" in text(wrong.text)
        forged = laptop.post(
            f"{base}/account/password/change",
            data={
                "current_password": account.password,
                "new_password": NEW_PASSWORD,
                "confirm": NEW_PASSWORD,
            },
            allow_redirects=False,
        )
        assert forged.status_code == 400
        # Nothing changed: both devices are still signed in, the old password still works.
        assert_signed_in(phone.get(f"{base}/account", allow_redirects=False), account)
        assert_signed_in(laptop.get(f"{base}/account", allow_redirects=False), account)
    with requests.Session() as web:
        assert sign_in(web, base, account.email, account.password).status_code == 302
    signed_out = requests.get(f"{base}/account/password/change", allow_redirects=False, timeout=10)
    assert_refused(signed_out)


def test_a_reset_ends_every_session(
    mail_server: LiveServer,
    inbox: tuple[Inbox, int],
    clean_db: Any,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    base = mail_server.url
    account = fresh_account(sessions, base_settings)
    with new_device(base, account) as phone, requests.Session() as laptop:
        copied = phone.cookies["session"]
        forgot = form(laptop.get(f"{base}/account/password/forgot").text, "/password/forgot")
        laptop.post(base + forgot.action, data={**forgot.fields, "email": account.email})
        link = link_in(inbox[0].wait_for(1)[0])
        reset = form(laptop.get(link).text, "/account/password/reset/")
        done = laptop.post(
            base + reset.action,
            data={**reset.fields, "password": NEW_PASSWORD, "confirm": NEW_PASSWORD},
            allow_redirects=False,
        )
        assert done.status_code == 302
        assert_refused(phone.get(f"{base}/account", allow_redirects=False))
        assert_refused(replay(base, copied))
