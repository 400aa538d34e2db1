"""SIGTERM stops a server gracefully: no new connection, the requests in flight are answered.
And no request's WSGI environ carries a setting (granian copies its process's environment into
each one: its workers forget the settings they read).

The servers are real processes (``tests/functional/slow_app.py`` on ``artcat serve``'s runners:
waitress in one process, granian with one worker or ``--workers 2``), each ended at teardown
with whatever it started (``process_support.start_process``). A request is kept in flight until
the test releases it, so nothing here depends on how fast the machine is; the deadlines only
keep a broken server from hanging the run.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.functional import log_secrets
from tests.functional.process_support import free_port, kill, poll, start_process
from tests.functional.slow_app import BODY

pytestmark = pytest.mark.functional
ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 30.0  # a hang guard
# What each server logs when the grace period ends with a request unfinished.
UNFINISHED = {
    "waitress": "stopping with requests unfinished",
    "granian": "Killing worker-1 after it refused to gracefully stop",
}


def refused(port: int) -> bool:
    """Tell whether a new connection to the port is refused."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


@dataclass
class Served:
    """A slow_app process."""

    proc: subprocess.Popen[bytes]
    port: int
    workdir: Path
    log: Path
    server: str
    responses: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def start_slow(self, name: str) -> threading.Thread:
        """Send ``/slow?name`` from a thread and wait until the app is running it."""

        def send() -> None:
            try:
                self.responses[name] = requests.get(f"{self.url}/slow?{name}", timeout=90)
            except requests.RequestException as ex:
                self.responses[name] = ex

        thread = threading.Thread(target=send, daemon=True)
        thread.start()
        poll((self.workdir / f"{name}.started").exists, DEADLINE, f"{name} started")
        return thread

    def release(self, name: str) -> None:
        (self.workdir / f"{name}.release").touch()


@pytest.fixture(params=["waitress", "granian"])
def serve(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """Start slow_app processes, on each of ``artcat serve``'s servers; kill what is left."""
    started: list[Served] = []
    server = request.param

    def start(*args: str, wait: bool = True) -> Served:
        port = free_port()
        workdir = tmp_path / f"srv{len(started)}"
        workdir.mkdir()
        log = workdir / "out.log"
        log_secrets.LOG_FILES.append(log)
        with log.open("w") as out:
            proc = start_process(
                [
                    sys.executable,
                    "-m",
                    "tests.functional.slow_app",
                    str(port),
                    str(workdir),
                    "--server",
                    server,
                    *args,
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        served = Served(proc, port, workdir, log, server)
        started.append(served)

        def ready() -> bool:
            if proc.poll() is not None:
                pytest.fail(f"the server exited:\n{served.output()}")
            try:
                return requests.get(f"{served.url}/pid", timeout=2).status_code == 200
            except requests.RequestException:  # not listening yet, or still starting
                return False

        if wait:
            poll(ready, 60, "the server answers")
        return served

    yield start
    for served in started:
        for name in ("a", "b", "c"):
            served.release(name)
        kill(served.proc)


def access_lines(served: Served) -> list[dict[str, Any]]:
    """Return the JSON access lines the server wrote."""
    out = []
    for line in served.output().splitlines():
        if line.startswith("{") and '"request_id"' in line:
            out.append(json.loads(line))
    return out


def assert_drains(served: Served, names: tuple[str, ...]) -> None:
    """SIGTERM with ``names`` in flight: refused at once, answered in full, exit 0."""
    threads = [served.start_slow(name) for name in names]
    served.proc.send_signal(signal.SIGTERM)
    poll(lambda: refused(served.port), DEADLINE, "new connections are refused")
    assert served.proc.poll() is None, "the server must wait for its requests in flight"
    for name in names:
        served.release(name)
    for thread in threads:
        thread.join(timeout=90)
    for name in names:
        r = served.responses[name]
        assert isinstance(r, requests.Response), r
        assert r.status_code == 200 and r.content == BODY, name
        if served.server == "granian":  # waitress closes the connection without saying so
            assert r.headers["Connection"] == "close"
    assert served.proc.wait(timeout=60) == 0, served.output()
    slow = [line for line in access_lines(served) if line["path"] == "/slow"]
    assert sorted(line["query"] for line in slow) == sorted(names)
    assert all(line["status"] == 200 and line["bytes"] == len(BODY) for line in slow)


def test_sigterm_finishes_the_requests_in_flight(serve: Any) -> None:
    served = serve()
    with requests.Session() as idle:  # an idle keep-alive connection does not delay the stop
        assert idle.get(f"{served.url}/pid", timeout=10).status_code == 200
        assert_drains(served, ("a", "b"))


# waitress serves one process: --workers is granian's.
GRANIAN_ONLY = pytest.mark.parametrize("serve", ["granian"], indirect=True)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="--workers forks its worker processes")
@GRANIAN_ONLY
def test_sigterm_finishes_the_requests_in_flight_with_workers(serve: Any) -> None:
    assert_drains(serve("--workers", "2"), ("a",))


def test_no_request_carries_the_settings(serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLOW_APP_SECRET", "s3cret-value")
    served = serve()
    names = requests.get(f"{served.url}/environ", timeout=10).text.split("\n")
    assert "SLOW_APP_SECRET" not in names
    # granian does copy the process's environment (waitress does not): the worker forgot it.
    assert ("PATH" in names) == (served.server == "granian")


def test_the_grace_period_bounds_the_wait(serve: Any) -> None:
    served = serve("--grace", "1")
    thread = served.start_slow("c")  # never released
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=60) == 0, served.output()
    thread.join(timeout=30)
    assert not isinstance(served.responses.get("c"), requests.Response)
    # Said in a JSON line, as every line the services write (granian's own included).
    [line] = [line for line in served.output().splitlines() if UNFINISHED[served.server] in line]
    assert json.loads(line)["level"] == "WARNING"


@GRANIAN_ONLY
def test_sigterm_stops_a_worker_still_loading_its_app(serve: Any) -> None:
    """granian installs a worker's signal handlers once its app is loaded: a stop asked before
    must not be lost (the worker would serve on, to be killed when the grace period ends).
    Nor may a worker that stopped at once be reported as refusing, however late the
    supervisor's threads run (``--slow-reap``: granian waits for it in two)."""
    served = serve("--hold-load", "--slow-reap", "--grace", "60", wait=False)
    poll((served.workdir / "loading").exists, DEADLINE, "the worker loading its app")
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=DEADLINE) == 0, served.output()
    assert "refused to gracefully stop" not in served.output()


@GRANIAN_ONLY
def test_sigterm_stops_a_worker_just_forked(serve: Any) -> None:
    """A stop asked before a worker, just forked, has run any of its own code (the scheduler
    runs a new process late on a loaded machine) is not lost either: it takes effect as soon as
    the worker runs."""
    served = serve("--slow-fork", "--grace", "5", wait=False)
    poll((served.workdir / "forked").exists, DEADLINE, "a worker just forked")
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=DEADLINE) == 0, served.output()
    assert "refused to gracefully stop" not in served.output()
    assert not (served.workdir / "loading").exists()  # it stopped before loading its app


@GRANIAN_ONLY
def test_a_worker_that_stopped_is_not_killed(serve: Any) -> None:
    """granian's supervisor waits for each worker in two threads: one that stopped is known
    stopped to both, however late the thread that reaped it runs (``--slow-reap``)."""
    served = serve("--slow-reap", "--workers", "2", "--grace", "20")
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=DEADLINE) == 0, served.output()
    assert "refused to gracefully stop" not in served.output()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="--workers forks its worker processes")
@GRANIAN_ONLY
def test_metrics_add_up_every_worker(serve: Any) -> None:
    served = serve("--workers", "2")
    pids: set[str] = set()
    sent = 0
    while len(pids) < 2 and sent < 400:  # new connections, accepted by either worker
        pids.add(
            requests.get(f"{served.url}/pid", headers={"Connection": "close"}, timeout=10).text
        )
        sent += 1
    assert len(pids) == 2, "one worker served every request"

    def counted() -> float:
        text = requests.get(f"{served.url}/metrics", timeout=10).text
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if s.name == "artcat_http_requests_total" and s.labels["route"] == "/pid":
                    return s.value
        return 0

    # The ready check of the fixture asked /pid once more. Workers publish each second, and the
    # worker answering /metrics adds its own live count to the others' last published ones, so
    # two reads a moment apart may differ: wait for the exact total (each request counted once,
    # by the worker that served it), which a double count would never reach.
    poll(lambda: counted() == sent + 1, DEADLINE, "the metrics of both workers, exactly")
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=60) == 0, served.output()


# An idle `artcat serve` stops in well under a second; it took 8-15 s when the embedded Redis's
# shutdown was retried with backoff. This deadline catches that, with ample room for a slow CI.
IDLE_STOP_DEADLINE = 5.0


@pytest.mark.parametrize("server", ["waitress", "granian"])
def test_an_idle_server_stops_before_the_deadline(tmp_path: Path, server: str) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(INSTANCE_DIR=str(tmp_path / "instance"), PYTHONUNBUFFERED="1")
    log = tmp_path / "out.log"
    log_secrets.LOG_FILES.append(log)
    with log.open("w") as out:
        proc = start_process(
            [
                sys.executable,
                "-m",
                "artcat",
                "serve",
                "all",
                "--no-demo",
                "--server",
                server,
                "--port",
                str(port),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
    url = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            if proc.poll() is not None:
                pytest.fail(f"the server exited:\n{log.read_text()}")
            try:
                return requests.get(f"{url}/healthz", timeout=2).ok
            except requests.RequestException:
                return False

        poll(ready, 90, "the server answers")
        with requests.Session() as keep_alive:  # an idle keep-alive connection stays open
            assert keep_alive.get(f"{url}/api/status", timeout=10).status_code == 200
            proc.send_signal(signal.SIGTERM)
            sent = time.monotonic()
            try:
                code = proc.wait(timeout=IDLE_STOP_DEADLINE)
            except subprocess.TimeoutExpired:  # how late it stops, if at all, and its log
                try:
                    proc.wait(timeout=30)
                    late = f"stopped {time.monotonic() - sent:.1f}s"
                except subprocess.TimeoutExpired:
                    late = "still running 35s"
                pytest.fail(
                    f"{late} after SIGTERM (deadline {IDLE_STOP_DEADLINE}s):\n{log.read_text()}"
                )
            assert code == 0, log.read_text()
        assert refused(port)
    finally:
        kill(proc)
