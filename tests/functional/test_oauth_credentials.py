"""The credentials grant over real HTTP: answers, throttling before hashing, similar timing."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import orjson
import pytest
from argon2 import PasswordHasher
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from auth_server.accounts import create_user, password_hasher
from common.models import Token, User
from common.serve import proxy_options
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.oauth_support import (
    World,
    assert_oauth_error,
    auth_in_process,
    make_world,
    post,
    serve_auth,
)
from tests.servers import LiveServer


@pytest.fixture
def throttled(oauth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server allowing 3 attempts per account and 6 per IP a minute."""
    settings = replace(
        oauth_settings,
        login_attempts_per_account="3/minute",
        login_attempts_per_ip="6/minute",
        # Counters live in Redis: a fresh namespace each time this fixture is used.
        redis_prefix=f"{oauth_settings.redis_prefix}-throttle-{time.monotonic_ns()}",
    )
    with auth_in_process(settings, stores) as live:
        yield live


def test_wrong_password_and_unknown_email_get_the_same_answer(
    oauth_server: LiveServer, app_and_user: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="artcat.audit")
    wrong = post(oauth_server, app_and_user.password_grant(password="wrong password", state="s"))
    unknown = post(oauth_server, app_and_user.password_grant(email="nobody@example.org", state="s"))
    body = assert_oauth_error(wrong, 400, "invalid_grant")
    assert unknown.status_code == 400 and unknown.json() == body
    assert body["state"] == "s"
    lines = [r.getMessage() for r in caplog.records if r.name == "artcat.audit"]
    assert sum('"signin.failed"' in line for line in lines) == 2
    assert not any("wrong password" in line or "nobody@" in line for line in lines)


def test_email_is_case_insensitive(oauth_server: LiveServer, app_and_user: World) -> None:
    r = post(oauth_server, app_and_user.password_grant(email=f"  {app_and_user.email.upper()} "))
    assert r.status_code == 200, r.text


def test_missing_fields_are_invalid_request(oauth_server: LiveServer, app_and_user: World) -> None:
    grant = app_and_user.password_grant()
    for field in ("email", "password"):
        partial = {k: v for k, v in grant.items() if k != field}
        assert_oauth_error(post(oauth_server, partial), 400, "invalid_request")


def test_disabled_and_passwordless_users_cannot_sign_in(
    oauth_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    with sessions() as s, s.begin():
        s.execute(update(User).where(User.id == app_and_user.user_id).values(enabled=False))
        create_user(
            s, password_hasher(oauth_settings), email="social@example.org", name="S", password=None
        )
    assert_oauth_error(post(oauth_server, app_and_user.password_grant()), 400, "invalid_grant")
    social = post(oauth_server, app_and_user.password_grant(email="social@example.org"))
    assert_oauth_error(social, 400, "invalid_grant")
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(Token)) == 0


def test_attempts_are_throttled_per_account(
    throttled: LiveServer, app_and_user: World, sessions: sessionmaker[Session], oauth_settings: Any
) -> None:
    for _ in range(3):
        r = post(throttled, app_and_user.password_grant(password="wrong"))
        assert_oauth_error(r, 400, "invalid_grant")
    # Over the limit even the right password is refused, before it is checked.
    limited = post(throttled, app_and_user.password_grant(state="st"))
    body = assert_oauth_error(limited, 429, "slow_down")
    assert body["state"] == "st"
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    other = make_world(sessions, oauth_settings)
    assert post(throttled, other.password_grant()).status_code == 200


def test_attempts_are_throttled_per_ip(throttled: LiveServer, app_and_user: World) -> None:
    for n in range(6):
        r = post(throttled, app_and_user.password_grant(email=f"unknown{n}@example.org"))
        assert r.status_code == 400
    limited = post(throttled, app_and_user.password_grant())
    assert_oauth_error(limited, 429, "slow_down")
    assert int(limited.headers["Retry-After"]) >= 1


@pytest.mark.parametrize("trusted", [True, False], ids=["behind-trusted-proxy", "no-proxy"])
def test_the_ip_throttle_counts_the_client_a_trusted_proxy_names(
    oauth_settings: AuthSettings,
    stores: Stores,
    app_and_user: World,
    trusted: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Behind TRUSTED_PROXY each client named in X-Forwarded-For has its own allowance; with
    no proxy configured the header is dropped, so a client cannot pick a fresh address."""
    settings = replace(
        oauth_settings,
        login_attempts_per_ip="3/minute",
        trusted_proxy="127.0.0.1" if trusted else "",
        redis_prefix=f"{oauth_settings.redis_prefix}-proxy-{time.monotonic_ns()}",
    )
    caplog.set_level(logging.INFO, logger="artcat.access")
    with serve_auth(settings, stores, **proxy_options(settings)) as live:
        for n in range(3):
            attempt = app_and_user.password_grant(email=f"unknown{n}@example.org")
            r = post(live, attempt, headers={"X-Forwarded-For": "203.0.113.7"})
            assert r.status_code == 400
        other = post(
            live, app_and_user.password_grant(), headers={"X-Forwarded-For": "198.51.100.2"}
        )
    if trusted:
        assert other.status_code == 200, other.text
    else:
        assert_oauth_error(other, 429, "slow_down")
    seen = {
        orjson.loads(r.getMessage())["remote_addr"]
        for r in caplog.records
        if r.name == "artcat.access"
    }
    assert seen == ({"203.0.113.7", "198.51.100.2"} if trusted else {"127.0.0.1"})


def test_unknown_email_costs_what_a_wrong_password_costs(
    oauth_settings: AuthSettings,
    stores: Stores,
    app_and_user: World,
    sessions: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Counted, not timed (the machines are shared): an unknown email must cost one argon2
    # verification with the same parameters as a wrong password does.
    with sessions() as s, s.begin():
        create_user(
            s, password_hasher(oauth_settings), email="t@example.org", name="T", password="pw"
        )
    verified: list[str] = []
    original = PasswordHasher.verify

    def counting(self: PasswordHasher, hash: str, password: str | bytes) -> bool:
        verified.append(hash.rsplit("$", 2)[0])  # the algorithm and its parameters
        return original(self, hash, password)

    monkeypatch.setattr(PasswordHasher, "verify", counting)
    with auth_in_process(oauth_settings, stores) as live:
        for email in ("t@example.org", "nobody@example.org"):
            grant = {**app_and_user.creds, "grant_type": "credentials", "email": email}
            r = post(live, {**grant, "password": "not it"})
            assert r.status_code == 400
            assert r.json()["error"] == "invalid_grant"
    assert len(verified) == 2
    assert verified[0] == verified[1]  # the same algorithm, version and cost parameters


def test_argon2_parameters_are_upgraded_on_sign_in(
    oauth_settings: AuthSettings,
    stores: Stores,
    app_and_user: World,
    sessions: sessionmaker[Session],
) -> None:
    stronger = replace(oauth_settings, argon2_time_cost=2)
    with auth_in_process(stronger, stores) as live:
        assert post(live, app_and_user.password_grant()).status_code == 200
    with sessions() as s:
        stored = s.get_one(User, app_and_user.user_id).password_hash or ""
    assert ",t=2," in stored
