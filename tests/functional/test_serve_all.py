"""`artcat serve all` with no configuration, as a user runs it after `make run`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.functional.process_support import free_port, start_process, terminate

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Start `artcat serve all` in a fresh instance folder; yield its URL and output."""
    instance = tmp_path_factory.mktemp("serve-all")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(INSTANCE_DIR=str(instance), PYTHONUNBUFFERED="1")
    log = instance / "out.log"
    with log.open("w") as out:
        proc = start_process(
            [sys.executable, "-m", "artcat", "serve", "all", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=Path(__file__).resolve().parents[2],
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"serve all exited early:\n{log.read_text()}")
            try:
                if requests.get(f"{url}/healthz", timeout=1).ok:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"serve all did not answer in 90s:\n{log.read_text()}")
            time.sleep(0.2)
        yield url, log.read_text()
    finally:
        terminate(proc, timeout=20)


def test_printed_credentials_reach_every_artist(served: tuple[str, str]) -> None:
    url, output = served
    client_id = re.search(r"client_id:\s+(\S+)", output)
    client_secret = re.search(r"client_secret:\s+(\S+)", output)
    assert client_id and client_secret, output
    assert "curl" in output and f"{url}/api/tokens/xapp_token" in output
    r = requests.post(
        f"{url}/api/tokens/xapp_token",
        data={"client_id": client_id[1], "client_secret": client_secret[1]},
        timeout=10,
    )
    assert r.status_code == 201, r.text
    headers = {"X-Xapp-Token": r.json()["token"]}
    root = requests.get(f"{url}/api", timeout=10).json()
    template = root["_links"]["artists"]["href"]
    first = template.split("{")[0] + "?total_count=1&size=7"
    next_url: str | None = first
    seen: list[str] = []
    total = None
    while next_url:
        page = requests.get(next_url, headers=headers, timeout=10).json()
        total = page["total_count"]
        seen += [a["id"] for a in page["_embedded"]["artists"]]
        next_url = page["_links"].get("next", {}).get("href")
    assert total and len(seen) == total == len(set(seen))
    one = requests.get(f"{url}/api/artists/{seen[0]}", headers=headers, timeout=10)
    assert one.status_code == 200 and one.json()["id"] == seen[0]


def test_startup_says_where_to_go_not_how_it_migrated(served: tuple[str, str]) -> None:
    url, output = served
    assert f"point a browser at {url}/" in output
    assert re.search(r"demo user .*: \S+@\S+ / \S+", output), output
    assert "alembic" not in output and "Running upgrade" not in output, output
