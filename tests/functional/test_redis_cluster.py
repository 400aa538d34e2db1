"""Redis Cluster: the services on a real 3-primary cluster (three replicas) that the module starts.

An auth server and two resource servers run in-process, each with its own cluster client (as
separate processes would), configured with ``REDIS_URL=redis+cluster://...`` only. Tokens are
issued, validated and revoked (refused at once by the other resource server), the rate limit is
counted across both servers, the catalog versions (one slot) reach both caches, a slot moved to
another node is followed, the primary holding a token's slot fails over to its replica under
load (``CLUSTER FAILOVER``) with every token still valid (read through from SQL when its record
is gone) and no request failing, and a token revoked while its primary shuts down
(``SHUTDOWN NOSAVE``) is refused by both servers once the revocation returned.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import requests
from redis.cluster import RedisCluster
from sqlalchemy import Engine, update
from sqlalchemy.orm import Session, sessionmaker

from artcat.loaders.demo import load_demo
from auth_server.app import create_app as create_auth
from common.catalog_version import bump_catalog_version, version_keys
from common.models.catalog import Artwork
from common.redis_store import connect_redis, is_cluster, parse_cluster_url
from common.settings import AuthSettings, ResourceSettings, Settings
from common.stores import Stores
from common.tokens import digest
from resource_server.app import create_app as create_resource
from tests.db_state import truncate_all
from tests.functional.catalog_support import demo_xapp_token
from tests.functional.cluster_support import ClusterNode, RedisClusterProcesses, private_cluster
from tests.functional.oauth_support import World, make_world
from tests.functional.process_support import password_token, poll
from tests.servers import LiveServer, start_server

pytestmark = pytest.mark.functional

TIMEOUT = 10.0
FAILOVER_DEADLINE = 30.0


@dataclass
class Deployment:
    """An auth server and two resource servers on the cluster, each with its own client."""

    settings: Settings
    auth: LiveServer
    first: LiveServer
    second: LiveServer
    world: World
    clients: list[RedisCluster]

    def token(self) -> str:
        """Return a new user access token (the password grant)."""
        return password_token(self.auth, self.world.password_grant())

    def current_user(self, server: LiveServer, token: str) -> int:
        """Return the status of ``GET /api/current_user`` with ``token``."""
        headers = {"X-Access-Token": token}
        return requests.get(
            f"{server.url}/api/current_user", headers=headers, timeout=TIMEOUT
        ).status_code


@pytest.fixture(scope="module")
def redis_cluster() -> Iterator[RedisClusterProcesses]:
    """The module's private Redis Cluster."""
    with private_cluster() as cluster:
        yield cluster


def deploy(
    redis_cluster: RedisClusterProcesses,
    base_settings: Settings,
    auth_settings: AuthSettings,
    engine: Engine,
    sessions: sessionmaker[Session],
    tmp_path: Path,
    *,
    rate_limit: str = "10000/second",
) -> Iterator[Deployment]:
    """Start the three servers on the cluster over an emptied database with the demo catalog."""
    settings = replace(
        base_settings, redis_url=redis_cluster.url, redis_sentinels="", instance_dir=tmp_path
    )
    truncate_all(engine)
    load_demo(engine, settings, artworks=5)
    world = make_world(sessions, auth_settings)
    clients: list[RedisCluster] = []
    servers: list[LiveServer] = []

    def stores() -> Stores:
        client = connect_redis(settings)
        assert isinstance(client, RedisCluster)
        clients.append(client)
        return Stores.connect(settings, engine=engine, redis=client)  # type: ignore[arg-type]

    try:
        auth_config = AuthSettings(**{**vars(auth_settings), "redis_url": settings.redis_url})
        servers.append(start_server(create_auth(auth_config, stores())))
        for _ in range(2):
            resource_config = ResourceSettings(
                **vars(settings), rate_limit=rate_limit, rate_limit_burst=1
            )
            servers.append(start_server(create_resource(resource_config, stores())))
        yield Deployment(settings, *servers, world, clients)  # type: ignore[call-arg]
    finally:
        for server in servers:
            server.stop()
        for client in clients:
            client.close()
        truncate_all(engine)


@pytest.fixture
def deployment(
    redis_cluster: RedisClusterProcesses,
    base_settings: Settings,
    auth_settings: AuthSettings,
    engine: Engine,
    sessions: sessionmaker[Session],
    tmp_path: Path,
) -> Iterator[Deployment]:
    """The servers with a rate limit no test reaches."""
    yield from deploy(redis_cluster, base_settings, auth_settings, engine, sessions, tmp_path)


def test_cluster_urls_are_parsed() -> None:
    seeds, options = parse_cluster_url("redis+cluster://u:p%40ss@a:7000, b ,[::1]:7002")
    assert seeds == [("a", 7000), ("b", 6379), ("::1", 7002)]
    assert options == {"username": "u", "password": "p@ss"}
    assert parse_cluster_url("rediss+cluster://a:1")[1] == {"ssl": True}
    for bad in (
        "redis+cluster://",
        "redis+cluster://a:0",
        "redis+cluster://a:x",
        "redis+cluster://a/1",
    ):
        with pytest.raises(ValueError, match="REDIS_URL"):
            parse_cluster_url(bad)


def test_issue_validate_and_revoke_across_instances(
    deployment: Deployment, redis_cluster: RedisClusterProcesses
) -> None:
    token = deployment.token()
    key = f"{deployment.settings.redis_prefix}:tok:{digest(token)}"
    with redis_cluster.primary_of(key).client() as owner:
        assert owner.get(key) is not None  # published on the node owning its slot
    for server in (deployment.first, deployment.second):
        assert deployment.current_user(server, token) == 200
    revoked = requests.delete(
        f"{deployment.auth.url}/api/tokens/access_token",
        headers={"X-Access-Token": token},
        timeout=TIMEOUT,
    )
    assert revoked.status_code == 200, revoked.text
    # Refused at once by both resource servers: the tombstone is on the owning node.
    for server in (deployment.second, deployment.first):
        assert deployment.current_user(server, token) == 401
    # An unknown token is refused too (and cached negatively on its own node).
    assert deployment.current_user(deployment.first, "x" * 43) == 401


def test_rate_limit_holds_across_instances(
    redis_cluster: RedisClusterProcesses,
    base_settings: Settings,
    auth_settings: AuthSettings,
    engine: Engine,
    sessions: sessionmaker[Session],
    tmp_path: Path,
) -> None:
    for deployed in deploy(
        redis_cluster,
        base_settings,
        auth_settings,
        engine,
        sessions,
        tmp_path,
        rate_limit="6/minute",
    ):
        token = deployed.token()
        me = f"/api/users/{deployed.world.user_id}"
        headers = {"X-Access-Token": token}
        statuses = [
            requests.get(f"{server.url}{me}", headers=headers, timeout=TIMEOUT).status_code
            for _ in range(4)
            for server in (deployed.first, deployed.second)
        ]
        # Six requests in the minute, counted in one window whichever server answered.
        assert statuses[:6] == [200] * 6, statuses
        assert statuses[6:] == [429, 429], statuses


def test_catalog_versions_live_in_one_slot_and_reach_every_cache(
    deployment: Deployment, engine: Engine, redis_cluster: RedisClusterProcesses
) -> None:
    prefix = deployment.settings.redis_prefix
    client = deployment.clients[0]
    assert is_cluster(client)
    assert len({client.keyslot(k) for k in version_keys(prefix, cluster=True)}) == 1
    xapp = demo_xapp_token(deployment.auth, deployment.settings)
    headers = {"X-Xapp-Token": xapp}
    listed = requests.get(f"{deployment.first.url}/api/artworks", headers=headers, timeout=TIMEOUT)
    assert listed.status_code == 200, listed.text
    artwork_id = listed.json()["_embedded"]["artworks"][0]["id"]

    def title(server: LiveServer) -> str:
        r = requests.get(
            f"{server.url}/api/artworks/{artwork_id}", headers=headers, timeout=TIMEOUT
        )
        assert r.status_code == 200, r.text
        return str(r.json()["title"])

    before = {title(s) for s in (deployment.first, deployment.second)}
    assert len(before) == 1
    assert {title(s) for s in (deployment.first, deployment.second)} == before  # from memory
    with engine.begin() as connection:
        connection.execute(update(Artwork).where(Artwork.id == artwork_id).values(title="Renamed"))
    bump_catalog_version(client, prefix, ["artworks"])  # as every catalog writer does
    assert {title(s) for s in (deployment.first, deployment.second)} == {"Renamed"}


def test_a_token_whose_slot_moved_is_found_on_its_new_node(
    deployment: Deployment, redis_cluster: RedisClusterProcesses
) -> None:
    token = deployment.token()
    key = f"{deployment.settings.redis_prefix}:tok:{digest(token)}"
    for server in (deployment.first, deployment.second):
        assert deployment.current_user(server, token) == 200  # the gates learnt the slot map
    source = redis_cluster.primary_of(key)
    target = next(
        n for n in redis_cluster.nodes if n.alive() and n.port != source.port and is_primary(n)
    )
    slot = str(source.ask("CLUSTER", "KEYSLOT", key))
    source_id, target_id = (n.ask("CLUSTER", "MYID") for n in (source, target))
    target.ask("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    source.ask("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    keys = source.ask("CLUSTER", "GETKEYSINSLOT", slot, "1000")
    assert keys, "the token's record is not on its node"
    source.ask("MIGRATE", "127.0.0.1", str(target.port), "", "0", "5000", "KEYS", *keys)
    for node in redis_cluster.nodes:
        if node.alive():
            node.ask("CLUSTER", "SETSLOT", slot, "NODE", target_id)
    assert redis_cluster.primary_of(key).port == target.port
    # Each gate still sends to the old node first: MOVED, then the cluster client's way.
    for server in (deployment.first, deployment.second, deployment.first):
        assert deployment.current_user(server, token) == 200


def is_primary(node: ClusterNode) -> bool:
    """Tell whether a cluster node is a primary now."""
    role = node.ask("ROLE")
    return isinstance(role, list) and role[0] == b"master"


class Load:
    """Threads asking both resource servers with every token, recording each status."""

    def __init__(self, deployment: Deployment, tokens: list[str], threads: int = 4) -> None:
        self.deployment = deployment
        self.tokens = tokens
        self.statuses: list[int] = []
        self.errors: list[str] = []
        self.running = threading.Event()
        self.running.set()
        self.threads = [threading.Thread(target=self.work, args=(i,)) for i in range(threads)]

    def work(self, offset: int) -> None:
        servers = (self.deployment.first, self.deployment.second)
        i = offset
        while self.running.is_set():
            token, server = self.tokens[i % len(self.tokens)], servers[i % 2]
            try:
                self.statuses.append(self.deployment.current_user(server, token))
            except requests.RequestException as error:
                self.errors.append(repr(error))
            i += 1

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.running.clear()
        for thread in self.threads:
            thread.join(timeout=30)


def test_a_primary_failing_over_mid_load_loses_no_token(
    deployment: Deployment, redis_cluster: RedisClusterProcesses
) -> None:
    tokens = [deployment.token() for _ in range(12)]
    prefix = deployment.settings.redis_prefix
    key = f"{prefix}:tok:{digest(tokens[0])}"
    victim = redis_cluster.primary_of(key)
    with Load(deployment, tokens) as load:
        poll(lambda: len(load.statuses) >= 50, 30, "requests before the failover")
        # Its replica takes over (CLUSTER FAILOVER): the old primary turns replica and answers
        # MOVED for the slots it served.
        replica = redis_cluster.replica_of(victim)
        seen, stopped = len(load.statuses), time.monotonic()
        assert replica.ask("CLUSTER", "FAILOVER") in (b"OK", "OK")
        poll(
            lambda: redis_cluster.primary_of(key).port != victim.port and redis_cluster.state_ok(),
            FAILOVER_DEADLINE,
            "the replica taking over",
            interval=0.2,
        )
        took = time.monotonic() - stopped
        end = time.monotonic() + 30
        while len(load.statuses) < seen + 100:
            assert time.monotonic() < end, (
                f"{len(load.statuses) - seen} requests after the failover, "
                f"errors {load.errors[:3]}, statuses {sorted(set(load.statuses))}"
            )
            time.sleep(0.05)
    assert not load.errors, (f"the failover took {took:.1f} s", load.errors[:3])
    failed = [s for s in load.statuses if s != 200]
    assert not failed, (
        f"{len(failed)} of {len(load.statuses)} not 200: {sorted(set(failed))} "
        f"(the failover took {took:.1f} s)"
    )
    # Every token is still valid, at both servers, once the replica serves the slot.
    for token in tokens:
        for server in (deployment.first, deployment.second):
            assert deployment.current_user(server, token) == 200
    # Records the new primary never received (lost with the old one) are read through from
    # SQL and published again on the node that now owns their slot.
    client = deployment.clients[0]
    keys = [f"{prefix}:tok:{digest(token)}" for token in tokens]
    for key in keys:
        client.delete(key)
    for token in tokens:
        assert deployment.current_user(deployment.second, token) == 200
    assert all(client.get(key) is not None for key in keys)


def test_a_revocation_during_a_failover_is_refused_everywhere_after_it(
    deployment: Deployment, redis_cluster: RedisClusterProcesses
) -> None:
    prefix = deployment.settings.redis_prefix
    # A token whose slot's primary has a replica to take over (an earlier test used one up).
    token, key = "", ""
    for _ in range(50):
        token = deployment.token()
        key = f"{prefix}:tok:{digest(token)}"
        if redis_cluster.live_replicas_of(key):
            break
    else:
        pytest.fail("no token landed on a shard with a replica")
    for server in (deployment.first, deployment.second):
        assert deployment.current_user(server, token) == 200
    victim = redis_cluster.primary_of(key)
    victim.ask("SHUTDOWN", "NOSAVE")  # Redis 7 hands its slots to the replica first
    poll(lambda: not victim.alive(), 10, "the primary stopping")
    # Revoked while the slot has no primary: the tombstone waits for the new one.
    revoked = requests.delete(
        f"{deployment.auth.url}/api/tokens/access_token",
        headers={"X-Access-Token": token},
        timeout=TIMEOUT,
    )
    assert revoked.status_code == 200, revoked.text
    # The replica was promoted before the revocation could land; the node asked may learn of
    # it a moment later (the cluster's gossip), so its answer is waited for.
    poll(
        lambda: redis_cluster.primary_of(key).port != victim.port,
        10,
        "the cluster naming the promoted replica as the slot's primary",
    )
    for server in (deployment.second, deployment.first):
        assert deployment.current_user(server, token) == 401
    with redis_cluster.primary_of(key).client() as owner:
        assert owner.get(key) == b"X"  # the tombstone, on the promoted replica
