"""The servers under test over real HTTP: waitress on a free loopback port, each response
checked against the OpenAPI document (``tests/functional/conftest.py``) when its port is listed.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redis import Redis

from common.serve import Waitress, quiet_waitress_logs

# Ports of the servers under test whose every response is checked against the OpenAPI document.
CHECKED_PORTS: set[int] = set()


@dataclass
class LiveServer:
    """A waitress server running an app in a background thread."""

    url: str
    server: Any
    thread: threading.Thread
    stopping: Callable[[], None]

    def stop(self) -> None:
        """Stop serving (the loop notices within a poll) and wait for the thread."""
        self.stopping()
        self.thread.join(timeout=10)
        if self.thread.is_alive():
            raise RuntimeError(f"the server at {self.url} did not stop within 10 s")


def start_server(app: Any, *, deadline: float = 10.0, **options: Any) -> LiveServer:
    """Start ``app`` on a free loopback port and wait (up to a deadline) until it accepts.

    ``options`` are more waitress options (``common.serve.proxy_options``, say)."""
    quiet_waitress_logs()
    waitress = Waitress(
        app,
        host="127.0.0.1",
        port=0,
        **{"threads": 4, "clear_untrusted_proxy_headers": True, **options},
    )
    port = waitress.port
    # Stopped, it drains briefly and closes.
    thread = threading.Thread(target=waitress.serve, args=(2.0,), daemon=True)
    thread.start()
    end = time.monotonic() + deadline
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            if time.monotonic() > end:
                raise RuntimeError(f"server on port {port} did not start in {deadline}s") from None
            time.sleep(0.02)
    return LiveServer(f"http://127.0.0.1:{port}", waitress.server, thread, waitress.stop)


def checked(live: LiveServer) -> LiveServer:
    """List the server's port among those whose responses are checked; return it."""
    CHECKED_PORTS.add(int(live.server.effective_port))
    return live


def forget_sign_in_throttle(redis: Redis, prefix: str) -> None:
    """Forget the sign-in attempts counted under ``prefix`` (tests that sign in with wrong
    passwords again and again would leave later tests throttled: the servers share Redis)."""
    for key in redis.scan_iter(f"{prefix}:limits*", count=1000):
        redis.delete(key)


@dataclass
class Site:
    """A small HTTP server on another origin: the client's redirect target and attacker pages."""

    url: str
    pages: dict[str, str] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def received(self, path: str) -> list[str]:
        """Return the request targets that started with ``path``."""
        return [r for r in self.requests if r.startswith(path)]
