"""The applications' version: a value in Redis that every change of an application moves.

Each auth server process keeps the applications it looked up (``auth_server.clients``) filed
under this version, and reads the version on every lookup: a token request then reads no
application row, and a process never answers with an application as it was before a change
that committed before the request began.

Every engine made by ``common.db.make_engine`` (and its read engine) is watched, so no caller
has to remember it: a statement that writes the ``applications`` table, as it goes to the
database (an ORM flush, a Core statement, raw SQL; also a DELETE from ``users``, whose
applications' ``user_id`` the database then clears), marks its connection. The change is then
announced twice, through the Redis of the stores whose session made it (``watch_sessions``;
else the one the engine's settings name):

- just before its commit, the version becomes a *pending* value that lapses after
  ``PENDING_TTL``: while it holds, every process reads its applications from the database and
  keeps none. Should Redis not take it, the commit is refused (``ChangeNotAnnounced``): a change
  no process was told of is not made;
- when the connection goes back to the pool, its transaction over, the version moves to a new
  value: the processes keep what they read from then on. Should Redis not take this one, the
  pending value lapses, the key is then missing, and a process sets a new version (below).

The guarantee: once a change of an application committed through a watched engine, no process
answers with the application as it was, whether or not Redis was reachable (a process that
cannot read the version reads the database). It holds while a commit takes less than
``PENDING_TTL`` after its first announcement. A transaction that rolled back is announced too
(harmless: the processes read their applications again).

The version moves to a new random value, not a counter: should Redis lose its data, the key
comes back as another value than any a process filed applications under (a counter restarting
at 0 could meet an old one). While the key is missing a process reads the database, and sets a
new value for the next request.

Not seen: a change made outside these engines (by hand in SQL, by a migration), or committed by
the database before its statement returned (an autocommit connection). A process reads each
cached application again after ``auth_server.clients.CACHE_TTL`` at the latest.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any, Protocol

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from sqlalchemy import Engine, event
from sqlalchemy.orm import sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from common.redis_exchange import exchange_of

log = logging.getLogger("artcat.clients")

# The table whose rows the processes keep, and the one whose deletion changes them (SET NULL).
CLIENTS_TABLE = "applications"
OWNERS_TABLE = "users"
# A statement that writes them, as the database receives it (SQLAlchemy's, or raw SQL): an
# INSERT, UPDATE, DELETE or TRUNCATE of applications, a DELETE or TRUNCATE of users (in a WITH
# clause too).
_WRITES = re.compile(
    rf"""\b(?:
        (?:insert\s+into|update|delete\s+from)\s+(?:only\s+)?"?{CLIENTS_TABLE}"?\b
      | delete\s+from\s+(?:only\s+)?"?{OWNERS_TABLE}"?\b
      | truncate\b[^;]*?\b(?:{CLIENTS_TABLE}|{OWNERS_TABLE})\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# The marks a connection carries from its write to its return to the pool: that it wrote, and
# whom to tell (the announcer of the session that began its transaction).
_CHANGED = "artcat.clients_changed"
_ANNOUNCER = "artcat.clients_announcer"
# The prefix of a pending version (a change about to commit), and how long it holds at most.
PENDING = b"pending-"
PENDING_TTL = 30


class Announce(Protocol):
    """What tells every process that an application changed (``pending``: it is about to
    commit; else it did). Raises when Redis did not take it."""

    def __call__(self, *, pending: bool) -> None: ...


class ChangeNotAnnounced(RedisConnectionError):
    """A change of an application was refused: Redis could not be told of it before its
    commit, so a process could have answered with the application as it was (a Redis error:
    the services answer 503, as for Redis down)."""


def version_key(prefix: str) -> str:
    """Return the Redis key of the applications' version."""
    return f"{prefix}:clients:version"


def new_version() -> bytes:
    """Return a version no process has seen (64 random bits in hex)."""
    return os.urandom(8).hex().encode()


def announce(redis: Redis, prefix: str, *, pending: bool = False) -> None:
    """Move the version (``pending``: to a pending value, before a commit; else to a new one,
    after it). Raises RedisError when Redis did not take it."""
    if pending:
        redis.set(version_key(prefix), PENDING + new_version(), ex=PENDING_TTL)
    else:
        redis.set(version_key(prefix), new_version())


class RedisAnnouncer:
    """Announce through a Redis client, under a key prefix."""

    def __init__(self, redis: Redis, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix

    def __call__(self, *, pending: bool) -> None:
        """Move the version (see ``announce``)."""
        announce(self.redis, self.prefix, pending=pending)


def current_version(redis: Redis, prefix: str) -> bytes | None:
    """Return the version, or None when none may be trusted: unset (then a new one is set for
    the next request), pending (a change is committing), or Redis unreachable; the caller then
    reads the database and keeps nothing."""
    key = version_key(prefix)
    exchange = exchange_of(redis)  # every token request asks: at a command's CPU cost
    try:
        value = exchange.run([("GET", key)])[0]
        if value is None:
            exchange.run([("SET", key, new_version(), "NX")])
    except RedisError:
        return None
    if not isinstance(value, bytes) or value.startswith(PENDING):
        return None
    return value


# The statements seen, and whether they write (SQLAlchemy hands the same string object over
# each time a cached statement runs: its hash is kept, the lookup costs next to nothing).
_seen: dict[str, bool] = {}
_SEEN_MAX = 4096


def writes_clients(sql: str) -> bool:
    """Tell whether a statement (its SQL) may change an application (see the module)."""
    found = _seen.get(sql)
    if found is None:
        lower = sql.lower()
        found = (CLIENTS_TABLE in lower or OWNERS_TABLE in lower) and bool(_WRITES.search(sql))
        if len(_seen) >= _SEEN_MAX:
            _seen.clear()
        _seen[sql] = found
    return found


def watch(engine: Engine, on_change: Announce) -> None:
    """Announce every change of an application made through ``engine`` (see the module):
    through the announcer of the session that made it (``watch_sessions``), else through
    ``on_change``."""

    @event.listens_for(engine, "before_cursor_execute")
    def _mark(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if writes_clients(statement):
            conn.info[_CHANGED] = True

    @event.listens_for(engine, "commit")
    def _pending(conn: Any) -> None:
        info = conn.info
        if not info.get(_CHANGED):
            return
        try:
            info.get(_ANNOUNCER, on_change)(pending=True)
        except Exception as ex:  # the commit is refused: no process would see the change
            reason = type(ex).__name__
            log.warning("an application change was refused: Redis was not told of it (%s)", reason)
            raise ChangeNotAnnounced("Redis could not be told of an application change") from ex

    @event.listens_for(engine, "checkin")
    def _announce(_dbapi: Any, record: ConnectionPoolEntry) -> None:
        info = record.info
        announcer = info.pop(_ANNOUNCER, on_change)
        if info.pop(_CHANGED, False):
            try:
                announcer(pending=False)
            except Exception as ex:  # never fail a connection's return over it
                # The pending version lapses, and the processes set a new one (see the module).
                log.warning("could not announce an application change: %s", type(ex).__name__)


def watch_sessions(sessions: sessionmaker[Any], on_change: Announce) -> None:
    """Announce the changes of applications made in ``sessions``' transactions through
    ``on_change`` (rather than the engine's own: see ``watch``)."""

    @event.listens_for(sessions, "after_begin")
    def _tell(_session: Any, _transaction: Any, connection: Any) -> None:
        connection.info[_ANNOUNCER] = on_change
