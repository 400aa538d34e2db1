"""Sign-in throttling per client IP and per account: one budget for every way to try a password.

The sign-in page, the change-password page and the credentials/password grants all count their
attempts here, in the shared Redis, under the same keys. An attempt is counted before any
password is hashed, and counting is one Lua script that checks both limits and records the
attempt in both in one atomic step: a concurrent burst cannot slip more attempts past the limits
than they allow, so an attacker cannot make the server spend argon2 time beyond them.

An attempt whose password proves right may be forgiven (``forgive``): only failures then use
the budget, so the people behind one office address signing in each morning do not lock each
other out, while a guesser still gets no more than the limits. The counters are sliding logs
(a sorted set of attempt times per key); the limits are ``limits`` rate strings from settings.
"""

from __future__ import annotations

import math
import secrets
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from redis import Redis

from auth_server.accounts import normalise_email
from auth_server.rate_limits import Limits, per_app
from common.settings import AuthSettings
from common.tokens import digest

# KEYS: the counters. ARGV: now (ms), this attempt's member, then each key's limit and window
# (ms). Counts the attempt in every key when none is full; returns 0, or the ms to wait.
_COUNT_ATTEMPT = """
local now = tonumber(ARGV[1])
local wait = 0
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i + 1])
  local window = tonumber(ARGV[2 * i + 2])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local n = redis.call('ZCARD', key)
  if n >= limit then
    local oldest = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
    local free_in = window
    if oldest[2] then free_in = tonumber(oldest[2]) + window - now end
    wait = math.max(wait, free_in, 1)
  end
end
if wait > 0 then return math.ceil(wait) end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[2])
  redis.call('PEXPIRE', key, tonumber(ARGV[2 * i + 2]))
end
return 0
"""


@dataclass(frozen=True)
class Attempt:
    """One sign-in attempt: counted (``wait`` is None) or refused for ``wait`` seconds."""

    wait: int | None
    keys: tuple[str, ...]
    member: str


class LoginThrottle:
    """Sliding-window limits on password attempts, per client IP and per account."""

    def __init__(self, redis: Redis, settings: AuthSettings) -> None:
        self.redis = redis
        self.prefix = f"{settings.redis_prefix}:limits"
        self.per_ip: RateLimitItem = parse(settings.login_attempts_per_ip)
        self.per_account: RateLimitItem = parse(settings.login_attempts_per_account)
        self._script = redis.register_script(_COUNT_ATTEMPT)

    def attempt(self, *, ip: str, account: str) -> Attempt:
        """Count one attempt unless a limit is reached; say how long to wait if it is."""
        # The account is keyed by a digest: emails stay out of Redis.
        keys = (
            f"{self.prefix}:login-ip:{ip}",
            f"{self.prefix}:login-account:{digest(normalise_email(account))}",
        )
        member = secrets.token_hex(8)
        args: list[str | int | float] = [time.time() * 1000, member]
        for item in (self.per_ip, self.per_account):
            args += [item.amount, item.get_expiry() * 1000]
        wait_ms = int(self._script(keys=list(keys), args=args))
        wait = max(1, math.ceil(wait_ms / 1000)) if wait_ms else None
        return Attempt(wait, keys, member)

    def hit(self, *, ip: str, account: str) -> int | None:
        """Count one attempt; return the seconds to wait when a limit is exceeded, else None."""
        return self.attempt(ip=ip, account=account).wait

    def forgive(self, attempt: Attempt) -> None:
        """Take back a counted attempt whose password was right (failures alone use the budget)."""
        if attempt.wait is None:
            with self.redis.pipeline(transaction=False) as pipe:
                for key in attempt.keys:
                    pipe.zrem(key, attempt.member)
                pipe.execute()


def login_throttle() -> LoginThrottle:
    """Return the current app's throttle, built on first use (the app factory stays store-free)."""
    return per_app("artcat.login_throttle", LoginThrottle)


class SignUpThrottle(Limits):
    """A moving-window limit on the accounts one client IP may create (``limits``, in Redis)."""

    def __init__(self, redis: Redis, settings: AuthSettings) -> None:
        super().__init__(redis, settings)
        self.per_ip: RateLimitItem = parse(settings.sign_up_attempts_per_ip)

    def hit(self, *, ip: str) -> int | None:
        """Count one sign-up (atomically); return the seconds to wait when over the limit."""
        return self.count((self.per_ip, "sign-up-ip", ip))


def sign_up_throttle() -> SignUpThrottle:
    """Return the current app's sign-up throttle, built on first use."""
    return per_app("artcat.sign_up_throttle", SignUpThrottle)
