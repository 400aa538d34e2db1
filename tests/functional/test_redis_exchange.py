"""Redis round trips through ``common.redis_exchange``: replies in order, errors raised once
all are read, and a client's exchange freed with the client."""

from __future__ import annotations

import gc
import weakref

import pytest
from redis import Redis
from redis.exceptions import ResponseError

from common.redis_exchange import exchange_of

pytestmark = pytest.mark.functional


def test_commands_are_answered_in_order(redis_client: Redis) -> None:
    exchange = exchange_of(redis_client)
    assert exchange_of(redis_client) is exchange
    key = "artcat-test:exchange"
    replies = exchange.run([("SET", key, b"1"), ("INCR", key), ("GET", key), ("DEL", key)])
    assert replies == [b"OK", 2, b"2", 1]
    with pytest.raises(ResponseError):
        exchange.run([("SET", key, b"x"), ("INCR", key), ("DEL", key)])
    assert redis_client.exists(key) == 0  # the commands after the error ran too


def test_a_client_is_freed_with_its_exchange(redis_client: Redis) -> None:
    """The exchanges are filed under their clients weakly: one made for a client that is then
    dropped does not keep it (nor its pool and connections) alive."""
    kwargs = redis_client.connection_pool.connection_kwargs
    client = Redis(connection_pool=type(redis_client.connection_pool)(
        connection_class=redis_client.connection_pool.connection_class, **kwargs
    ))  # fmt: skip
    assert exchange_of(client).run([("PING",)]) == [b"PONG"]
    gone = weakref.ref(client)
    client.close()
    del client
    gc.collect()
    assert gone() is None
