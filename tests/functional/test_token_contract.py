"""The token contract across both services: issue in auth, validate in resource, survive Redis."""

from __future__ import annotations

import os
from typing import Any

import requests
from redis import Redis

from common.stores import Stores
from common.tokens import TOMBSTONE, UNKNOWN, digest
from tests.functional.process_support import xapp_token
from tests.functional.test_walking_skeleton import INVALID
from tests.servers import LiveServer


def flush(redis: Redis) -> None:
    """Empty Redis: FLUSHALL on the embedded server, FLUSHDB on a shared server's test database."""
    if os.environ.get("REDIS_URL"):
        redis.flushdb()
    else:
        redis.flushall()


def test_token_survives_redis_flush_and_dies_on_expiry(
    auth_server: LiveServer,
    resource_server: LiveServer,
    app_credentials: dict[str, str],
    stores: Stores,
    redis_client: Redis,
) -> None:
    token = xapp_token(auth_server, app_credentials)
    key = stores.tokens.key(digest(token))
    assert redis_client.get(key) is not None  # published at issue time
    assert token.encode() not in (redis_client.get(key) or b"")  # only the digest is stored
    url = f"{resource_server.url}/api/artists"
    h = {"X-Xapp-Token": token}
    assert requests.get(url, headers=h, timeout=10).status_code == 200

    flush(redis_client)
    assert requests.get(url, headers=h, timeout=10).status_code == 200  # read through from SQL
    assert redis_client.get(key) not in (None, TOMBSTONE, UNKNOWN)  # and written back
    ttl = redis_client.ttl(key)
    assert 6 * 86400 < ttl <= 7 * 86400

    assert stores.tokens.expire(token) is not None
    assert redis_client.get(key) == TOMBSTONE
    r = requests.get(url, headers=h, timeout=10)
    assert r.status_code == 401 and r.json() == INVALID
    flush(redis_client)
    assert requests.get(url, headers=h, timeout=10).status_code == 401  # SQL says expired


def test_unknown_tokens_are_cached_negatively(
    resource_server: LiveServer, stores: Stores, redis_client: Redis, clean_db: Any
) -> None:
    token = "x" * 43
    r = requests.get(
        f"{resource_server.url}/api/artists", headers={"X-Xapp-Token": token}, timeout=10
    )
    assert r.status_code == 401
    key = stores.tokens.key(digest(token))
    assert redis_client.get(key) == UNKNOWN
    assert 0 < redis_client.ttl(key) <= 30
