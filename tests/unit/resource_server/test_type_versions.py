"""Catalog versions per resource type: a document survives writes to the types it is not
built from, and is read afresh after a write to one it is."""

from __future__ import annotations

import time

import pytest
from redis import Redis
from sqlalchemy.orm import Session, sessionmaker

from common.catalog_version import CATALOG_TYPES, bump_catalog_version, type_version_key
from common.tokens import TokenRecord, TokenStore, digest
from resource_server.doccache import DocumentCache
from resource_server.gate import RequestGate
from resource_server.ratelimit import RateLimiter


@pytest.fixture
def gate(redis_client: Redis, sessions: sessionmaker[Session]) -> RequestGate:
    """A gate under a Redis prefix of the test's own, with a valid token ``tok``."""
    prefix = f"types-test-{time.monotonic_ns()}"
    tokens = TokenStore(redis_client, sessions, prefix=prefix)
    limiter = RateLimiter(redis_client, sessions, rate="100/second", burst=100, prefix=prefix)
    record = TokenRecord("xapp", "app-1", None, "", int(time.time()) + 3600)
    redis_client.set(tokens.key(digest("tok")), record.encode(), ex=3600)
    gate = RequestGate(redis_client, tokens, limiter, prefix=prefix)
    gate.admit("tok")  # seeds the catalog version
    return gate


def stamp(gate: RequestGate) -> tuple[bytes | None, tuple[bytes | None, ...]]:
    """Return the versions a request admitted now would see."""
    passage = gate.admit("tok")
    return passage.catalog_version, passage.type_versions


def test_the_gate_reads_every_type_version_in_its_one_trip(gate: RequestGate) -> None:
    """A bump of some types shows in their places only; the catalog version stays."""
    version, types = stamp(gate)
    assert len(types) == len(CATALOG_TYPES) and version is not None
    bump_catalog_version(gate.redis, gate.tokens.prefix, ["artists", "genes"])
    after, bumped = stamp(gate)
    assert after == version
    changed = {CATALOG_TYPES[i] for i, v in enumerate(bumped) if v != types[i]}
    assert changed == {"artists", "genes"}


def test_a_bump_without_types_changes_the_whole_catalog(gate: RequestGate) -> None:
    """Loaders that do not say what they wrote invalidate everything."""
    version, types = stamp(gate)
    bump_catalog_version(gate.redis, gate.tokens.prefix)
    after, same = stamp(gate)
    assert after != version and same == types


def test_an_unknown_type_is_refused(redis_client: Redis) -> None:
    """A typo would otherwise bump a counter nobody reads: a stale document."""
    with pytest.raises(ValueError):
        bump_catalog_version(redis_client, "p", ["artwork"])
    with pytest.raises(ValueError):
        type_version_key("p", "users")


def test_a_document_survives_writes_to_other_types_only(gate: RequestGate) -> None:
    """An artwork document (artworks, editions) stays through an artists write, not an
    editions write, and not a whole-catalog one."""
    cache = DocumentCache(kinds=("artworks", "editions"))
    version, types = stamp(gate)
    cache.put(version, "a", b"doc-a", types)
    assert cache.get(version, "a", types) == b"doc-a"
    bump_catalog_version(gate.redis, gate.tokens.prefix, ["artists", "sales"])
    version, types = stamp(gate)
    assert cache.get(version, "a", types) == b"doc-a"
    bump_catalog_version(gate.redis, gate.tokens.prefix, ["editions"])
    version, types = stamp(gate)
    assert cache.get(version, "a", types) is None
    cache.put(version, "a", b"doc-a2", types)
    bump_catalog_version(gate.redis, gate.tokens.prefix)
    version, types = stamp(gate)
    assert cache.get(version, "a", types) is None


def test_without_type_versions_a_typed_cache_keeps_nothing() -> None:
    """A request the gate did not read the versions for is never served from memory."""
    cache = DocumentCache(kinds=("artworks",))
    cache.put(b"1", "a", b"doc")
    assert cache.get(b"1", "a") is None and len(cache) == 0
