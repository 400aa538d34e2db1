"""The device flow's codes hold against an attacker over real HTTP: user codes cannot be
guessed at /activate faster than the per-account and per-address limits allow (a refused entry
is not even looked up, and the page says so: 429, no 5xx); one address cannot flood the device
authorization endpoint; and a device code buys one token, for the client it was issued to
only, however many redemptions race for it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest
import requests
from sqlalchemy.orm import Session, sessionmaker

from common.settings import AuthSettings, Settings
from common.stores import Stores
from tests.functional.catalog_support import race
from tests.functional.device_support import answer, enter_code, poll, signed_in, start_device
from tests.functional.oauth_support import assert_oauth_error, serve_auth
from tests.pages import Account, make_account, text
from tests.servers import LiveServer

GUESSES = 3


@contextmanager
def throttled_server(
    auth_settings: AuthSettings, stores: Stores, **limits: str
) -> Iterator[LiveServer]:
    """An auth server of its own, with these user-code limits, on a fresh Redis namespace."""
    settings = replace(
        auth_settings,
        redis_prefix=f"{auth_settings.redis_prefix}-device-{time.monotonic_ns()}",
        **limits,
    )
    with serve_auth(settings, stores) as live:
        yield live


@pytest.fixture
def per_account(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """Three wrong codes per account an hour; addresses all but unlimited."""
    with throttled_server(
        auth_settings,
        stores,
        device_code_failures_per_account=f"{GUESSES}/hour",
        device_code_failures_per_ip="1000/hour",
    ) as live:
        yield live


@pytest.fixture
def per_ip(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """Three wrong codes per address an hour; accounts all but unlimited."""
    with throttled_server(
        auth_settings,
        stores,
        device_code_failures_per_account="1000/hour",
        device_code_failures_per_ip=f"{GUESSES}/hour",
    ) as live:
        yield live


@pytest.fixture
def other(account: Account, sessions: sessionmaker[Session], base_settings: Settings) -> Account:
    """Another user, with an application of their own."""
    return make_account(sessions, base_settings, name="Eve Other", app_name="Other App")


def guess(web: requests.Session, base: str, n: int) -> requests.Response:
    """Enter a well-formed user code that no device was given."""
    return enter_code(web, base, f"BBBB-BBB{'CDFG'[n % 4]}")


def assert_throttled(r: requests.Response) -> None:
    """A clear error page: 429, saying why."""
    assert r.status_code == 429, r.text
    assert r.headers["Content-Type"].startswith("text/html")
    assert "Too many wrong codes" in text(r.text)


def test_an_account_guessing_user_codes_is_stopped(
    per_account: LiveServer, account: Account, other: Account
) -> None:
    codes = start_device(per_account.url, account.client_id, account.client_secret)
    guesser = signed_in(per_account.url, other.email, other.password)
    for n in range(GUESSES):
        assert guess(guesser, per_account.url, n).status_code == 400
    assert_throttled(guess(guesser, per_account.url, 0))
    # Even the right code is refused unchecked: no faster guessing by luck.
    assert_throttled(enter_code(guesser, per_account.url, codes["user_code"]))
    # The device's own user, on another account (at the same address), is not locked out.
    owner = signed_in(per_account.url, account.email, account.password)
    assert answer(owner, per_account.url, codes["user_code"]).status_code == 200


def test_right_codes_do_not_use_the_budget(per_account: LiveServer, account: Account) -> None:
    web = signed_in(per_account.url, account.email, account.password)
    for _ in range(GUESSES + 2):
        codes = start_device(per_account.url, account.client_id, account.client_secret)
        assert enter_code(web, per_account.url, codes["user_code"]).status_code == 200
    assert guess(web, per_account.url, 0).status_code == 400


def test_an_address_guessing_user_codes_is_stopped_whatever_the_account(
    per_ip: LiveServer, account: Account, other: Account
) -> None:
    first = signed_in(per_ip.url, other.email, other.password)
    for n in range(GUESSES):
        assert guess(first, per_ip.url, n).status_code == 400
    # Another account from the same address gets no fresh budget.
    second = signed_in(per_ip.url, account.email, account.password)
    assert_throttled(guess(second, per_ip.url, 1))


def test_a_device_code_is_redeemed_once_and_by_its_client_only(
    auth_server: LiveServer, account: Account, other: Account
) -> None:
    codes = start_device(auth_server.url, account.client_id, account.client_secret)
    web = signed_in(auth_server.url, account.email, account.password)
    assert answer(web, auth_server.url, codes["user_code"]).status_code == 200
    # Another client holding the device code gets nothing (and does not burn it).
    stolen = poll(auth_server.url, other.client_id, codes["device_code"], other.client_secret)
    assert_oauth_error(stolen, 400, "invalid_grant")
    # Redemptions racing: exactly one gets the token.
    results = race(
        auth_server.url,
        6,
        lambda http, n: http.post(
            f"{auth_server.url}/oauth2/access_token",
            data={
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                "device_code": codes["device_code"],
                "client_id": account.client_id,
                "client_secret": account.client_secret,
            },
            timeout=10,
        ),
    )
    statuses = sorted(r.status_code for r in results)
    assert statuses == [200] + [400] * 5, [r.text for r in results]
    for r in results:
        if r.status_code == 400:
            assert r.json()["error"] == "invalid_grant"
    again = poll(auth_server.url, account.client_id, codes["device_code"], account.client_secret)
    assert_oauth_error(again, 400, "invalid_grant")


def test_device_authorization_requests_are_limited_per_address(
    auth_settings: AuthSettings, stores: Stores, account: Account
) -> None:
    with throttled_server(auth_settings, stores, device_authorizations_per_ip="3/hour") as live:
        for _ in range(3):
            start_device(live.url, account.client_id, account.client_secret)
        r = requests.post(
            f"{live.url}/oauth2/device_authorization",
            data={"client_id": account.client_id, "client_secret": account.client_secret},
            headers={"Connection": "close"},
            timeout=10,
        )
        assert_oauth_error(r, 429, "slow_down")
        assert int(r.headers["Retry-After"]) > 0
