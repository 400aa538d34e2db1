"""A small WSGI app served by ``artcat serve``'s runners, for the graceful shutdown tests.

    python -m tests.functional.slow_app PORT WORKDIR [--workers N] [--grace SECONDS]
        [--server waitress|granian] [--hold-load] [--slow-fork] [--slow-reap]

``/slow?NAME`` creates ``WORKDIR/NAME.started``, then waits (at most a minute) for the test to
create ``WORKDIR/NAME.release`` before it answers 200 with a 200 KB body ending in ``end``: a
request kept in flight for as long as the test wants, without any sleep to time. ``/pid``
answers the pid of the process that served it, ``/environ`` the names in its WSGI environ
(under granian, ``SLOW_APP_SECRET`` is a setting each worker forgets). All go through the
observability middleware, so ``/metrics`` and the access lines are those of the real services.
``--hold-load`` keeps each granian worker loading its app (after creating ``WORKDIR/loading``)
until the test creates ``WORKDIR/load.release``.

Two options stand in for a loaded machine's scheduler, where the tests could not otherwise
time it (neither touches the server's code, only this test process's):

- ``--slow-fork``: each worker, just forked, waits a second (after creating ``WORKDIR/forked``)
  before it gets on, as a new process the scheduler runs late;
- ``--slow-reap``: in the supervisor, the thread that reaps a worker (``os.waitpid``) stores what
  it read a second late, and the main thread waits late too, as threads descheduled.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common.granian_serve import run_granian
from common.logs import configure_logging
from common.observability import ROUTE_KEY, Observer
from common.serve import WSGIApp, run_waitress

BODY = b"x" * 200_000 + b"end"


def build_app(workdir: Path) -> WSGIApp:
    """Return the app, wrapped in the observability middleware."""

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        path = environ.get("PATH_INFO", "")
        environ[ROUTE_KEY] = path
        body = str(os.getpid()).encode()
        if path == "/environ":
            body = "\n".join(sorted(environ)).encode()
        if path == "/slow":
            name = environ.get("QUERY_STRING") or "slow"
            (workdir / f"{name}.started").touch()
            release = workdir / f"{name}.release"
            end = time.monotonic() + 60
            while not release.exists() and time.monotonic() < end:
                time.sleep(0.01)
            body = BODY
        start_response(
            "200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))]
        )
        return [body]

    return Observer(app, service="slow")


Waitpid = Callable[[int, int], tuple[int, int]]


def late_waitpid(waitpid: Waitpid) -> Waitpid:
    """Return ``waitpid`` run late: by the main thread (0.2 s before), and by any other thread
    once it has reaped a process (a second after)."""

    def late(pid: int, options: int) -> tuple[int, int]:
        if threading.current_thread() is threading.main_thread():
            time.sleep(0.2)
            return waitpid(pid, options)
        reaped = waitpid(pid, options)
        if reaped[0]:
            time.sleep(1.0)
        return reaped

    return late


def main() -> None:
    """Serve until SIGTERM."""
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--grace", type=float, default=30.0)
    parser.add_argument("--server", choices=["waitress", "granian"], default="waitress")
    # Each granian worker holds its loading until the test creates WORKDIR/load.release.
    parser.add_argument("--hold-load", action="store_true")
    parser.add_argument("--slow-fork", action="store_true")
    parser.add_argument("--slow-reap", action="store_true")
    args = parser.parse_args()
    if args.server == "waitress" and args.workers > 1:
        parser.error("waitress serves one process: --workers is granian's")
    configure_logging("INFO")
    if args.server == "waitress":  # one process: waitress serves no other
        run_waitress(build_app(args.workdir), "127.0.0.1", args.port, grace=args.grace)
        return

    def load() -> WSGIApp:
        if args.hold_load:
            (args.workdir / "loading").touch()
            end = time.monotonic() + 60
            while not (args.workdir / "load.release").exists() and time.monotonic() < end:
                time.sleep(0.01)
        return build_app(args.workdir)

    if args.slow_fork:

        def slow_start() -> None:  # in each worker, just forked
            (args.workdir / "forked").touch()
            time.sleep(1.0)

        os.register_at_fork(after_in_child=slow_start)
    if args.slow_reap:
        os.waitpid = late_waitpid(os.waitpid)
    run_granian(
        load,
        "127.0.0.1",
        args.port,
        workers=args.workers,
        threads=4,
        grace=args.grace,
        settings_names=("SLOW_APP_SECRET",),
    )


if __name__ == "__main__":
    main()
