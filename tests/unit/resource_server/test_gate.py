"""The request gate: token, rate limit and catalog version in one Redis round trip."""

from __future__ import annotations

import time
from typing import Any

import pytest
from redis import Redis
from redis.connection import AbstractConnection
from redis.exceptions import ResponseError
from sqlalchemy.orm import Session, sessionmaker

from common.catalog_version import bump_catalog_version
from common.tokens import TOMBSTONE, TokenRecord, TokenStore, digest
from resource_server.doccache import DocumentCache
from resource_server.gate import RequestGate
from resource_server.ratelimit import RateLimited, RateLimiter


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    """A Redis prefix of the test's own."""
    return f"gate-test-{request.node.name}-{time.monotonic_ns()}"


@pytest.fixture
def gate(redis_client: Redis, sessions: sessionmaker[Session], prefix: str) -> RequestGate:
    """A gate with a limit of 3 requests a second per application."""
    tokens = TokenStore(redis_client, sessions, prefix=prefix)
    limiter = RateLimiter(redis_client, sessions, rate="3/second", burst=3, prefix=prefix)
    return RequestGate(redis_client, tokens, limiter, prefix=prefix)


def put_token(gate: RequestGate, token: str, application_id: str = "app-1") -> TokenRecord:
    """Publish a valid token record straight into Redis."""
    record = TokenRecord("xapp", application_id, None, "", int(time.time()) + 3600)
    gate.redis.set(gate.tokens.key(digest(token)), record.encode(), ex=3600)
    return record


class CountingPool:
    """Count the round trips Redis clients make: one per batch of commands sent."""

    def __init__(self, redis: Redis) -> None:
        self.trips = 0
        self._send = AbstractConnection.send_packed_command
        send = self._send

        def counted(conn: Any, *a: Any, **kw: Any) -> Any:
            self.trips += 1
            return send(conn, *a, **kw)

        AbstractConnection.send_packed_command = counted  # type: ignore[method-assign,assignment]

    def restore(self) -> None:
        """Stop counting."""
        AbstractConnection.send_packed_command = self._send  # type: ignore[method-assign]


def test_a_valid_token_is_admitted_with_the_catalog_version(gate: RequestGate) -> None:
    """The record and the version come back together."""
    record = put_token(gate, "tok-a")
    bump_catalog_version(gate.redis, gate.tokens.prefix)
    passage = gate.admit("tok-a")
    assert passage.record == record
    assert passage.catalog_version == b"1"
    assert passage.within_limit


def test_invalid_tokens_are_refused(gate: RequestGate) -> None:
    """Missing, unknown, tombstoned and oversized tokens have no record."""
    assert gate.admit(None).record is None
    assert gate.admit("").record is None
    assert gate.admit("x" * 600).record is None
    put_token(gate, "tok-b")
    gate.redis.set(gate.tokens.key(digest("tok-b")), TOMBSTONE)
    assert gate.admit("tok-b").record is None


def test_an_expiry_is_seen_on_the_next_request(gate: RequestGate) -> None:
    """Validity is never remembered in the process: a tombstone wins at once."""
    put_token(gate, "tok-c")
    assert gate.admit("tok-c").record is not None
    assert gate.admit("tok-c").record is not None  # the application is now remembered
    gate.redis.set(gate.tokens.key(digest("tok-c")), TOMBSTONE)
    assert gate.admit("tok-c").record is None


def test_from_the_second_request_on_one_round_trip(gate: RequestGate) -> None:
    """The first request of a token learns its application; later ones take one trip."""
    gate.limiter = RateLimiter(
        gate.redis, gate.limiter.sessions, rate="100/second", burst=100, prefix=gate.tokens.prefix
    )
    put_token(gate, "tok-d", "app-d")
    gate.limiter.limit_for("app-d")  # the override lookup (SQL, cached) is not a Redis trip
    counting = CountingPool(gate.redis)
    try:
        gate.admit("tok-d")  # one trip, then the limit is hit on its own
        gate.admit("tok-d")  # the version was missing: seeded once
        counting.trips = 0
        for _ in range(2):
            gate.admit("tok-d")
        assert counting.trips == 2
    finally:
        counting.restore()


def test_the_pipelined_hit_counts_in_the_limiters_own_windows(gate: RequestGate) -> None:
    """Hits from the pipeline and from ``limits`` itself share one window: 3 a second."""
    put_token(gate, "tok-e", "app-e")
    results = [gate.admit("tok-e").within_limit for _ in range(3)]  # 1 direct + 2 pipelined
    assert results == [True, True, True]
    assert gate.admit("tok-e").within_limit is False
    assert gate.limiter.hit("app-e") is False  # limits' own check sees the same count
    with pytest.raises(RateLimited) as refused:
        gate.limiter.settle("app-e", False)
    assert refused.value.retry_after >= 1


def test_each_application_has_its_own_window(gate: RequestGate) -> None:
    """One application over its limit does not hold back another."""
    put_token(gate, "tok-f", "app-f")
    put_token(gate, "tok-g", "app-g")
    for _ in range(3):
        gate.admit("tok-f")
    assert gate.admit("tok-f").within_limit is False
    assert gate.admit("tok-g").within_limit is True


def test_the_document_cache_follows_the_catalog_version() -> None:
    """A document is served for the version it was read at, never for another."""
    cache = DocumentCache(max_entries=2)
    cache.put(b"1", "a", b"doc-a")
    assert cache.get(b"1", "a") == b"doc-a"
    assert cache.get(b"2", "a") is None
    assert cache.get(None, "a") is None
    cache.put(b"2", "b", b"doc-b")  # a newer version empties the memory
    assert cache.get(b"1", "a") is None
    assert cache.get(b"2", "a") is None
    cache.put(b"2", "c", b"doc-c")
    cache.put(b"2", "d", b"doc-d")  # over the bound: start afresh
    assert len(cache) == 1
    assert cache.get(b"2", "d") == b"doc-d"
    off = DocumentCache(max_entries=0)
    off.put(b"1", "a", b"x")
    assert off.get(b"1", "a") is None


def test_a_forgotten_rate_limit_script_is_loaded_again(gate: RequestGate) -> None:
    """A restarted or flushed Redis loses its scripts: the gate loads it and still counts."""
    put_token(gate, "tok-h", "app-h")
    gate.admit("tok-h")  # learns the application: the next hits travel with the token's GET
    gate.redis.script_flush()
    passage = gate.admit("tok-h")  # NOSCRIPT: loaded, then the same trip again
    assert passage.record is not None and passage.within_limit
    assert gate.admit("tok-h").within_limit  # the third hit of the second
    assert gate.admit("tok-h").within_limit is False  # 3 a second: the reloaded trip counted


def test_a_missing_catalog_version_is_seeded_and_not_cached_under(gate: RequestGate) -> None:
    """No version (a new or flushed Redis): that request is uncached, the next has a version."""
    put_token(gate, "tok-i")
    assert gate.admit("tok-i").catalog_version is None
    seeded = gate.admit("tok-i").catalog_version
    assert seeded is not None and int(seeded) >= 0
    gate.redis.delete(gate.version_key)  # a flush: a new random version, not the old one again
    gate.admit("tok-i")
    assert gate.admit("tok-i").catalog_version not in (None, seeded)
    cache = DocumentCache()
    cache.put(None, "a", b"doc")
    assert cache.get(None, "a") is None


def test_cached_documents_are_forgotten_after_their_maximum_age() -> None:
    """A change made without a version bump (hand-written SQL) is served within max_age."""
    cache = DocumentCache(max_age=0.05)
    cache.put(b"1", "a", b"doc-a")
    assert cache.get(b"1", "a") == b"doc-a"
    time.sleep(0.06)
    assert cache.get(b"1", "a") is None
    cache.put(b"1", "b", b"doc-b")  # the memory starts afresh
    assert len(cache) == 1


def test_a_kept_connection_that_redis_closed_is_connected_anew(gate: RequestGate) -> None:
    """A connection Redis dropped while it sat idle (a restart, a timeout) fails once, quietly:
    the same request connects again and is answered, and the token is still read fresh."""
    put_token(gate, "tok-j")
    assert gate.admit("tok-j").record is not None
    line = gate._idle[-1]
    (client_id,) = line.exchange(b"*2\r\n$6\r\nCLIENT\r\n$2\r\nID\r\n", 1)
    assert gate.redis.client_kill_filter(_id=client_id) == 1
    assert gate.admit("tok-j").record is not None
    gate.redis.set(gate.tokens.key(digest("tok-j")), TOMBSTONE)
    assert gate.admit("tok-j").record is None


def test_an_error_reply_leaves_the_connection_usable(gate: RequestGate) -> None:
    """An error reply in the middle of the trip is raised after every reply is read, so the
    connection's next exchange reads its own replies, not the rest of the last one's."""
    put_token(gate, "tok-k", "app-k")
    gate.admit("tok-k")
    line = gate._idle[-1]
    bad = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n" + b"*1\r\n$7\r\nNOTACMD\r\n" + b"*1\r\n$4\r\nPING\r\n"
    with pytest.raises(ResponseError):
        line.exchange(bad, 3)
    assert gate.admit("tok-k").record is not None


def test_a_cache_with_a_byte_budget_keeps_within_it() -> None:
    """Pages are large: past ``max_bytes`` the memory starts afresh, and a document larger than
    the whole budget is not kept at all."""
    cache = DocumentCache(max_bytes=10)
    cache.put(b"1", "a", b"12345")
    cache.put(b"1", "a", b"123456")  # replaced, not counted twice
    cache.put(b"1", "b", b"1234")
    assert (cache.get(b"1", "a"), cache.get(b"1", "b")) == (b"123456", b"1234")
    cache.put(b"1", "c", b"12")  # 12 bytes in all: over the budget, so afresh
    assert (cache.get(b"1", "a"), cache.get(b"1", "c")) == (None, b"12")
    cache.put(b"1", "d", b"x" * 11)
    assert cache.get(b"1", "d") is None and cache.get(b"1", "c") is None


def test_the_limits_names_the_gate_relies_on_are_those_checked() -> None:
    """The gate counts on ``limits``' own sliding-window keys, named by two private methods of
    its Redis storage: the versions pyproject.toml allows are those checked, the installed one
    among them, and both names are there."""
    import tomllib
    from importlib.metadata import version
    from pathlib import Path

    from limits.storage import RedisStorage
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from resource_server import ratelimit

    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text())["project"]
    (required,) = [d for d in project["dependencies"] if d.lower().startswith("limits")]
    assert Requirement(required).specifier == SpecifierSet(ratelimit.LIMITS_CHECKED)
    assert Version(version("limits")) in SpecifierSet(ratelimit.LIMITS_CHECKED)
    for name in ("_previous_window_key", "_current_window_key", "prefixed_key"):
        assert callable(getattr(RedisStorage, name, None)), name
