"""JSON log lines: the formatter, the access log's sink and ``configure_logging``.

Access lines go through the ``artcat.access`` logger, except once ``configure_logging`` has run
(``artcat serve``): then they are written straight to stderr, one ``write`` per line (atomic on
a pipe, so the lines of several workers never interleave), because a record through logging's
handler chain costs about 15 microseconds.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any

import orjson

access_log = logging.getLogger("artcat.access")


class _Sink:
    """Where access lines go: a file descriptor once configured, else the logging module."""

    fd: int | None = None


SINK = _Sink()


_ts_cache: tuple[int, str] = (0, "")
_MILLIS = tuple(f".{ms:03d}Z" for ms in range(1000))


def timestamp(now: float) -> str:
    """Return ``now`` as ``YYYY-MM-DDThh:mm:ss.mmmZ`` (the seconds are formatted once)."""
    global _ts_cache
    sec = int(now)
    cached = _ts_cache
    if cached[0] != sec:
        cached = _ts_cache = (sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)))
    return cached[1] + _MILLIS[min(999, int((now - sec) * 1000))]


def write_line(fd: int, line: bytes) -> None:
    """Write one whole line to ``fd``; never raise (a full disk must not fail requests)."""
    try:
        while line:
            written = os.write(fd, line)
            line = line[written:]
    except OSError:
        pass


class JsonFormatter(logging.Formatter):
    """Format a log record as one JSON line (``ts, level, logger, message[, exc_info]``)."""

    def format(self, record: logging.LogRecord) -> str:
        """Return the JSON line of a record."""
        fields: dict[str, Any] = {
            "ts": timestamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            fields["exc_info"] = self.formatException(record.exc_info)
        return orjson.dumps(fields, default=str).decode()


class _JsonHandler(logging.StreamHandler):
    """The handler ``configure_logging`` installs (and replaces when called again)."""


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
        if isinstance(handler, _JsonHandler):
            root.removeHandler(handler)
    handler = _JsonHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
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
