"""Revocation across processes: two `artcat serve resource` processes and one `artcat serve auth`
on one database and one Redis. Once ``DELETE /api/tokens/access_token`` has returned, neither
resource process accepts the token again, even while Redis is being flushed under it (every
lookup then reads through from SQL, racing the expiry). Once ``artcat users disable`` has returned,
neither accepts the user's token either."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import requests
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from common.api.constants import INVALID_TOKEN
from common.settings import AuthSettings, Settings
from tests.functional.cli_support import cli_env, run_cli
from tests.functional.load_support import Call, Load
from tests.functional.oauth_support import World, make_world
from tests.functional.process_support import (
    REQUEST_TIMEOUT,
    RedisServer,
    Service,
    password_token,
    two_resources_and_auth,
)

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def process_app_and_user(
    module_db: Engine, sessions: sessionmaker[Session], auth_settings: AuthSettings
) -> World:
    """An application and a user with a password."""
    return make_world(sessions, auth_settings)


@pytest.fixture(scope="module", params=["waitress", "granian"])
def cluster(
    request: pytest.FixtureRequest,
    process_app_and_user: World,
    redis_server: RedisServer,
    base_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[list[Service]]:
    """Two resource processes and one auth process (separate processes, separate ports)."""
    instance = tmp_path_factory.mktemp("revocation")
    with two_resources_and_auth(
        base_settings, redis_server.url, instance, server=request.param
    ) as services:
        yield services


class Flusher:
    """A thread that empties Redis over and over, so that lookups read through from SQL."""

    def __init__(self, server: RedisServer, *, enabled: bool) -> None:
        self.client = server.client()
        self.enabled = enabled
        self.flushes = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Flusher:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop flushing (once the current flush is done)."""
        self._stopping.set()
        if self.enabled:
            self._thread.join(timeout=10)
            assert not self._thread.is_alive(), "the flusher hung"

    def wait_for(self, flushes: int, deadline: float = 30.0) -> None:
        """Return once at least ``flushes`` flushes happened (at once when not flushing)."""
        end = time.monotonic() + deadline
        while self.enabled and self.flushes < flushes:
            assert time.monotonic() < end, f"only {self.flushes} flushes in {deadline} s"
            time.sleep(0.005)

    def _run(self) -> None:
        while not self._stopping.is_set():
            self.client.flushall()  # a private server: nobody else's data
            self.flushes += 1
            time.sleep(0.005)


MIN_FLUSHES = 20


@pytest.mark.parametrize("redis_state", ["cached", "flushed-until-revoked", "flushed-throughout"])
def test_no_request_started_after_the_delete_returned_is_accepted(
    cluster: list[Service], process_app_and_user: World, redis_server: RedisServer, redis_state: str
) -> None:
    first, second, auth = cluster
    token = password_token(auth, process_app_and_user.password_grant())
    calls = [
        Call(name, "GET", f"{svc.url}/api/current_user", {"X-Access-Token": token})
        for name, svc in (("first", first), ("second", second))
    ]
    flushing = redis_state != "cached"
    with Load(calls, threads=8) as load, Flusher(redis_server, enabled=flushing) as flusher:
        load.wait_for(40, since=0)
        flusher.wait_for(MIN_FLUSHES)  # the race under test really ran
        r = requests.delete(
            f"{auth.url}/api/tokens/access_token",
            headers={"X-Access-Token": token},
            timeout=REQUEST_TIMEOUT,
        )
        returned_at = time.monotonic()
        assert r.status_code == 200, r.text
        if redis_state == "flushed-until-revoked":
            # Read-throughs were in flight as the token expired; none may write it back over
            # the tombstone (SET NX), which now stays.
            flusher.stop()
        load.wait_for(40, since=returned_at)
    outcomes = load.stop()
    assert flusher.flushes >= MIN_FLUSHES or not flushing
    before = [o for o in outcomes if o.ended < returned_at]
    after = [o for o in outcomes if o.started > returned_at]
    for name in ("first", "second"):
        # Both processes accepted the token before, and both were asked after.
        assert any(o.status == 200 for o in before if o.call.label == name)
        assert sum(o.call.label == name for o in after) >= 10
    # Not one request started after the DELETE returned was accepted, by either process.
    accepted = [o.describe() for o in after if o.status != 401]
    assert accepted == []
    assert all(o.body == {"type": "auth_error", "message": INVALID_TOKEN} for o in after)
    # Nothing but 200 (before) and 401 (from the expiry on): no 5xx while racing the flushes.
    assert {o.status for o in outcomes} <= {200, 401}, [
        o.describe() for o in outcomes if o.status not in (200, 401)
    ]


def test_disabling_a_user_is_seen_at_once_by_every_resource_process(
    cluster: list[Service],
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
    redis_server: RedisServer,
    base_settings: Settings,
) -> None:
    first, second, auth = cluster
    someone = make_world(sessions, auth_settings)
    token = password_token(auth, someone.password_grant())

    def statuses() -> list[int]:
        return [
            requests.get(
                f"{svc.url}/api/artists",
                headers={"X-Access-Token": token},
                timeout=REQUEST_TIMEOUT,
            ).status_code
            for svc in (first, second)
        ]

    assert statuses() == [200, 200]
    env = cli_env(
        base_settings, DATABASE_URL=base_settings.sqlalchemy_url, REDIS_URL=redis_server.url
    )
    run_cli(env, "users", "disable", someone.email)
    # No waiting: the command returned, so no process may accept the token again.
    assert statuses() == [401, 401]
