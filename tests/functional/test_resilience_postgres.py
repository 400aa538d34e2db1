"""PostgreSQL restarted under load: the services answer 503 JSON while it is away and the same
processes serve again once it is back, without being restarted themselves.

The cluster is the test's own (initdb in a temporary folder, a free loopback port), so it can be
restarted without disturbing anyone; the test skips when the server binaries are not installed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import OperationalError

from artcat.loaders.demo import DemoCredentials, demo_credentials, load_demo
from common import db
from common.api.prepared import Prepared
from common.db import make_engine, read_engine, upgrade
from common.models import Artwork
from common.settings import Settings
from resource_server.queries.rows import select_rows
from tests.functional.load_support import (
    Call,
    Load,
    media_types,
    report,
    unavailable_problems,
)
from tests.functional.postgres_support import PgCluster, private_postgres
from tests.functional.process_support import (
    RedisServer,
    Service,
    password_token,
    running,
    service_env,
    xapp_token,
)

pytestmark = pytest.mark.functional

RESTARTS = 3
# Hang guard for the recovery (the target is well under a second; machines are noisy).
RECOVERY_DEADLINE = 10.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[PgCluster]:
    """The module's private PostgreSQL cluster (stopped in a finalizer whatever happens)."""
    with private_postgres() as pg:
        yield pg


@pytest.fixture(scope="module")
def demo(
    cluster: PgCluster, base_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Settings, DemoCredentials]:
    """Migrate the cluster's database and load the demo catalog (what `artcat load demo` does)."""
    settings = replace(
        base_settings,
        instance_dir=tmp_path_factory.mktemp("resilience-pg"),
        database_url=cluster.url,
        redis_url="",  # the services get the private Redis; nothing here uses Redis
    )
    upgrade(settings)
    engine = make_engine(settings)
    try:
        load_demo(engine, settings, artworks=50)
    finally:
        engine.dispose()
    return settings, demo_credentials(settings)


@pytest.fixture(scope="module")
def services(
    demo: tuple[Settings, DemoCredentials], redis_server: RedisServer
) -> Iterator[tuple[Service, Service]]:
    """`artcat serve resource` and `artcat serve auth` on the private cluster."""
    settings, _ = demo
    env = service_env(
        settings,
        database_url=settings.database_url,
        redis_url=redis_server.url,
        instance_dir=settings.instance_dir,
    )
    logs = Path(settings.instance_dir) / "logs"
    with running([("resource", env), ("auth", env)], logs) as (resource, auth):
        yield resource, auth


def test_postgres_restart_answers_503_json_and_the_same_processes_recover(
    cluster: PgCluster,
    services: tuple[Service, Service],
    demo: tuple[Settings, DemoCredentials],
) -> None:
    resource, auth = services
    pids = (resource.pid, auth.pid)
    _, creds = demo
    client = {"client_id": creds.client_id, "client_secret": creds.client_secret}
    xapp = xapp_token(auth, client)
    grant = {
        **client,
        "grant_type": "credentials",
        "email": creds.user_email,
        "password": creds.user_password,
    }
    access = password_token(auth, grant)
    api = f"{resource.url}/api"
    calls = [
        Call("artworks", "GET", f"{api}/artworks?size=5", {"X-Xapp-Token": xapp}),
        Call("artists", "GET", f"{api}/artists?total_count=1", {"X-Xapp-Token": xapp}),
        Call("current_user", "GET", f"{api}/current_user", {"X-Access-Token": access}),
        Call("xapp issue", "POST", f"{auth.url}/api/tokens/xapp_token", expect=201, data=client),
    ]
    restarts: list[tuple[float, float]] = []
    recoveries: list[float] = []
    with Load(calls, threads=6) as load:
        load.wait_for(30, since=0)
        for _ in range(RESTARTS):
            restart_at = time.monotonic()
            cluster.restart()  # fast shutdown (open sessions are cut), then start; waits for it
            back_at = time.monotonic()
            restarts.append((restart_at, back_at))
            recoveries.append(load.wait_for_recovery(back_at, deadline=2 * RECOVERY_DEADLINE))
        outcomes = load.stop()

    # Every answer is the normal one or a 503 JSON error with Retry-After: no 500, no dropped
    # connection, no timeout.
    assert unavailable_problems(outcomes) == []
    # A 503 comes in the media type the request negotiated (JSON, HAL or the vendor type).
    assert all(len(types) == 1 for types in media_types(outcomes).values()), media_types(outcomes)
    # The outage was seen: each restart has a 503 among the requests that overlapped it (one
    # cut by the fast shutdown may be answered just after the server is back).
    for restart_at, back_at in restarts:
        overlapping = [o for o in outcomes if o.started < back_at and o.ended > restart_at]
        assert any(o.status == 503 for o in overlapping)
    report("postgres restart", recoveries)
    assert max(recoveries) < RECOVERY_DEADLINE
    # The same processes, never restarted, serve again (and read SQL again: a new token).
    assert (resource.pid, auth.pid) == pids and resource.alive() and auth.alive()
    assert password_token(auth, grant)


def test_after_a_restart_one_dead_connection_gets_every_pool_of_the_process_pinged(
    cluster: PgCluster, demo: tuple[Settings, DemoCredentials], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request that finds its connection dead answers 503; no other request does: the other
    pools of the process ping their connections (idle or not) before handing them out."""
    settings, _ = demo
    monkeypatch.setattr(db, "IDLE_PING_AFTER", 3600.0)  # only the disconnect makes it ping
    writes = make_engine(settings)
    reads = read_engine(writes)
    try:
        for engine in (writes, reads):
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        cluster.restart()
        with pytest.raises(OperationalError) as failed, writes.connect() as conn:
            conn.execute(text("SELECT 1"))
        assert failed.value.connection_invalidated
        assert db.describe_failure(failed.value).startswith("OperationalError (")
        # The read pool's connection, just as dead, is pinged, replaced, and serves.
        with reads.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
        with writes.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
    finally:
        writes.dispose()
        reads.dispose()


def test_a_connection_left_idle_through_a_restart_is_pinged_and_replaced(
    cluster: PgCluster, demo: tuple[Settings, DemoCredentials], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, _ = demo
    engine = make_engine(settings)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        cluster.restart()
        monkeypatch.setattr(db, "IDLE_PING_AFTER", 0.0)  # it has been idle long enough
        with engine.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
    finally:
        engine.dispose()


def test_a_prepared_read_on_a_dead_connection_fails_as_sqlalchemy_fails_and_recovers(
    cluster: PgCluster, demo: tuple[Settings, DemoCredentials], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The catalog's kept statements run on the driver's cursor (``common.api.prepared``): a
    dead connection there is SQLAlchemy's OperationalError (a 503), invalidated, and the rest
    of the process's pools ping theirs, as for any other statement."""
    settings, _ = demo
    monkeypatch.setattr(db, "IDLE_PING_AFTER", 3600.0)  # only the disconnect makes it ping
    writes = make_engine(settings)
    reads = read_engine(writes)
    count = Prepared(select(func.count()).select_from(select_rows(Artwork).subquery()))
    try:
        for engine in (writes, reads):
            with engine.connect() as conn:
                assert count.scalar(conn) > 0
        cluster.restart()
        with pytest.raises(OperationalError) as failed, reads.connect() as conn:
            count.scalar(conn)
        assert failed.value.connection_invalidated
        assert db.describe_failure(failed.value).startswith("OperationalError (")
        for engine in (writes, reads):  # pinged, replaced, and serving
            with engine.connect() as conn:
                assert count.scalar(conn) > 0
    finally:
        writes.dispose()
        reads.dispose()
