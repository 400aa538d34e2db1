"""Catalog reads on PostgreSQL read replicas (DATABASE_REPLICA_URLS), the primary as fallback.

What goes where:

- ``Stores.catalog_read(work)`` is the only way to a replica. The catalog's read-only
  resources opt in to it (``replica_reads`` on a catalog responder, the search API, the HTML
  catalog pages and placeholders); it runs ``work`` with a read session of a healthy replica.
- Everything else keeps the primary: every write, token and account work, and every read of
  a user's own data. The routes of user data (users, collections, collection items, bidders)
  always read the primary, whatever their method, so a user sees their own write at once with
  no marker to carry between requests (a responder of ``auth = "user"`` may not opt in). The
  auth server never calls ``catalog_read``: its settings have no replica list, and when both
  services share one ``Stores`` (``serve all``) it still uses only ``sessions`` and ``reads``.

Health: each process checks its replicas at most once per ``CHECK_INTERVAL``, in a background
thread started by the first read after the interval, never on a request's path: a replica is
used while it answers, is still in recovery (a promoted one follows the primary no more) and
has replayed the WAL it received to within ``REPLICA_MAX_LAG`` seconds. A replica that fails
a read's connection (down since its last check) is marked out at once, and the read is run
again on the next healthy replica or on the primary: a replica going away costs no request an
error. The next check brings a replica that answers again back. Reads spread round robin over
the healthy replicas; with none, they go to the primary.

Metrics (counters, summed across workers): ``artcat_db_reads_total{target}`` (a replica's
name, ``host:port/database``, or ``primary``) and ``artcat_replica_checks_total{replica,
state}`` (``ok``, ``lagging``, ``down``, ``promoted``): a rate of the last by state is the
replica's health.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from common import metrics
from common.db import POOL, describe_failure, make_sessionmaker, ping_when_idle
from common.settings import normalise_database_url

T = TypeVar("T")
log = logging.getLogger("artcat.replicas")

CHECK_INTERVAL = 1.0  # seconds between two health checks of a process's replicas
READ_APPLICATION = "artcat-replica-read"  # application_name of the read pools' connections
CHECK_APPLICATION = "artcat-replica-check"  # and of the health checks'

OK, LAGGING, DOWN, PROMOTED, UNKNOWN = "ok", "lagging", "down", "promoted", "unknown"

READS = metrics.counter(
    "artcat_db_reads",
    "Catalog reads a replica may serve, by the database that served them.",
    ("target",),
)
CHECKS = metrics.counter(
    "artcat_replica_checks", "Health checks of the read replicas, by outcome.", ("replica", "state")
)

# Replay lag in seconds: none when everything received is replayed (an idle primary writes no
# transactions, so the last replayed one grows old without any lag), else the age of the last
# transaction replayed.
LAG_QUERY = text(
    "SELECT pg_is_in_recovery(), CASE"
    " WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0"
    " ELSE COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 0)"
    " END"
)

# SQLSTATEs of a read that another server may answer: connection failures (class 08), a
# server shutting down (57P01-57P03) and a query cancelled by a conflict with recovery (40001).
RETRY_STATES = frozenset({"40001", "57P01", "57P02", "57P03"})


@dataclass
class Replica:
    """One replica: its read sessions, the engine its checks use, and its last known state."""

    name: str
    engine: Engine
    sessions: sessionmaker[Session]
    checker: Engine
    state: str = UNKNOWN
    lag: float | None = None

    def check(self, max_lag: float) -> str:
        """Ask the replica whether it is in recovery and how far its replay lags; keep the
        state (``ok``, ``lagging``, ``down`` or ``promoted``) and return it."""
        try:
            with self.checker.connect() as conn:
                recovering, lag = conn.execute(LAG_QUERY).one()
        except Exception as ex:  # refused, timed out, shutting down: out until it answers
            state, self.lag = DOWN, None
            if self.state != DOWN:
                log.warning("read replica %s is out: %s", self.name, describe_failure(ex))
        else:
            self.lag = float(lag)
            state = PROMOTED if not recovering else LAGGING if self.lag > max_lag else OK
            if state != self.state and state != OK:
                log.warning("read replica %s is out: %s (lag %.1f s)", self.name, state, self.lag)
            elif state != self.state:
                log.info("read replica %s is in use", self.name)
        self.state = state
        CHECKS.inc(self.name, state)
        return state

    def mark_down(self, ex: BaseException) -> None:
        """Take the replica out until its next check finds it answering."""
        if self.state != DOWN:
            log.warning("read replica %s failed a read: %s", self.name, describe_failure(ex))
        self.state = DOWN
        self.engine.dispose()  # its pooled connections are dead: none may serve another read


@dataclass
class ReplicaSet:
    """The replicas of a process and the primary's read sessions, which take over."""

    replicas: Sequence[Replica]
    primary: sessionmaker[Session]
    max_lag: float
    interval: float = CHECK_INTERVAL
    _healthy: tuple[Replica, ...] = ()
    _turn: Any = field(default_factory=itertools.count)
    _checked_at: float = float("-inf")
    _checking: bool = False
    _pid: int = field(default_factory=os.getpid)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def connect(
        cls,
        urls: Sequence[str],
        primary: sessionmaker[Session],
        *,
        max_lag: float,
        connect_timeout: int,
        echo: bool = False,
    ) -> ReplicaSet:
        """Create the engines of the replicas at ``urls`` (none is connected yet)."""
        replicas = []
        for raw in urls:
            url = make_url(normalise_database_url(raw))
            name = f"{url.host or 'localhost'}:{url.port or 5432}/{url.database or ''}"

            def args(application: str) -> dict[str, Any]:
                return {"connect_timeout": connect_timeout, "application_name": application}

            engine = ping_when_idle(
                create_engine(
                    url,
                    echo=echo,
                    isolation_level="AUTOCOMMIT",
                    connect_args=args(READ_APPLICATION),
                    **POOL,
                )
            )
            # One connection kept for the checks (one thread checks at a time), pinged before
            # each, and a check that hangs gives up within the connect timeout.
            checker = create_engine(
                url,
                isolation_level="AUTOCOMMIT",
                pool_size=1,
                max_overflow=0,
                pool_pre_ping=True,
                pool_timeout=connect_timeout,
                connect_args={
                    **args(CHECK_APPLICATION),
                    "options": f"-c statement_timeout={connect_timeout * 1000}",
                },
            )
            replicas.append(Replica(name, engine, make_sessionmaker(engine, reads=True), checker))
        return cls(replicas, primary, max_lag)

    @property
    def settle(self) -> float:
        """Return how long after a catalog write a replica in use may still miss it (the lag
        bound, plus the time a replica may lag more before its next check finds out)."""
        return self.max_lag + self.interval

    @property
    def healthy(self) -> tuple[Replica, ...]:
        """Return the replicas reads may use now (as of the last check)."""
        return self._healthy

    def check(self) -> None:
        """Check every replica now (in the calling thread) and update the healthy list."""
        for replica in self.replicas:
            replica.check(self.max_lag)
        self._healthy = tuple(r for r in self.replicas if r.state == OK)
        self._checked_at = time.monotonic()

    def _check_in_background(self) -> None:
        try:
            self.check()
        finally:
            self._checking = False

    def _schedule(self) -> None:
        """Start a check in a background thread when the last is older than the interval."""
        if time.monotonic() - self._checked_at < self.interval:
            return
        with self._lock:
            if os.getpid() != self._pid:  # a forked worker: the parent's checker is not ours
                self._pid, self._checking = os.getpid(), False
            if self._checking or time.monotonic() - self._checked_at < self.interval:
                return
            self._checking = True
        threading.Thread(
            target=self._check_in_background, name="artcat-replica-check", daemon=True
        ).start()

    def pick(self, skip: Sequence[Replica] = ()) -> Replica | None:
        """Return the next healthy replica (round robin), or None for the primary."""
        self._schedule()
        healthy = [r for r in self._healthy if r.state == OK and r not in skip]
        if not healthy:
            return None
        return healthy[next(self._turn) % len(healthy)]

    def read(self, work: Callable[[Session], T]) -> T:
        """Run ``work`` with a read session of a healthy replica, else of the primary.

        ``work`` only reads (it may run again): a replica that fails it for a reason another
        server would not share (see ``RETRY_STATES``) is skipped and ``work`` runs again on
        the next one, and at last on the primary.
        """
        tried: list[Replica] = []
        while (replica := self.pick(tried)) is not None:
            READS.inc(replica.name)
            try:
                with replica.sessions() as session:
                    return work(session)
            except DBAPIError as ex:
                if not retryable(ex):
                    raise
                if sqlstate(ex) != "40001":  # a recovery conflict leaves the replica in
                    replica.mark_down(ex)
                self._healthy = tuple(r for r in self._healthy if r is not replica)
                tried.append(replica)
        READS.inc("primary")
        with self.primary() as session:
            return work(session)

    def dispose(self) -> None:
        """Close every replica connection."""
        for replica in self.replicas:
            replica.engine.dispose()
            replica.checker.dispose()


def sqlstate(ex: DBAPIError) -> str | None:
    """Return the SQLSTATE of a driver error (None for a failure to connect)."""
    return getattr(ex.orig, "sqlstate", None)


def retryable(ex: DBAPIError) -> bool:
    """Tell whether a read that failed on a replica may run again elsewhere."""
    if ex.connection_invalidated:
        return True
    code = sqlstate(ex)
    if code is None:  # no answer from the server: a connection that failed or was lost
        return isinstance(ex, (OperationalError, InterfaceError))
    return code.startswith("08") or code in RETRY_STATES


def parse_urls(value: str) -> list[str]:
    """Return the URLs of a comma-separated list (blanks ignored)."""
    return [item.strip() for item in value.split(",") if item.strip()]
