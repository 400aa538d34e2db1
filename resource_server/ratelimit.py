"""Per-application rate limits, counted in Redis so that they hold across processes."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import falcon
from limits import RateLimitItem, parse
from limits.storage import RedisStorage
from limits.strategies import SlidingWindowCounterRateLimiter
from redis import Redis
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from resource_server.errors import APIError

OVERRIDE_TTL = 60.0  # seconds an application's override is cached in this process


class RateLimited(APIError):
    """Too many requests for the caller's application (429)."""

    status = falcon.HTTP_429
    type = "rate_limit_error"

    def __init__(self, retry_after: int, limit: str) -> None:
        super().__init__(f"Too many requests: the limit is {limit} per application.")
        self.retry_after = retry_after


def burst_limit(rate: str, burst: int) -> RateLimitItem:
    """Turn "5/second" with a burst of 10 into "10 per 2 seconds": the same average, a burst."""
    item = parse(rate)
    if burst <= item.amount:
        return item
    window = item.get_expiry() * burst / item.amount
    return parse(f"{burst}/{max(1, round(window))} seconds")


class RateLimiter:
    """Count requests per application with a sliding window in Redis."""

    def __init__(
        self, redis: Redis, sessions: sessionmaker[Session], *, rate: str, burst: int, prefix: str
    ) -> None:
        storage = RedisStorage(
            "redis://", connection_pool=redis.connection_pool, key_prefix=f"{prefix}:rl"
        )
        self.limiter = SlidingWindowCounterRateLimiter(storage)
        self.default = burst_limit(rate, burst)
        self.default_text = rate
        self.sessions = sessions
        self._overrides: dict[str, tuple[float, RateLimitItem | None, str]] = {}
        self._lock = threading.Lock()

    def limit_for(self, application_id: str) -> tuple[RateLimitItem, str]:
        """Return the application's limit (its override, else the default), cached briefly."""
        now = time.monotonic()
        cached = self._overrides.get(application_id)
        if cached is None or cached[0] < now:
            with self.sessions() as session:
                raw = session.scalar(
                    select(Application.rate_limit).where(Application.id == application_id)
                )
            item = None
            if raw:
                try:
                    item = parse(raw)
                except ValueError:
                    item = None  # a malformed override falls back to the default
            cached = (now + OVERRIDE_TTL, item, raw or "")
            with self._lock:
                self._overrides[application_id] = cached
        if cached[1] is None:
            return self.default, self.default_text
        return cached[1], cached[2]

    def check(self, application_id: str) -> None:
        """Count one request; raise RateLimited when the application is over its limit."""
        item, text = self.limit_for(application_id)
        if self.limiter.hit(item, application_id):
            return
        stats = self.limiter.get_window_stats(item, application_id)
        retry = max(1, math.ceil(stats.reset_time - time.time()))
        raise RateLimited(retry, text)


class RateLimitMiddleware:
    """Apply the limit after the token check, to requests that carry a valid token."""

    def __init__(self, limiter: RateLimiter) -> None:
        self.limiter = limiter

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        """Count the request against its application."""
        record = getattr(req.context, "token", None)
        if record is not None:
            self.limiter.check(record.application_id)


def handle_rate_limited(
    req: falcon.Request, resp: falcon.Response, ex: RateLimited, _p: Any
) -> None:
    """Render a 429 with Retry-After."""
    resp.status = ex.status
    resp.set_header("Retry-After", str(ex.retry_after))
    resp.media = ex.body()
