"""Several waitress processes on one port, each pinned to one core.

One waitress process whose threads do blocking I/O across two cores collapses into a GIL
hand-off convoy (DESIGN.md section 6: 217 instead of 2,300 requests/s). So each worker is a
process of its own, pinned to one core, serving a listening socket it inherited from the parent.
The parent only supervises: it restarts a worker that dies and stops them all on SIGTERM/SIGINT.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from typing import Any

from common.serve import WAITRESS_OPTIONS, WSGIApp, quiet_waitress_logs

log = logging.getLogger("artcat.workers")
RESTART_DELAY = 1.0  # seconds between restarts of a worker that keeps dying


def listening_socket(host: str, port: int, backlog: int = 1024) -> socket.socket:
    """Bind the shared listening socket in the parent, before the workers fork."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


def cores() -> list[int]:
    """Return the cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def _worker(build_app: Callable[[], WSGIApp], sock: socket.socket, core: int, threads: int) -> None:
    """Run one worker: pin it, build the app in this process, serve until told to stop."""
    import waitress

    signal.signal(signal.SIGTERM, _exit_on_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent turns Ctrl-C into SIGTERM
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    quiet_waitress_logs()
    app = build_app()  # connections are opened here, never shared across a fork
    with contextlib.suppress(SystemExit, KeyboardInterrupt):
        waitress.serve(app, sockets=[sock], threads=threads, **WAITRESS_OPTIONS)


def _exit_on_signal(signum: int, _frame: Any) -> None:
    raise SystemExit(0)


def serve_workers(
    build_app: Callable[[], WSGIApp], host: str, port: int, *, workers: int, threads: int
) -> None:
    """Fork ``workers`` pinned waitress processes sharing one port; supervise them."""
    sock = listening_socket(host, port)
    available = cores()
    children: dict[int, int] = {}  # pid -> worker index
    stopping = False

    def spawn(index: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                _worker(build_app, sock, available[index % len(available)], threads)
            except BaseException:  # a worker must never return into the parent's loop
                log.exception("worker %d failed", index)
                code = 1
            finally:
                os._exit(code)
        children[pid] = index

    def stop(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for index in range(workers):
        spawn(index)
    while children:
        try:
            pid, _status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        index = children.pop(pid, -1)
        if index >= 0 and not stopping:
            log.warning("worker %d (pid %d) exited; restarting it", index, pid)
            time.sleep(RESTART_DELAY)
            if not stopping:
                spawn(index)
    sock.close()
