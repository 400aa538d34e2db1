"""A real nginx running the shipped edge config (``tests.edge_config.render``) on free loopback
ports, in a temporary prefix: one master process in the foreground, its pid file and logs in
the prefix, nothing of the system's nginx used. Skipped where nginx is not installed."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.edge_config import render
from tests.functional import log_secrets
from tests.functional.process_support import end_what_is_left, free_port, poll, start_process


def nginx_binary() -> str | None:
    """Return Debian's nginx (the package ``nginx``), if installed."""
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).exists()), None
    )


@dataclass
class Nginx:
    """A running nginx: its public and internal listeners, and its prefix."""

    proc: subprocess.Popen[bytes]
    port: int
    internal_port: int
    prefix: Path

    @property
    def url(self) -> str:
        """Return the public listener's base URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def internal_url(self) -> str:
        """Return the internal listener's base URL."""
        return f"http://127.0.0.1:{self.internal_port}"

    def error_log(self) -> str:
        """Return nginx's error log so far."""
        path = self.prefix / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def access_log(self) -> str:
        """Return the edge's access lines so far (the config writes them to stdout)."""
        path = self.prefix / "stdout.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.contextmanager
def running_nginx(prefix: Path, upstreams: Mapping[str, Sequence[str]]) -> Iterator[Nginx]:
    """Run deploy/nginx.conf with ``upstreams`` (name -> ``host:port`` of each server) until
    the block ends; stopped (and waited for) even when the block fails."""
    binary = nginx_binary()
    if binary is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx; .ci/run does)")
    prefix.mkdir(parents=True, exist_ok=True)
    port, internal = free_port(), free_port()
    (prefix / "edge.conf").write_text(render(port, internal, upstreams))
    temp = " ".join(
        f"{kind}_temp_path {prefix / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # A master in the foreground with two workers (as production: a worker per core), running
    # as the user that starts it; the shipped file is included where compose's nginx includes
    # it, in the http block.
    # As root, nginx would switch its workers to "nobody", who cannot enter the prefix.
    user = "user root;\n" if os.geteuid() == 0 else ""
    (prefix / "nginx.conf").write_text(
        f"{user}daemon off;\nworker_processes 2;\npid {prefix / 'nginx.pid'};\n"
        f"error_log {prefix / 'error.log'} info;\n"
        "events { worker_connections 512; }\n"
        f"http {{ {temp}\n  include {prefix / 'edge.conf'};\n}}\n"
    )
    command = [binary, "-p", str(prefix), "-c", str(prefix / "nginx.conf")]
    command += ["-e", str(prefix / "error.log")]
    checked = subprocess.run([*command, "-t"], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    # The edge's access and error lines join the end-of-session check for secrets.
    log_secrets.LOG_FILES += [prefix / "stdout.log", prefix / "error.log"]
    with (prefix / "stdout.log").open("ab") as out:
        proc = start_process(command, stdout=out, stderr=subprocess.STDOUT)
    edge = Nginx(proc, port, internal, prefix)

    def listening() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"nginx exited ({proc.returncode}):\n{edge.error_log()}")
        try:
            for each in (port, internal):
                with socket.create_connection(("127.0.0.1", each), timeout=0.5):
                    pass
        except OSError:
            return False
        return True

    try:
        poll(listening, 20, "nginx listens")
        yield edge
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGQUIT)  # graceful: the workers finish what they serve
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        end_what_is_left(proc)  # a worker of a master killed
