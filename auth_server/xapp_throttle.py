"""XAPP issuance throttling, counted in the shared Redis: three budgets, two round trips.

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
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from limits import RateLimitItem, parse
from redis import Redis, RedisError
from sqlalchemy.exc import SQLAlchemyError

from auth_server.rate_limits import per_app
from common.settings import AuthSettings
from common.tokens import digest

# KEYS: counters; ARGV: each key's limit and window (ms). When none is full, counts one in each
# and returns 0; else counts nothing and returns the ms until the fullest one frees.
_RESERVE = """
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


# KEYS: the failure counter to give one back to (never below zero).
_GIVE_BACK = """
local left = tonumber(redis.call('GET', KEYS[1]) or '0')
if left > 0 then redis.call('DECR', KEYS[1]) end
return 0
"""


@dataclass(frozen=True)
class XappAttempt:
    """One attempt: counted (``wait`` is None) or refused for ``wait`` seconds."""

    wait: int | None
    client: str  # the client id's digest: whatever a caller sends stays out of key names
    ip: str


def _args(*items: RateLimitItem) -> list[int]:
    args: list[int] = []
    for item in items:
        args += [item.amount, item.get_expiry() * 1000]
    return args


def _seconds(wait_ms: int) -> int | None:
    return max(1, math.ceil(wait_ms / 1000)) if wait_ms else None


class XappThrottle:
    """Fixed-window limits on XAPP issuance, failures apart from the client's own budget."""

    def __init__(self, redis: Redis, settings: AuthSettings) -> None:
        self.prefix = f"{settings.redis_prefix}:limits"
        self.per_client: RateLimitItem = parse(settings.xapp_attempts_per_client)
        self.per_ip: RateLimitItem = parse(settings.xapp_attempts_per_ip)
        self.failures: RateLimitItem = parse(settings.xapp_failures_per_client_ip)
        self._reserve = redis.register_script(_RESERVE)
        self._settle = redis.register_script(_SETTLE)
        self._giveback = redis.register_script(_GIVE_BACK)

    def _failure_key(self, attempt: XappAttempt) -> str:
        return f"{self.prefix}:xapp-failures:{attempt.client}:{attempt.ip}"

    def attempt(self, *, client_id: str, ip: str) -> XappAttempt:
        """Count one attempt as a failure until it proves right; say how long to wait if refused.

        Called before the secret is checked: a refused attempt must not check it.
        """
        found = XappAttempt(None, digest(client_id), ip)
        keys = [f"{self.prefix}:xapp-ip:{ip}", self._failure_key(found)]
        wait = _seconds(int(self._reserve(keys=keys, args=_args(self.per_ip, self.failures))))
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
        return _seconds(int(self._settle(keys=keys, args=_args(self.per_client))))


def xapp_throttle() -> XappThrottle:
    """Return the current app's XAPP throttle, built on first use."""
    return per_app("artcat.xapp_throttle", XappThrottle)
