"""A private PostgreSQL cluster of a test's own (initdb in a temporary folder, a free loopback
port), which the test may restart without disturbing anyone."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from glob import glob
from pathlib import Path

import pytest

from tests.functional.process_support import free_port


def postgres_bin() -> Path | None:
    """Return the newest /usr/lib/postgresql/*/bin holding initdb and pg_ctl, if any."""
    for candidate in sorted(glob("/usr/lib/postgresql/*/bin"), reverse=True):
        path = Path(candidate)
        if (path / "initdb").exists() and (path / "pg_ctl").exists():
            return path
    return None


class PgCluster:
    """A PostgreSQL cluster of the test's own (trust auth, loopback, a free port)."""

    def __init__(self, bindir: Path, workdir: Path, as_user: list[str]) -> None:
        self.bindir = bindir
        self.workdir = workdir
        self.data = workdir / "data"
        self.logfile = workdir / "postgres.log"
        self.as_user = as_user
        self.port = free_port()

    @property
    def url(self) -> str:
        """Return the database URL the services use."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def run(self, tool: str, *args: str, timeout: float = 60.0) -> None:
        """Run a PostgreSQL tool as the cluster's owner; fail with its output and the log.

        The output goes to a file, never a pipe: a server started by the tool inherits it.
        """
        out_path = self.workdir / f"{tool}.out"
        with out_path.open("w") as out:
            result = subprocess.run(
                [*self.as_user, str(self.bindir / tool), *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                cwd=self.workdir,
                check=False,
            )
        if result.returncode != 0:
            output = out_path.read_text(errors="replace")
            pytest.fail(f"{tool} {' '.join(args)} failed:\n{output}\n{self.log()}")

    def log(self) -> str:
        """Return the server log."""
        try:
            return self.logfile.read_text(errors="replace")
        except OSError:
            return ""

    def init(self) -> None:
        """Create the cluster (fast settings: this is a throwaway)."""
        self.run(
            "initdb",
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        )

    def pg_ctl(self, *args: str) -> None:
        """Run pg_ctl on the cluster, waiting (up to 60 s) for the operation to complete."""
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.logfile), "-w", "-t", "60", *args)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self.pg_ctl("-o", options, "start")

    def restart(self) -> None:
        """Restart the server (fast shutdown: open sessions are cut) and wait until it is up."""
        self.pg_ctl("-m", "fast", "restart")

    def stop(self) -> None:
        """Stop the server at once (for the finalizer: it never fails)."""
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                [
                    *self.as_user,
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-m",
                    "immediate",
                    "-w",
                    "-t",
                    "30",
                    "stop",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=60,
                check=False,
            )


def as_postgres() -> tuple[list[str], pwd.struct_passwd | None]:
    """Return the command prefix that runs a server tool as the cluster's owner, and that
    owner: as root, the ``postgres`` OS user (initdb refuses root); otherwise this user."""
    if os.geteuid() != 0:
        return [], None
    try:
        owner = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("running as root and there is no postgres OS user to run initdb as")
    runuser = shutil.which("runuser")
    if runuser is None:
        pytest.skip("running as root and there is no runuser to run initdb as postgres")
    return [runuser, "-u", "postgres", "--"], owner


@contextlib.contextmanager
def private_postgres() -> Iterator[PgCluster]:
    """Run a private PostgreSQL cluster until the block ends (skip when it cannot be made).

    initdb refuses to run as root: as root the tools run as the ``postgres`` OS user, in a
    temporary folder that user owns.
    """
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin")
    as_user, owner = as_postgres()
    workdir = Path(tempfile.mkdtemp(prefix="artcat-pg-"))
    if owner is not None:
        os.chown(workdir, owner.pw_uid, owner.pw_gid)
    cluster = PgCluster(bindir, workdir, as_user)
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)
