"""Medium finding: anyone could block an application's XAPP issuance.

The attack: an application's client id is public. The per-client budget counted every attempt
before the secret was checked, so a burst of requests with a wrong secret used it up and the
real application got 429 on ``/api/tokens/xapp_token`` and on the ``client_credentials`` grant.

What holds now, over real HTTP with the guesser on 127.0.0.2 and the owner on 127.0.0.1: wrong
secrets draw on a budget of their own, per client id and source address, which the guesser
exhausts for its own address only (further guesses, and even the right secret, from there get
429 before any check); the owner keeps getting tokens on both routes; and a concurrent burst of
guesses gets no more secrets checked than the budget allows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
import requests

from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.load_support import database_down
from tests.functional.oauth_support import serve_auth
from tests.functional.source_address import GUESSER, OWNER, client_from
from tests.pages import Account
from tests.servers import LiveServer

PER_CLIENT = 6  # tokens the application may be issued
FAILURES = 4  # wrong secrets per client id and address
PER_IP = 60  # attempts per address
BURST = 30


@pytest.fixture
def server(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server with small XAPP budgets (a minute long: nothing refills mid-test)."""
    settings = replace(
        auth_settings,
        xapp_attempts_per_client=f"{PER_CLIENT}/minute",
        xapp_attempts_per_ip=f"{PER_IP}/minute",
        xapp_failures_per_client_ip=f"{FAILURES}/minute",
        redis_prefix=f"{auth_settings.redis_prefix}-xapp-budget-{time.monotonic_ns()}",
    )
    try:
        with serve_auth(settings, stores, threads=16) as live:
            yield live
    finally:
        stores.redis.delete(*stores.redis.keys(f"{settings.redis_prefix}:*") or ["-"])


def xapp(live: LiveServer, address: str, client_id: str, secret: str) -> requests.Response:
    """Ask for an XAPP token the reference API's way, from ``address``."""
    with client_from(address) as http:
        return http.post(
            f"{live.url}/api/tokens/xapp_token",
            data={"client_id": client_id, "client_secret": secret},
            timeout=10,
        )


def grant(live: LiveServer, address: str, client_id: str, secret: str) -> requests.Response:
    """Ask for an XAPP token with the client_credentials grant (HTTP Basic), from ``address``."""
    with client_from(address) as http:
        return http.post(
            f"{live.url}/oauth2/access_token",
            data={"grant_type": "client_credentials"},
            auth=(client_id, secret),
            timeout=10,
        )


def burst(attempts: list[Callable[[], int]]) -> list[int]:
    """Fire every attempt at once (released together by a barrier); return the statuses."""
    start = threading.Barrier(len(attempts))

    def fire(attempt: Callable[[], int]) -> int:
        start.wait(timeout=30)
        return attempt()

    with ThreadPoolExecutor(max_workers=len(attempts)) as pool:
        return list(pool.map(fire, attempts))


def test_guesses_do_not_lock_the_owner_out(server: LiveServer, account: Account) -> None:
    # More wrong secrets than the application's whole budget, on both routes.
    statuses = [
        send(server, GUESSER, account.client_id, f"guess-{n}").status_code
        for n in range(PER_CLIENT * 2)
        for send in (xapp, grant)
    ]
    assert statuses.count(401) == FAILURES and statuses.count(429) == len(statuses) - FAILURES
    # The owner, from its own address, is issued tokens on both routes.
    issued = xapp(server, OWNER, account.client_id, account.client_secret)
    assert issued.status_code == 201 and issued.json()["type"] == "xapp_token"
    token = grant(server, OWNER, account.client_id, account.client_secret)
    assert token.status_code == 200 and token.json()["access_token"]
    # The guesser stays refused, before any check: more guesses and even the right secret.
    for send in (xapp, grant):
        refused = send(server, GUESSER, account.client_id, "another guess")
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
        assert send(server, GUESSER, account.client_id, account.client_secret).status_code == 429
    assert xapp(server, OWNER, account.client_id, account.client_secret).status_code == 201


def test_a_burst_of_guesses_gets_no_more_checks_than_the_budget(
    server: LiveServer, account: Account
) -> None:
    def guess(n: int) -> Callable[[], int]:
        send = xapp if n % 2 else grant
        return lambda: send(server, GUESSER, account.client_id, f"guess-{n}").status_code

    statuses = burst([guess(n) for n in range(BURST)])
    assert statuses.count(401) == FAILURES
    assert statuses.count(429) == BURST - FAILURES
    assert xapp(server, OWNER, account.client_id, account.client_secret).status_code == 201


def test_the_owner_keeps_its_own_issuance_budget(server: LiveServer, account: Account) -> None:
    for n in range(FAILURES * 3):
        xapp(server, GUESSER, account.client_id, f"guess-{n}")
    for _ in range(PER_CLIENT):
        assert xapp(server, OWNER, account.client_id, account.client_secret).status_code == 201
    # The application's own budget is its tokens: the next is refused, as before the fix.
    refused = grant(server, OWNER, account.client_id, account.client_secret)
    assert refused.status_code == 429 and refused.json()["error"] == "slow_down"


def test_an_address_trying_many_client_ids_is_refused(server: LiveServer, account: Account) -> None:
    statuses = [xapp(server, GUESSER, f"made-up-{n}", "x").status_code for n in range(PER_IP + 5)]
    assert statuses.count(401) == PER_IP and statuses[PER_IP:] == [429] * 5
    assert xapp(server, GUESSER, account.client_id, account.client_secret).status_code == 429
    assert xapp(server, OWNER, account.client_id, account.client_secret).status_code == 201


def test_a_database_outage_spends_no_wrong_secret_budget(
    server: LiveServer, account: Account
) -> None:
    # While the database is down no secret can be checked: each attempt answers 503, and none
    # may count as a wrong secret, or the owner stays refused for the window after it is back.
    with database_down():
        for _ in range(FAILURES + 2):
            r = xapp(server, OWNER, account.client_id, account.client_secret)
            assert r.status_code == 503, r.text
            r = grant(server, OWNER, account.client_id, account.client_secret)
            assert r.status_code == 503, r.text
    assert xapp(server, OWNER, account.client_id, account.client_secret).status_code == 201
    assert grant(server, OWNER, account.client_id, account.client_secret).status_code == 200
