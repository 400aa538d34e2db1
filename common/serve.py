"""Serving: the WSGI path dispatcher of ``serve all``, core pinning, and waitress in-process.

Production serves with granian (``common.granian_serve``), whose own workers, respawn and
graceful stop run the processes. Development serves with waitress in the ``artcat serve``
process itself, where a debugger's breakpoint works.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import math
import os
import secrets
import signal
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any

from waitress import wasyncore
from waitress.server import BaseWSGIServer, create_server

from common.settings import Settings

log = logging.getLogger("artcat.serve")
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

# Paths the authorization server owns; everything else goes to the catalog (the API, and its
# pages: the front door at /, the API docs at /docs, the artist, artwork... pages).
AUTH_PREFIXES = ("/oauth2/", "/api/tokens/", "/api/applications", "/account/", "/.well-known/")
# ... and these exact paths (/activate: where a device's user enters its code, RFC 8628).
AUTH_PATHS = ("/oauth2", "/account", "/api/tokens", "/activate")


def is_auth_path(path: str) -> bool:
    """Tell whether a request path belongs to the authorization server."""
    return path.startswith(AUTH_PREFIXES) or path in AUTH_PATHS


class PathDispatcher:
    """Send each request to the auth server or the catalog by its path (as the proxy does)."""

    def __init__(self, auth_app: WSGIApp, resource_app: WSGIApp) -> None:
        self.auth_app = auth_app
        self.resource_app = resource_app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        """Dispatch one request."""
        path = environ.get("PATH_INFO", "")
        app = self.auth_app if is_auth_path(path) else self.resource_app
        return app(environ, start_response)


# Limits every waitress server applies before the app sees a request: a larger body is answered
# 413 by waitress itself (chunked bodies included), so nothing is buffered past it.
MAX_REQUEST_BODY = 1024 * 1024
WAITRESS_OPTIONS: dict[str, Any] = {
    "max_request_body_size": MAX_REQUEST_BODY,
    "max_request_header_size": 64 * 1024,
    "ident": "artcat",
}


PROXY_HEADERS = frozenset({"x-forwarded-for", "x-forwarded-proto"})


def proxy_options(settings: Settings) -> dict[str, Any]:
    """Return waitress's options for the reverse proxy in front (TRUSTED_PROXY).

    Forwarding headers from anyone else are dropped before the app sees the request, so a
    client cannot choose the address the sign-in throttle counts against.
    """
    options: dict[str, Any] = {"clear_untrusted_proxy_headers": True}
    if settings.trusted_proxy:
        options.update(
            trusted_proxy=settings.trusted_proxy,
            trusted_proxy_count=settings.trusted_proxy_count,
            trusted_proxy_headers=set(PROXY_HEADERS),
        )
    return options


def port_problem(host: str, port: int) -> str | None:
    """Return why ``host:port`` cannot be listened on (in use, not an address of this
    machine...), or None: a trial bind, as the servers bind, before anything is printed.

    Linux refuses a bind to a port another socket listens on even with SO_REUSEADDR (which
    the servers set, so that a port a stopped server left in TIME_WAIT is free at once).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as ex:
        return f"{host} is not an address to listen on ({ex.strerror})"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as trial:
        trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            trial.bind(address)
        except OSError as ex:
            if ex.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is already in use (another artcat serve?)"
            return f"cannot listen on {host}:{port}: {ex.strerror}"
    return None


def quiet_waitress_logs() -> None:
    """Silence waitress's per-request "Task queue depth" warning (it costs about 6%)."""
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)


def cores() -> list[int]:
    """Return the cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def core_plan() -> list[int]:
    """Return the cores to pin workers 0, 1, 2... to: every core once, from a random one.

    Neither server pins, and a process whose Python threads do blocking I/O across two cores
    collapses into a GIL hand-off convoy (an order of magnitude fewer requests a second), so
    each serving process is pinned to one core. Worker ``i`` gets ``plan[i % len(plan)]``:
    one server's workers are on distinct cores while they are no more than the cores. The
    random start spreads several servers on one host (containers scaled with ``--scale``, an
    auth and a resource server) over the cores. For an exact placement, restrict the process's
    cores (a container's ``cpuset``, ``taskset``): only those are used.
    """
    available = cores()
    start = secrets.randbelow(len(available))
    return available[start:] + available[:start]


def pin(core: int) -> bool:
    """Pin the calling thread (and the threads it starts) to ``core``; False where affinity
    cannot be set."""
    if not hasattr(os, "sched_setaffinity"):
        return False
    os.sched_setaffinity(0, {core})
    return True


def pin_to_one_core() -> int | None:
    """Pin this process to one core before the server starts its threads (they inherit it).
    Returns the core, or None where affinity cannot be set."""
    core = core_plan()[0]
    return core if pin(core) else None


class Waitress:
    """A waitress server in this process that stops gracefully, through waitress's public API.

    ``waitress.serve`` stops its loop when SIGTERM or Ctrl-C raises in it, and an answer a
    thread finishes afterwards is never sent. Here the loop is waitress's own, over a socket
    map this object gives ``create_server``, and a stop:

    1. closes the listening socket: new connections are refused;
    2. lets waitress's threads finish the requests they run (``task_dispatcher.shutdown``),
       for at most ``grace`` seconds; a second signal ends the wait;
    3. sends what those answers left unsent (the connections still ``writable()``), within the
       same grace, then closes every connection, idle keep-alive ones included.
    """

    def __init__(self, app: WSGIApp, **options: Any) -> None:
        self.map: dict[int, Any] = {}
        # poll(), not select(): a socket closed between two polls is skipped, not an error.
        self.server = create_server(
            app, map=self.map, asyncore_use_poll=True, **{**WAITRESS_OPTIONS, **options}
        )
        self.listeners: list[Any] = [d for d in self.map.values() if isinstance(d, BaseWSGIServer)]
        self.stopping = False
        self.closed = False

    @property
    def port(self) -> int:
        """Return the port it listens on (the first, when it listens on several)."""
        return int(self.listeners[0].effective_port)

    def stop(self) -> None:
        """Ask the loop to stop, from any thread: it wakes at once (a loop that has ended
        already, its trigger closed, has nothing to wake)."""
        self.stopping = True
        if not self.closed:
            with contextlib.suppress(OSError):
                self.listeners[0].pull_trigger()

    def serve(self, grace: float) -> bool:
        """Serve until ``stop()`` or a signal raising in the loop, then drain; True when every
        request in flight was answered within ``grace`` seconds."""
        adj = self.server.adj
        try:
            while self.map and not self.stopping:
                wasyncore.loop(adj.asyncore_loop_timeout, True, self.map, count=1)
        except (SystemExit, KeyboardInterrupt):
            pass
        deadline = time.monotonic() + grace
        try:
            for listener in self.listeners:
                # Not listener.close(): that closes its trigger too, which the threads still
                # pull when they finish an answer.
                wasyncore.dispatcher.close(listener)
            self.server.task_dispatcher.shutdown(cancel_pending=True, timeout=math.ceil(grace))
            finished = time.monotonic() < deadline
            while time.monotonic() < deadline and any(
                c.writable() for c in list(self.map.values())
            ):
                wasyncore.loop(0.05, True, self.map, count=1)
            if not finished:
                log.warning("stopping with requests unfinished after %s s", grace)
            return finished
        finally:
            self.closed = True
            wasyncore.close_all(self.map, ignore_all=True)


def run_waitress(
    app: WSGIApp, host: str, port: int, *, threads: int = 4, grace: float = 10.0, **kw: Any
) -> None:
    """Serve ``app`` with waitress in this process until SIGTERM or Ctrl-C, then stop
    gracefully (``Waitress``); a second signal stops at once."""
    quiet_waitress_logs()
    server = Waitress(app, host=host, port=port, threads=threads, **kw)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_on_signal)
    server.serve(grace)


def _exit_on_signal(_signum: int, _frame: Any) -> None:
    raise SystemExit(0)
