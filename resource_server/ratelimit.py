"""Per-application rate limits, counted in Redis so that they hold across processes."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import falcon
from hiredis import pack_command
from limits import RateLimitItem, parse
from limits.storage import RedisStorage
from limits.strategies import SlidingWindowCounterRateLimiter
from redis import Redis
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from common.api.errors import TooManyRequests
from common.metrics import counter
from common.models import Application
from common.redis_store import limits_storage

# The versions of ``limits`` whose private ``RedisStorage._previous_window_key`` and
# ``_current_window_key`` name the keys ``sliding_hit_command`` counts on (pyproject.toml allows
# exactly these; tests/unit/resource_server/test_gate.py checks both and that the names exist).
LIMITS_CHECKED = ">=5.8,<6"
OVERRIDE_TTL = 60.0  # seconds an application's override is cached in this process
MAX_PACKED = 100_000  # applications whose packed hit is kept; past this, afresh
REJECTIONS = counter("artcat_rate_limit_rejections", "Requests refused 429 by the rate limit.")


class RateLimited(TooManyRequests):
    """Too many requests for the caller's application (429)."""

    def __init__(self, retry_after: int, limit: str) -> None:
        super().__init__(
            f"Too many requests: the limit is {limit} per application.", retry_after=retry_after
        )


def burst_limit(rate: str, burst: int) -> RateLimitItem:
    """Turn "5/second" with a burst of 10 into "10 per 2 seconds": the same average, a burst."""
    item = parse(rate)
    if burst <= item.amount:
        return item
    window = item.get_expiry() * burst / item.amount
    return parse(f"{burst}/{max(1, round(window))} seconds")


def sliding_hit_command(
    storage: RedisStorage, item: RateLimitItem, *identifiers: str
) -> tuple[Any, ...]:
    """Return the EVALSHA that counts one hit on ``item`` for ``identifiers``: the script, keys
    and arguments of ``limits``' own sliding-window hit, so that both count in one window."""
    key = item.key_for(*identifiers)
    keys = (
        storage.prefixed_key(storage._previous_window_key(key)),
        storage.prefixed_key(storage._current_window_key(key)),
    )
    sha = storage.lua_acquire_sliding_window.sha
    return ("EVALSHA", sha, len(keys), *keys, item.amount, item.get_expiry(), 1)


class RateLimiter:
    """Count requests per application with a sliding window in Redis."""

    def __init__(
        self, redis: Redis, sessions: sessionmaker[Session], *, rate: str, burst: int, prefix: str
    ) -> None:
        storage = limits_storage(redis, "redis://", f"{prefix}:rl")
        self.storage = storage
        self.limiter = SlidingWindowCounterRateLimiter(storage)
        self.default = burst_limit(rate, burst)
        self.default_text = rate
        self.sessions = sessions
        self._overrides: dict[str, tuple[float, RateLimitItem | None, str]] = {}
        self._packed: dict[str, tuple[RateLimitItem, bytes]] = {}
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
        self.settle(application_id, self.hit(application_id))

    def hit(self, application_id: str) -> bool:
        """Count one request; tell whether it is within the application's limit."""
        item, _ = self.limit_for(application_id)
        return self.limiter.hit(item, application_id)

    # -- one round trip: the hit travels in the request gate's pipeline ---------------------

    def hit_command(self, application_id: str) -> tuple[Any, ...]:
        """Return the Redis command that counts one hit on the application's limit.

        The same script, keys and arguments as ``limits``' own sliding-window hit (a unit test
        holds the two together), so both count in the same windows. The gate sends it as a
        plain EVALSHA with the token's GET: a Script object called on a pipeline would first
        ask Redis whether the script exists, a round trip of its own on every request. When
        Redis answers that it does not (a restarted or flushed Redis), the gate loads it
        (:meth:`load_script`) and asks again.
        """
        item, _ = self.limit_for(application_id)
        return self._hit_command(item, application_id)

    def packed_hit(self, application_id: str) -> bytes:
        """Return :meth:`hit_command` in Redis's wire format, packed once per application and
        limit (its keys name no time: the script finds the window)."""
        item, _ = self.limit_for(application_id)
        packed = self._packed.get(application_id)
        if packed is None or packed[0] is not item:
            if len(self._packed) >= MAX_PACKED:
                self._packed.clear()
            packed = (item, pack_command(self._hit_command(item, application_id)))
            self._packed[application_id] = packed
        return packed[1]

    def _hit_command(self, item: RateLimitItem, application_id: str) -> tuple[Any, ...]:
        return sliding_hit_command(self.storage, item, application_id)

    def load_script(self) -> None:
        """Load the sliding-window script into Redis (after Redis forgot it)."""
        script = self.storage.lua_acquire_sliding_window
        script.registered_client.script_load(script.script)

    def settle(self, application_id: str, acquired: bool) -> None:
        """Raise RateLimited when a queued hit was refused."""
        if acquired:
            return
        REJECTIONS.inc()
        item, text = self.limit_for(application_id)
        stats = self.limiter.get_window_stats(item, application_id)
        retry = max(1, math.ceil(stats.reset_time - time.time()))
        raise RateLimited(retry, text)


def handle_rate_limited(
    req: falcon.Request, resp: falcon.Response, ex: RateLimited, _p: Any
) -> None:
    """Render a 429 with Retry-After."""
    resp.status = falcon.code_to_http_status(ex.status)
    resp.set_header("Retry-After", str(ex.retry_after))
    resp.media = ex.body()
