"""The applications' version: a value in Redis that every change of an application moves.

Each auth server process keeps the applications it looked up (``auth_server.clients``) filed
under this version, and reads the version on every lookup: a token request then reads no
application row, and a process never answers with an application as it was before a change
that committed before the request began.

Every engine made by ``common.db.make_engine`` (and its read engine) is watched, so no caller
has to remember it: a statement that writes the ``applications`` table, as it goes to the
database (an ORM flush, a Core statement, raw SQL; also a DELETE from ``users``, whose
applications' ``user_id`` the database then clears), marks its connection, and when that
connection goes back to the pool, its transaction over, the version moves. After the commit,
never before it: a process that reads the new version reads the rows as committed. A
transaction that rolled back moves it too (harmless: the processes read their applications
again).

The version moves to a new random value, not a counter: should Redis lose its data, the key
comes back as another value than any a process filed applications under (a counter restarting
at 0 could meet an old one). While the key is missing a process reads the database, and sets a
new value for the next request.

Not seen: a change made outside these engines (by hand in SQL, by a migration). A process
reads each cached application again after ``auth_server.clients.CACHE_TTL`` at the latest.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from typing import Any

from redis import Redis
from redis.exceptions import RedisError
from sqlalchemy import Engine, event
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
# The mark a connection carries from its write to its return to the pool.
_CHANGED = "artcat.clients_changed"

Announce = Callable[[], None]


def version_key(prefix: str) -> str:
    """Return the Redis key of the applications' version."""
    return f"{prefix}:clients:version"


def new_version() -> bytes:
    """Return a version no process has seen (64 random bits in hex)."""
    return os.urandom(8).hex().encode()


def announce(redis: Redis, prefix: str) -> None:
    """Move the version: every process reads its applications again (call after the commit)."""
    try:
        redis.set(version_key(prefix), new_version())
    except RedisError as ex:
        # The processes that still reach Redis keep what they cached until CACHE_TTL.
        log.warning("could not announce an application change: %s", type(ex).__name__)


def current_version(redis: Redis, prefix: str) -> bytes | None:
    """Return the version, or None when it is unknown (unset: then a new one is set for the
    next request; Redis unreachable: the caller reads the database)."""
    key = version_key(prefix)
    exchange = exchange_of(redis)  # every token request asks: at a command's CPU cost
    try:
        value = exchange.run([("GET", key)])[0]
        if value is None:
            exchange.run([("SET", key, new_version(), "NX")])
    except RedisError:
        return None
    return value if isinstance(value, bytes) else None


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
    """Call ``on_change`` whenever a connection of ``engine`` that wrote an application goes
    back to the pool (see the module)."""

    @event.listens_for(engine, "before_cursor_execute")
    def _mark(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if writes_clients(statement):
            conn.info[_CHANGED] = True

    @event.listens_for(engine, "checkin")
    def _announce(_dbapi: Any, record: ConnectionPoolEntry) -> None:
        if record.info.pop(_CHANGED, False):
            try:
                on_change()
            except Exception:  # never fail a connection's return over it
                log.exception("could not announce an application change")
