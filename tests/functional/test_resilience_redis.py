"""Redis stopped, restarted empty, or flushed under load, with the services as real processes.

While Redis is down no token can be checked: the catalog answers 503 JSON (never a 200 served
without its check, never a 401 that calls a valid token invalid, never a 500); the auth server
answers 503 JSON too. When Redis comes back (empty: nothing is saved) the same processes serve
again at once, reading each token through from SQL.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from redis.exceptions import RedisError
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import Token
from common.settings import AuthSettings, Settings
from common.tokens import TOMBSTONE, UNKNOWN, TokenStore, digest
from resource_server.ratelimit import RateLimiter
from tests import factories
from tests.functional.load_support import (
    Call,
    Load,
    is_unavailable_body,
    media_types,
    report,
    send,
    unavailable_problems,
    within,
)
from tests.functional.oauth_support import World, make_world
from tests.functional.process_support import (
    REQUEST_TIMEOUT,
    RedisServer,
    Service,
    password_token,
    private_redis,
    running,
    service_env,
    xapp_token,
)

pytestmark = pytest.mark.functional

# Hang guard for the recovery (the target is well under a second; machines are noisy).
RECOVERY_DEADLINE = 5.0
OUTAGES = 3


@pytest.fixture(scope="module")
def app_user_and_artists(
    module_db: Engine, sessions: sessionmaker[Session], auth_settings: AuthSettings
) -> World:
    """An application, a user with a password, and a few artists to list."""
    with sessions() as s, s.begin():
        for _ in range(5):
            factories.artist(s)
    return make_world(sessions, auth_settings)


@pytest.fixture(scope="module")
def services(
    app_user_and_artists: World,
    redis_server: RedisServer,
    base_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Service, Service]]:
    """`artcat serve resource` and `artcat serve auth` on the test database and private Redis."""
    instance = tmp_path_factory.mktemp("resilience-redis")
    env = service_env(
        base_settings,
        database_url=base_settings.sqlalchemy_url,
        redis_url=redis_server.url,
        instance_dir=instance,
    )
    with running([("resource", env), ("auth", env)], instance / "logs") as (resource, auth):
        yield resource, auth


def count_tokens(sessions: sessionmaker[Session]) -> int:
    """Return the number of token rows in SQL."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(Token)) or 0)


def assert_unavailable(r: requests.Response) -> None:
    """Check a 503 JSON answer with Retry-After."""
    assert r.status_code == 503, r.text
    assert is_unavailable_body(r.headers.get("Content-Type", ""), r.json()), r.text
    assert r.headers.get("Retry-After")


def catalog_calls(resource: Service, xapp: str, access: str) -> list[Call]:
    """Token-authenticated catalog requests, every token header and media type among them."""
    api = f"{resource.url}/api"
    vendor = {"Accept": "application/vnd.artcat-v2+json"}
    return [
        Call("artists (xapp)", "GET", f"{api}/artists?size=3", {"X-Xapp-Token": xapp}),
        Call("current_user", "GET", f"{api}/current_user", {"X-Access-Token": access}),
        Call(
            "artists (bearer, vendor)",
            "GET",
            f"{api}/artists",
            {"Authorization": f"Bearer {access}", **vendor},
        ),
        Call(
            "artists (hal)",
            "GET",
            f"{api}/artists",
            {"X-Auth-Token": xapp, "Accept": "application/hal+json"},
        ),
        Call("unknown token", "GET", f"{api}/artists", {"X-Xapp-Token": "x" * 43}, expect=401),
    ]


def test_redis_outage_answers_503_json_and_service_resumes_when_redis_returns(
    services: tuple[Service, Service],
    app_user_and_artists: World,
    redis_server: RedisServer,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    resource, auth = services
    pids = (resource.pid, auth.pid)
    xapp = xapp_token(auth, app_user_and_artists.creds)
    access = password_token(auth, app_user_and_artists.password_grant())
    outages: list[tuple[float, float]] = []
    recoveries: list[float] = []
    with Load(catalog_calls(resource, xapp, access), threads=6) as load:
        load.wait_for(30, since=0)
        for _ in range(OUTAGES):
            down_at = redis_server.stop()
            load.wait_for(20, since=down_at)
            # The auth server cannot issue or throttle without Redis: 503 JSON, nothing issued
            # for the password grant (its throttle is checked before any hashing, and fails
            # closed).
            tokens_before = count_tokens(sessions)
            assert_unavailable(
                requests.post(
                    f"{auth.url}/oauth2/access_token",
                    data=app_user_and_artists.password_grant(),
                    timeout=REQUEST_TIMEOUT,
                )
            )
            assert count_tokens(sessions) == tokens_before
            assert_unavailable(
                requests.post(
                    f"{auth.url}/api/tokens/xapp_token",
                    data=app_user_and_artists.creds,
                    timeout=REQUEST_TIMEOUT,
                )
            )
            for svc in (resource, auth):
                ready = requests.get(f"{svc.url}/readyz", timeout=REQUEST_TIMEOUT)
                assert ready.status_code == 503 and ready.json()["checks"]["redis"] != "ok"
            back_at = redis_server.start()  # empty: every token is read through from SQL
            # Down from the moment its process was gone until the new one was launched.
            outages.append((down_at, redis_server.launched_at))
            recoveries.append(load.wait_for_recovery(back_at, deadline=2 * RECOVERY_DEADLINE))
        outcomes = load.stop()

    # Every answer is the normal one or a 503 JSON error with Retry-After: no 500, no dropped
    # connection, no timeout.
    assert unavailable_problems(outcomes) == []
    # A 503 comes in the media type the request negotiated (JSON, HAL or the vendor type).
    assert all(len(types) == 1 for types in media_types(outcomes).values()), media_types(outcomes)
    for down_at, relaunched_at in outages:
        during = within(outcomes, down_at, relaunched_at)
        assert len(during) >= 20
        # No token could be checked: not one 200, and not one 401 either.
        assert {o.status for o in during} == {503}, [o.describe() for o in during if o.ok]
    report("redis restart", recoveries)
    assert max(recoveries) < RECOVERY_DEADLINE
    # The same processes served throughout, and the restarted Redis holds the tokens again.
    assert (resource.pid, auth.pid) == pids and resource.alive() and auth.alive()
    with redis_server.client() as redis:
        tokens = TokenStore(redis, sessions, prefix=base_settings.redis_prefix)
        for value in (xapp, access):
            assert tokens.redis.get(tokens.key(digest(value))) not in (None, TOMBSTONE, UNKNOWN)
    assert xapp_token(auth, app_user_and_artists.creds)  # the auth server issues again
    # A restart between requests is invisible: idle pooled connections to the old server are
    # noticed and replaced before use, not failed on.
    redis_server.stop()
    redis_server.start()
    with requests.Session() as http:
        for call in catalog_calls(resource, xapp, access):
            assert send(http, call).ok
    assert xapp_token(auth, app_user_and_artists.creds)


def test_flushed_redis_loses_no_valid_token_under_load(
    services: tuple[Service, Service], app_user_and_artists: World, redis_server: RedisServer
) -> None:
    resource, auth = services
    xapp = xapp_token(auth, app_user_and_artists.creds)
    access = password_token(auth, app_user_and_artists.password_grant())
    offline = password_token(auth, app_user_and_artists.password_grant(scope="offline_access"))
    revoked = password_token(auth, app_user_and_artists.password_grant())
    gone = requests.delete(
        f"{auth.url}/api/tokens/access_token",
        params={"access_token": revoked},
        timeout=REQUEST_TIMEOUT,
    )
    assert gone.status_code == 200, gone.text
    api = f"{resource.url}/api"
    calls = [
        *catalog_calls(resource, xapp, access),
        Call("offline", "GET", f"{api}/current_user", {"X-Access-Token": offline}),
        Call("revoked", "GET", f"{api}/current_user", {"X-Access-Token": revoked}, expect=401),
    ]
    with redis_server.client() as client, Load(calls, threads=6) as load:
        for _ in range(5):
            flushed_at = time.monotonic()
            client.flushall()  # a private server: FLUSHALL touches nobody else's data
            load.wait_for(15, since=flushed_at)
        outcomes = load.stop()
    # Not one valid token refused, not one revoked token accepted, no error of any kind.
    assert [o.describe() for o in outcomes if not o.ok] == []
    assert {o.call.label for o in outcomes} == {c.label for c in calls}


def test_rate_limiter_fails_closed_without_redis(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    """The per-application limit is counted in Redis; without Redis it refuses (the error maps
    to a 503) rather than letting the caller through unlimited, and it counts again once Redis
    is back (its Lua scripts are loaded again into the restarted, empty server)."""
    with private_redis() as server, server.client() as client:
        limiter = RateLimiter(client, sessions, rate="5/second", burst=10, prefix="artcat-rl-test")
        limiter.check("an-application")
        server.stop()
        with pytest.raises(RedisError):
            limiter.check("an-application")
        server.start()
        limiter.check("an-application")
