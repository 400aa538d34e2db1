"""Serving with granian (WSGI mode): its HTTP in Rust, our rules in front of the app.

granian parses requests, keeps connections and writes responses outside Python, where waitress
does all of it in Python threads: the same catalog app answers a document from the cache about
1.6 times as many requests a second under it (bench/README.md). What waitress did for us before
the app saw a request is done here instead, so that both servers behave alike:

- a request body over ``MAX_REQUEST_BODY`` is answered 413 before the app runs: a declared
  ``Content-Length`` is checked, a chunked body is read up to the limit and no further;
- forwarding headers (``X-Forwarded-For``, ``-Proto``...) are believed only from
  ``TRUSTED_PROXY`` and removed from anyone else's request (waitress's own middleware);
- a request head over ``MAX_HEADER_BYTES`` is answered 431 by granian. (It serves HTTP/1.1
  and HTTP/2 over cleartext with prior knowledge: its HTTP/1-only mode ignores the limit.)
- every response names the server ``artcat``;
- granian copies its process's environment into every request's WSGI environ: each worker
  removes the settings it has read (``SECRET_KEY``, ``DATABASE_URL``...) from its environment
  once its app is built, so no request ever carries them.

Workers are granian's processes, forked from this one, each pinned to one core (as
``common.workers`` pins waitress's), publishing metrics to one folder, restarted when one dies.
SIGTERM or Ctrl-C stops gracefully: granian stops accepting, the workers finish the requests
in flight, and a worker still busy ``grace`` seconds later is killed.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import shutil
from collections.abc import Callable, Iterable
from multiprocessing import util
from pathlib import Path
from typing import Any

import orjson
from waitress.proxy_headers import proxy_headers_middleware

from common import metrics
from common.api.errors import APIError, ParamError, TooLarge
from common.serve import MAX_REQUEST_BODY, WAITRESS_OPTIONS, WSGIApp
from common.settings import forget_settings
from common.workers import core_plan, metrics_directory, pin

SERVER_NAME = WAITRESS_OPTIONS["ident"]
# The request line and headers granian buffers at most (waitress: max_request_header_size).
MAX_HEADER_BYTES = WAITRESS_OPTIONS["max_request_header_size"]
HTTP_REASONS = {400: "Bad Request", 413: "Request Entity Too Large"}
_READ = 64 * 1024
# granian's own lines (a worker killed or restarted) as JSON lines on stderr, like ours; its
# access log stays off (the app writes ours).
GRANIAN_LOGGING: dict[str, Any] = {
    "formatters": {"json": {"()": "common.logs.JsonFormatter"}},
    "handlers": {
        "console": {
            "formatter": "json",
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
        }
    },
    "loggers": {"_granian": {"handlers": ["console"], "level": "INFO", "propagate": False}},
}  # a chunked body is read in pieces of this size, up to the limit


def _refuse(
    environ: dict[str, Any], start_response: Callable[..., Any], error: APIError
) -> list[bytes]:
    """Answer an error before the app runs, in the API's error format. An HTTP/1 connection
    closes after it (the body, unread, cannot be skipped); HTTP/2 has no such header."""
    body = orjson.dumps(error.body())
    headers = [
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
        ("Server", SERVER_NAME),
    ]
    if environ.get("SERVER_PROTOCOL") != "HTTP/2":
        headers.append(("Connection", "close"))
    start_response(f"{error.status} {HTTP_REASONS[error.status]}", headers)
    return [body]


class RequestRules:
    """The body limit and the ``Server`` header, where the server does not apply them itself."""

    def __init__(self, app: WSGIApp, limit: int = MAX_REQUEST_BODY) -> None:
        self.app = app
        self.limit = limit

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        """Refuse an oversized body, or pass the request on; name the server in the answer."""
        declared = environ.get("CONTENT_LENGTH")
        if declared:
            try:
                length = int(declared)
            except ValueError:
                length = -1
            if length < 0:
                return _refuse(environ, start_response, ParamError("Malformed Content-Length."))
            if length > self.limit:
                return _refuse(environ, start_response, self._too_large())
        elif (
            environ.get("SERVER_PROTOCOL") == "HTTP/2"
            or "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        ):
            # A body of unknown length: HTTP/1.1's chunked, or an HTTP/2 stream without one.
            body = self._read_unsized(environ["wsgi.input"])
            if body is None:
                return _refuse(environ, start_response, self._too_large())
            # As waitress passes a chunked body on: whole, with its length.
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
            environ.pop("HTTP_TRANSFER_ENCODING", None)

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            headers.append(("Server", SERVER_NAME))
            return start_response(status, headers, exc_info)

        return self.app(environ, start)

    def _too_large(self) -> TooLarge:
        return TooLarge(f"The request body is larger than {self.limit} bytes.")

    def _read_unsized(self, stream: Any) -> bytes | None:
        """Read a body of no stated length whole, or None as soon as it passes the limit."""
        parts: list[bytes] = []
        size = 0
        while True:
            part = stream.read(_READ)
            if not part:
                return b"".join(parts)
            size += len(part)
            if size > self.limit:
                return None
            parts.append(part)


def guarded(app: WSGIApp, proxy: dict[str, Any]) -> WSGIApp:
    """Wrap ``app`` in the rules waitress applies (``proxy``: ``common.serve.proxy_options``)."""
    ruled = RequestRules(app)
    if not proxy.get("trusted_proxy"):
        # No proxy is trusted: every forwarding header is someone's claim, dropped.
        return proxy_headers_middleware(ruled, trusted_proxy=None, clear_untrusted=True)
    return proxy_headers_middleware(
        ruled,
        trusted_proxy=proxy["trusted_proxy"],
        trusted_proxy_count=proxy.get("trusted_proxy_count", 1),
        trusted_proxy_headers=proxy.get("trusted_proxy_headers"),
        clear_untrusted=True,
    )


def claim_slot(slots: Any) -> int:
    """Take the first worker slot no live process holds, for this process; return it.

    A worker that replaces a dead one takes its slot, so its core. When every slot is held
    (a reload starts each new worker before it stops the old one), it takes the slot of the
    process started first (the lowest pid): the one being replaced.
    """
    with slots.get_lock():
        free = [slot for slot, pid in enumerate(slots) if not (pid and _alive(pid))]
        slot = free[0] if free else min(range(len(slots)), key=lambda i: slots[i])
        slots[slot] = os.getpid()
        return slot


def _alive(pid: int) -> bool:
    """Tell whether a process runs: a zombie (dead, not yet reaped) does not. Where there is
    no /proc, nothing is pinned either, and which slot a worker takes does not matter."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat.rsplit(b")", 1)[1].split()[0] != b"Z"


def run_granian(
    build_app: Callable[[], WSGIApp],
    host: str,
    port: int,
    *,
    workers: int,
    threads: int,
    grace: float,
    metrics_dir: str = "",
    proxy: dict[str, Any] | None = None,
    settings_names: Iterable[str] = (),
) -> None:
    """Serve ``build_app()`` (built in each worker) with granian until SIGTERM or Ctrl-C.

    ``threads`` are each worker's Python threads; ``settings_names`` the environment
    variables each worker forgets once its app is built.
    """
    from granian.constants import HTTPModes, Interfaces
    from granian.http import HTTP1Settings, HTTP2Settings
    from granian.log import LogLevels
    from granian.server import Server

    # The workers are forked: they inherit the shared counter below and the app's builder.
    multiprocessing.set_start_method("fork", force=True)
    directory, created = metrics_directory(metrics_dir)
    plan = core_plan()
    # The pid serving each worker slot; slot i is pinned to plan[i % len(plan)].
    slots = multiprocessing.Array("i", workers)
    forget = tuple(settings_names)

    def load(_target: str) -> WSGIApp:  # in each worker, as it starts
        pin(plan[claim_slot(slots) % len(plan)])  # before granian starts this worker's threads
        metrics.REGISTRY.start_publishing(directory)
        # The final totals, as the worker exits (multiprocessing runs these finalizers).
        util.Finalize(None, metrics.REGISTRY.stop_publishing, exitpriority=10)
        app = guarded(build_app(), proxy or {})
        forget_settings(forget)
        return app

    server = Server(
        "artcat",
        address=host,
        port=port,
        interface=Interfaces.WSGI,
        workers=workers,
        blocking_threads=threads,
        http=HTTPModes.auto,  # the head limit holds in this mode only (see above)
        websockets=False,
        http1_settings=HTTP1Settings(max_buffer_size=MAX_HEADER_BYTES),
        http2_settings=HTTP2Settings(max_headers_size=MAX_HEADER_BYTES),
        log_level=LogLevels.warning,
        log_dictconfig=GRANIAN_LOGGING,
        respawn_failed_workers=True,
        respawn_interval=1.0,
        workers_kill_timeout=max(1, round(grace)),
    )
    try:
        server.serve(target_loader=load)
    finally:
        if created:
            shutil.rmtree(directory, ignore_errors=True)
