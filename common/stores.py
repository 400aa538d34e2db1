"""The stores a service runs on: the SQL engine and sessions, Redis, and the token store."""

from __future__ import annotations

from dataclasses import dataclass

from redis import Redis
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from common.db import make_engine, make_sessionmaker, read_engine
from common.redis_store import connect_redis
from common.settings import Settings
from common.tokens import TokenStore


@dataclass(frozen=True)
class Stores:
    """Connections shared by a service's requests.

    ``sessions`` run transactions (every write goes through them); ``reads`` are for requests
    that only read: on PostgreSQL they run each statement on its own (autocommit), which saves
    the BEGIN and ROLLBACK round trips of a transaction, half the database cost of a catalog
    read. On SQLite, whose reads open no transaction, they are the same sessions.
    """

    engine: Engine
    sessions: sessionmaker[Session]
    redis: Redis
    tokens: TokenStore
    read_sessions: sessionmaker[Session] | None = None

    @property
    def reads(self) -> sessionmaker[Session]:
        """Sessions for requests that only read (the transactional ones when none are set)."""
        return self.read_sessions or self.sessions

    @classmethod
    def connect(
        cls, settings: Settings, *, engine: Engine | None = None, redis: Redis | None = None
    ) -> Stores:
        """Connect to the configured stores (or reuse the given engine and Redis client)."""
        engine = engine or make_engine(settings)
        redis = redis or connect_redis(settings)
        sessions = make_sessionmaker(engine)
        reads = make_sessionmaker(read_engine(engine), reads=True)
        tokens = TokenStore(
            redis,
            sessions,
            prefix=settings.redis_prefix,
            negative_ttl=settings.negative_cache_ttl,
            reads=reads,
        )
        return cls(engine, sessions, redis, tokens, reads)
