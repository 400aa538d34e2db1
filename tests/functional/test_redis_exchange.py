"""Redis round trips through ``common.redis_exchange``: replies in order, errors raised once
all are read, a closed connection connected anew, a replica's refusal a connection error, and
a client's exchange freed with the client."""

from __future__ import annotations

import gc
import os
import weakref

import pytest
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from common.redis_exchange import exchange_of
from tests.functional.process_support import free_port, private_redis

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


def test_a_kept_connection_redis_closed_is_connected_anew(redis_client: Redis) -> None:
    """A connection kept between exchanges that Redis closed meanwhile (a restart, a timeout,
    CLIENT KILL) fails on its next use: the exchange tries once more on it, connected anew."""
    exchange = exchange_of(redis_client)
    name = f"artcat-exchange-{os.getpid()}"
    assert exchange.run([("CLIENT", "SETNAME", name)]) == [b"OK"]
    (kept,) = [c["id"] for c in redis_client.client_list() if c["name"] == name]
    assert redis_client.client_kill_filter(_id=kept) == 1
    assert exchange.run([("PING",)]) == [b"PONG"]


def test_a_master_turned_replica_is_a_connection_error() -> None:
    """A Redis that answers READONLY is no longer the master (a Sentinel failover): the
    exchange drops the connection and raises a connection error, as redis-py does, so that the
    services answer 503 and look the master up again."""
    with private_redis("--replicaof", "127.0.0.1", str(free_port())) as replica:
        client = replica.client()
        try:
            with pytest.raises(RedisConnectionError, match="replica"):
                exchange_of(client).run([("SET", "artcat-test:exchange", b"1")])
            assert exchange_of(client).run([("PING",)]) == [b"PONG"]  # connected anew
        finally:
            client.close()
