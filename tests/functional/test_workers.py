"""`artcat serve resource --workers 2`: granian's worker processes sharing one port, each
pinned to a core of its own, a killed one replaced by granian, all ended with their supervisor
however it ends."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.functional.process_support import free_port, kill, poll, start_process, terminate

pytestmark = pytest.mark.functional
DEADLINE = 30.0  # a hang guard


def children_of(pid: int) -> list[int]:
    """Return the pids of a process's children (from /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def workers_of(pid: int) -> list[int]:
    """Return the live worker processes (not the embedded Redis) of a serve process."""
    out = []
    for child in children_of(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # it exited while we looked
            continue
        if b"redis-server" not in cmdline and state != "Z":
            out.append(child)
    return out


def started_at(pid: int) -> int | None:
    """Return when a process started (clock ticks after boot), None once it has ended (a
    zombie has): with its pid, it names one process, whatever process gets the pid later."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else int(fields[19])


def serve_with_workers(tmp_path: Path, service: str, port: int) -> subprocess.Popen[bytes]:
    """Start `artcat serve SERVICE` on granian with two workers (the embedded stores)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(INSTANCE_DIR=str(tmp_path), PYTHONUNBUFFERED="1")
    with (tmp_path / "out.log").open("w") as log:
        return start_process(
            [
                sys.executable,
                "-m",
                "artcat",
                "serve",
                service,
                "--no-demo",
                "--workers",
                "2",
                "--server",
                "granian",
                "--port",
                str(port),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=Path(__file__).resolve().parents[2],
        )


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs Linux CPU affinity")
def test_workers_are_pinned_share_the_port_and_are_supervised(tmp_path: Path) -> None:
    port = free_port()
    proc = serve_with_workers(tmp_path, "resource", port)
    url = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            try:
                return requests.get(f"{url}/readyz", timeout=1).status_code == 200
            except requests.ConnectionError:
                return proc.poll() is not None

        poll(ready, 60, "the server answers (or exits)", interval=0.1)
        assert proc.poll() is None, (tmp_path / "out.log").read_text()
        poll(lambda: len(workers_of(proc.pid)) == 2, DEADLINE, "two workers", interval=0.1)
        workers = workers_of(proc.pid)
        pinned = [os.sched_getaffinity(w) for w in workers]
        assert all(len(cores) == 1 for cores in pinned)
        if len(os.sched_getaffinity(0)) > 1:
            assert pinned[0] != pinned[1]  # one core each
        for _ in range(20):
            assert requests.get(f"{url}/api/status", timeout=5).status_code == 200

        os.kill(workers[0], signal.SIGKILL)  # a dead worker is replaced

        def replaced() -> bool:
            return len(workers_of(proc.pid)) == 2 and workers[0] not in workers_of(proc.pid)

        poll(replaced, DEADLINE, "the killed worker replaced", interval=0.1)
        poll(ready, DEADLINE, "the server answers again", interval=0.1)

        # The replacement takes the dead worker's core: still one core each. A new worker pins
        # itself just after it is forked, so wait for it to have done so.
        def one_core_each() -> bool:
            try:
                pinned = [os.sched_getaffinity(w) for w in workers_of(proc.pid)]
            except OSError:  # a worker exited while we looked
                return False
            distinct = len(os.sched_getaffinity(0)) == 1 or len(set(map(frozenset, pinned))) == 2
            return len(pinned) == 2 and all(len(cores) == 1 for cores in pinned) and distinct

        poll(one_core_each, DEADLINE, "two workers pinned to a core each", interval=0.1)
    finally:
        asked = time.monotonic()
        terminate(proc, timeout=20)
        stopped = time.monotonic() - asked
    assert proc.returncode == 0
    # Stopped while the replacement may still be loading its app: it stops too, at once, not
    # at the end of the grace period (SHUTDOWN_GRACE, 10 s), and is not reported as refusing.
    assert stopped < 10, stopped
    assert "refused to gracefully stop" not in (tmp_path / "out.log").read_text()
    assert workers_of(proc.pid) == []


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_workers_end_with_their_supervisor_killed(tmp_path: Path) -> None:
    """A supervisor SIGKILLed (its stop timed out, the OOM killer) stops no worker: each ends
    with it all the same, and none serves the port on."""
    port = free_port()
    proc = serve_with_workers(tmp_path, "all", port)
    try:

        def ready() -> bool:
            assert proc.poll() is None, (tmp_path / "out.log").read_text()
            try:
                return requests.get(f"http://127.0.0.1:{port}/readyz", timeout=1).ok
            except requests.ConnectionError:
                return False

        poll(ready, 90, "the server answers", interval=0.1)
        poll(lambda: len(workers_of(proc.pid)) == 2, DEADLINE, "two workers", interval=0.1)
        workers = {pid: started_at(pid) for pid in workers_of(proc.pid)}
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=DEADLINE) == -signal.SIGKILL

        def all_ended() -> bool:
            # A process is a zombie once its main thread has ended, and holds the port until
            # its last thread has: the port must be refused too.
            if any(started_at(pid) == since for pid, since in workers.items()):
                return False
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return False
            except ConnectionRefusedError:
                return True

        poll(all_ended, 5, "every worker ended with its supervisor, and the port refused")
    finally:
        kill(proc)  # and the embedded Redis it started
