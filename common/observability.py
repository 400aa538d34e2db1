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
  the API (so not in its OpenAPI document). It is meant for the operator's Prometheus: keep it
  off the public proxy, or switch it off with ``METRICS_ENABLED=false``.

Access lines go through the ``artcat.access`` logger, except once ``configure_logging`` has run
(``artcat serve``): then they are written straight to stderr, one ``write`` per line (atomic on
a pipe, so the lines of several workers never interleave), because a record through logging's
handler chain costs about 15 microseconds.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from itertools import count
from typing import Any
from urllib.parse import unquote, unquote_plus

import orjson

from common import metrics

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

REQUEST_ID_KEY = "artcat.request_id"
ROUTE_KEY = "artcat.route"
METRICS_PATH = "/metrics"
UNMATCHED = "unmatched"
REDACTED = "[redacted]"

access_log = logging.getLogger("artcat.access")

_sane_request_id = re.compile(r"[A-Za-z0-9._-]{1,128}").fullmatch
_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))
# A query parameter whose name contains one of these has its value redacted in the log.
_SECRET_PARAM_PARTS = (
    "token",
    "secret",
    "password",
    "code",
    "state",
    "key",
    "assertion",
    "signature",
    "verifier",
    "credential",
    "session",
    "auth",
    "email",
)
# A path whose rest, after this, is a secret (the token of a password reset link). Matched on
# the path with its case folded and its empty and "." segments removed, so that a spelling
# the router would refuse or redirect still has its token redacted.
_RESET_LINK_PATH = "/password/reset/"
_MAX_FIELD = 512  # longer paths, queries and user agents are cut: a line stays under PIPE_BUF
# Percent-decodings tried on a parameter name; a name still encoded after as many is redacted.
_MAX_DECODES = 4
_SEPARATORS = re.compile(r"[&;]")
_EMPTY_SEGMENTS = re.compile(r"/(?:\.?/)+")


class _Sink:
    """Where access lines go: a file descriptor once configured, else the logging module."""

    fd: int | None = None


SINK = _Sink()


def _decoded(text: str, unquote: Callable[[str], str]) -> str | None:
    """Return ``text`` percent-decoded until it stops changing (None: still encoded after
    ``_MAX_DECODES`` rounds, which nobody sends by mistake)."""
    for _ in range(_MAX_DECODES):
        decoded = unquote(text)
        if decoded == text:
            return text
        text = decoded
    return None if unquote(text) != text else text


def secret_param_name(name: str) -> bool:
    """Tell whether a raw (still encoded) query parameter name may carry a secret.

    The name is decoded first (``+`` and ``%XX``, repeatedly: ``%2561ccess_token`` is
    ``access_token``), so no encoding of ``code`` or ``client_secret`` slips past.
    """
    decoded = _decoded(name, unquote_plus)
    if decoded is None:
        return True
    lowered = decoded.lower()
    return any(part in lowered for part in _SECRET_PARAM_PARTS)


def redact_query(query: str) -> str:
    """Return a query string with the values of secret-looking parameters replaced.

    Pairs are split on ``&`` and ``;`` (some parsers take either) and names are decoded before
    they are compared.
    """
    if "%" not in query:
        lowered = query.lower()
        for part in _SECRET_PARAM_PARTS:  # a plain loop: the cheapest check when nothing matches
            if part in lowered:
                break
        else:
            return query[:_MAX_FIELD]
    out = []
    start = 0
    for sep in (*_SEPARATORS.finditer(query), None):
        end = sep.start() if sep is not None else len(query)
        name, eq, _value = query[start:end].partition("=")
        out.append(f"{name}={REDACTED}" if eq and secret_param_name(name) else query[start:end])
        if sep is not None:
            out.append(sep.group())
            start = sep.end()
    return "".join(out)[:_MAX_FIELD]


def redact_path(path: str) -> str:
    """Return a path with a secret segment (a password reset token) replaced."""
    if "%" not in path and "reset" not in path.lower():
        return path[:_MAX_FIELD]
    decoded = _decoded(path, unquote)
    if decoded is None:
        return REDACTED
    normal = _EMPTY_SEGMENTS.sub("/", decoded)
    at = normal.lower().find(_RESET_LINK_PATH)
    if at < 0:
        return path[:_MAX_FIELD]
    return normal[: at + len(_RESET_LINK_PATH)][:_MAX_FIELD] + REDACTED


_ts_cache: tuple[int, str] = (0, "")
_MILLIS = tuple(f".{ms:03d}Z" for ms in range(1000))


def _timestamp(now: float) -> str:
    """Return ``now`` as ``YYYY-MM-DDThh:mm:ss.mmmZ`` (the seconds are formatted once)."""
    global _ts_cache
    sec = int(now)
    cached = _ts_cache
    if cached[0] != sec:
        cached = _ts_cache = (sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)))
    return cached[1] + _MILLIS[min(999, int((now - sec) * 1000))]


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


def write_line(fd: int, line: bytes) -> None:
    """Write one whole line to ``fd``; never raise (a full disk must not fail requests)."""
    try:
        while line:
            written = os.write(fd, line)
            line = line[written:]
    except OSError:
        pass


class Observer:
    """The middleware: request id, access log line and metrics for every request."""

    def __init__(
        self, app: WSGIApp, *, service: str, access_log: bool = True, expose_metrics: bool = True
    ) -> None:
        self.app = app
        self.service = service
        self.access_log = access_log
        self.expose_metrics = expose_metrics
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
        if self.expose_metrics and environ.get("PATH_INFO") == METRICS_PATH:
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
            "ts": _timestamp(time.time()),
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
            "user_agent": environ.get("HTTP_USER_AGENT", "")[:_MAX_FIELD] or None,
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


# -- logging -------------------------------------------------------------------------------------


class JsonFormatter(logging.Formatter):
    """Format a log record as one JSON line (``ts, level, logger, message[, exc_info]``)."""

    def format(self, record: logging.LogRecord) -> str:
        """Return the JSON line of a record."""
        fields: dict[str, Any] = {
            "ts": _timestamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            fields["exc_info"] = self.formatException(record.exc_info)
        return orjson.dumps(fields, default=str).decode()


def configure_logging(
    level: str = "INFO", *, access: bool = True, stream: Any = None, fd: int | None = None
) -> None:
    """Log JSON lines to stderr at ``level``; access lines go straight to ``fd`` (stderr).

    Called by ``artcat serve`` (LOG_LEVEL, ACCESS_LOG). The access log is on only at INFO or
    below and with ``access`` on.
    """
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_artcat", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler._artcat = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(numeric)
    # Cheaper records: nobody reads the caller's file and line, thread or process names here.
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    quiet = logging.WARNING if numeric <= logging.INFO else numeric
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)  # "Task queue depth": 6%
    logging.getLogger("waitress").setLevel(quiet)
    enabled = access and numeric <= logging.INFO
    access_log.setLevel(logging.INFO if enabled else logging.CRITICAL + 1)
    if enabled and fd is None:
        try:
            fd = sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):  # not a real file: go through logging
            fd = None
    SINK.fd = fd if enabled else None
