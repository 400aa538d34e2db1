"""Sign-in throttling: one set of budgets for every way to try a password.

The sign-in page, the change-password page and the credentials/password grants all count their
attempts here, in the shared Redis, under the same keys. An attempt is counted before any
password is hashed, and counting is one Lua script that checks every budget of the attempt and
records it in all of them in one atomic step: a concurrent burst cannot slip more attempts past
the limits than they allow, so an attacker cannot make the server spend argon2 time beyond them.

The budgets of an attempt (``limits`` rate strings from settings):

- per client IP, whatever the account (``LOGIN_ATTEMPTS_PER_IP``), always;
- from a browser holding a device cookie of the account (OWASP's "device cookies", see
  :mod:`auth_server.devices`): that device's own budget (``LOGIN_ATTEMPTS_PER_DEVICE``). A device
  whose budget is spent counts as none;
- otherwise (any other browser, and every grant): per account and client IP
  (``LOGIN_ATTEMPTS_PER_ACCOUNT_IP``), under a ceiling per account from every address together
  (``LOGIN_ATTEMPTS_PER_ACCOUNT``).

So a guesser at one address uses up that address's budget for the account, not the owner's at
another; guessers at many addresses reach the ceiling, which bounds the guesses an account can
take, and even then the owner's browser that signed in before keeps its own budget.

An attempt whose password proves right may be forgiven (``forgive``): only failures then use
the budgets, so the people behind one office address signing in each morning do not lock each
other out, while a guesser still gets no more than the limits. The counters are sliding logs
(a sorted set of attempt times per key).
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from limits import RateLimitItem, parse
from redis import Redis, RedisError
from sqlalchemy.exc import SQLAlchemyError

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
    """Sliding-window limits on password attempts: per IP, device, account and IP, and account."""

    def __init__(self, redis: Redis, settings: AuthSettings) -> None:
        self.redis = redis
        self.prefix = f"{settings.redis_prefix}:limits"
        self.per_ip: RateLimitItem = parse(settings.login_attempts_per_ip)
        self.per_account: RateLimitItem = parse(settings.login_attempts_per_account)
        self.per_account_ip: RateLimitItem = parse(settings.login_attempts_per_account_ip)
        self.per_device: RateLimitItem = parse(settings.login_attempts_per_device)
        self._script = redis.register_script(_COUNT_ATTEMPT)

    def attempt(self, *, ip: str, account: str, device: str | None = None) -> Attempt:
        """Count one attempt unless a budget is spent; say how long to wait if one is.

        ``device``: the id of the browser's device cookie, once checked to be genuine and the
        account's (:func:`auth_server.devices.trusted_device`); None for anything else.
        """
        ip_key = f"{self.prefix}:login-ip:{ip}"
        if device is not None:
            device_key = f"{self.prefix}:login-device:{device}"
            found = self._count((ip_key, self.per_ip), (device_key, self.per_device))
            if found.wait is None:
                return found
            # Refused: the device has used its budget up (it now counts as none), or the address
            # has (and the anonymous budgets, which include it, refuse too).
        # The account is keyed by a digest: emails stay out of Redis.
        who = digest(normalise_email(account))
        return self._count(
            (ip_key, self.per_ip),
            (f"{self.prefix}:login-account-ip:{who}:{ip}", self.per_account_ip),
            (f"{self.prefix}:login-account:{who}", self.per_account),
        )

    def _count(self, *budgets: tuple[str, RateLimitItem]) -> Attempt:
        """Count one attempt in every budget, or in none when one is spent (one atomic step)."""
        member = secrets.token_hex(8)
        args: list[str | int | float] = [time.time() * 1000, member]
        for _, item in budgets:
            args += [item.amount, item.get_expiry() * 1000]
        keys = [key for key, _ in budgets]
        wait_ms = int(self._script(keys=keys, args=args))
        wait = max(1, math.ceil(wait_ms / 1000)) if wait_ms else None
        return Attempt(wait, tuple(keys), member)

    @contextmanager
    def unless_unchecked(self, attempt: Attempt) -> Iterator[None]:
        """Give a counted attempt back when a store fails before its password is checked.

        A database outage must not spend the budgets: a client retrying through a short outage
        would otherwise be refused for the rest of the window after the store came back.
        """
        try:
            yield
        except (SQLAlchemyError, RedisError):
            with suppress(RedisError):  # Redis failing is the outage itself: best effort
                self.forgive(attempt)
            raise

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
