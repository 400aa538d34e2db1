"""Serving with granian (WSGI mode): its HTTP in Rust, our rules in front of the app.

granian parses requests, keeps connections and writes responses outside Python, where waitress
does all of it in Python threads: the same catalog app answers many more requests a second under
it (bench/README.md has the current ratio). What waitress did for us before
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

The processes are granian's own: it forks the workers, respawns one that dies
(``respawn_failed_workers``), and on SIGTERM or Ctrl-C stops accepting, lets each worker finish
its requests in flight and kills one still busy ``grace`` seconds later
(``workers_kill_timeout``). What granian cannot do is done in each worker as it loads the app
(``run_granian``'s loader): pin itself to one core, publish its metrics where every worker's
``/metrics`` reads them, open its own connections to the stores, and forget the settings.
granian forks its workers as multiprocessing processes of the fork context: ``run_granian``
has them started as ``WorkerProcess``, whose exit the supervisor's threads may all wait for.
"""

from __future__ import annotations

import ctypes
import io
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from multiprocessing import popen_fork, util
from multiprocessing.context import ForkContext, ForkProcess
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import orjson
from waitress.proxy_headers import proxy_headers_middleware

from common import metrics, startup
from common.api.errors import APIError, ParamError, TooLarge
from common.serve import MAX_REQUEST_BODY, WAITRESS_OPTIONS, WSGIApp, core_plan, pin
from common.settings import forget_settings

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


def metrics_directory(configured: str) -> tuple[str, bool]:
    """Return the folder where workers publish metrics (emptied), and whether it was created.

    granian's own metrics are the server's; the app's counters live in each worker, and
    ``/metrics`` from any worker adds up the others' published ones (``common.metrics``).
    """
    if not configured:
        return tempfile.mkdtemp(prefix="artcat-metrics-"), True
    path = Path(configured)
    path.mkdir(parents=True, exist_ok=True)
    for stale in [*path.glob("*.json"), *path.glob("*.tmp")]:  # a previous run's totals
        stale.unlink(missing_ok=True)
    return str(path), False


def claim_slot(slots: Any) -> int:
    """Take the first worker slot no live process holds, for this process; return it.

    granian does not tell the loader which worker it runs in, so the workers number
    themselves: a worker that replaces a dead one takes its slot, so its core. When every
    slot is held (a reload starts each new worker before it stops the old one), it takes the
    slot of the process started first (the lowest pid): the one being replaced.
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


STOPS = frozenset({signal.SIGTERM, signal.SIGINT})


def _exit_at_once(_signum: int, _frame: Any) -> None:
    # Not SystemExit: raised wherever the signal lands (a finalizer, say), it may be ignored.
    os._exit(0)


class WorkerPopen(popen_fork.Popen):
    """multiprocessing's start of a forked process, which threads may wait for at once.

    granian's supervisor waits for each worker in two threads: a thread of its own joins it
    (to respawn it should it die), and the main thread, stopping the workers, joins it with
    the grace period as timeout, then asks whether it is alive. multiprocessing reaps the
    process (``os.waitpid``) in whichever wait returns first; the other gets ECHILD, which it
    reads as "not started yet", so alive, until the thread that reaped it runs again and
    stores its exit code. On a loaded machine that thread may run a millisecond too late:
    granian then logs "Killing worker-N after it refused to gracefully stop" about a worker
    that stopped at once, and sends SIGKILL to its pid, freed already.

    Here a wait only looks (``waitid`` with ``WNOWAIT``: every waiting thread wakes, none
    reaps), and the process is reaped under a lock: a thread that finds it reaped waits behind
    the lock for the exit code the reaping thread stores.
    """

    def __init__(self, process_obj: BaseProcess) -> None:
        self.reaping = threading.Lock()
        super().__init__(process_obj)

    def poll(self, flag: int = os.WNOHANG) -> int | None:
        """Return the exit code, or None while the process runs (``flag``: 0 waits for it)."""
        if self.returncode is None:
            try:
                ended = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT | flag)
            except ChildProcessError:
                ended = None  # reaped: by another thread, which stores the code under the lock
            else:
                if ended is None:
                    return None  # running
            with self.reaping:
                if self.returncode is None:
                    super().poll(os.WNOHANG)
        return self.returncode


PR_SET_PDEATHSIG = 1  # prctl's option (<linux/prctl.h>)


def end_with(parent: int) -> None:
    """In a process just forked: have the kernel kill it (SIGKILL) when ``parent``, the process
    that forked it, ends; end it now if ``parent`` has ended already. Linux only.

    granian does not do it (this is Linux's, granian runs elsewhere too): its workers are
    multiprocessing processes, which multiprocessing acts on from the parent's exit handlers
    only, and neither granian's Python nor its Rust worker looks at the parent again. A
    supervisor killed (SIGKILL after a stop timed out, the OOM killer, a crash) runs no
    handler: its workers served on, orphans, holding the port the restarted server then
    cannot bind. SIGKILL, not SIGTERM: with no supervisor left to end a graceful stop when the
    grace period ends, a worker could drain for ever.

    The signal comes when the *thread* that forked ends: the caller makes sure that is the
    supervisor's main thread (``WorkerProcess.start``).
    """
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # it ended before the prctl: no signal will come
        os._exit(0)


class WorkerProcess(ForkProcess):
    """A granian worker process (``run_granian`` has granian fork its workers as these).

    A stop (SIGTERM, SIGINT) ends a worker at once until granian, its app loaded, sets the
    worker's own handlers. A worker is forked with its parent's handlers, which would take a
    stop for the supervisor's and lose it (the worker, once serving, killed at the end of the
    grace period), so stops are held back from just before the fork until the worker has set
    its own: one asked meanwhile (the supervisor's, as the worker is forked; Ctrl-C to the
    process group) is delivered then, even if the worker runs late. Nothing is in flight yet.

    A worker ends with its supervisor, however the supervisor ends (``end_with``).
    """

    # The pid of the supervisor forking this worker from its main thread, else 0 (see start).
    supervisor: int = 0

    def start(self) -> None:
        """Fork the worker (in the supervisor)."""
        # The parent-death signal follows the thread that forks: granian forks from its main
        # thread, which lasts as long as the supervisor. From another, no such signal.
        if threading.current_thread() is threading.main_thread():
            self.supervisor = os.getpid()
        super().start()

    @staticmethod
    def _Popen(process_obj: BaseProcess) -> popen_fork.Popen:  # noqa: N802 - multiprocessing's
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)  # the forked worker inherits it
        try:
            return WorkerPopen(process_obj)
        finally:  # in the supervisor only: the worker never returns from the fork
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def run(self) -> None:
        """In the worker: end with the supervisor, stop at once on a stop until loaded, then
        run granian's worker."""
        if self.supervisor:
            end_with(self.supervisor)
        for signum in STOPS:
            signal.signal(signum, _exit_at_once)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        super().run()


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
        # A stop asked now ends the worker at once (``WorkerProcess``), but not while it
        # holds the slots' lock, which the other workers share: held back till then.
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        slot = claim_slot(slots)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        pin(plan[slot % len(plan)])  # before granian starts this worker's threads
        metrics.REGISTRY.start_publishing(directory)
        # The final totals, as the worker exits (multiprocessing runs these finalizers).
        util.Finalize(None, metrics.REGISTRY.stop_publishing, exitpriority=10)
        startup.quiet()  # the app's imports and build, as in the supervisor's start-up
        try:
            app = guarded(build_app(), proxy or {})
        finally:
            startup.settle()
        forget_settings(forget)
        return app

    # granian forks each worker as the fork context's Process: as a WorkerProcess, here.
    forked = ForkContext.Process
    ForkContext.Process = WorkerProcess
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
        ForkContext.Process = forked
        if created:
            shutil.rmtree(directory, ignore_errors=True)
