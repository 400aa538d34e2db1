"""`artcat serve resource --workers 2`: granian's worker processes sharing one port, each
pinned to a core of its own, a killed one replaced by granian."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.functional.process_support import free_port, poll, start_process, terminate

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


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs Linux CPU affinity")
def test_workers_are_pinned_share_the_port_and_are_supervised(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(INSTANCE_DIR=str(tmp_path), PYTHONUNBUFFERED="1")
    with (tmp_path / "out.log").open("w") as log:
        proc = start_process(
            [
                sys.executable,
                "-m",
                "artcat",
                "serve",
                "resource",
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
    # at the end of the grace period (SHUTDOWN_GRACE, 10 s). (granian may still log a kill of
    # a replacement it had only begun to start: its wait on that process returns at once.)
    assert stopped < 10, stopped
    assert workers_of(proc.pid) == []
