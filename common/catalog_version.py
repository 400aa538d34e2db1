"""Catalog versions: Redis counters every catalog writer bumps after it commits.

Resource servers keep rendered catalog documents in memory, each filed under the versions of
the resource types it is built from (an artwork document: ``artworks`` and ``editions``). There
is one counter per type, and one for the whole catalog: a writer bumps the types it wrote, or
the whole catalog when it does not say (a museum import, the staging rebuild). The search
index is a type of its own (``search``), bumped by whatever rebuilds it. The request gate
reads every counter in the same round trip as the token, so a bump is seen by every process
on its next request and no stale document is served after it, while a write to one type
leaves the documents of the others in memory.

On a Redis Cluster every version key carries the hash tag ``{<prefix>:catalog}``: they all live
in one slot, so that one MGET reads them (on a single server the names have no braces).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from redis import Redis
from redis.exceptions import RedisError

from common.redis_store import connect_redis, is_cluster, pipelined
from common.settings import Settings

# The catalog's resource types, each with its own version (the order of the gate's MGET).
CATALOG_TYPES = (
    "artworks",
    "editions",
    "artists",
    "genes",
    "images",
    "partners",
    "profiles",
    "shows",
    "fairs",
    "sales",
    "sale_artworks",
    "search",  # the search index (search documents, names and words): ``artcat search reindex``
)


def catalog_version_key(prefix: str, *, cluster: bool = False) -> str:
    """Return the Redis key of the whole catalog's version (bumped when every type changed);
    on a cluster (``cluster``) in the slot of every catalog version."""
    base = f"{{{prefix}:catalog}}" if cluster else f"{prefix}:catalog"
    return f"{base}:version"


def type_version_key(prefix: str, kind: str, *, cluster: bool = False) -> str:
    """Return the Redis key of the version of one resource type of the catalog."""
    if kind not in CATALOG_TYPES:
        raise ValueError(f"not a catalog resource type: {kind!r}")
    return f"{catalog_version_key(prefix, cluster=cluster)}:{kind}"


def version_keys(prefix: str, *, cluster: bool = False) -> list[str]:
    """Return the keys the gate reads: the whole catalog's, then each type's (CATALOG_TYPES)."""
    return [
        catalog_version_key(prefix, cluster=cluster),
        *(type_version_key(prefix, k, cluster=cluster) for k in CATALOG_TYPES),
    ]


def keys_for(redis: object, prefix: str) -> list[str]:
    """Return :func:`version_keys` for the kind of Redis ``redis`` is (a cluster or not)."""
    return version_keys(prefix, cluster=is_cluster(redis))


def bump_catalog_version(redis: Redis, prefix: str, kinds: Iterable[str] | None = None) -> None:
    """Tell every resource server that the catalog changed (call after the commit).

    ``kinds`` names the resource types written (CATALOG_TYPES); None means all of them. When
    Redis is unreachable there is nothing to tell: the resource servers cannot answer (503)
    until it is back, and a Redis that lost its data has lost the versions too, which changes
    them for every process.
    """
    cluster = is_cluster(redis)
    keys = (
        [catalog_version_key(prefix, cluster=cluster)]
        if kinds is None
        else sorted({type_version_key(prefix, k, cluster=cluster) for k in kinds})
    )
    with contextlib.suppress(RedisError):
        if len(keys) == 1:
            redis.incr(keys[0])
            return
        pipelined(redis, lambda pipe: [pipe.incr(key) for key in keys])


def announce_catalog_change(settings: Settings, kinds: Iterable[str] | None = None) -> None:
    """Bump the catalog versions of the Redis that ``settings`` name (after a load)."""
    bump_catalog_version(connect_redis(settings), settings.redis_prefix, kinds)
