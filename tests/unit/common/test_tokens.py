"""The token store against an in-process fake Redis and an in-memory SQLite database."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application, Base, Token
from common.tokens import TOMBSTONE, UNKNOWN, TokenRecord, TokenStore, digest, digests_match


class FakeRedis:
    """Just enough of Redis for the token store: GET, SET with EX and NX, pipelines."""

    def __init__(self) -> None:
        self.data: dict[str, tuple[bytes, float]] = {}

    def get(self, key: str) -> bytes | None:
        value = self.data.get(key)
        if value is None or value[1] < time.time():
            return None
        return value[0]

    def set(self, key: str, value: bytes, ex: int, nx: bool = False) -> bool:
        if nx and self.get(key) is not None:
            return False
        self.data[key] = (value, time.time() + ex)
        return True

    def pipeline(self, transaction: bool = False) -> FakePipeline:
        return FakePipeline(self)


class FakePipeline:
    def __init__(self, redis: FakeRedis) -> None:
        self.redis = redis
        self.ops: list[tuple[Any, ...]] = []

    def set(self, *args: Any, **kwargs: Any) -> None:
        self.ops.append((args, kwargs))

    def execute(self) -> None:
        for args, kwargs in self.ops:
            self.redis.set(*args, **kwargs)


@pytest.fixture
def store() -> Iterator[TokenStore]:
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    sessions = sessionmaker(engine, expire_on_commit=False)
    with sessions() as s, s.begin():
        s.add(Application(id="a" * 24, name="t", client_id="c", client_secret_digest=digest("s")))
    yield TokenStore(FakeRedis(), sessions)  # type: ignore[arg-type]


def issue(store: TokenStore, ttl: int = 3600) -> tuple[str, Token]:
    with store.sessions() as s, s.begin():
        issued = store.issue(s, kind="xapp", application_id="a" * 24, user_id=None, ttl=ttl)
    store.publish(issued.row)
    return issued.value, issued.row


def test_only_the_digest_is_stored(store: TokenStore) -> None:
    value, row = issue(store)
    assert row.digest == digest(value) and value not in row.digest
    assert all(value.encode() not in v for v, _ in store.redis.data.values())  # type: ignore[attr-defined]


def test_lookup_reads_through_and_caches(store: TokenStore) -> None:
    value, _ = issue(store)
    store.redis.data.clear()  # type: ignore[attr-defined]
    record = store.lookup(value)
    assert record is not None and record.kind == "xapp" and record.application_id == "a" * 24
    assert store.redis.get(store.key(digest(value))) == record.encode()


def test_unknown_token_is_cached_negatively(store: TokenStore) -> None:
    assert store.lookup("nope") is None
    assert store.redis.get(store.key(digest("nope"))) == UNKNOWN


def test_expiry_writes_a_tombstone_that_read_through_cannot_overwrite(store: TokenStore) -> None:
    value, _ = issue(store)
    assert store.expire(value) is not None
    key = store.key(digest(value))
    assert store.redis.get(key) == TOMBSTONE
    assert store.lookup(value) is None
    assert store.redis.get(key) == TOMBSTONE
    assert store.expire(value) is None  # already spent


def test_read_through_refuses_a_disabled_application_and_publishes_nothing(
    store: TokenStore,
) -> None:
    value, _ = issue(store)
    store.redis.data.clear()  # type: ignore[attr-defined]
    with store.sessions() as s, s.begin():
        s.get_one(Application, "a" * 24).enabled = False
    assert store.lookup(value) is None
    assert store.redis.get(store.key(digest(value))) == TOMBSTONE


def test_record_encoding_round_trips_and_rejects_garbage() -> None:
    rec = TokenRecord("access", "a" * 24, "b" * 24, "offline_access", 123)
    assert TokenRecord.decode(rec.encode()) == rec
    assert TokenRecord.decode(b"X") is None
    assert TokenRecord.decode(b"1|x|y|z|s|notanint") is None


def test_digest_comparison_is_exact() -> None:
    assert digests_match("abc", digest("abc"))
    assert not digests_match("abd", digest("abc"))
    assert len(digest("\udcff")) == 64  # lone surrogates from a hostile header do not crash


def test_overlong_tokens_are_refused_without_a_lookup(store: TokenStore) -> None:
    assert store.lookup("x" * 600) is None
    assert store.redis.data == {}  # type: ignore[attr-defined]


_: Session | None = None
