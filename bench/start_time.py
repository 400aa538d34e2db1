"""How long ``artcat serve`` takes to start: from the command to its first answer.

A rolling restart, a respawned worker and every test that starts a server pay it. Each run
starts ``python -m artcat serve SERVICE --no-demo`` on a free port of an instance whose schema
is in place (the usual start), polls ``/healthz`` until it answers, and reads the process's
CPU time at that moment (``/proc``: user + system); the figures are the medians of the runs.
``--compare CHECKOUT`` starts another checkout's server (a worktree of main: the code before a
change) in turns with this one's, on the same instance::

    python -m bench.start_time --runs 9 [--compare ../before]

SQLite and the embedded Redis by default; ``DATABASE_URL``/``REDIS_URL`` select servers.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVICES = ("resource", "auth", "all")


def free_port() -> int:
    """Return a loopback port free at the moment."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def python_of(checkout: Path) -> str:
    """Return the checkout's own Python (its virtualenv's), else this one."""
    own = checkout / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def start_once(checkout: Path, service: str, env: dict[str, str]) -> tuple[float, float]:
    """Start one server; return (seconds to its first answer, its CPU seconds by then)."""
    port = free_port()
    command = [python_of(checkout), "-m", "artcat", "serve", service, "--no-demo"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    began = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"{checkout}: artcat serve {service} exited ({proc.returncode})")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                    break
            except OSError:
                time.sleep(0.005)
        took = time.perf_counter() - began
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    finally:
        proc.terminate()  # a graceful stop: the embedded Redis it started stops with it
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
    return took, cpu


def main(argv: list[str] | None = None) -> None:
    """Start the servers in turns and print the medians."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=9, help="starts per service and checkout")
    parser.add_argument("--services", default=",".join(SERVICES), help="comma-separated")
    parser.add_argument("--compare", metavar="CHECKOUT", help="another checkout, in turns")
    args = parser.parse_args(argv)
    checkouts = {"this checkout": REPO}
    if args.compare:
        checkouts["compared"] = Path(args.compare).resolve()
    with tempfile.TemporaryDirectory() as folder:
        envs = {}
        for name, checkout in checkouts.items():  # an instance each: its own embedded Redis
            instance = Path(folder) / name.replace(" ", "-")
            env = {**os.environ, "INSTANCE_DIR": str(instance), "ENVIRONMENT": "development"}
            env.pop("PYTHONPATH", None)
            subprocess.run(  # the schema in place, as at a usual start
                [python_of(checkout), "-m", "artcat", "db", "upgrade"],
                cwd=checkout,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            envs[name] = env
        print(f"{'service':<10} {'checkout':<15} {'to first answer, s':>19} {'CPU, s':>7}")
        for service in args.services.split(","):
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in checkouts}
            for _ in range(args.runs):
                for name, checkout in checkouts.items():
                    runs[name].append(start_once(checkout, service, envs[name]))
            for name, got in runs.items():
                took = statistics.median(t for t, _ in got)
                cpu = statistics.median(c for _, c in got)
                print(f"{service:<10} {name:<15} {took:>19.2f} {cpu:>7.2f}")


if __name__ == "__main__":
    main()
