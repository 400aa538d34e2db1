"""XAPP issuance is throttled: per client address before any secret is checked, per client id
and address for wrong secrets (a guesser's address is refused before its next secret is
checked), and per client for the tokens issued. A client cannot mint application tokens, or
guess a secret, faster than the limits; it is served again once the window has passed. (That a
guesser cannot lock the owner out is ``test_xapp_issuance_budget``.)"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
import requests

from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.oauth_support import serve_auth
from tests.pages import Account
from tests.servers import LiveServer

PER_CLIENT = 4
PER_IP = 7
FAILURES = 3


@pytest.fixture
def throttled(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server allowing, every 2 seconds, 4 XAPP tokens per client, 7 attempts per IP and
    3 wrong secrets per client and IP."""
    settings = replace(
        auth_settings,
        xapp_attempts_per_client=f"{PER_CLIENT}/2seconds",
        xapp_attempts_per_ip=f"{PER_IP}/2seconds",
        xapp_failures_per_client_ip=f"{FAILURES}/2seconds",
        # Counters live in Redis: a fresh namespace each time.
        redis_prefix=f"{auth_settings.redis_prefix}-xapp-{time.monotonic_ns()}",
    )
    with serve_auth(settings, stores) as live:
        yield live


def xapp(live: LiveServer, client_id: str, secret: str) -> requests.Response:
    """Ask for an XAPP token the reference API's way."""
    return requests.post(
        f"{live.url}/api/tokens/xapp_token",
        data={"client_id": client_id, "client_secret": secret},
        headers={"Connection": "close"},
        timeout=10,
    )


def grant(live: LiveServer, client_id: str, secret: str) -> requests.Response:
    """Ask for an XAPP token with the standard client_credentials grant."""
    return requests.post(
        f"{live.url}/oauth2/access_token",
        data={"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret},
        headers={"Connection": "close"},
        timeout=10,
    )


def served_again(live: LiveServer, account: Account, deadline: float = 10.0) -> bool:
    """Poll (with a deadline) until the client is issued a token again."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if xapp(live, account.client_id, account.client_secret).status_code == 201:
            return True
        time.sleep(0.2)
    return False


def test_a_burst_of_guesses_is_refused_before_the_secret_is_checked(
    throttled: LiveServer, account: Account
) -> None:
    for _ in range(FAILURES):
        assert xapp(throttled, account.client_id, "guess").status_code == 401
    # From the guessing address, even the right secret is refused unchecked: no faster guessing.
    refused = xapp(throttled, account.client_id, account.client_secret)
    assert refused.status_code == 429
    assert refused.json()["type"] == "rate_limit_error"
    assert 1 <= int(refused.headers["Retry-After"]) <= 2
    assert grant(throttled, account.client_id, account.client_secret).status_code == 429
    assert served_again(throttled, account)


def test_right_secrets_give_their_attempt_back(throttled: LiveServer, account: Account) -> None:
    for _ in range(FAILURES - 1):
        assert xapp(throttled, account.client_id, "guess").status_code == 401
    assert xapp(throttled, account.client_id, account.client_secret).status_code == 201
    assert grant(throttled, account.client_id, account.client_secret).status_code == 200
    # Only failures use the wrong-secret budget: one more guess is still checked.
    assert xapp(throttled, account.client_id, "guess").status_code == 401
    assert xapp(throttled, account.client_id, "guess").status_code == 429


def test_the_client_credentials_grant_shares_the_limits(
    throttled: LiveServer, account: Account
) -> None:
    for _ in range(PER_CLIENT):
        assert grant(throttled, account.client_id, account.client_secret).status_code == 200
    refused = grant(throttled, account.client_id, account.client_secret)
    assert refused.status_code == 429 and refused.json()["error"] == "slow_down"
    assert int(refused.headers["Retry-After"]) >= 1
    assert xapp(throttled, account.client_id, account.client_secret).status_code == 429
    assert served_again(throttled, account)


def test_many_client_ids_from_one_address_are_refused(
    throttled: LiveServer, account: Account
) -> None:
    for n in range(PER_IP):
        assert xapp(throttled, f"made-up-{n}", "x").status_code == 401
    assert xapp(throttled, account.client_id, account.client_secret).status_code == 429
    assert served_again(throttled, account)


def test_the_default_limits_leave_an_application_alone(auth_settings: AuthSettings) -> None:
    defaults = AuthSettings(secret_key="x")
    assert defaults.xapp_attempts_per_client == "300/minute"
    assert defaults.xapp_attempts_per_ip == "3000/minute"
    assert defaults.xapp_failures_per_client_ip == "10/minute"
