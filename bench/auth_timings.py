"""The auth server's figures that wrk cannot give: a password check, and a refused attempt.

- the credentials grant, timed one request after another: its cost is the argon2
  verification, set by the hashing parameters, not by the server;
- a throttled sign-in attempt, timed in-process (Flask's test client, no network), with the
  argon2 calls counted: a refused attempt must be answered before any password is hashed.
"""

from __future__ import annotations

import dataclasses
import secrets
import statistics
import time
from typing import Any

import requests

from bench.fixture import Fixture
from common.settings import AuthSettings


def credentials_grant(url: str, fx: Fixture, settings: AuthSettings, n: int = 7) -> dict[str, Any]:
    """Time ``n`` successful credentials grants one after another (argon2 verify included)."""
    from argon2 import PasswordHasher

    times = []
    session = requests.Session()
    form = {
        "grant_type": "credentials",
        "client_id": fx.client_id,
        "client_secret": fx.client_secret,
        "email": fx.email,
        "password": fx.password,
    }
    for _ in range(n):
        began = time.perf_counter()
        resp = session.post(url + "/oauth2/access_token", data=form, timeout=30)
        times.append((time.perf_counter() - began) * 1000)
        if resp.status_code != 200:
            raise RuntimeError(f"credentials grant: {resp.status_code} {resp.text[:200]}")
    hasher = PasswordHasher(
        time_cost=settings.argon2_time_cost,
        memory_cost=settings.argon2_memory_cost,
        parallelism=settings.argon2_parallelism,
    )
    stored = hasher.hash("x" * 16)
    verify = []
    for _ in range(n):
        began = time.perf_counter()
        hasher.verify(stored, "x" * 16)
        verify.append((time.perf_counter() - began) * 1000)
    return {
        "params": f"argon2id t={settings.argon2_time_cost}, m={settings.argon2_memory_cost} KiB, "
        f"p={settings.argon2_parallelism}",
        "grant_ms": statistics.median(times),
        "verify_ms": statistics.median(verify),
    }


def throttle_in_process(settings: AuthSettings, fx: Fixture, n: int = 3000) -> dict[str, Any]:
    """Time the auth server's own work on a throttled sign-in attempt, without the network.

    The app runs in this process on the configured stores; one address sends ``n`` attempts
    with a wrong password: after the allowance, each is a 429, answered before any password is
    hashed (argon2 calls are counted to show it).
    """
    import argon2

    from auth_server.app import create_app
    from common.stores import Stores

    quiet = dataclasses.replace(settings, access_log=False, metrics_enabled=False)
    stores = Stores.connect(quiet)
    client = create_app(quiet, stores).test_client()
    form = {
        "grant_type": "credentials",
        "client_id": fx.client_id,
        "client_secret": fx.client_secret,
        "email": fx.email,
        "password": f"wrong-{secrets.token_hex(4)}",
    }
    address = f"198.51.100.{secrets.randbelow(250) + 1}"
    hashed = 0
    verify = argon2.PasswordHasher.verify

    def counting_verify(self: Any, *args: Any, **kw: Any) -> Any:
        nonlocal hashed
        hashed += 1
        return verify(self, *args, **kw)

    argon2.PasswordHasher.verify = counting_verify  # type: ignore[method-assign]
    rejected: list[float] = []
    hashed_when_rejected = 0
    try:
        for _ in range(n):
            before = hashed
            began = time.perf_counter()
            resp = client.post(
                "/oauth2/access_token", data=form, environ_base={"REMOTE_ADDR": address}
            )
            took = (time.perf_counter() - began) * 1000
            if resp.status_code == 429:
                rejected.append(took)
                hashed_when_rejected += hashed - before
    finally:
        argon2.PasswordHasher.verify = verify  # type: ignore[method-assign]
        stores.engine.dispose()
    rejected.sort()
    return {
        "rejected": len(rejected),
        "attempts": n,
        "hashed": hashed,
        "hashed_when_rejected": hashed_when_rejected,
        "p50_ms": statistics.median(rejected),
        "p99_ms": rejected[int(len(rejected) * 0.99)],
    }
