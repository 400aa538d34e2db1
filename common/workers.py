"""Several waitress processes on one port, each pinned to one core.

One waitress process whose threads do blocking I/O across two cores collapses into a GIL
hand-off convoy (an order of magnitude fewer requests a second). So each worker is a
process of its own, pinned to one core, serving a listening socket it inherited from the parent.
The parent only supervises: it restarts a worker that dies and stops them all on SIGTERM/SIGINT,
gracefully (see ``common.graceful``). Each worker publishes its metrics to a folder the parent
created, so that ``/metrics`` from any of them covers all (see ``common.metrics``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import metrics
from common.serve import WAITRESS_OPTIONS, WSGIApp, quiet_waitress_logs

log = logging.getLogger("artcat.workers")
RESTART_DELAY = 1.0  # seconds between restarts of a worker that keeps dying


def listening_socket(host: str, port: int) -> socket.socket:
    """Bind the shared socket in the parent, before the workers fork.

    It is not listening yet: the first worker whose app is built starts listening (waitress
    does), so until one can answer, connections are refused rather than left waiting.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def cores() -> list[int]:
    """Return the cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def core_plan() -> list[int]:
    """Return the cores to pin workers 0, 1, 2... to: every core once, from a random one.

    Worker ``i`` gets ``plan[i % len(plan)]``: one server's workers are on distinct cores while
    they are no more than the cores. The random start spreads several servers on one host
    (containers scaled with ``--scale``, an auth and a resource server) over the cores instead
    of putting every first worker on the first core. For an exact placement, restrict the
    process's cores (a container's ``cpuset``, ``taskset``): only those are used.
    """
    available = cores()
    start = secrets.randbelow(len(available))
    return available[start:] + available[:start]


def pin_to_one_core() -> int | None:
    """Pin the calling thread, and every thread it starts afterwards, to one core.

    Call it before the server starts its threads. Returns the core, or None where affinity
    cannot be set.
    """
    core = core_plan()[0]
    return core if pin(core) else None


def pin(core: int) -> bool:
    """Pin the calling thread (and the threads it starts) to ``core``; False where affinity
    cannot be set."""
    if not hasattr(os, "sched_setaffinity"):
        return False
    os.sched_setaffinity(0, {core})
    return True


def _worker(
    build_app: Callable[[], WSGIApp],
    sock: socket.socket,
    core: int,
    threads: int,
    grace: float,
    metrics_dir: str,
    options: dict[str, Any],
) -> None:
    """Run one worker: pin it, build the app in this process, serve until told to stop."""
    from common.graceful import build_server, serve_until_stopped

    signal.signal(signal.SIGTERM, _exit_on_signal)  # until it serves: nothing is in flight
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent turns Ctrl-C into SIGTERM
    pin(core)
    quiet_waitress_logs()
    metrics.REGISTRY.start_publishing(metrics_dir)
    try:
        app = build_app()  # connections are opened here, never shared across a fork
        server = build_server(
            app, sockets=[sock], threads=threads, **{**WAITRESS_OPTIONS, **options}
        )
        serve_until_stopped(server, grace=grace, signals=(signal.SIGTERM,))
    except (SystemExit, KeyboardInterrupt):
        pass
    finally:
        metrics.REGISTRY.stop_publishing()


def _exit_on_signal(signum: int, _frame: Any) -> None:
    raise SystemExit(0)


def metrics_directory(configured: str) -> tuple[str, bool]:
    """Return the folder where workers publish metrics (emptied), and whether it was created."""
    if not configured:
        return tempfile.mkdtemp(prefix="artcat-metrics-"), True
    path = Path(configured)
    path.mkdir(parents=True, exist_ok=True)
    for stale in [*path.glob("*.json"), *path.glob("*.tmp")]:  # a previous run's totals
        stale.unlink(missing_ok=True)
    return str(path), False


def serve_workers(
    build_app: Callable[[], WSGIApp],
    host: str,
    port: int,
    *,
    workers: int,
    threads: int,
    grace: float = 10.0,
    metrics_dir: str = "",
    options: dict[str, Any] | None = None,
) -> None:
    """Fork ``workers`` pinned waitress processes sharing one port; supervise them.

    SIGTERM (or Ctrl-C) closes the parent's copy of the listening socket and forwards SIGTERM:
    each worker stops accepting, finishes its requests in flight (at most ``grace`` seconds),
    and exits; a worker still running ``grace`` + 5 seconds later is killed. ``options`` are
    more waitress options (the proxy's, see ``common.serve.proxy_options``).
    """
    sock = listening_socket(host, port)
    directory, created = metrics_directory(metrics_dir)
    available = core_plan()
    children: dict[int, int] = {}  # pid -> worker index
    stopping = False
    kill_at = float("inf")

    def spawn(index: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                core = available[index % len(available)]
                _worker(build_app, sock, core, threads, grace, directory, options or {})
            except BaseException:  # a worker must never return into the parent's loop
                log.exception("worker %d failed", index)
                code = 1
            finally:
                os._exit(code)
        children[pid] = index

    def stop(signum: int, _frame: Any) -> None:
        nonlocal stopping, kill_at
        if not stopping:
            kill_at = time.monotonic() + grace + 5
        stopping = True
        sock.close()  # new connections are refused once the workers closed theirs too
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for index in range(workers):
        spawn(index)
    try:
        while children:
            try:
                pid = _wait(stopping, kill_at, children)
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            if pid == 0:
                continue
            index = children.pop(pid, -1)
            if index >= 0 and not stopping:
                log.warning("worker %d (pid %d) exited; restarting it", index, pid)
                time.sleep(RESTART_DELAY)
                if not stopping:
                    spawn(index)
    finally:
        sock.close()
        if created:
            shutil.rmtree(directory, ignore_errors=True)


def _wait(stopping: bool, kill_at: float, children: dict[int, int]) -> int:
    """Wait for a child; while stopping, poll, and kill the workers left at ``kill_at``."""
    if not stopping:
        return os.wait()[0]
    pid = os.waitpid(-1, os.WNOHANG)[0]
    if pid == 0:
        if time.monotonic() >= kill_at:
            for child in children:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
        time.sleep(0.05)
    return pid
