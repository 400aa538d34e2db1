"""The stores a service runs on: the SQL engine and sessions, Redis, and the token store."""

from __future__ import annotations

from dataclasses import dataclass

from redis import Redis
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from common.db import make_engine, make_sessionmaker
from common.redis_store import connect_redis
from common.settings import Settings
from common.tokens import TokenStore


@dataclass(frozen=True)
class Stores:
    """Connections shared by a service's requests."""

    engine: Engine
    sessions: sessionmaker[Session]
    redis: Redis
    tokens: TokenStore

    @classmethod
    def connect(
        cls, settings: Settings, *, engine: Engine | None = None, redis: Redis | None = None
    ) -> Stores:
        """Connect to the configured stores (or reuse the given engine and Redis client)."""
        engine = engine or make_engine(settings)
        redis = redis or connect_redis(settings)
        sessions = make_sessionmaker(engine)
        tokens = TokenStore(
            redis, sessions, prefix=settings.redis_prefix, negative_ttl=settings.negative_cache_ttl
        )
        return cls(engine, sessions, redis, tokens)
