"""A PostgreSQL primary and a streaming replica of the test's own: the primary initdb'd in a
temporary folder on a free loopback port, the replica cloned from it by ``pg_basebackup -R``
into another and started on another free port (both as the ``postgres`` OS user when the
tests run as root). Both are stopped and their folders removed after, whatever happens."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.functional.postgres_support import PgCluster, as_postgres, postgres_bin

STREAM_DEADLINE = 60.0  # seconds for the replica to stream, or to replay the primary's WAL


def start(cluster: PgCluster, *settings: str) -> None:
    """Start a cluster on its port (loopback only, its socket in its folder)."""
    options = [f"-p {cluster.port}", f"-k {cluster.workdir}", "-c listen_addresses=127.0.0.1"]
    options += [f"-c {setting}" for setting in settings]
    cluster.pg_ctl("-o", " ".join(options), "start")


def query(url: str, sql: str) -> object:
    """Run one statement on its own connection (autocommit) and return the first column."""
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        row = conn.execute(sql).fetchone()
    return None if row is None else row[0]


def wait_for(what: str, check: object, deadline: float = STREAM_DEADLINE) -> None:
    """Poll ``check`` (a callable) until it is true; fail naming ``what`` after ``deadline``."""
    assert callable(check)
    until = time.monotonic() + deadline
    while not check():
        if time.monotonic() > until:
            pytest.fail(f"{what} did not happen within {deadline} s")
        time.sleep(0.05)


def caught_up(primary: PgCluster, replica: PgCluster) -> None:
    """Wait until the replica has replayed everything the primary wrote so far."""
    target = query(primary.url, "SELECT pg_current_wal_lsn()::text")
    sql = f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn"
    wait_for("replay on the replica", lambda: query(replica.url, sql) is True)


def start_replica(replica: PgCluster, primary: PgCluster) -> None:
    """Start the replica and wait until the primary streams to it."""
    start(replica, "hot_standby=on", "fsync=off")
    streaming = "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
    wait_for("streaming to the replica", lambda: query(primary.url, streaming) == 1)


@contextlib.contextmanager
def streaming_pair() -> Iterator[tuple[PgCluster, PgCluster]]:
    """Run a primary and its streaming replica until the block ends (skip without binaries)."""
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin")
    if shutil.which("pg_basebackup", path=str(bindir)) is None:
        pytest.skip(f"no pg_basebackup in {bindir}")
    as_user, owner = as_postgres()
    root = Path(tempfile.mkdtemp(prefix="artcat-replicas-"))
    folders = [root / "primary", root / "replica"]
    for folder in (root, *folders):
        folder.mkdir(exist_ok=True)
        if owner is not None:
            os.chown(folder, owner.pw_uid, owner.pw_gid)
    primary = PgCluster(bindir, folders[0], as_user)
    replica = PgCluster(bindir, folders[1], as_user)
    try:
        primary.init()
        # initdb's pg_hba.conf already trusts replication connections from 127.0.0.1.
        start(primary, "wal_level=replica", "max_wal_senders=5", "fsync=off")
        replica.run(
            "pg_basebackup",
            "-h",
            "127.0.0.1",
            "-p",
            str(primary.port),
            "-U",
            "postgres",
            "-D",
            str(replica.data),
            "-R",
            "-X",
            "stream",
            "--no-sync",
        )
        start_replica(replica, primary)
        yield primary, replica
    finally:
        replica.stop()
        primary.stop()
        shutil.rmtree(root, ignore_errors=True)
