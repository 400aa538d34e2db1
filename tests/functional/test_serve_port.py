"""``artcat serve`` on a port it cannot have: one line, before any banner or credential."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from common.serve import port_problem

pytestmark = pytest.mark.functional

ROOT = Path(__file__).resolve().parents[2]
ARTCAT = str(Path(sys.executable).with_name("artcat"))


def test_a_busy_port_is_one_line_and_nothing_else(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "REDIS_"))},
            "INSTANCE_DIR": str(tmp_path / "instance"),
        }
        done = subprocess.run(
            [ARTCAT, "serve", "all", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"Error: port {port} on 127.0.0.1 is already in use (another artcat serve?): "
        "stop it, or choose another port with --port N"
    ]
    # Nothing was set up: no database migrated, no demo account made to print.
    assert not (tmp_path / "instance" / "artcat.sqlite3").exists()


def test_port_problem() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert "already in use" in (port_problem("127.0.0.1", port) or "")
    assert port_problem("127.0.0.1", port) is None  # free again
    assert "not an address" in (port_problem("no-such-host.invalid", 8000) or "")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_passes_port_and_host() -> None:
    dry = subprocess.run(
        ["make", "-n", "run", "PORT=9123", "HOST=127.0.0.2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert any(
        "artcat serve all" in line and "--port 9123" in line and "--host 127.0.0.2" in line
        for line in dry
    ), dry
