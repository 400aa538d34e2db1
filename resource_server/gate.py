"""The request gate: the token check, the rate limit and the catalog version in one Redis trip.

Every catalog request needs three facts from Redis: the token's record (is it valid, whose is
it), a hit on its application's rate limit, and the catalog versions (the whole catalog's and
each resource type's, one MGET: they tell whether cached documents are still current). Asked
one by one they cost three round trips; here they go out together. The rate limit needs the
application, which only the token record tells, so the gate remembers which application each
token digest belongs to (that never changes for a token): from a token's second request on, its
application's limit is hit in the same round trip. A token's validity is never remembered here:
every request reads it from Redis, so an expiry is seen by every process on the very next
request.

On a Redis Cluster the three live in up to three slots: the token's key (its digest), the
application's rate-limit window (``limits`` tags it by application) and the catalog versions
(one slot, ``{<prefix>:catalog}``). A token's application is known only once its record is
read, so no tag can put the two together. The gate then writes each node's commands on a
connection it keeps for that node (the cluster client's slot map names the node), and reads
the replies once all are written: one round trip of latency, to up to three nodes. A MOVED, a
node gone or a cluster changing hands sends the commands through the cluster client's pipeline
instead, which follows the redirection, refreshes the slot map and waits out a failover
(bench/README.md, "Redis Cluster", has what the cluster costs).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from typing import Any

import falcon
from hiredis import pack_command
from redis import Redis
from redis.cluster import RedisCluster
from redis.connection import Connection
from redis.exceptions import (
    AskError,
    ClusterDownError,
    MovedError,
    NoScriptError,
    ReadOnlyError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from common.api.errors import AuthError
from common.catalog_version import catalog_version_key, version_keys
from common.redis_exchange import exchange_on
from common.redis_store import is_cluster, outage_retry, through_outage
from common.tokens import TokenRecord, TokenStore, digest, well_formed
from resource_server.auth import tokens_from_request
from resource_server.ratelimit import RateLimiter

# What a cluster answers while its slots move or change hands: the gate then goes the cluster
# client's way (``RequestGate.run``).
CLUSTER_CHANGES = (
    AskError,
    MovedError,
    ClusterDownError,
    TryAgainError,
    SlotNotCoveredError,
    RedisConnectionError,
    RedisTimeoutError,
    ReadOnlyError,
)

# Token digests whose application is remembered; past this many the memory starts afresh.
MAX_REMEMBERED = 100_000


@dataclass(frozen=True, slots=True)
class Passage:
    """What the gate learnt about one request."""

    record: TokenRecord | None  # None: no valid token
    catalog_version: bytes | None
    within_limit: bool = True  # False: the application is over its rate limit
    # The version of each catalog resource type, in CATALOG_TYPES order (None: never bumped).
    type_versions: tuple[bytes | None, ...] = ()


class RequestGate:
    """Check a token, count its request and read the catalog version, in one round trip."""

    def __init__(
        self, redis: Redis, tokens: TokenStore, limiter: RateLimiter, *, prefix: str
    ) -> None:
        self.redis = redis
        self.tokens = tokens
        self.limiter = limiter
        self.cluster = is_cluster(redis)
        self.cluster_client = redis if isinstance(redis, RedisCluster) else None
        self.outage = outage_retry()  # a cluster's pipeline, tried again over a failover
        self.version_key = catalog_version_key(prefix, cluster=self.cluster)
        # The whole catalog's first, then each type's.
        self.version_keys = version_keys(prefix, cluster=self.cluster)
        self._versions_packed = _pack("MGET", *self.version_keys)
        self._application_of: dict[str, str] = {}
        # Connections the round trip keeps between requests (see ``_trip``), and the process
        # they belong to: a forked child never writes on its parent's sockets.
        self._idle: list[_Line] = []
        self._by_node: dict[str, list[_Line]] = {}  # on a cluster: by node (``_scatter``)
        self._pid = os.getpid()

    def version(self) -> bytes | None:
        """Read the catalog version alone."""
        return self.versions()[0]

    def versions(self) -> tuple[bytes | None, tuple[bytes | None, ...]]:
        """Read the whole catalog's version and each resource type's, in one MGET."""
        values: list[bytes | None] = self.redis.mget(self.version_keys)  # type: ignore[assignment]
        return self._seeded(values[0]), tuple(values[1:])

    def _seeded(self, version: bytes | None) -> bytes | None:
        """Return ``version``; when there is none (a new or flushed Redis), seed a random one.

        The request that finds none is answered uncached (None). A random 62-bit start means
        that a flushed Redis never gives back a version that documents were filed under
        before the flush; writers INCR it from there.
        """
        if version is None:
            self.redis.set(self.version_key, secrets.randbits(62), nx=True)
        return version

    def admit(self, token: str | None) -> Passage:
        """Return the token's record (None when invalid), the catalog version and the limit.

        A valid token's request is counted against its application's limit. Redis errors
        propagate: the service answers 503 and never serves a request it could not check.
        """
        if not well_formed(token):
            return Passage(None, self.version())
        token_digest = digest(token)
        key = self.tokens.key(token_digest)
        known_app = self._application_of.get(token_digest)
        try:
            results = self._trip(key, known_app)
        except NoScriptError:  # a restarted or flushed Redis forgot the rate-limit script
            self.limiter.load_script()
            results = self._trip(key, known_app)
        version = self._seeded(results[1][0])
        types = tuple(results[1][1:])
        record = self.tokens.record_from_cache(token_digest, key, results[0])
        if record is None:
            return Passage(None, version, type_versions=types)
        if known_app == record.application_id:
            within = bool(results[2])
        else:
            if len(self._application_of) >= MAX_REMEMBERED:
                self._application_of.clear()
            self._application_of[token_digest] = record.application_id
            within = self.limiter.hit(record.application_id)
        return Passage(record, version, within, types)

    def _trip(self, key: str, known_app: str | None) -> list[Any]:
        """The round trip: the token's record, the versions, and the hit when the app is known.

        The commands are written together on one connection and their replies read in order,
        as a non-transactional pipeline does (``_Line``). The connection comes from the gate's
        own idle list, filled from redis-py's pool once: a pipeline takes one from the pool and
        gives it back on every request and keeps a stack and a callback for each command,
        several times the CPU of this exchange, which shows end to end on every cached catalog
        read (bench/README.md, "Public interfaces").
        """
        if self.cluster:
            commands: list[tuple[Any, ...]] = [("GET", key), ("MGET", *self.version_keys)]
            if known_app is not None:
                commands.append(self.limiter.hit_command(known_app))
            return self.run(commands)
        packed = _pack("GET", key) + self._versions_packed
        count = 2
        if known_app is not None:
            packed += self.limiter.packed_hit(known_app)
            count = 3
        return self.exchange(packed, count)

    def run(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Send ``commands`` in one round trip and return their replies (an error reply raised).

        On a single server they go through :meth:`exchange`. On a cluster each goes to the
        primary owning its keys' slot, on a connection kept per node (``_scatter``); when
        the cluster answers that its slots moved or it is changing hands (MOVED, ASK,
        CLUSTERDOWN, TRYAGAIN, a node gone), the commands go again through the cluster
        client's pipeline, which follows the redirections, refreshes the slot map (the next
        round trips use it) and is tried again over a failover.
        """
        if not self.cluster:
            return self.exchange(b"".join(_pack(*command) for command in commands), len(commands))
        try:
            return self._scatter(commands)
        except CLUSTER_CHANGES:
            return through_outage(self.outage, lambda: self._pipelined(commands))

    def _pipelined(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Send ``commands`` through the cluster client's pipeline (the slow, sure way)."""
        pipe = self.redis.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command)
        replies: list[Any] = pipe.execute()
        return replies

    def _scatter(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Write each node's commands on a kept connection of that node, then read them all.

        The node of a command is the primary the cluster client's slot map names for its
        first key (``get_node_from_key``), its connection one from that node's client
        (``get_redis_connection``), kept between requests as ``exchange`` keeps its own.
        """
        cluster = self.cluster_client
        assert cluster is not None
        if os.getpid() != self._pid:  # forked: the parent's connections are not ours
            self._idle, self._by_node, self._pid = [], {}, os.getpid()
        groups: dict[str, tuple[Any, list[int]]] = {}
        for index, command in enumerate(commands):
            key = command[3] if command[0] == "EVALSHA" else command[1]
            node = cluster.get_node_from_key(key)
            groups.setdefault(node.name, (node, []))[1].append(index)
        replies: list[Any] = [None] * len(commands)
        taken: list[tuple[str, _Line, list[int]]] = []
        try:
            for name, (node, indexes) in groups.items():
                idle = self._by_node.setdefault(name, [])
                try:
                    line = idle.pop()
                except IndexError:
                    pool = cluster.get_redis_connection(node).connection_pool
                    line = _Line(pool.get_connection())
                taken.append((name, line, indexes))
                line.send(b"".join(_pack(*commands[i]) for i in indexes))
            error: ResponseError | None = None
            for _, line, indexes in taken:
                got, failed = line.receive(len(indexes))
                error = error or failed
                for i, reply in zip(indexes, got, strict=True):
                    replies[i] = reply
        except BaseException:
            for _, line, _ in taken:
                line.conn.disconnect()  # replies left unread: it connects afresh next time
            raise
        finally:
            for name, line, _ in taken:
                self._by_node.setdefault(name, []).append(line)
        if error is not None:
            raise error
        return replies

    def exchange(self, packed: bytes, count: int) -> list[Any]:
        """Send packed commands in one round trip on a kept connection; return ``count``
        replies (the page limit's hit goes this way too: ``resource_server.web.limit``)."""
        if os.getpid() != self._pid:  # forked: the parent's connections are not ours
            self._idle, self._pid = [], os.getpid()
        try:
            line, kept = self._idle.pop(), True  # list.pop and append are atomic: no lock
        except IndexError:
            line, kept = _Line(self.redis.connection_pool.get_connection()), False
        try:
            try:
                return line.exchange(packed, count)
            except RedisConnectionError:
                if not kept:
                    raise
                # A kept connection that Redis closed while it was idle (a restart) fails on
                # first use, where the pool would have found it closed on checkout: once more,
                # connected anew.
                return line.exchange(packed, count)
        finally:
            self._idle.append(line)


def _pack(*parts: Any) -> bytes:
    """Return one command in Redis's wire format."""
    packed: bytes = pack_command(parts)
    return packed


class _Line:
    """A connection of the gate's own, taken from redis-py's pool once and kept.

    redis-py connects it (address, TLS, AUTH, SELECT, Sentinel's master) and parses its
    replies (with hiredis when it is installed). The exchange goes through the connection's
    public interface, ``send_packed_command`` and ``read_response``: the packed commands
    written at once, their replies read in order, as a non-transactional pipeline does
    without its per-request pool checkout, command stack and response callbacks.
    """

    __slots__ = ("conn",)

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def send(self, packed: bytes) -> None:
        """Write packed commands (a failure disconnects the connection and raises)."""
        try:
            self.conn.send_packed_command([packed])
        except BaseException:
            self.conn.disconnect()
            raise

    def receive(self, count: int) -> tuple[list[Any], ResponseError | None]:
        """Read ``count`` replies; return them and the first error reply among them."""
        replies: list[Any] = []
        error: ResponseError | None = None
        try:
            for _ in range(count):
                try:
                    replies.append(self.conn.read_response())
                except ResponseError as reply:
                    error = error or reply
                    replies.append(reply)
        except BaseException:
            self.conn.disconnect()
            raise
        return replies, error

    def exchange(self, packed: bytes, count: int) -> list[Any]:
        """Send the commands at once, read ``count`` replies, then raise the first error reply
        (``common.redis_exchange.exchange_on``)."""
        return exchange_on(self.conn, packed, count)


class GateMiddleware:
    """Admit a request by its resource's ``auth`` level: token, then rate limit."""

    def __init__(self, gate: RequestGate) -> None:
        self.gate = gate

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        """Reject a request without a valid token (401), or over its limit (429)."""
        req.context.token = None
        req.context.catalog_version = None
        req.context.catalog_versions = ()
        level = getattr(resource, "auth", "app")
        if level == "none" or req.method == "OPTIONS" or resource is None:
            return
        presented = tokens_from_request(req)
        passage = self.gate.admit(presented[0] if presented else None)
        record = passage.record
        if record is not None and len(presented) > 1:
            record = self._together(record, presented[1:])
        if record is None or (level == "user" and not record.is_user):
            raise AuthError()
        if not passage.within_limit:
            self.gate.limiter.settle(record.application_id, False)
        req.context.token = record
        req.context.catalog_version = passage.catalog_version
        req.context.catalog_versions = passage.type_versions

    def _together(self, first: TokenRecord, others: list[str]) -> TokenRecord | None:
        """Return the record to act on when several tokens are presented; None if any is invalid.

        Rare (a client sending its application token and a user token): each other token is one
        more Redis read. The user's token is the one acted on; two users' tokens are refused.
        """
        records = [first]
        for token in others:
            record = self.gate.tokens.lookup(token)
            if record is None:
                return None
            records.append(record)
        users = {r.user_id for r in records if r.is_user}
        if len(users) > 1:
            return None
        return next((r for r in records if r.is_user), first)
