"""A few Redis commands in one round trip, at the CPU cost of the commands alone.

A redis-py call costs several times what it sends: each command goes through argument checks
(redis-py 7 inspects every call's arguments for deprecated ones), a pipeline checks a
connection out of the pool and back in and keeps a stack and callbacks for each command. The
auth server's token requests make such trips on every request (the applications' version, the
token's record, a refresh's grace pair): ``Exchange.run`` writes the packed commands at once on
a connection it keeps and reads their replies in order, through the connection's public
interface (``send_packed_command``, ``read_response``), as the catalog's request gate does
(``resource_server.gate``; bench/README.md, "Public interfaces", has what it saves).

redis-py still connects (address, TLS, AUTH, SELECT, Sentinel's master) and parses replies. On
a Redis Cluster the commands go through the cluster client's pipeline (their keys may live on
several nodes): ``common.redis_store.pipelined``.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Sequence
from typing import Any

from hiredis import pack_command
from redis import Redis
from redis.connection import Connection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ReadOnlyError, ResponseError

from common.redis_store import is_cluster, pipelined

Command = tuple[Any, ...]


class Exchange:
    """Round trips of packed commands on connections kept from a client's pool."""

    def __init__(self, redis: Redis) -> None:
        # The client is held weakly (``exchange_of`` files the exchange under it: a strong
        # reference would keep every client alive); its pool is what a single server needs.
        self.client = weakref.ref(redis)
        self.cluster = is_cluster(redis)
        self.pool = None if self.cluster else redis.connection_pool
        self._idle: list[Connection] = []
        self._pid = os.getpid()

    def run(self, commands: Sequence[Command]) -> list[Any]:
        """Send the commands in one round trip and return their replies (the first error
        reply raised once all are read, as a pipeline raises it)."""
        if self.pool is None:
            redis = self.client()
            if redis is None:
                raise RedisConnectionError("The Redis client was closed")
            return pipelined(redis, lambda pipe: [pipe.execute_command(*c) for c in commands])
        packed = b"".join(pack_command(command) for command in commands)
        if os.getpid() != self._pid:  # forked: the parent's connections are not ours
            self._idle, self._pid = [], os.getpid()
        try:
            conn, kept = self._idle.pop(), True  # list.pop and append are atomic: no lock
        except IndexError:
            conn, kept = self.pool.get_connection(), False
        try:
            try:
                return exchange_on(conn, packed, len(commands))
            except RedisConnectionError:
                if not kept:
                    raise
                # A kept connection Redis closed while it was idle (a restart) fails on first
                # use, where the pool would have found it closed: once more, connected anew.
                return exchange_on(conn, packed, len(commands))
        finally:
            self._idle.append(conn)


def exchange_on(conn: Connection, packed: bytes, count: int) -> list[Any]:
    """Write the packed commands on ``conn``, read ``count`` replies, then raise the first error
    reply (once every reply is read: the connection's next exchange reads its own replies), as
    redis-py raises it. A failure of the connection disconnects it (its next use connects
    again) and raises redis-py's ConnectionError; so does a reply that the master is now a
    replica (a Sentinel failover)."""
    replies: list[Any] = []
    error: ResponseError | None = None
    try:
        conn.send_packed_command([packed])
        for _ in range(count):
            try:
                replies.append(conn.read_response())
            except ResponseError as reply:
                error = error or reply
                replies.append(reply)
    except BaseException:
        conn.disconnect()
        raise
    if error is not None:
        if isinstance(error, ReadOnlyError):  # a Sentinel failover: not a master now
            conn.disconnect()
            raise RedisConnectionError("The Redis master is now a replica")
        raise error
    return replies


# Each client's exchange, for as long as the client lives (the exchange holds it weakly). Its kept
# connections are the pool's, which closes them when the client is closed.
_exchanges: weakref.WeakKeyDictionary[Redis, Exchange] = weakref.WeakKeyDictionary()


def exchange_of(redis: Redis) -> Exchange:
    """Return the exchange of a Redis client (made on first use, one a client; freed with the
    client)."""
    found = _exchanges.get(redis)
    if found is None:
        found = _exchanges.setdefault(redis, Exchange(redis))
    return found
