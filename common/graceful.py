"""Graceful shutdown of a waitress server: finish the requests in flight, then exit.

``waitress.serve`` stops its loop on SIGTERM (a SystemExit raised in the loop), so a response a
worker thread computes afterwards is never written. Here the loop is driven one poll at a time
until a stop is asked for; then:

1. the listening sockets are closed: new connections are refused (in ``--workers`` mode once
   every process has closed its copy, which they all do on SIGTERM);
2. idle keep-alive connections are closed; a response still to be written says
   ``Connection: close``;
3. the loop runs until no connection has a request in progress or output not yet sent, or the
   grace period (``SHUTDOWN_GRACE``) ends; a second signal ends it at once.

The signal handler only sets a flag; ``signal.set_wakeup_fd`` wakes the poll at once.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from typing import Any

from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer, create_server
from waitress.task import WSGITask
from waitress.trigger import trigger

log = logging.getLogger("artcat.serve")
DRAIN_POLL = 0.1  # seconds between two checks of the connections while draining


class _Task(WSGITask):
    """A request task that closes its connection after answering once the server drains."""

    def build_response_header(self) -> bytes:
        if getattr(self.channel.server, "draining", False):
            self.set_close_on_finish()
        return super().build_response_header()


class _Channel(HTTPChannel):
    task_class = _Task


class Stop:
    """What the signals asked for: a graceful stop, then (a second signal) an immediate one."""

    def __init__(self) -> None:
        self.requested = False
        self.forced = False

    def __call__(self, _signum: int = 0, _frame: object = None) -> None:
        """Ask for a stop (a signal handler, or called directly)."""
        if self.requested:
            self.forced = True
        self.requested = True


def build_server(app: Any, **kw: Any) -> Any:
    """Create a waitress server (not yet serving) whose connections can be drained."""
    server = create_server(app, **kw)
    for listener in listeners(server):
        listener.channel_class = _Channel
    return server


def socket_map(server: Any) -> dict[int, Any]:
    """Return the waitress socket map of a server (one listener or several)."""
    if isinstance(server, BaseWSGIServer):
        return server._map  # type: ignore[attr-defined]
    return server.map


def listeners(server: Any) -> list[BaseWSGIServer]:
    """Return the listening dispatchers of a server."""
    return [d for d in socket_map(server).values() if isinstance(d, BaseWSGIServer)]


def serve_until_stopped(
    server: Any,
    *,
    grace: float,
    stop: Stop | None = None,
    signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT),
) -> bool:
    """Serve until ``signals`` (or ``stop``) ask to stop, then drain; True when drained in time.

    Signal handlers are installed only in the main thread; elsewhere call ``stop()`` (the loop
    notices within ``adj.asyncore_loop_timeout`` seconds).
    """
    stop = stop or Stop()
    smap = socket_map(server)
    adj = server.adj
    waker: Any = None
    previous: dict[signal.Signals, Any] = {}
    previous_fd = -1
    if threading.current_thread() is threading.main_thread():
        waker = trigger(smap)  # type: ignore[arg-type]  # its read end is in the map: a signal wakes the poll
        os.set_blocking(waker.trigger, False)
        previous_fd = signal.set_wakeup_fd(waker.trigger, warn_on_full_buffer=False)
        for signum in signals:
            previous[signum] = signal.signal(signum, stop)
    try:
        while smap and not stop.requested:  # an emptied map has nothing left to serve
            wasyncore.loop(adj.asyncore_loop_timeout, adj.asyncore_use_poll, smap, count=1)
        return drain(server, grace=grace, stop=stop)
    finally:
        if waker is not None:
            signal.set_wakeup_fd(previous_fd)
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=1)
        wasyncore.close_all(smap)


def drain(server: Any, *, grace: float, stop: Stop | None = None) -> bool:
    """Stop accepting, then serve the requests in flight until done or ``grace`` seconds."""
    smap = socket_map(server)
    adj = server.adj
    for listener in listeners(server):
        listener.draining = True  # type: ignore[attr-defined]
        wasyncore.dispatcher.close(listener)  # not listener.close(): its trigger is still needed
    deadline = time.monotonic() + grace
    while True:
        busy = 0
        for obj in list(smap.values()):
            if not isinstance(obj, HTTPChannel):
                continue
            if obj.requests or obj.total_outbufs_len or obj.request is not None:
                busy += 1
            elif not obj.will_close:
                obj.will_close = True  # idle keep-alive connection: closed on the next poll
        if not any(isinstance(obj, HTTPChannel) for obj in smap.values()):
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0 or (stop is not None and stop.forced):
            log.warning("stopping with %d request(s) unfinished", busy)
            return False
        wasyncore.loop(min(DRAIN_POLL, remaining), adj.asyncore_use_poll, smap, count=1)
