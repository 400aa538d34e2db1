"""Redis Sentinel: the services find the master through real sentinels and follow a failover.

A private master, its replica and one sentinel run on free loopback ports (redis-server in
sentinel mode); the auth and resource servers are configured with REDIS_SENTINELS only. After
``SENTINEL FAILOVER`` promotes the replica, the same servers go on accepting the token issued
before it (it was replicated), answering 503 JSON at worst while the roles change.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import requests
from redis import Redis
from redis.exceptions import RedisError
from sqlalchemy import Engine

from artcat.loaders.demo import load_demo
from auth_server.app import create_app as create_auth
from common.redis_store import connect_redis, parse_sentinels
from common.settings import AuthSettings, ResourceSettings, Settings
from common.stores import Stores
from resource_server.app import create_app as create_resource
from tests.db_state import truncate_all
from tests.functional.catalog_support import demo_xapp_token
from tests.functional.process_support import (
    FAST_RETRY,
    RedisServer,
    free_port,
    poll,
    private_redis,
    redis_server_binary,
    terminate,
)
from tests.servers import LiveServer, start_server

pytestmark = pytest.mark.functional

SERVICE = "artcat-test"
# Hang guards: a failover with these sentinel settings takes a few seconds.
FAILOVER_DEADLINE = 30.0
RESUME_DEADLINE = 10.0
POLL_INTERVAL = 0.05  # the checks ask Redis or the sentinel


class SentinelProcess:
    """One redis-server in sentinel mode watching ``master``."""

    def __init__(self, binary: str, master: RedisServer) -> None:
        self.port = free_port()
        self.workdir = master.workdir
        config = self.workdir / f"sentinel-{self.port}.conf"  # sentinel rewrites it: its own
        config.write_text(
            f"port {self.port}\n"
            "bind 127.0.0.1\n"
            f"dir {self.workdir}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {master.port} 1\n"
            f"sentinel down-after-milliseconds {SERVICE} 1000\n"
            f"sentinel failover-timeout {SERVICE} 10000\n"
        )
        self.log = (self.workdir / f"sentinel-{self.port}.log").open("a")
        self.proc = subprocess.Popen(
            [binary, str(config), "--sentinel"], stdout=self.log, stderr=subprocess.STDOUT
        )
        self.client = Redis(
            port=self.port, socket_timeout=2, decode_responses=True, retry=FAST_RETRY
        )

    def master(self) -> tuple[str, int] | None:
        """Return the address the sentinel gives for the master, or None before it knows."""
        try:
            found = self.client.execute_command("SENTINEL", "get-master-addr-by-name", SERVICE)
        except RedisError:
            return None
        return (found[0], int(found[1])) if found else None

    def replicas_known(self) -> int:
        """Return how many replicas of the master the sentinel has discovered."""
        try:
            return len(self.client.execute_command("SENTINEL", "replicas", SERVICE))
        except RedisError:
            return 0

    def stop(self) -> None:
        """Stop the sentinel."""
        self.client.close()
        terminate(self.proc)
        self.log.close()


def dbsize(server: RedisServer) -> int:
    """Return the number of keys on ``server`` (asked on a client closed afterwards)."""
    with server.client() as client:
        return int(client.dbsize())


@pytest.fixture
def topology() -> Iterator[tuple[RedisServer, RedisServer, SentinelProcess]]:
    """A master, a replica of it and a sentinel watching them, all private."""
    binary = redis_server_binary()
    if binary is None:
        pytest.skip("no redis-server executable")
    with contextlib.ExitStack() as stack:
        master = stack.enter_context(private_redis())
        replica = stack.enter_context(private_redis("--replicaof", "127.0.0.1", str(master.port)))
        sentinel = SentinelProcess(binary, master)
        stack.callback(sentinel.stop)
        poll(sentinel.master, 10, "the sentinel naming the master", interval=POLL_INTERVAL)
        poll(
            sentinel.replicas_known, 15, "the sentinel finding the replica", interval=POLL_INTERVAL
        )
        yield master, replica, sentinel


def test_sentinel_addresses_are_parsed() -> None:
    assert parse_sentinels(" a:1, b , [::1]:26380") == [("a", 1), ("b", 26379), ("::1", 26380)]
    for bad in ("", " , ", "a:0", "a:x", ":26379"):
        with pytest.raises(ValueError, match="REDIS_SENTINELS"):
            parse_sentinels(bad)


def test_services_find_the_master_and_follow_a_failover(
    topology: tuple[RedisServer, RedisServer, SentinelProcess],
    base_settings: Settings,
    engine: Engine,
    tmp_path: Path,
) -> None:
    master, replica, sentinel = topology
    settings = replace(
        base_settings,
        redis_url="",
        redis_sentinels=f"127.0.0.1:{sentinel.port}",
        redis_sentinel_service=SERVICE,
        instance_dir=tmp_path,
    )
    truncate_all(engine)
    load_demo(engine, settings, artworks=5)
    redis = connect_redis(settings)
    stores = Stores.connect(settings, engine=engine, redis=redis)
    auth = start_server(create_auth(AuthSettings(**vars(settings)), stores))
    resource: LiveServer | None = None
    try:
        resource = start_server(
            create_resource(ResourceSettings(**vars(settings), rate_limit="10000/second"), stores)
        )
        token = demo_xapp_token(auth, settings)
        artworks = f"{resource.url}/api/artworks"
        headers = {"X-Xapp-Token": token, "Connection": "close"}
        assert requests.get(artworks, headers=headers, timeout=10).status_code == 200
        assert dbsize(master) > 0  # the services wrote to the master sentinel named

        # Wait until the replica holds what the master has, then promote it.
        poll(lambda: dbsize(replica) == dbsize(master), 10, "replication", interval=POLL_INTERVAL)
        sentinel.client.execute_command("SENTINEL", "FAILOVER", SERVICE)
        poll(
            lambda: sentinel.master() == ("127.0.0.1", replica.port),
            FAILOVER_DEADLINE,
            "the failover",
            interval=POLL_INTERVAL,
        )
        statuses = []
        end = time.monotonic() + RESUME_DEADLINE
        while True:
            answer = requests.get(artworks, headers=headers, timeout=10)
            statuses.append(answer.status_code)
            if answer.status_code == 200:
                break
            assert answer.status_code == 503, answer.text
            assert answer.headers["Content-Type"].startswith("application/")
            assert time.monotonic() < end, f"no 200 within {RESUME_DEADLINE} s: {statuses}"
            time.sleep(0.05)
        # The new master serves: a new token is written to it and accepted.
        fresh = {"X-Xapp-Token": demo_xapp_token(auth, settings), "Connection": "close"}
        assert requests.get(artworks, headers=fresh, timeout=10).status_code == 200
        with replica.client() as promoted:
            assert promoted.info("replication")["role"] == "master"
    finally:
        auth.stop()
        if resource is not None:
            resource.stop()
        redis.close()
        truncate_all(engine)
