"""The stores a service runs on: the SQL engine and sessions, Redis, and the token store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from redis import Redis
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from common.client_versions import RedisAnnouncer, watch_sessions
from common.db import announcer_of, make_engine, make_sessionmaker, read_engine, watched
from common.redis_store import connect_redis
from common.replicas import ReplicaSet, parse_urls
from common.settings import ResourceSettings, Settings
from common.tokens import TokenStore

T = TypeVar("T")


@dataclass(frozen=True)
class Stores:
    """Connections shared by a service's requests.

    ``sessions`` run transactions (every write goes through them); ``reads`` are for requests
    that only read: on PostgreSQL they run each statement on its own (autocommit), which saves
    the BEGIN and ROLLBACK round trips of a transaction, half the database cost of a catalog
    read. On SQLite, whose reads open no transaction, they are the same sessions. Both are the
    primary's. ``replicas`` (catalog settings with DATABASE_REPLICA_URLS only) are reached
    through ``catalog_read`` alone (see ``common.replicas`` for what may use it).
    """

    engine: Engine
    sessions: sessionmaker[Session]
    redis: Redis
    tokens: TokenStore
    read_sessions: sessionmaker[Session] | None = None
    replicas: ReplicaSet | None = None

    @property
    def reads(self) -> sessionmaker[Session]:
        """Sessions for requests that only read (the transactional ones when none are set)."""
        return self.read_sessions or self.sessions

    @property
    def read_engine(self) -> Engine:
        """The engine of ``reads``: for a single statement, a connection of its own costs less
        CPU than a session (on PostgreSQL an autocommit one: no BEGIN, no ROLLBACK)."""
        bind: Engine = self.reads.kw["bind"]
        return bind

    @property
    def replica_settle(self) -> float:
        """Return how long a document read on a replica after a catalog write may be stale
        (0 without replicas): caches keep none read that soon (``DocumentCache.settle``)."""
        return 0.0 if self.replicas is None else self.replicas.settle

    def catalog_read(self, work: Callable[[Session], T]) -> T:
        """Run ``work`` (catalog reads only: it may run twice) on a replica, else the primary."""
        if self.replicas is not None:
            return self.replicas.read(work)
        with self.reads() as session:
            return work(session)

    @classmethod
    def connect(
        cls, settings: Settings, *, engine: Engine | None = None, redis: Redis | None = None
    ) -> Stores:
        """Connect to the configured stores (or reuse the given engine and Redis client)."""
        engine = engine or make_engine(settings)
        redis = redis or connect_redis(settings)
        # A change of an application made in these stores' sessions is announced through their
        # Redis (the engine's settings name the Redis of changes made outside them).
        on_change = RedisAnnouncer(redis, settings.redis_prefix)
        if announcer_of(engine) is None:
            watched(engine, on_change)
        sessions = make_sessionmaker(engine)
        reads = make_sessionmaker(read_engine(engine), reads=True)
        watch_sessions(sessions, on_change)
        watch_sessions(reads, on_change)
        tokens = TokenStore(
            redis,
            sessions,
            prefix=settings.redis_prefix,
            negative_ttl=settings.negative_cache_ttl,
            reads=reads,
        )
        replicas = None
        if isinstance(settings, ResourceSettings) and settings.database_replica_urls:
            replicas = ReplicaSet.connect(
                parse_urls(settings.database_replica_urls),
                reads,
                max_lag=settings.replica_max_lag,
                connect_timeout=settings.replica_connect_timeout,
                echo=settings.sql_echo,
            )
        return cls(engine, sessions, redis, tokens, reads, replicas)
