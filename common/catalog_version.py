"""The catalog version: a Redis counter every catalog writer bumps after it commits.

Resource servers keep rendered catalog documents in memory, filed under the version they were
read at; the request gate reads the version in the same round trip as the token, so a bump is
seen by every process on its next request and no stale document is served after it.
"""

from __future__ import annotations

import contextlib

from redis import Redis
from redis.exceptions import RedisError

from common.settings import Settings


def catalog_version_key(prefix: str) -> str:
    """Return the Redis key of the catalog version."""
    return f"{prefix}:catalog:version"


def bump_catalog_version(redis: Redis, prefix: str) -> None:
    """Tell every resource server that the catalog changed (call after the commit).

    When Redis is unreachable there is nothing to tell: the resource servers cannot answer
    (503) until it is back, and a Redis that lost its data has lost the version too, which
    changes it for every process.
    """
    with contextlib.suppress(RedisError):
        redis.incr(catalog_version_key(prefix))


def announce_catalog_change(settings: Settings) -> None:
    """Bump the catalog version of the Redis that ``settings`` name (after a load)."""
    from common.redis_store import connect_redis

    bump_catalog_version(connect_redis(settings), settings.redis_prefix)
