"""Catalog reads on a real streaming replica (DATABASE_REPLICA_URLS), the primary as fallback.

The module runs its own primary and replica (``replica_support``), migrates the primary and
loads the demo catalog into it, and serves both services in-process on them, as ``serve all``
does: one ``Stores`` whose replicas are the real one under two names (127.0.0.1 and
localhost, to see reads spread) and a port where nothing listens (always out).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
import requests
from redis import Redis
from sqlalchemy import event

from artcat.loaders.demo import DemoCredentials, demo_credentials, load_demo
from auth_server.app import create_app as create_auth
from common.db import make_engine, upgrade
from common.replicas import (
    CHECK_INTERVAL,
    CHECKS,
    DOWN,
    LAGGING,
    OK,
    PROMOTED,
    READ_APPLICATION,
    READS,
    UNKNOWN,
    Replica,
)
from common.serve import PathDispatcher
from common.settings import AuthSettings, ResourceSettings, Settings
from common.stores import Stores
from resource_server.app import create_app as create_resource
from tests.functional.in_process import InProcessServer, in_process
from tests.functional.postgres_support import PgCluster
from tests.functional.process_support import free_port, password_token, xapp_token
from tests.functional.replica_support import (
    caught_up,
    query,
    start_replica,
    streaming_pair,
    wait_for,
)

pytestmark = pytest.mark.functional

TIMEOUT = 30
MAX_LAG = 1  # seconds (REPLICA_MAX_LAG)
STATES = (OK, LAGGING, DOWN, PROMOTED)


@dataclass
class Site:
    """The module's clusters, stores, server and credentials."""

    primary: PgCluster
    replica: PgCluster
    settings: ResourceSettings
    auth_settings: AuthSettings
    stores: Stores
    server: InProcessServer
    creds: DemoCredentials
    xapp: str
    statements: dict[str, int]  # statements run per replica engine (SQLAlchemy events)

    @property
    def replicas(self) -> list[Replica]:
        """Return the replicas: the real one twice, then the one that never answers."""
        assert self.stores.replicas is not None
        return list(self.stores.replicas.replicas)

    def check(self) -> list[str]:
        """Check the replicas now and return their states."""
        assert self.stores.replicas is not None
        self.stores.replicas.check()
        return [r.state for r in self.replicas]

    def reads(self) -> dict[str, float]:
        """Return this process's catalog reads by target."""
        return {r.name: READS.value(r.name) for r in self.replicas} | {
            "primary": READS.value("primary")
        }

    def get(self, path: str) -> requests.Response:
        """GET a catalog path with the module's XAPP token."""
        return requests.get(
            f"{self.server.url}{path}", headers={"X-Xapp-Token": self.xapp}, timeout=TIMEOUT
        )


def _fields(settings: Settings) -> dict[str, Any]:
    return {f: getattr(settings, f) for f in settings.__dataclass_fields__}


@pytest.fixture(scope="module")
def site(
    base_settings: Settings, redis_client: Redis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Site]:
    """Both services on the module's primary, with its replica (and a dead one) for reads."""
    with streaming_pair() as (primary, replica):
        base = replace(
            base_settings,
            instance_dir=tmp_path_factory.mktemp("replicas"),
            database_url=primary.url,
            redis_prefix="artcat-replicas-test",
        )
        upgrade(base)
        engine = make_engine(base)
        try:
            load_demo(engine, base, artworks=20)
        finally:
            engine.dispose()
        caught_up(primary, replica)
        urls = [
            replica.url,
            replica.url.replace("127.0.0.1", "localhost"),
            f"postgresql://postgres@127.0.0.1:{free_port()}/postgres",
        ]
        settings = ResourceSettings(
            **_fields(base),
            database_replica_urls=",".join(urls),
            replica_max_lag=MAX_LAG,
            replica_connect_timeout=2,
            rate_limit="10000/second",
            page_rate_limit="10000/second",
            document_cache_size=0,  # every request reads the database
        )
        auth_settings = AuthSettings(**_fields(base), cleanup_interval=0)
        stores = Stores.connect(settings, redis=redis_client)
        assert stores.replicas is not None
        statements: dict[str, int] = {}
        for one in stores.replicas.replicas:
            statements[one.name] = 0

            def count(*_args: Any, name: str = one.name) -> None:
                statements[name] += 1

            event.listen(one.engine, "before_cursor_execute", count)
        app = PathDispatcher(create_auth(auth_settings, stores), create_resource(settings, stores))
        try:
            with in_process(app) as server:
                creds = demo_credentials(base)
                xapp = xapp_token(
                    server, {"client_id": creds.client_id, "client_secret": creds.client_secret}
                )
                yield Site(
                    primary,
                    replica,
                    settings,
                    auth_settings,
                    stores,
                    server,
                    creds,
                    xapp,
                    statements,
                )
        finally:
            stores.replicas.dispose()
            stores.engine.dispose()


CATALOG_PATHS = (
    "/api/artworks?size=3",
    "/api/artists?size=2",
    "/api/genes",
    "/api/search?q=demo",
    "/artworks",
)


def test_catalog_reads_land_on_the_replicas_spread_and_skip_the_dead_one(site: Site) -> None:
    assert site.check() == [OK, OK, DOWN]
    live = site.replicas[:2]
    before, statements = site.reads(), dict(site.statements)
    rounds = 4
    for _ in range(rounds):
        for path in CATALOG_PATHS:
            r = site.get(path)
            assert r.status_code == 200, (path, r.text)
    after = site.reads()
    served = {name: after[name] - before[name] for name in after}
    total = rounds * len(CATALOG_PATHS)
    # Every catalog read went to a replica, round robin over the two healthy ones.
    assert served["primary"] == 0, served
    assert served[site.replicas[2].name] == 0, served
    assert sum(served[r.name] for r in live) == total
    assert all(served[r.name] >= total // 2 - 1 for r in live), served
    # And the statements really ran on the replica's engines (and server).
    assert all(site.statements[r.name] > statements[r.name] for r in live), site.statements
    on_replica = query(
        site.replica.url,
        f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{READ_APPLICATION}'",
    )
    assert isinstance(on_replica, int) and on_replica >= 1


def test_a_user_sees_their_own_write_while_the_replica_lags(site: Site) -> None:
    assert site.check()[:2] == [OK, OK]
    client = {"client_id": site.creds.client_id, "client_secret": site.creds.client_secret}
    grant = {
        **client,
        "grant_type": "credentials",
        "email": site.creds.user_email,
        "password": site.creds.user_password,
    }
    access = password_token(site.server, grant)
    me = {"X-Access-Token": access}
    user = requests.get(f"{site.server.url}/api/current_user", headers=me, timeout=TIMEOUT)
    assert user.status_code == 200, user.text
    user_id = user.json()["id"]
    artwork_id = site.get("/api/artworks?size=1").json()["_embedded"]["artworks"][0]["id"]
    query(site.replica.url, "SELECT pg_wal_replay_pause()")
    try:
        made = requests.post(
            f"{site.server.url}/api/collections",
            json={"user_id": user_id, "name": "Right now"},
            headers=me,
            timeout=TIMEOUT,
        )
        assert made.status_code == 201, made.text
        collection_id = made.json()["id"]
        added = requests.post(
            f"{site.server.url}/api/collection_items",
            json={"collection_id": collection_id, "user_id": user_id, "artwork_id": artwork_id},
            headers=me,
            timeout=TIMEOUT,
        )
        assert added.status_code == 201, added.text
        # Read at once: the replica has not replayed the write, yet the owner sees it.
        scope = f"collection_id={collection_id}&user_id={user_id}"
        for path in (
            f"/api/collections/{collection_id}?user_id={user_id}",
            f"/api/collection_items?{scope}",
            f"/api/artworks?{scope}",
        ):
            r = requests.get(f"{site.server.url}{path}", headers=me, timeout=TIMEOUT)
            assert r.status_code == 200, (path, r.text)
            assert collection_id in r.text or artwork_id in r.text, (path, r.text)
        listed = requests.get(
            f"{site.server.url}/api/artworks?{scope}", headers=me, timeout=TIMEOUT
        ).json()
        assert [a["id"] for a in listed["_embedded"]["artworks"]] == [artwork_id]
        unseen = query(
            site.replica.url, f"SELECT count(*) FROM collections WHERE id = '{collection_id}'"
        )
        assert unseen == 0  # proof that the replica could not have answered
    finally:
        query(site.replica.url, "SELECT pg_wal_replay_resume()")


def test_a_lagging_replica_is_skipped_until_it_catches_up(site: Site) -> None:
    assert site.check()[:2] == [OK, OK]
    query(site.replica.url, "SELECT pg_wal_replay_pause()")
    try:
        query(site.primary.url, "SELECT txid_current()")  # a write the replica receives only
        wait_for("the replica lagging", lambda: site.check()[:2] == [LAGGING, LAGGING], 15)
        before = site.reads()
        for path in CATALOG_PATHS:
            assert site.get(path).status_code == 200, path
        after = site.reads()
        assert after["primary"] - before["primary"] == len(CATALOG_PATHS)
        assert all(after[r.name] == before[r.name] for r in site.replicas)
    finally:
        query(site.replica.url, "SELECT pg_wal_replay_resume()")
    wait_for("the replica catching up", lambda: site.check()[:2] == [OK, OK], 15)
    before = site.reads()
    assert site.get("/api/genes").status_code == 200
    assert site.reads()["primary"] == before["primary"]


def test_a_replica_stopped_mid_test_costs_no_request_and_comes_back(site: Site) -> None:
    assert site.check() == [OK, OK, DOWN]
    for path in CATALOG_PATHS:  # the replica pools hold live connections
        assert site.get(path).status_code == 200
    site.replica.pg_ctl("-m", "immediate", "stop")
    try:
        before = site.reads()
        # No check in between: the first reads find the replica gone on their own.
        statuses = [site.get(path).status_code for _ in range(3) for path in CATALOG_PATHS]
        assert statuses == [200] * len(statuses)
        after = site.reads()
        # Every read was answered by the primary, the fallback when every replica is out.
        assert after["primary"] - before["primary"] == len(statuses)
        assert [r.state for r in site.replicas] == [DOWN, DOWN, DOWN]
        assert site.check() == [DOWN, DOWN, DOWN]
        # Readiness needs the primary and Redis only.
        ready = requests.get(f"{site.server.url}/readyz", timeout=TIMEOUT)
        assert ready.status_code == 200, ready.text
        metrics = requests.get(f"{site.server.url}/metrics", timeout=TIMEOUT)
        assert metrics.status_code == 200
        assert 'artcat_replica_checks_total{replica="' in metrics.text
        assert 'state="down"' in metrics.text
        assert 'artcat_db_reads_total{target="primary"}' in metrics.text
    finally:
        start_replica(site.replica, site.primary)
    wait_for("the replica back in use", lambda: site.check() == [OK, OK, DOWN], 30)
    before = site.reads()
    assert site.get("/api/genes").status_code == 200
    assert site.reads()["primary"] == before["primary"]


def test_the_auth_server_never_touches_a_replica(site: Site, redis_client: Redis) -> None:
    # Auth settings carry no replica list at all.
    assert not hasattr(site.auth_settings, "database_replica_urls")
    # Stores of their own, with replicas, as `serve all` gives both services.
    stores = Stores.connect(site.settings, redis=redis_client)
    assert stores.replicas is not None
    if site.stores.replicas is not None:  # the catalog's pooled connections to the replica
        site.stores.replicas.dispose()
    try:
        with in_process(create_auth(site.auth_settings, stores)) as auth:
            client = {"client_id": site.creds.client_id, "client_secret": site.creds.client_secret}
            assert xapp_token(auth, client)
            grant = {
                **client,
                "grant_type": "credentials",
                "email": site.creds.user_email,
                "password": site.creds.user_password,
            }
            assert password_token(auth, grant)
        # No read was ever routed (no replica was even checked) ...
        assert [r.state for r in stores.replicas.replicas] == [UNKNOWN] * 3
        # ... and the replica server saw no connection of the read pools.
        connected = query(
            site.replica.url,
            f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{READ_APPLICATION}'",
        )
        assert connected == 0
    finally:
        stores.replicas.dispose()
        stores.engine.dispose()


def test_the_background_check_brings_replicas_in_without_a_request_waiting(
    site: Site, redis_client: Redis
) -> None:
    stores = Stores.connect(site.settings, redis=redis_client)
    assert stores.replicas is not None
    names = [one.name for one in stores.replicas.replicas]
    checks_before = sum(CHECKS.value(name, state) for name in names for state in STATES)
    try:
        with in_process(create_resource(site.settings, stores)) as server:
            started = time.monotonic()
            slowest, on_replica = 0.0, 0.0
            while on_replica == 0:
                assert time.monotonic() - started < 15, "no read reached a replica"
                t0 = time.monotonic()
                before = READS.value(names[0]) + READS.value(names[1])
                r = requests.get(
                    f"{server.url}/api/genes", headers={"X-Xapp-Token": site.xapp}, timeout=30
                )
                assert r.status_code == 200
                slowest = max(slowest, time.monotonic() - t0)
                on_replica = READS.value(names[0]) + READS.value(names[1]) - before
            # The dead replica's check (connection refused) never held a request up.
            assert slowest < 1.0
            elapsed = time.monotonic() - started
        checks = sum(CHECKS.value(name, state) for name in names for state in STATES)
        # At most one round of checks per interval, whatever the number of requests.
        assert checks - checks_before <= len(names) * (elapsed / CHECK_INTERVAL + 2)
    finally:
        stores.replicas.dispose()
        stores.engine.dispose()


def test_reads_of_a_users_data_or_role_stay_on_the_primary(site: Site) -> None:
    assert site.check() == [OK, OK, DOWN]
    paths = ("/api/artists?sale_id=0123456789abcdef01234567", "/api/partners?user_id=nobody")
    before, statements = site.reads(), dict(site.statements)
    for path in paths:
        assert site.get(path).status_code < 500, path
    # Not catalog reads at all: no replica was asked, nothing ran on one.
    assert site.reads() == before
    assert site.statements == statements


def test_a_promoted_replica_is_read_no_more(site: Site) -> None:
    """Last of the module: a promoted replica follows the primary no more (irreversible)."""
    assert site.check() == [OK, OK, DOWN]
    assert query(site.replica.url, "SELECT pg_promote(true, 30)") is True
    assert site.check() == [PROMOTED, PROMOTED, DOWN]
    before = site.reads()
    assert site.get("/api/genes").status_code == 200
    assert site.reads()["primary"] == before["primary"] + 1
