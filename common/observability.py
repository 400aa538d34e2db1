"""Request ids, JSON access logs and request metrics: one WSGI middleware for both services.

The middleware wraps every request, so it is built to cost a few microseconds
(``bench/middleware_overhead.py`` measures it):

- the request id is the caller's ``X-Request-Id`` when it is sane, else 128 random bits in hex;
  it is put in the environ (``artcat.request_id``) and echoed in the response's ``X-Request-Id``;
- one JSON line per request (``ts, service, request_id, method, path, query, route, status,
  duration_ms, bytes, remote_addr, user_agent``). No header is logged but the user agent; the
  values of query parameters that may carry a secret are replaced by ``[redacted]``, and so is
  the token of a password reset link's path;
- the request is counted by service, route *template* (``/api/artworks/{id}``; "unmatched" when
  no route matched) and status, with its latency, in ``common.metrics``. Each app hands its
  route template back through the environ key ``artcat.route``;
- ``GET /metrics`` is answered here, before the app: no token, no rate limit, and not a route of
  the API (so not in its OpenAPI document). It is meant for the operator's Prometheus, so it is
  answered only to the addresses of ``METRICS_ALLOW`` (loopback by default; the client's address
  as ``TRUSTED_PROXY`` forwards it): anyone else's request goes on to the app, which answers the
  404 of a path that does not exist. ``METRICS_ENABLED=false`` switches it off. The shipped
  proxy configuration (``deploy/nginx.conf``) refuses it too.

The log lines are written by ``common.logs`` and redacted by ``common.redaction``.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import count
from typing import Any

import orjson

from common import metrics
from common.logs import SINK, access_log, timestamp, write_line
from common.redaction import MAX_FIELD, redact_path, redact_query
from common.settings import IPNetwork, Settings, parse_networks

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

REQUEST_ID_KEY = "artcat.request_id"
ROUTE_KEY = "artcat.route"
METRICS_PATH = "/metrics"
UNMATCHED = "unmatched"
# Who may read /metrics when the caller names no one (METRICS_ALLOW's default).
LOOPBACK = parse_networks(Settings.metrics_allow, "METRICS_ALLOW")

_sane_request_id = re.compile(r"[A-Za-z0-9._-]{1,128}").fullmatch
_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))

_IDS_PER_DRAW = 512


def _draw_ids() -> tuple[str, Iterator[int]]:
    return os.urandom(16 * _IDS_PER_DRAW).hex(), count()


_ids = _draw_ids()


def _redraw_ids() -> None:
    global _ids
    _ids = _draw_ids()  # a forked worker must not hand out its parent's ids


os.register_at_fork(after_in_child=_redraw_ids)


def new_request_id() -> str:
    """Return 128 random bits in hex (drawn from the OS 8 KiB at a time: 4x cheaper)."""
    global _ids
    pool = _ids  # one read: the hex and its counter always belong together
    i = next(pool[1])  # atomic: two threads never get the same index
    if i >= _IDS_PER_DRAW:
        pool = _ids = _draw_ids()
        i = next(pool[1])
    return pool[0][i * 32 : i * 32 + 32]


class Observer:
    """The middleware: request id, access log line and metrics for every request."""

    def __init__(
        self,
        app: WSGIApp,
        *,
        service: str,
        access_log: bool = True,
        expose_metrics: bool = True,
        metrics_from: Sequence[IPNetwork] = LOOPBACK,
    ) -> None:
        self.app = app
        self.service = service
        self.access_log = access_log
        self.expose_metrics = expose_metrics
        self.metrics_from = tuple(metrics_from)
        self._observe = metrics.REGISTRY.requests.observe

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        """Serve one request through the app."""
        start = time.perf_counter()
        rid = environ.get("HTTP_X_REQUEST_ID")
        if rid is None or _sane_request_id(rid) is None:
            rid = new_request_id()
        environ[REQUEST_ID_KEY] = rid
        state = _Exchange(start_response, rid)
        app = self.app
        if (
            self.expose_metrics
            and environ.get("PATH_INFO") == METRICS_PATH
            and may_read_metrics(environ.get("REMOTE_ADDR"), self.metrics_from)
        ):
            environ[ROUTE_KEY] = METRICS_PATH
            app = serve_metrics
        try:
            result = app(environ, state.start_response)
        except BaseException:
            self.finish(environ, "500", start, 0, rid)
            raise
        if type(result) is list:
            self.finish(environ, state.status, start, sum(map(len, result)), rid)
            return result
        return _Body(result, self, environ, state, start)

    def finish(
        self, environ: dict[str, Any], status: str, start: float, size: int, rid: str
    ) -> None:
        """Count the request and write its access line."""
        seconds = time.perf_counter() - start
        method = environ.get("REQUEST_METHOD", "")
        route = environ.get(ROUTE_KEY) or UNMATCHED
        self._observe(
            self.service, route, method if method in _METHODS else "other", status, seconds
        )
        if not self.access_log:
            return
        fd = SINK.fd
        if fd is None and not access_log.isEnabledFor(logging.INFO):
            return
        query = environ.get("QUERY_STRING")
        fields = {
            "ts": timestamp(time.time()),
            "service": self.service,
            "request_id": rid,
            "method": method[:16],
            "path": redact_path(environ.get("PATH_INFO", "")),
            "query": redact_query(query) if query else None,
            "route": route,
            "status": int(status) if status.isdigit() else 0,
            "duration_ms": round(seconds * 1000, 3),
            "bytes": size,
            "remote_addr": environ.get("REMOTE_ADDR"),
            "user_agent": environ.get("HTTP_USER_AGENT", "")[:MAX_FIELD] or None,
        }
        try:
            line = orjson.dumps(fields)
        except TypeError:  # a str that is not valid UTF-8 (a lone surrogate): never fail
            line = orjson.dumps({k: _safe(v) for k, v in fields.items()})
        if fd is not None:
            write_line(fd, line + b"\n")
        else:
            access_log.info(line.decode())


def _safe(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    return value


class _Exchange:
    """The status of one response, and the start_response that records it."""

    __slots__ = ("rid", "status", "upstream")

    def __init__(self, upstream: Callable[..., Any], rid: str) -> None:
        self.upstream = upstream
        self.rid = rid
        self.status = "500"

    def start_response(
        self, status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Any:
        """Record the status and add the request id header."""
        self.status = status[:3]
        headers.append(("X-Request-Id", self.rid))
        return self.upstream(status, headers, exc_info)


class _Body:
    """A streamed response body: count its bytes, finish the request when it is closed."""

    def __init__(
        self,
        inner: Iterable[bytes],
        observer: Observer,
        environ: dict[str, Any],
        state: _Exchange,
        start: float,
    ) -> None:
        self.inner = inner
        self.observer = observer
        self.environ = environ
        self.state = state
        self.start = start
        self.size = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
            self.size += len(chunk)
            yield chunk

    def close(self) -> None:
        """Close the app's iterable, then log and count the request."""
        try:
            close = getattr(self.inner, "close", None)
            if close is not None:
                close()
        finally:
            self.observer.finish(
                self.environ, self.state.status, self.start, self.size, self.state.rid
            )


def may_read_metrics(address: str | None, networks: Sequence[IPNetwork]) -> bool:
    """Tell whether a client address is in one of the networks allowed to read ``/metrics``."""
    try:
        ip = ipaddress.ip_address((address or "").split("%", 1)[0])
    except ValueError:
        return False  # no address, or not one (a Unix socket's peer): never allowed
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1, a dual-stack socket's loopback, is 127.0.0.1
    return any(ip.version == net.version and ip in net for net in networks)


def serve_metrics(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """Answer ``/metrics`` in the Prometheus text format (GET and HEAD only)."""
    method = environ.get("REQUEST_METHOD")
    if method not in ("GET", "HEAD"):
        start_response("405 Method Not Allowed", [("Allow", "GET, HEAD"), ("Content-Length", "0")])
        return []
    body, media_type = metrics.render()
    start_response(
        "200 OK",
        [
            ("Content-Type", media_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
        ],
    )
    return [] if method == "HEAD" else [body]
