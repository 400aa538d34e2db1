"""XAPP issuance throttling per client id and per client IP, counted in the shared Redis.

Every attempt counts, before any secret is checked: a client cannot mint application tokens (or
guess secrets) faster than the limits, whichever route it uses (``/api/tokens/xapp_token`` or the
``client_credentials`` grant). The defaults are far above what an application needs (a token
lasts 7 days); the bench sets its own.
"""

from __future__ import annotations

from limits import RateLimitItem, parse
from limits.strategies import FixedWindowRateLimiter
from redis import Redis

from auth_server.rate_limits import Limits, per_app
from common.settings import AuthSettings
from common.tokens import digest


class XappThrottle(Limits):
    """Fixed-window limits on XAPP issuance (one INCR per limit: this is a hot path)."""

    def __init__(self, redis: Redis, settings: AuthSettings) -> None:
        super().__init__(redis, settings, FixedWindowRateLimiter)
        self.per_client: RateLimitItem = parse(settings.xapp_attempts_per_client)
        self.per_ip: RateLimitItem = parse(settings.xapp_attempts_per_ip)

    def hit(self, *, client_id: str, ip: str) -> int | None:
        """Count one attempt; return the seconds to wait when a limit is exceeded, else None."""
        return self.count(
            (self.per_ip, "xapp-ip", ip),
            # Keyed by a digest: whatever a caller sends as client_id stays out of key names.
            (self.per_client, "xapp-client", digest(client_id)),
        )


def xapp_throttle() -> XappThrottle:
    """Return the current app's XAPP throttle, built on first use."""
    return per_app("artcat.xapp_throttle", XappThrottle)
