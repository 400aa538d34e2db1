"""Low finding: ten wrong guesses locked the owner out.

The attack: the sign-in budget was per account, from any address. Ten wrong passwords for
someone's email, from anywhere, and for five minutes the owner's right password got 429 at the
sign-in page and at the credentials and password grants.

What holds now, over real HTTP with the owner on 127.0.0.1 and guessers on other loopback
addresses: the anonymous budget is counted per account and address, so a guesser spends its own
address's budget and the owner's right password still gets through, at the page and the grants.
Guessers at many addresses together reach a per-account ceiling, which bounds the guesses an
account can take; past it, a browser holding the device cookie of an earlier successful sign-in
(signed, HttpOnly, bound to the account) still gets through on a budget of its own. A forged
cookie, one signed with another key, and another account's genuine cookie count as none; and a
device that fails too often is itself locked out.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import requests
from itsdangerous import URLSafeTimedSerializer
from sqlalchemy.orm import Session, sessionmaker

from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.load_support import database_down
from tests.functional.oauth_support import PASSWORD, World, make_world, serve_auth, token_url
from tests.functional.source_address import GUESSER, OWNER, client_from
from tests.pages import post_form, sign_in
from tests.servers import LiveServer

PER_ACCOUNT_IP = 3
CEILING = 8
PER_DEVICE = 3
WRONG = "Not the password 1"
DEVICE = "artcat_device"


@pytest.fixture
def server(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server with small sign-in budgets (ten minutes long: nothing frees mid-test)."""
    settings = replace(
        auth_settings,
        login_attempts_per_ip="100000/minute",
        login_attempts_per_account_ip=f"{PER_ACCOUNT_IP}/10minutes",
        login_attempts_per_account=f"{CEILING}/10minutes",
        login_attempts_per_device=f"{PER_DEVICE}/10minutes",
        redis_prefix=f"{auth_settings.redis_prefix}-lockout-{time.monotonic_ns()}",
    )
    try:
        with serve_auth(settings, stores, threads=8) as live:
            yield live
    finally:
        stores.redis.delete(*stores.redis.keys(f"{settings.redis_prefix}:*") or ["-"])


@pytest.fixture
def owner(clean_db: Any, sessions: sessionmaker[Session], auth_settings: AuthSettings) -> World:
    """The account under attack (password ``PASSWORD``) and an application."""
    return make_world(sessions, auth_settings)


@pytest.fixture
def other(owner: World, sessions: sessionmaker[Session], auth_settings: AuthSettings) -> World:
    """Another account, whose owner signs in at their own browser."""
    return make_world(sessions, auth_settings)


def page(live: LiveServer, address: str, email: str, password: str) -> int:
    """Sign in at the page from a fresh browser at ``address``; return the status."""
    with client_from(address) as browser:
        return sign_in(browser, live.url, email, password).status_code


def grant(live: LiveServer, address: str, w: World, password: str) -> requests.Response:
    """Ask for a credentials grant from ``address``."""
    with client_from(address) as http:
        return http.post(token_url(live), data=w.password_grant(password=password), timeout=30)


def reach_the_ceiling(live: LiveServer, w: World) -> None:
    """Guess from one address after another until the account's ceiling refuses a fresh one."""
    failures = 0
    for n in range(2, 2 + CEILING):
        address = f"127.0.0.{n + 10}"
        for _ in range(PER_ACCOUNT_IP):
            status = grant(live, address, w, WRONG).status_code
            if status == 429:
                assert failures == CEILING
                return
            assert status == 400
            failures += 1
    raise AssertionError("the ceiling was never reached")


def signed_in_before(live: LiveServer, w: World) -> requests.Session:
    """The owner's browser: signed in once with the password, then signed out."""
    browser = client_from(OWNER)
    assert sign_in(browser, live.url, w.email, PASSWORD).status_code == 302
    assert DEVICE in browser.cookies
    out = post_form(browser, live.url, "/account/sign_out", "/account/sign_out")
    assert out.status_code == 302
    return browser


def test_the_owner_gets_through_a_guessers_spent_budget(server: LiveServer, owner: World) -> None:
    statuses = [page(server, GUESSER, owner.email, WRONG) for _ in range(PER_ACCOUNT_IP)]
    statuses += [grant(server, GUESSER, owner, WRONG).status_code for _ in range(3)]
    assert statuses == [400] * PER_ACCOUNT_IP + [429] * 3
    # The guesser's address is refused before any check, the right password included.
    assert page(server, GUESSER, owner.email, PASSWORD) == 429
    refused = grant(server, GUESSER, owner, PASSWORD)
    assert refused.status_code == 429 and refused.json()["error"] == "slow_down"
    # The owner, at its own address and a browser never used before: the page and the grant.
    assert page(server, OWNER, owner.email, PASSWORD) == 302
    assert grant(server, OWNER, owner, PASSWORD).status_code == 200


def test_past_the_ceiling_a_browser_signed_in_before_still_gets_through(
    server: LiveServer, owner: World
) -> None:
    browser = signed_in_before(server, owner)
    reach_the_ceiling(server, owner)
    # Without a device cookie the ceiling holds, whatever the address: that bounds guessing.
    assert page(server, OWNER, owner.email, PASSWORD) == 429
    assert grant(server, OWNER, owner, PASSWORD).status_code == 429
    assert page(server, "127.0.0.99", owner.email, PASSWORD) == 429
    # The browser that signed in before has a budget of its own.
    with browser:
        assert sign_in(browser, server.url, owner.email, PASSWORD).status_code == 302
        assert browser.get(f"{server.url}/account").status_code == 200


def test_forged_and_other_accounts_cookies_count_as_none(
    server: LiveServer, owner: World, other: World, auth_settings: AuthSettings
) -> None:
    theirs = signed_in_before(server, other).cookies[DEVICE]
    payload, _, signature = theirs.rpartition(".")
    claims = {"a": "0123456789abcdef0123456789abcdef", "d": "0123456789abcdef0123456789abcdef"}
    forged = [
        theirs,  # genuine, but another account's
        URLSafeTimedSerializer("not the key", salt="artcat.device-cookie").dumps(claims),
        URLSafeTimedSerializer(auth_settings.secret_key, salt="another use").dumps(claims),
        f"{URLSafeTimedSerializer('x').dumps(claims).rpartition('.')[0]}.{signature}",
        f"{payload}x.{signature}",
        "garbage",
        "x" * 4000,
    ]
    reach_the_ceiling(server, owner)
    for cookie in forged:
        with client_from(OWNER) as browser:
            browser.cookies.set(DEVICE, cookie, path="/account")
            blocked = sign_in(browser, server.url, owner.email, PASSWORD)
            assert blocked.status_code == 429, cookie
            assert "Too many" in blocked.text and int(blocked.headers["Retry-After"]) >= 1
    # The other account's owner, at its own browser, is not affected by the owner's ceiling.
    with client_from(OWNER) as browser:
        browser.cookies.set(DEVICE, theirs, path="/account")
        assert sign_in(browser, server.url, other.email, PASSWORD).status_code == 302


def test_a_device_that_fails_too_often_is_locked_out(server: LiveServer, owner: World) -> None:
    browser = signed_in_before(server, owner)
    stolen = browser.cookies[DEVICE]
    reach_the_ceiling(server, owner)
    with browser:
        for _ in range(PER_DEVICE):
            assert sign_in(browser, server.url, owner.email, WRONG).status_code == 400
        # Its budget spent, the device counts as none: the ceiling refuses it, right password too.
        assert sign_in(browser, server.url, owner.email, PASSWORD).status_code == 429
    with client_from(GUESSER) as thief:  # a copy of the cookie elsewhere shares its budget
        thief.cookies.set(DEVICE, stolen, path="/account")
        assert sign_in(thief, server.url, owner.email, WRONG).status_code == 429


def test_the_device_cookie_is_set_by_a_right_password_only(
    server: LiveServer, owner: World
) -> None:
    with client_from(OWNER) as browser:
        assert sign_in(browser, server.url, owner.email, WRONG).status_code == 400
        assert DEVICE not in browser.cookies
        signed = sign_in(browser, server.url, owner.email, PASSWORD)
    assert signed.status_code == 302
    cookie = next(c for c in signed.raw.headers.getlist("Set-Cookie") if c.startswith(DEVICE))
    attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")}
    assert {"httponly", "path", "samesite", "max-age"} <= attributes
    assert "secure" not in attributes  # plain http here; test_sign_in_pages checks https
    assert "Path=/account" in cookie and "SameSite=Strict" in cookie
    assert owner.email not in cookie and owner.email.split("@")[0] not in cookie


def test_a_database_outage_spends_no_sign_in_budget(server: LiveServer, owner: World) -> None:
    # While the database is down no password can be checked: each attempt answers 503, and none
    # may use the budget, or the owner stays refused for the window after it is back.
    with database_down():
        for _ in range(PER_ACCOUNT_IP + 1):
            assert page(server, OWNER, owner.email, PASSWORD) == 503
            assert grant(server, OWNER, owner, PASSWORD).status_code == 503
    assert page(server, OWNER, owner.email, PASSWORD) == 302
    assert grant(server, OWNER, owner, PASSWORD).status_code == 200
