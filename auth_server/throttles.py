"""The auth server's throttles, all counted in the shared Redis, each built once per app.

- **Sign-in** (``LoginThrottle``): every way to try a password (the sign-in page, the
  change-password page, the credentials and password grants) shares one set of budgets.
- **XAPP issuance** (``XappThrottle``): wrong secrets per client id and address, apart from the
  application's own budget.
- **One moving-window limit** each (``Budget``, ``throttle``): accounts created per client
  address (``SIGN_UP``), applications each user creates (``APPLICATION_CREATION``), RFC 7591
  registrations per client address (``CLIENT_REGISTRATION``).

What they share (``Limits``, ``per_app``): ``limits`` counters under ``<prefix>:limits`` on the
stores' own connections, built on first use (the app factory stays store-free). A hit is counted
and checked in one Redis operation (a ``limits`` call or a Lua script), so a concurrent burst
cannot pass more than a limit allows. Sign-in and XAPP issuance also give an attempt back when a
store failed before its password or secret was checked (``unless_unchecked``): an outage must
not spend anyone's budget.

Sign-in
-------
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

XAPP issuance
-------------
Every attempt, on either route (``/api/tokens/xapp_token`` or the ``client_credentials`` grant),
first reserves a place in two budgets before any secret is checked:

- per client address (``XAPP_ATTEMPTS_PER_IP``): all attempts from one address, whatever the
  client id, so one address cannot make the server look up secrets faster than that;
- per client id and address (``XAPP_FAILURES_PER_CLIENT_IP``): the wrong-secret budget. An
  attempt whose secret proves right gives its place back, so only failures use it up: a guesser
  exhausts the budget of the address it guesses from, and the owner elsewhere is not affected.

Once the secret has proved right, the token is counted in the client's own issuance budget
(``XAPP_ATTEMPTS_PER_CLIENT``), which nothing but the right secret can draw on. So a guesser
gets at most ``XAPP_FAILURES_PER_CLIENT_IP`` guesses per address (within
``XAPP_ATTEMPTS_PER_IP``), and can never lock the application out.

Checking a secret is cheap (secrets are 256-bit random values stored as SHA-256 digests: one
hash and one indexed select, the cost of any refused request), so checking it before counting
the client's budget gives an attacker no lever on the server's CPU. Each step is one Lua script,
so a concurrent burst cannot pass more attempts than a budget allows. The windows are fixed
(one counter per key, expiring with its window): this is a hot path.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import TypeVar

from flask import current_app
from limits import RateLimitItem, parse
from limits.strategies import MovingWindowRateLimiter, RateLimiter
from redis import Redis, RedisError
from sqlalchemy.exc import SQLAlchemyError

from auth_server.accounts import normalise_email
from auth_server.context import services
from common.redis_store import cluster_tag, is_cluster, limits_storage
from common.settings import AuthSettings
from common.tokens import digest

T = TypeVar("T")


def storage_uri(redis: Redis, settings: AuthSettings) -> str:
    """Return the ``limits`` storage URI of the Redis the stores use (embedded: its socket)."""
    if is_cluster(redis):
        return "redis+cluster://"
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
        # The stores' own connections (on a cluster, a client of the same nodes).
        storage = limits_storage(
            redis, storage_uri(redis, settings), f"{settings.redis_prefix}:limits"
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
        self.prefix = cluster_tag(f"{settings.redis_prefix}:limits", redis)  # one slot
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


@dataclass(frozen=True)
class Budget:
    """A moving-window limit on one kind of request per key (a client address, a user): the
    setting that gives it and the namespace of its counters."""

    setting: str
    namespace: str


# The accounts one client address may create.
SIGN_UP = Budget("sign_up_attempts_per_ip", "sign-up-ip")
# The applications each user creates.
APPLICATION_CREATION = Budget("applications_created_per_user", "application-created")
# Client registrations (RFC 7591) per client address, every attempt.
CLIENT_REGISTRATION = Budget("client_registrations_per_ip", "client-registration-ip")


class SingleLimit(Limits):
    """The throttle of one ``Budget`` (``limits``, in Redis)."""

    def __init__(self, redis: Redis, settings: AuthSettings, budget: Budget) -> None:
        super().__init__(redis, settings)
        self.limit: RateLimitItem = parse(getattr(settings, budget.setting))
        self.namespace = budget.namespace

    def hit(self, key: str) -> int | None:
        """Count one (atomically); return the seconds to wait when over the limit, else None."""
        return self.count((self.limit, self.namespace, key))

    def describe(self) -> str:
        """Return the limit as people read it ("10 per 1 day")."""
        return str(self.limit)


def throttle(budget: Budget) -> SingleLimit:
    """Return the current app's throttle of a budget, built on first use."""
    return per_app(
        f"artcat.throttle.{budget.namespace}",
        lambda redis, settings: SingleLimit(redis, settings, budget),
    )


# KEYS: counters; ARGV: each key's limit and window (ms). When none is full, counts one in each
# and returns 0; else counts nothing and returns the ms until the fullest one frees.
RESERVE_SCRIPT = """
local wait = 0
for i, key in ipairs(KEYS) do
  local n = tonumber(redis.call('GET', key) or '0')
  if n >= tonumber(ARGV[2 * i - 1]) then
    wait = math.max(wait, redis.call('PTTL', key), 1)
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, ARGV[2 * i]) end
end
return 0
"""

# KEYS: the failure counter to give one back to, then the client's own counter; ARGV: its limit
# and window (ms). Returns 0 once the token is counted, else the ms until that counter frees.
_SETTLE = """
local left = tonumber(redis.call('GET', KEYS[1]) or '0')
if left > 0 then redis.call('DECR', KEYS[1]) end
local n = tonumber(redis.call('GET', KEYS[2]) or '0')
if n >= tonumber(ARGV[1]) then return math.max(redis.call('PTTL', KEYS[2]), 1) end
if redis.call('INCR', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 0
"""


# KEYS: counters to give one back to (never below zero).
GIVE_BACK_SCRIPT = """
for _, key in ipairs(KEYS) do
  local n = tonumber(redis.call('GET', key) or '0')
  if n > 0 then redis.call('DECR', key) end
end
return 0
"""


@dataclass(frozen=True)
class XappAttempt:
    """One attempt: counted (``wait`` is None) or refused for ``wait`` seconds."""

    wait: int | None
    client: str  # the client id's digest: whatever a caller sends stays out of key names
    ip: str


def window_args(*items: RateLimitItem) -> list[int]:
    """Each item's limit and window (ms), as ``RESERVE_SCRIPT`` and ``_SETTLE`` take them."""
    args: list[int] = []
    for item in items:
        args += [item.amount, item.get_expiry() * 1000]
    return args


def wait_seconds(wait_ms: int) -> int | None:
    """A script's wait in ms as whole seconds (at least 1), or None when nothing is to wait."""
    return max(1, math.ceil(wait_ms / 1000)) if wait_ms else None


class XappThrottle:
    """Fixed-window limits on XAPP issuance, failures apart from the client's own budget."""

    def __init__(self, redis: Redis, settings: AuthSettings) -> None:
        self.prefix = cluster_tag(f"{settings.redis_prefix}:limits", redis)  # one slot
        self.per_client: RateLimitItem = parse(settings.xapp_attempts_per_client)
        self.per_ip: RateLimitItem = parse(settings.xapp_attempts_per_ip)
        self.failures: RateLimitItem = parse(settings.xapp_failures_per_client_ip)
        self._reserve = redis.register_script(RESERVE_SCRIPT)
        self._settle = redis.register_script(_SETTLE)
        self._giveback = redis.register_script(GIVE_BACK_SCRIPT)

    def _failure_key(self, attempt: XappAttempt) -> str:
        return f"{self.prefix}:xapp-failures:{attempt.client}:{attempt.ip}"

    def attempt(self, *, client_id: str, ip: str) -> XappAttempt:
        """Count one attempt as a failure until it proves right; say how long to wait if refused.

        Called before the secret is checked: a refused attempt must not check it.
        """
        found = XappAttempt(None, digest(client_id), ip)
        keys = [f"{self.prefix}:xapp-ip:{ip}", self._failure_key(found)]
        args = window_args(self.per_ip, self.failures)
        wait = wait_seconds(int(self._reserve(keys=keys, args=args)))
        return XappAttempt(wait, found.client, ip) if wait else found

    @contextmanager
    def unless_unchecked(self, attempt: XappAttempt) -> Iterator[None]:
        """Give the failure place back when a store fails before the secret is checked.

        A store outage must not spend the owner's wrong-secret budget: the client would stay
        refused for the rest of the window after the store came back. Only a store's own error
        gives it back: a wrong secret (an OAuth or API error) stays a failure. Best effort: a
        Redis that fails here is the outage itself, and the store's error is what is raised.
        """
        try:
            yield
        except (SQLAlchemyError, RedisError):
            with suppress(RedisError):
                self._giveback(keys=[self._failure_key(attempt)])
            raise

    def issued(self, attempt: XappAttempt) -> int | None:
        """The secret proved right: give the failure back and count a token in the client's budget.

        Returns the seconds to wait when the client has used its own budget up, else None.
        """
        keys = [self._failure_key(attempt), f"{self.prefix}:xapp-client:{attempt.client}"]
        return wait_seconds(int(self._settle(keys=keys, args=window_args(self.per_client))))


def xapp_throttle() -> XappThrottle:
    """Return the current app's XAPP throttle, built on first use."""
    return per_app("artcat.xapp_throttle", XappThrottle)
