"""The device flow's throttles (RFC 8628), counted in the shared Redis, built once per app.

- **User codes** (``UserCodeThrottle``): wrong codes at ``/activate`` per client IP and per
  signed-in account. Every entry is reserved as a failure in both budgets in one Lua step,
  before the code is looked up (a concurrent burst cannot pass more guesses than the budgets
  allow, and a refused entry is never looked up); a code that proves right gives its place
  back, so only wrong codes use the budgets. Fixed windows, as the XAPP throttle's.
- **Device authorizations** (``DEVICE_START``): requests per client IP, each of which
  stores a pending grant (a public client's id is no secret). A ``limits`` moving window.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from limits import RateLimitItem, parse
from redis import Redis, RedisError
from sqlalchemy.exc import SQLAlchemyError

from auth_server.throttles import (
    GIVE_BACK_SCRIPT,
    RESERVE_SCRIPT,
    Budget,
    per_app,
    wait_seconds,
    window_args,
)
from common.redis_store import cluster_tag
from common.settings import AuthSettings


@dataclass(frozen=True)
class CodeAttempt:
    """One entry of a user code: counted (``wait`` None) or refused for ``wait`` seconds."""

    wait: int | None
    keys: tuple[str, ...]


class UserCodeThrottle:
    """Fixed-window limits on wrong user codes, per client IP and per account.

    Every entry is counted as a failure before the code is looked up (one atomic step for both
    budgets, so a concurrent burst cannot pass more guesses than they allow); a code that
    proves right gives its place back.
    """

    def __init__(self, redis: Redis, settings: AuthSettings) -> None:
        self.prefix = cluster_tag(f"{settings.redis_prefix}:limits", redis)  # one slot
        self.per_ip: RateLimitItem = parse(settings.device_code_failures_per_ip)
        self.per_account: RateLimitItem = parse(settings.device_code_failures_per_account)
        self._reserve = redis.register_script(RESERVE_SCRIPT)
        self._give_back = redis.register_script(GIVE_BACK_SCRIPT)

    def attempt(self, *, ip: str, user_id: str) -> CodeAttempt:
        """Count one entry as a wrong code; say how long to wait when a budget is spent."""
        keys = (f"{self.prefix}:user-code-ip:{ip}", f"{self.prefix}:user-code-account:{user_id}")
        args = window_args(self.per_ip, self.per_account)
        return CodeAttempt(wait_seconds(int(self._reserve(keys=list(keys), args=args))), keys)

    def right(self, attempt: CodeAttempt) -> None:
        """The code was right: give its place back (only wrong codes use the budgets)."""
        if attempt.wait is None:
            self._give_back(keys=list(attempt.keys))

    @contextmanager
    def unless_unchecked(self, attempt: CodeAttempt) -> Iterator[None]:
        """Give the place back when a store fails before the code is checked (an outage must
        not spend anyone's budget); best effort, the store's error is what is raised."""
        try:
            yield
        except (SQLAlchemyError, RedisError):
            with suppress(RedisError):
                self.right(attempt)
            raise


# The device authorization requests of one client IP.
DEVICE_START = Budget("device_authorizations_per_ip", "device-start-ip")


def user_code_throttle() -> UserCodeThrottle:
    """Return the current app's user-code throttle, built on first use."""
    return per_app("artcat.user_code_throttle", UserCodeThrottle)
