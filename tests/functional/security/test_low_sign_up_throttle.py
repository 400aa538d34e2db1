"""Lower finding: sign-up was not throttled, so one client could mint accounts (and mail) freely.

Now each client IP may create ``sign_up_attempts_per_ip`` accounts (a moving window in Redis),
counted before any hashing; over it the page answers 429 with Retry-After and creates nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import requests
from argon2 import PasswordHasher
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import User
from common.serve import proxy_options
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.oauth_support import serve_auth
from tests.pages import form, text
from tests.servers import LiveServer


@pytest.fixture
def limited(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server allowing 3 sign-ups per client IP an hour, behind a trusted proxy."""
    settings = replace(
        auth_settings,
        sign_up_attempts_per_ip="3/hour",
        trusted_proxy="127.0.0.1",
        redis_prefix=f"{auth_settings.redis_prefix}-signup-{time.monotonic_ns()}",
    )
    try:
        with serve_auth(settings, stores, **proxy_options(settings)) as live:
            yield live
    finally:
        stores.redis.delete(*stores.redis.keys(f"{settings.redis_prefix}:*") or ["-"])


def sign_up(base: str, n: int, client: str) -> requests.Response:
    """Sign up a new address from a fresh browser at ``client`` (its X-Forwarded-For)."""
    with requests.Session() as web:
        web.headers.update({"X-Forwarded-For": client, "Connection": "close"})
        f = form(web.get(f"{base}/account/sign_up").text, "/account/sign_up")
        data = {
            **f.fields,
            "name": f"Bot {n}",
            "email": f"bot{n}@example.org",
            "password": "Wheat field with crows",
        }
        return web.post(f"{base}/account/sign_up", data=data, allow_redirects=False)


def users(sessions: sessionmaker[Session]) -> int:
    """Count the accounts."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(User)) or 0)


def test_one_client_cannot_mint_accounts(
    limited: LiveServer,
    clean_db: Any,
    sessions: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashed: list[int] = []
    original = PasswordHasher.hash

    def counting(self: PasswordHasher, password: str | bytes, *, salt: bytes | None = None) -> str:
        hashed.append(1)
        return original(self, password, salt=salt)

    monkeypatch.setattr(PasswordHasher, "hash", counting)
    for n in range(3):
        assert sign_up(limited.url, n, "203.0.113.9").status_code == 200
    refused = [sign_up(limited.url, n, "203.0.113.9") for n in range(3, 6)]
    for r in refused:
        assert r.status_code == 429
        assert 1 <= int(r.headers["Retry-After"]) <= 3600
        assert "Too many accounts" in text(r.text)
    assert users(sessions) == 3
    assert len(hashed) == 3  # refused before any hashing
    # Another client has its own allowance.
    assert sign_up(limited.url, 9, "198.51.100.4").status_code == 200
    assert users(sessions) == 4
