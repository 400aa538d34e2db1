"""Lower finding: the sign-in throttle could be overrun by a burst, and kept two budgets.

Before the fix the sign-in page tested its limit, hashed, and only then counted the failure, so
a concurrent burst got 13 password checks through a limit of 10; and the page and the
credentials grant counted in separate budgets, doubling what a guesser could try. Now both
count every attempt in the same budgets, atomically, before any hashing: the budget per account
and address, and the ceiling per account (that the owner gets through a guesser's spent budget
is ``test_sign_in_lockout``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest
import requests
from argon2 import PasswordHasher
from sqlalchemy.orm import Session, sessionmaker

from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.oauth_support import PASSWORD, World, make_world, serve_auth, token_url
from tests.pages import form, sign_in
from tests.servers import LiveServer

BURST = 40
WRONG = "Not the password 1"


@pytest.fixture
def verified(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count argon2 verifications (counted, not timed: the machines are shared)."""
    calls: list[str] = []
    original = PasswordHasher.verify

    def counting(self: PasswordHasher, hash: str, password: str | bytes) -> bool:
        calls.append(hash[:16])
        return original(self, hash, password)

    monkeypatch.setattr(PasswordHasher, "verify", counting)
    return calls


def throttled_server(
    auth_settings: AuthSettings,
    stores: Stores,
    per_account_ip: str,
    per_account: str = "100000/minute",
) -> Iterator[LiveServer]:
    """Serve an auth server with per-account limits, a fresh counter namespace, many threads."""
    settings = replace(
        auth_settings,
        login_attempts_per_account_ip=per_account_ip,
        login_attempts_per_account=per_account,
        login_attempts_per_ip="100000/minute",
        redis_prefix=f"{auth_settings.redis_prefix}-burst-{time.monotonic_ns()}",
    )
    try:
        with serve_auth(settings, stores, threads=16) as live:
            yield live
    finally:
        stores.redis.delete(*stores.redis.keys(f"{settings.redis_prefix}:*") or ["-"])


@pytest.fixture
def ten(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server allowing 10 attempts per account and address in 5 minutes."""
    yield from throttled_server(auth_settings, stores, "10/5minutes")


@pytest.fixture
def ten_in_all(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server allowing 10 attempts per account in 5 minutes, from every address."""
    yield from throttled_server(auth_settings, stores, "100000/minute", "10/5minutes")


@pytest.fixture
def three(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server allowing 3 attempts per account and address in 5 minutes."""
    yield from throttled_server(auth_settings, stores, "3/5minutes")


@pytest.fixture
def sign_in_account(
    clean_db: Any, sessions: sessionmaker[Session], auth_settings: AuthSettings
) -> World:
    """A user (password ``PASSWORD``) and an application."""
    return make_world(sessions, auth_settings)


def page_attempt(live: LiveServer, email: str, password: str) -> Callable[[], int]:
    """Load the sign-in form now; return a call that posts it (the attempt) and gives the status."""
    web = requests.Session()
    f = form(web.get(f"{live.url}/account/sign_in").text, "/account/sign_in")
    data = {**f.fields, "email": email, "password": password}

    def attempt() -> int:
        with web:
            r = web.post(f"{live.url}/account/sign_in", data=data, allow_redirects=False)
        return r.status_code

    return attempt


def grant_attempt(live: LiveServer, w: World, password: str) -> Callable[[], int]:
    """Return a call that asks the token endpoint for a credentials grant and gives the status."""
    data = {**w.password_grant(), "password": password}

    def attempt() -> int:
        r = requests.post(token_url(live), data=data, headers={"Connection": "close"}, timeout=30)
        return r.status_code

    return attempt


def burst(attempts: list[Callable[[], int]]) -> list[int]:
    """Fire every attempt at once (released together by a barrier); return the statuses."""
    start = threading.Barrier(len(attempts))

    def fire(attempt: Callable[[], int]) -> int:
        start.wait(timeout=30)
        return attempt()

    with ThreadPoolExecutor(max_workers=len(attempts)) as pool:
        return list(pool.map(fire, attempts))


@pytest.mark.parametrize("budget", ["ten", "ten_in_all"])
def test_a_burst_at_the_page_and_the_grant_gets_ten_checks_in_all(
    budget: str, request: pytest.FixtureRequest, sign_in_account: World, verified: list[str]
) -> None:
    ten: LiveServer = request.getfixturevalue(budget)
    half = BURST // 2
    attempts = [page_attempt(ten, sign_in_account.email, WRONG) for _ in range(half)]
    attempts += [grant_attempt(ten, sign_in_account, WRONG) for _ in range(half)]
    statuses = burst(attempts)
    assert sorted(set(statuses)) == [400, 429]
    assert statuses.count(400) == 10 and statuses.count(429) == BURST - 10
    assert len(verified) == 10  # argon2 ran for the ten attempts the budget allowed, no more
    # Over the limit, the right password is refused before it is checked, at both doors.
    assert page_attempt(ten, sign_in_account.email, PASSWORD)() == 429
    assert grant_attempt(ten, sign_in_account, PASSWORD)() == 429
    assert len(verified) == 10


def test_failures_at_the_page_use_the_grants_budget(
    three: LiveServer, sign_in_account: World, verified: list[str]
) -> None:
    for _ in range(3):
        assert page_attempt(three, sign_in_account.email, WRONG)() == 400
    r = requests.post(token_url(three), data=sign_in_account.password_grant(), timeout=10)
    assert r.status_code == 429 and r.json()["error"] == "slow_down"
    assert int(r.headers["Retry-After"]) >= 1
    assert len(verified) == 3


def test_failures_at_the_grant_use_the_pages_budget(
    three: LiveServer, sign_in_account: World, verified: list[str]
) -> None:
    for _ in range(3):
        assert grant_attempt(three, sign_in_account, WRONG)() == 400
    with requests.Session() as web:
        blocked = sign_in(web, three.url, sign_in_account.email, PASSWORD)
    assert blocked.status_code == 429 and "Too many" in blocked.text
    assert int(blocked.headers["Retry-After"]) >= 1
    assert len(verified) == 3


def test_right_passwords_at_the_page_do_not_use_up_the_budget(
    three: LiveServer, sign_in_account: World
) -> None:
    for _ in range(5):
        with requests.Session() as web:
            assert sign_in(web, three.url, sign_in_account.email, PASSWORD).status_code == 302
    assert page_attempt(three, sign_in_account.email, WRONG)() == 400


def test_right_passwords_at_the_grant_do_not_use_up_the_budget(
    three: LiveServer, sign_in_account: World
) -> None:
    for _ in range(5):
        assert grant_attempt(three, sign_in_account, PASSWORD)() == 200
    assert grant_attempt(three, sign_in_account, WRONG)() == 400
