"""What every throttle of the auth server shares: ``limits`` counters in the stores' Redis.

Each throttle is built once per app, on first use (the app factory stays store-free), and counts
under ``<prefix>:limits`` on the stores' own connections. A hit is counted and checked in one
Redis operation, so a concurrent burst cannot pass more than a limit allows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TypeVar

from flask import current_app
from limits import RateLimitItem
from limits.storage import RedisStorage
from limits.strategies import MovingWindowRateLimiter, RateLimiter
from redis import Redis

from auth_server.context import services
from common.settings import AuthSettings

T = TypeVar("T")


def storage_uri(redis: Redis, settings: AuthSettings) -> str:
    """Return the ``limits`` storage URI of the Redis the stores use (embedded: its socket)."""
    path = redis.connection_pool.connection_kwargs.get("path")
    if not settings.embedded_redis or not path:
        return "redis://"  # the stores' connection pool is given: the URI only names the kind
    return f"redis+unix://{path}"


class Limits:
    """``limits`` counters in the stores' Redis, with one strategy (moving window by default)."""

    def __init__(
        self,
        redis: Redis,
        settings: AuthSettings,
        strategy: type[RateLimiter] = MovingWindowRateLimiter,
    ) -> None:
        storage = RedisStorage(
            storage_uri(redis, settings),
            connection_pool=redis.connection_pool,  # the stores' own connections
            key_prefix=f"{settings.redis_prefix}:limits",
        )
        self.limiter = strategy(storage)

    def count(self, *checks: tuple[RateLimitItem, str, str]) -> int | None:
        """Count one hit per (limit, namespace, key); return the seconds to wait once one is full.

        The checks run in order and stop at the first full limit, which is then not counted past.
        """
        for item, namespace, key in checks:
            if not self.limiter.hit(item, namespace, key):
                stats = self.limiter.get_window_stats(item, namespace, key)
                return max(1, math.ceil(stats.reset_time - time.time()))
        return None


def per_app(key: str, build: Callable[[Redis, AuthSettings], T]) -> T:
    """Return the current app's instance of a throttle, built from its stores on first use."""
    found: T | None = current_app.extensions.get(key)
    if found is None:
        svc = services()
        found = build(svc.stores.redis, svc.settings)
        current_app.extensions[key] = found
    return found
