"""A private Redis Cluster for the tests: three primaries and a replica of each.

Six ``redis-server --cluster-enabled yes`` on free loopback ports in a temporary folder, joined
with ``redis-cli --cluster create ... --cluster-replicas 1``; the fixture waits until every node
says ``cluster_state:ok``, and stops the servers and removes the folder afterwards, whatever
happened. A short node timeout (1 s) makes a failover take a couple of seconds.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis
from redis.exceptions import RedisError

from tests.functional.process_support import FAST_RETRY, redis_server_binary, terminate

NODES = 6  # three primaries, each with one replica
NODE_TIMEOUT_MS = 1000
READY_DEADLINE = 60.0


def free_cluster_port() -> int:
    """Return a free loopback port P whose bus port P + 10000 is free too (so P <= 55535,
    below the kernel's ephemeral range where ``free_port`` picks)."""
    for _ in range(200):
        port = random.randint(20000, 30000)
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        return port
    raise AssertionError("no free port pair for a cluster node")


class ClusterNode:
    """One redis-server of the cluster."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.port = free_cluster_port()
        self.log = (workdir / f"redis-{self.port}.log").open("a")
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                str(workdir / f"nodes-{self.port}.conf"),
                "--cluster-node-timeout",
                str(NODE_TIMEOUT_MS),
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                str(workdir),
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    @property
    def address(self) -> str:
        """Return ``127.0.0.1:port``."""
        return f"127.0.0.1:{self.port}"

    def client(self) -> Redis:
        """Return a plain client of this node alone (closed by the caller)."""
        return Redis(port=self.port, socket_connect_timeout=1, socket_timeout=2, retry=FAST_RETRY)

    def ask(self, *command: str) -> object:
        """Send one command to this node; None when it does not answer."""
        try:
            with self.client() as client:
                return client.execute_command(*command)
        except RedisError:
            return None

    def alive(self) -> bool:
        """Tell whether the process still runs."""
        return self.proc.poll() is None

    def stop(self) -> None:
        """Stop the server (SIGTERM, SIGKILL if it lingers)."""
        terminate(self.proc)
        self.log.close()


class RedisClusterProcesses:
    """The six nodes and the ways the tests act on them."""

    def __init__(self, nodes: list[ClusterNode]) -> None:
        self.nodes = nodes

    @property
    def url(self) -> str:
        """Return the REDIS_URL of the cluster (two seed nodes: either is enough)."""
        return f"redis+cluster://{self.nodes[0].address},{self.nodes[1].address}"

    def node(self, port: int) -> ClusterNode:
        """Return the node listening on ``port``."""
        return next(n for n in self.nodes if n.port == port)

    def state_ok(self) -> bool:
        """Tell whether every running node says the cluster is ok (all slots served)."""
        for node in self.nodes:
            if not node.alive():
                continue
            info = node.ask("CLUSTER", "INFO")
            if not isinstance(info, str | bytes):
                return False
            text = info.decode() if isinstance(info, bytes) else info
            if "cluster_state:ok" not in text:
                return False
        return True

    def shard_of(self, key: str) -> tuple[ClusterNode, list[ClusterNode]] | None:
        """Return the primary and replicas serving ``key``'s slot now (asked of a live node)."""
        for node in self.nodes:
            if not node.alive():
                continue
            slot = node.ask("CLUSTER", "KEYSLOT", key)
            shards = node.ask("CLUSTER", "SLOTS")
            if slot is None or not isinstance(shards, list):
                continue
            for start, end, primary, *replicas in shards:
                if int(start) <= int(slot) <= int(end):
                    return self.node(int(primary[1])), [self.node(int(r[1])) for r in replicas]
        return None

    def primary_of(self, key: str) -> ClusterNode:
        """Return the node serving ``key``'s slot as a primary now (asked of a live node)."""
        shard = self.shard_of(key)
        if shard is None:
            raise AssertionError(f"no live node knows who serves {key!r}")
        return shard[0]

    def replica_of(self, primary: ClusterNode) -> ClusterNode:
        """Return a live replica of ``primary``."""
        for node in self.nodes:
            role = node.ask("ROLE") if node.alive() else None
            if isinstance(role, list) and role[0] == b"slave" and int(role[2]) == primary.port:
                return node
        raise AssertionError(f"no live replica of the node on port {primary.port}")

    def live_replicas_of(self, key: str) -> int:
        """Return how many live replicas serve ``key``'s slot (a failover needs one)."""
        shard = self.shard_of(key)
        return 0 if shard is None else sum(replica.alive() for replica in shard[1])

    def wait_ok(self, deadline: float = READY_DEADLINE) -> None:
        """Wait until every live node says ``cluster_state:ok``."""
        end = time.monotonic() + deadline
        while not self.state_ok():
            if time.monotonic() > end:
                logs = "\n".join(
                    Path(n.log.name).read_text(errors="replace")[-2000:] for n in self.nodes
                )
                pytest.fail(f"the Redis Cluster is not ok after {deadline} s:\n{logs}")
            time.sleep(0.1)


def redis_cli_binary() -> str | None:
    """Return the redis-cli executable on PATH, if any."""
    return shutil.which("redis-cli")


@contextlib.contextmanager
def private_cluster() -> Iterator[RedisClusterProcesses]:
    """Run a private 3-primary Redis Cluster until the block ends (skip without the binaries)."""
    binary, cli = redis_server_binary(), redis_cli_binary()
    if binary is None or cli is None:
        pytest.skip("no redis-server and redis-cli executables (Debian's redis-server package)")
    workdir = Path(tempfile.mkdtemp(prefix="artcat-cluster-"))
    nodes: list[ClusterNode] = []
    try:
        for _ in range(NODES):
            nodes.append(ClusterNode(binary, workdir))
        end = time.monotonic() + READY_DEADLINE
        for node in nodes:
            while node.ask("PING") is None:
                if not node.alive() or time.monotonic() > end:
                    log = Path(node.log.name).read_text(errors="replace")
                    pytest.fail(f"redis-server on port {node.port} did not start:\n{log}")
                time.sleep(0.02)
        created = subprocess.run(
            [
                cli,
                "--cluster",
                "create",
                *(n.address for n in nodes),
                "--cluster-replicas",
                "1",
                "--cluster-yes",
            ],
            capture_output=True,
            text=True,
            timeout=READY_DEADLINE,
            check=False,
        )
        assert created.returncode == 0, created.stdout + created.stderr
        cluster = RedisClusterProcesses(nodes)
        cluster.wait_ok()
        yield cluster
    finally:
        for node in nodes:
            node.stop()
        shutil.rmtree(workdir, ignore_errors=True)
