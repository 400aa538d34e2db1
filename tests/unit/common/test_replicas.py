"""Read replica routing without a server: picking, retries, checks off the request path,
settings, the document cache's settle time, and which code may reach a replica at all."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlalchemy.orm import Session, sessionmaker

from common import replicas as r
from common.catalog_version import CATALOG_TYPES
from common.settings import AuthSettings, ResourceSettings, SettingsError
from resource_server.doccache import DocumentCache
from resource_server.resources.catalog_pages import CatalogList

ROOT = Path(__file__).resolve().parents[3]


class DriverError(Exception):
    """A driver error with a SQLSTATE (None: no answer from the server)."""

    def __init__(self, sqlstate: str | None) -> None:
        super().__init__("boom")
        self.sqlstate = sqlstate


def failure(cls: type[Any], sqlstate: str | None, *, invalidated: bool = False) -> Any:
    return cls("SELECT 1", {}, DriverError(sqlstate), connection_invalidated=invalidated)


def replica(name: str, state: str = r.OK) -> r.Replica:
    engine = create_engine("sqlite://")
    one = r.Replica(name, engine, sessionmaker(engine), engine)
    one.state = state
    return one


def replica_set(*replicas: r.Replica) -> r.ReplicaSet:
    primary = create_engine("sqlite://")
    return r.ReplicaSet(list(replicas), sessionmaker(primary), max_lag=5)


def healthy(rs: r.ReplicaSet) -> None:
    """Check the replicas, each keeping the state the test gave it (no server asked)."""
    for one in rs.replicas:
        one.check = lambda max_lag, one=one: one.state  # type: ignore[method-assign,misc]
    rs.check()


def test_reads_spread_round_robin_over_the_healthy_replicas() -> None:
    a, b, c = replica("a"), replica("b"), replica("c", r.LAGGING)
    rs = replica_set(a, b, c)
    healthy(rs)
    picked = [rs.pick() for _ in range(6)]
    assert {x.name for x in picked if x} == {"a", "b"}
    assert sum(1 for x in picked if x is a) == 3
    assert rs.pick([a, b]) is None  # none left: the primary


def test_a_failed_connection_marks_the_replica_down_and_the_read_runs_again() -> None:
    a, b = replica("a"), replica("b")
    rs = replica_set(a, b)
    healthy(rs)
    binds: list[Any] = []

    def work(session: Session) -> str:
        binds.append(session.get_bind())
        if session.get_bind() is a.engine:
            raise failure(OperationalError, None)  # connection refused
        return "done"

    for _ in range(4):
        assert rs.read(work) == "done"
    assert a.state == r.DOWN and b.state == r.OK
    assert binds.count(a.engine) <= 1  # out after its first failure
    b.state = r.DOWN
    healthy(rs)
    before = r.READS.value("primary")
    assert rs.read(work) == "done"  # every replica out: the primary
    assert r.READS.value("primary") == before + 1


def test_a_recovery_conflict_moves_the_read_but_keeps_the_replica() -> None:
    a = replica("a")
    rs = replica_set(a)
    healthy(rs)
    calls: list[Any] = []

    def work(session: Session) -> int:
        calls.append(session.get_bind())
        if session.get_bind() is a.engine:
            raise failure(OperationalError, "40001")
        return 1

    assert rs.read(work) == 1
    assert calls == [a.engine, calls[1]] and calls[1] is not a.engine
    assert a.state == r.OK


def test_an_error_of_the_query_itself_is_not_retried() -> None:
    a = replica("a")
    rs = replica_set(a)
    healthy(rs)
    runs: list[int] = []

    def work(session: Session) -> None:
        runs.append(1)
        raise failure(ProgrammingError, "42P01")  # undefined table: the primary would agree

    with pytest.raises(ProgrammingError):
        rs.read(work)
    assert runs == [1] and a.state == r.OK


@pytest.mark.parametrize(
    ("cls", "sqlstate", "invalidated", "expected"),
    [
        (OperationalError, None, False, True),
        (OperationalError, "08006", False, True),
        (OperationalError, "57P01", False, True),
        (OperationalError, "40001", False, True),
        (OperationalError, "57014", False, False),  # statement timeout: not another's to try
        (ProgrammingError, None, False, False),
        (ProgrammingError, "42601", True, True),
    ],
)
def test_retryable(cls: type[Any], sqlstate: str | None, invalidated: bool, expected: bool) -> None:
    assert r.retryable(failure(cls, sqlstate, invalidated=invalidated)) is expected


def test_checks_run_in_the_background_at_most_once_per_interval() -> None:
    a = replica("a", r.UNKNOWN)
    rs = r.ReplicaSet([a], sessionmaker(create_engine("sqlite://")), max_lag=5, interval=0.2)
    started = threading.Event()
    release = threading.Event()
    checks: list[float] = []

    def slow_check(max_lag: float) -> str:
        checks.append(time.monotonic())
        started.set()
        release.wait(5)
        a.state = r.OK
        return r.OK

    a.check = slow_check  # type: ignore[method-assign]
    t0 = time.monotonic()
    for _ in range(50):
        assert rs.pick() is None  # not known healthy yet: the primary, without waiting
    assert time.monotonic() - t0 < 0.5
    assert started.wait(5)
    release.set()
    deadline = time.monotonic() + 5
    while rs.pick() is not a:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert len(checks) == 1
    time.sleep(0.25)
    rs.pick()
    deadline = time.monotonic() + 5
    while len(checks) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_settings() -> None:
    assert ResourceSettings().database_replica_urls == ""
    with pytest.raises(SettingsError, match="DATABASE_REPLICA_URLS"):
        ResourceSettings(database_replica_urls="sqlite:///x.db")
    with pytest.raises(SettingsError, match="REPLICA_MAX_LAG"):
        ResourceSettings(replica_max_lag=0)
    ok = ResourceSettings(database_replica_urls="postgres://a/db, postgresql://b/db")
    assert r.parse_urls(ok.database_replica_urls) == ["postgres://a/db", "postgresql://b/db"]
    assert "database_replica_urls" not in AuthSettings.__dataclass_fields__


def test_a_user_route_may_not_read_a_replica() -> None:
    with pytest.raises(TypeError, match="primary"):

        class Mine(CatalogList):
            auth = "user"
            replica_reads = True


def test_the_auth_server_has_no_way_to_a_replica() -> None:
    for path in (ROOT / "auth_server").rglob("*.py"):
        source = path.read_text()
        assert "catalog_read" not in source, path
        assert ".replicas" not in source, path


def test_documents_read_soon_after_a_version_change_are_not_kept() -> None:
    types = [b"1"] * len(CATALOG_TYPES)
    cache = DocumentCache(kinds=("artworks",), settle=0.2)
    cache.put(b"v1", "k", b"doc", types)
    assert cache.get(b"v1", "k", types) is None  # too soon: a replica may lag behind
    time.sleep(0.25)
    cache.put(b"v1", "k", b"doc", types)
    assert cache.get(b"v1", "k", types) == b"doc"
    cache.put(b"v2", "k", b"new", types)  # a new version: settle again
    assert cache.get(b"v2", "k", types) is None
    plain = DocumentCache(kinds=("artworks",))
    plain.put(b"v1", "k", b"doc", types)
    assert plain.get(b"v1", "k", types) == b"doc"
