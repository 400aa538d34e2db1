"""Sign-in throttling per client IP and per account, counted in the shared Redis with ``limits``.

Every attempt counts (successful or not), and it is counted before any password is hashed, so
an attacker cannot make the server spend argon2 time beyond the limits.
"""

from __future__ import annotations

import math
import time

from flask import current_app
from limits import RateLimitItem, parse
from limits.storage import RedisStorage
from limits.strategies import MovingWindowRateLimiter
from redis import Redis

from auth_server.accounts import normalise_email
from auth_server.context import services
from common.settings import AuthSettings
from common.tokens import digest

EXTENSION_KEY = "artcat.login_throttle"


def storage_uri(redis: Redis, settings: AuthSettings) -> str:
    """Return the ``limits`` storage URI of the Redis the stores use (embedded: its socket)."""
    if not settings.embedded_redis:
        return "redis://"  # the stores' connection pool is given: the URI only names the kind
    path = redis.connection_pool.connection_kwargs.get("path")
    return f"redis+unix://{path}"


class LoginThrottle:
    """Moving-window limits on sign-in attempts, per client IP and per account."""

    def __init__(self, redis: Redis, settings: AuthSettings) -> None:
        storage = RedisStorage(
            storage_uri(redis, settings),
            connection_pool=redis.connection_pool,  # the stores' own connections
            key_prefix=f"{settings.redis_prefix}:limits",
        )
        self.limiter = MovingWindowRateLimiter(storage)
        self.per_ip: RateLimitItem = parse(settings.login_attempts_per_ip)
        self.per_account: RateLimitItem = parse(settings.login_attempts_per_account)

    def hit(self, *, ip: str, account: str) -> int | None:
        """Count one attempt; return the seconds to wait when a limit is exceeded, else None."""
        checks = (
            (self.per_ip, "login-ip", ip),
            # The account is keyed by a digest: emails stay out of Redis.
            (self.per_account, "login-account", digest(normalise_email(account))),
        )
        for item, namespace, key in checks:
            if not self.limiter.hit(item, namespace, key):
                stats = self.limiter.get_window_stats(item, namespace, key)
                return max(1, math.ceil(stats.reset_time - time.time()))
        return None


def login_throttle() -> LoginThrottle:
    """Return the current app's throttle, built on first use (the app factory stays store-free)."""
    throttle: LoginThrottle | None = current_app.extensions.get(EXTENSION_KEY)
    if throttle is None:
        svc = services()
        throttle = LoginThrottle(svc.stores.redis, svc.settings)
        current_app.extensions[EXTENSION_KEY] = throttle
    return throttle
