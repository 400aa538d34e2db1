"""Storage that cleans itself: expired rows leave SQL in small background batches.

Every table that grows with issuance (tokens, authorization codes...) has a *sweep*: the table,
the condition of a row that may go (given a cutoff: now minus the sweep's retention), the
retention itself, and the indexed column the condition bounds (tokens have two sweeps, expired
and revoked, so that each batch is one index range scan rather than an OR of two). A run takes
every sweep in turn and deletes by primary key from a ``SELECT ... ORDER BY column LIMIT n``
(``FOR UPDATE SKIP LOCKED`` on PostgreSQL: a row a request holds is left for the next run), one
short transaction per batch, with a pause between batches, until a batch comes back short.
Another table is one more ``register(Sweep(...))`` (``register(past(...))`` for rows that go a
retention after a time column).

Only one process cleans at a time: a run holds a Redis lock (with an expiry, renewed after each
batch); the background cleaner of each auth server process also claims the interval in Redis,
so however many processes run, the tables are swept about once per ``CLEANUP_INTERVAL``.
``artcat db clean`` runs the same sweeps under the same lock, for operators who prefer cron.

Deleting a token's row never brings the token back: a token row goes only once it is expired
or revoked (and the retention has passed). Its Redis key is then either its tombstone, or
nothing, and a lookup that misses Redis and finds no row answers "unknown": refused either way.
The read-through's second look (``common.tokens``) counts a row gone as expired.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from multiprocessing import util
from typing import Any, cast

from redis.exceptions import LockError, RedisError
from redis.lock import Lock
from sqlalchemy import ColumnElement, CursorResult, Table, and_, delete, exists, select
from sqlalchemy.exc import SQLAlchemyError

from common.ids import utcnow
from common.metrics import counter
from common.models import (
    AuthorizationCode,
    DeviceAuthorization,
    InitialAccessToken,
    RefreshFamily,
    RefreshToken,
    Token,
)
from common.settings import AuthSettings
from common.stores import Stores

log = logging.getLogger("artcat.cleanup")

# How long the run lock lives unless renewed (after every batch), in seconds.
LOCK_TTL = 60
# Between two batches: room for the requests' own writes (SQLite has one writer at a time).
BATCH_PAUSE = 0.02

REMOVED = counter(
    "artcat_cleanup_rows_removed",
    "Rows the storage cleanup removed, by table.",
    ("table",),
)
RUNS = counter(
    "artcat_cleanup_runs",
    "Storage cleanup runs, by outcome: done, locked (another process was cleaning), failed.",
    ("outcome",),
)


@dataclass(frozen=True)
class Sweep:
    """Rows of a table that leave once they are of no more use.

    ``condition(cutoff)`` tells which rows may go, ``cutoff`` being now minus ``retention``
    (seconds, from the settings): e.g. rows that expired before the cutoff. ``order_by``, an
    indexed column the condition bounds, makes each batch one index range scan (a condition
    on one indexed column with it, rather than an OR of two: one sweep per column).
    """

    name: str
    table: Table
    condition: Callable[[datetime], ColumnElement[bool]]
    retention: Callable[[AuthSettings], int]
    order_by: Any = None

    @property
    def key(self) -> Any:
        """Return the primary key column (one column: rows are deleted by it)."""
        (column,) = self.table.primary_key.columns
        return column


# The sweeps, in the order a run takes them. A table referenced by another one's foreign key
# comes after it (a row that references it goes first, or its reference is set null).
SWEEPS: list[Sweep] = []


def register(sweep: Sweep) -> Sweep:
    """Add a sweep (after those registered before it); return it."""
    if any(s.name == sweep.name for s in SWEEPS):
        raise ValueError(f"a sweep named {sweep.name!r} is registered already")
    SWEEPS.append(sweep)
    return sweep


def _retention(settings: AuthSettings) -> int:
    return settings.cleanup_retention


def past(name: str, model: type[Any], column: Any) -> Sweep:
    """A sweep of ``model``'s rows whose ``column`` is more than the retention ago (by it)."""
    return Sweep(
        name, cast(Table, model.__table__), lambda cutoff: column < cutoff, _retention, column
    )


# Expired tokens, and revoked ones (``expired_at``), a retention after either.
register(past("tokens.expired", Token, Token.expires_at))
register(past("tokens.revoked", Token, Token.expired_at))
# Codes, used or not, a retention after their expiry: a used code is kept that long so that
# its replay still expires the tokens it bought. Tokens issued from a code that goes keep
# their row (``tokens.code_id`` is set null).
register(past("authorization_codes", AuthorizationCode, AuthorizationCode.expires_at))
# Refresh tokens a retention after their expiry: one rotated stays until then, so that its
# reuse still revokes its family. A family goes once it holds no token (every token of a family
# is issued as it starts or by a rotation, both of which set its last use: so each expires
# within REFRESH_TOKEN_TTL of it, and the family goes in the run that removes its last token).
register(past("refresh_tokens", RefreshToken, RefreshToken.expires_at))
register(
    Sweep(
        "refresh_families",
        cast(Table, RefreshFamily.__table__),
        lambda cutoff: and_(
            RefreshFamily.used_at < cutoff,
            ~exists().where(RefreshToken.family_id == RefreshFamily.id),
        ),
        lambda settings: settings.cleanup_retention + settings.refresh_token_ttl,
        RefreshFamily.used_at,
    )
)
# Device grants past their codes' expiry once they hold no live token: an approved grant that
# bought a token stays (the account page lists it, its revoke expires the token) until that
# token's row goes (its reference is then set null).
register(
    Sweep(
        "device_authorizations",
        cast(Table, DeviceAuthorization.__table__),
        lambda cutoff: and_(
            DeviceAuthorization.expires_at < cutoff, DeviceAuthorization.token_id.is_(None)
        ),
        _retention,
        DeviceAuthorization.expires_at,
    )
)
register(past("initial_access_tokens", InitialAccessToken, InitialAccessToken.expires_at))


def lock_key(prefix: str) -> str:
    """Return the Redis key of the run lock."""
    return f"{prefix}:cleanup:lock"


def interval_key(prefix: str) -> str:
    """Return the Redis key a background cleaner claims its interval with."""
    return f"{prefix}:cleanup:claimed"


class Cleaner:
    """Runs the sweeps, under the run lock, in batches."""

    def __init__(
        self,
        settings: AuthSettings,
        stores: Stores,
        *,
        sweeps: list[Sweep] | None = None,
        batch_size: int | None = None,
        pause: float = BATCH_PAUSE,
    ) -> None:
        self.settings = settings
        self.stores = stores
        self.sweeps = SWEEPS if sweeps is None else sweeps
        self.batch_size = batch_size or settings.cleanup_batch_size
        self.pause = pause
        self.stopping = threading.Event()

    def lock(self) -> Lock:
        """Return the run lock (not acquired)."""
        return self.stores.redis.lock(
            lock_key(self.settings.redis_prefix), timeout=LOCK_TTL, blocking=False
        )

    def run(self, *, now: datetime | None = None) -> dict[str, int] | None:
        """Run every sweep once; return the rows removed by table, or None when another
        process holds the lock (nothing is done then)."""
        lock = self.lock()
        if not lock.acquire():
            RUNS.inc("locked")
            return None
        try:
            removed = {s.table.name: 0 for s in self.sweeps}
            for sweep in self.sweeps:
                for count in self.batches(sweep, now):
                    removed[sweep.table.name] += count
                    lock.reacquire()  # raises LockNotOwnedError when the lock was lost
        except (SQLAlchemyError, RedisError, LockError):
            RUNS.inc("failed")
            raise
        finally:
            with contextlib.suppress(LockError, RedisError):
                lock.release()
        RUNS.inc("done")
        if any(removed.values()):
            log.info("storage cleanup removed %s", removed)
        return removed

    def batches(self, sweep: Sweep, now: datetime | None = None) -> Iterator[int]:
        """Delete the rows of ``sweep`` that may go, a batch (one transaction) at a time;
        yield each batch's count. Stops after a short batch, or when asked to stop."""
        cutoff = (now or utcnow()) - timedelta(seconds=sweep.retention(self.settings))
        engine = self.stores.engine
        ids = select(sweep.key).where(sweep.condition(cutoff)).limit(self.batch_size)
        if sweep.order_by is not None:
            ids = ids.order_by(sweep.order_by)
        if engine.dialect.name == "postgresql":
            ids = ids.with_for_update(skip_locked=True)
        statement = delete(sweep.table).where(sweep.key.in_(ids.scalar_subquery()))
        while not self.stopping.is_set():
            with engine.begin() as conn:
                count = cast(CursorResult[Any], conn.execute(statement)).rowcount
            if count:
                REMOVED.inc(sweep.table.name, by=count)
                yield count
            if count < self.batch_size:
                return
            self.stopping.wait(self.pause)

    def run_if_due(self) -> dict[str, int] | None:
        """Run unless another process ran (or runs) within the interval."""
        claimed = self.stores.redis.set(
            interval_key(self.settings.redis_prefix),
            str(os.getpid()),
            nx=True,
            ex=max(1, self.settings.cleanup_interval),
        )
        return self.run() if claimed else None


# The background cleaners of this process, stopped as it exits.
_RUNNING: weakref.WeakSet[Background] = weakref.WeakSet()
_EXIT_HOOKED: set[int] = set()  # the processes that registered the exit hook


class Background:
    """The cleaner of one auth server process: a daemon thread started on the process's first
    request (after a fork, in each worker), stopped as the process exits."""

    def __init__(self, settings: AuthSettings, stores: Stores) -> None:
        self.cleaner = Cleaner(settings, stores)
        self.interval = settings.cleanup_interval
        self.thread: threading.Thread | None = None
        self.pid = 0
        self.guard = threading.Lock()

    def ensure_started(self) -> None:
        """Start the thread unless this process runs it already (cheap: a pid comparison)."""
        if self.interval <= 0 or self.pid == os.getpid():
            return
        with self.guard:
            if self.pid == os.getpid():
                return
            self.cleaner.stopping = threading.Event()  # a forked copy's event may be set
            self.thread = threading.Thread(target=self.loop, name="artcat-cleanup", daemon=True)
            self.thread.start()
            self.pid = os.getpid()
            _RUNNING.add(self)
            if self.pid not in _EXIT_HOOKED:
                _EXIT_HOOKED.add(self.pid)
                # Runs at exit in the main process (atexit) and in multiprocessing's workers.
                util.Finalize(None, stop_all, exitpriority=20)

    def wait(self) -> float:
        """Return the seconds until the next look: a quarter interval, give or take half."""
        return max(0.25, self.interval / 4 * random.uniform(0.5, 1.5))

    def loop(self) -> None:
        """Look every quarter interval whether a run is due (claimed by no process), run it."""
        stopping = self.cleaner.stopping
        while not stopping.wait(self.wait()):
            try:
                self.cleaner.run_if_due()
            except (SQLAlchemyError, RedisError, LockError, OSError):
                log.exception("storage cleanup failed; trying again in an interval")

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread (a batch in flight commits first)."""
        self.cleaner.stopping.set()
        thread = self.thread
        if thread is not None and thread.is_alive() and self.pid == os.getpid():
            thread.join(timeout)


def stop_all() -> None:
    """Stop every background cleaner of this process."""
    for background in list(_RUNNING):
        background.stop()


def timed_run(cleaner: Cleaner) -> tuple[dict[str, int] | None, float]:
    """Run once; return what was removed (None: locked) and the seconds it took."""
    start = time.monotonic()
    removed = cleaner.run()
    return removed, time.monotonic() - start
