"""XAPP issuance throttling per client id and per client IP, counted in the shared Redis.

Every attempt counts, before any secret is checked: a client cannot mint application tokens (or
guess secrets) faster than the limits, whichever route it uses (``/api/tokens/xapp_token`` or the
``client_credentials`` grant). The defaults are far above what an application needs (a token
lasts 7 days); the bench sets its own.
"""

from __future__ import annotations

import math
import time

from flask import current_app
from limits import RateLimitItem, parse
from limits.storage import RedisStorage
from limits.strategies import FixedWindowRateLimiter
from redis import Redis

from auth_server.context import services
from common.settings import AuthSettings
from common.tokens import digest

EXTENSION_KEY = "artcat.xapp_throttle"


class XappThrottle:
    """Fixed-window limits on XAPP issuance (one INCR per limit: this is a hot path)."""

    def __init__(self, redis: Redis, settings: AuthSettings) -> None:
        path = redis.connection_pool.connection_kwargs.get("path")
        uri = f"redis+unix://{path}" if settings.embedded_redis and path else "redis://"
        storage = RedisStorage(
            uri,
            connection_pool=redis.connection_pool,  # the stores' own connections
            key_prefix=f"{settings.redis_prefix}:limits",
        )
        self.limiter = FixedWindowRateLimiter(storage)
        self.per_client: RateLimitItem = parse(settings.xapp_attempts_per_client)
        self.per_ip: RateLimitItem = parse(settings.xapp_attempts_per_ip)

    def hit(self, *, client_id: str, ip: str) -> int | None:
        """Count one attempt; return the seconds to wait when a limit is exceeded, else None."""
        checks = (
            (self.per_ip, "xapp-ip", ip),
            # Keyed by a digest: whatever a caller sends as client_id stays out of key names.
            (self.per_client, "xapp-client", digest(client_id)),
        )
        for item, namespace, key in checks:
            if not self.limiter.hit(item, namespace, key):
                stats = self.limiter.get_window_stats(item, namespace, key)
                return max(1, math.ceil(stats.reset_time - time.time()))
        return None


def xapp_throttle() -> XappThrottle:
    """Return the current app's XAPP throttle, built on first use."""
    throttle: XappThrottle | None = current_app.extensions.get(EXTENSION_KEY)
    if throttle is None:
        svc = services()
        throttle = XappThrottle(svc.stores.redis, svc.settings)
        current_app.extensions[EXTENSION_KEY] = throttle
    return throttle
