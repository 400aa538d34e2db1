"""Scaling behind the edge: the catalog and XAPP issuance through nginx, 1 and 2 processes.

Runs the shipped deploy/nginx.conf (rendered as the tests render it: only its ports and
upstream servers replaced) in Debian's nginx, twice: in front of one auth and one catalog
process, and in front of two of each. Each process is ``artcat serve SERVICE`` (granian, one
worker), confined to one core (the first of each kind to core 0, the second to core 1). wrk
loads the edge; every path runs ``--runs`` times, interleaved, and the medians are printed as
markdown. One process straight, without the edge, is measured too: what the edge costs.

On the configured stores (DATABASE_URL, REDIS_URL; SQLite and the embedded Redis cannot be
shared by processes started apart). The demo catalog is loaded when the catalog is empty.

    python -m bench.edge_scaling --duration 5 --runs 3
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from redis import Redis

from bench.fixture import prepare, xapp_token
from bench.harness import Server, children, free_port, machine, measure, run_wrk, serve
from bench.http_bench import environment
from bench.scenarios import Request, Scenario
from common.settings import AuthSettings
from tests.edge_config import render


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per wrk run")
    parser.add_argument("--runs", type=int, default=3, help="runs per path (medians kept)")
    parser.add_argument("--connections", type=int, default=32)
    return parser.parse_args(argv)


@contextlib.contextmanager
def edge(upstreams: dict[str, list[str]], folder: Path) -> Iterator[Server]:
    """Run deploy/nginx.conf in front of ``upstreams``; yield it as a server to load."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    folder.mkdir(parents=True)
    port, internal = free_port(), free_port()
    (folder / "edge.conf").write_text(render(port, internal, upstreams))
    user = "user root;\n" if os.geteuid() == 0 else ""
    temp = " ".join(
        f"{kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # The edge's access log off: the figures are of the path, not of a log file's disk.
    conf = (
        (folder / "edge.conf")
        .read_text()
        .replace("access_log /dev/stdout artcat_edge;", "access_log off;")
    )
    (folder / "edge.conf").write_text(conf)
    (folder / "nginx.conf").write_text(
        f"{user}daemon off;\nworker_processes 2;\npid {folder / 'nginx.pid'};\n"
        f"error_log {folder / 'error.log'} warn;\nevents {{ worker_connections 1024; }}\n"
        f"http {{ {temp}\n  include {folder / 'edge.conf'};\n}}\n"
    )
    argv = [binary, "-p", str(folder), "-c", str(folder / "nginx.conf")]
    argv += ["-e", str(folder / "error.log")]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((folder / "error.log").read_text())
            time.sleep(0.05)
        yield Server("edge", proc, f"http://127.0.0.1:{port}")
    finally:
        proc.send_signal(signal.SIGQUIT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def published(settings: AuthSettings) -> list[str]:
    """Return the ids of up to 1,000 published artworks."""
    from sqlalchemy import select

    from common.db import make_engine, make_sessionmaker
    from common.models import Artwork

    engine = make_engine(settings)
    try:
        with make_sessionmaker(engine)() as session:
            query = select(Artwork.id).where(Artwork.published).order_by(Artwork.id).limit(1000)
            return list(session.scalars(query))
    finally:
        engine.dispose()


def cpu_seconds(pids: list[int]) -> float:
    """Return the CPU seconds (user and system) of processes and their descendants."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        total += cpu_seconds(children(pid))
    return total


def redis_cpu(redis: Redis) -> float:
    """Return the CPU seconds the Redis server has used (user and system)."""
    info = redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def host_port(server: Server) -> str:
    """Return a server's ``host:port``."""
    return server.url.removeprefix("http://")


def main(argv: list[str] | None = None) -> None:
    """Start the processes and both edges, load them, print the medians."""
    args = parse_args(argv)
    settings = AuthSettings.from_env()
    if settings.embedded_redis or not settings.database_url:
        sys.exit("set DATABASE_URL and REDIS_URL: processes started apart share those stores")
    fx = prepare(settings)
    if not fx.artwork_ids:
        from artcat.launch import first_start

        first_start(settings, load_demo_data=True)
        fx = prepare(settings)
    fx.artwork_ids = published(settings)  # a 404 would count as an error
    env = environment(settings)
    print(machine(settings))
    servers: dict[str, Server] = {}
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        for name, service, core in (
            ("auth-1", "auth", "0"),
            ("auth-2", "auth", "1"),
            ("resource-1", "resource", "0"),
            ("resource-2", "resource", "1"),
        ):
            servers[name] = serve(name, service, 1, env, core)
            stack.callback(servers[name].stop)
        one = stack.enter_context(
            edge(
                {
                    "auth": [host_port(servers["auth-1"])],
                    "resource": [host_port(servers["resource-1"])],
                },
                Path(tmp) / "one",
            )
        )
        two = stack.enter_context(
            edge(
                {
                    "auth": [host_port(servers[f"auth-{n}"]) for n in (1, 2)],
                    "resource": [host_port(servers[f"resource-{n}"]) for n in (1, 2)],
                },
                Path(tmp) / "two",
            )
        )
        targets = {"1 process, no edge": servers["resource-1"], "edge, 1": one, "edge, 2": two}
        fx.xapp_token = xapp_token(one.url, fx)
        auth = {"X-Xapp-Token": fx.xapp_token}
        items: list[Request] = [("GET", f"/api/artworks/{i}", auth, None) for i in fx.artwork_ids]
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        body = f"client_id={fx.client_id}&client_secret={fx.client_secret}"
        xapp: list[Request] = [("POST", "/api/tokens/xapp_token", form, body)]
        c = args.connections
        scenarios = [Scenario(f"artwork, {name}", name, items, c) for name in targets]
        auth_targets = {
            "auth, no edge": servers["auth-1"],
            "auth edge, 1": one,
            "auth edge, 2": two,
        }
        scenarios += [Scenario(f"xapp, {name}", name, xapp, c) for name in auth_targets]
        medians, _ = measure(
            scenarios,
            {**targets, **auth_targets},
            runs=args.runs,
            duration=args.duration,
            core=None,
        )
        # What one catalog request costs each tier in CPU, over one more run through the edge
        # with two processes: the catalog processes, nginx, Redis (a Redis of the benchmark's
        # own, or the figure includes its other clients' work). CPU time, unlike a rate, does
        # not move much with the machine's other load.
        redis = Redis.from_url(settings.redis_url)
        tiers = {
            "catalog processes": [servers["resource-1"].proc.pid, servers["resource-2"].proc.pid],
            "nginx": [two.proc.pid],
        }
        before = {name: cpu_seconds(pids) for name, pids in tiers.items()}
        before["Redis"] = redis_cpu(redis)
        extra = run_wrk(scenarios[2], two.url, args.duration, None, [])
        after = {name: cpu_seconds(pids) for name, pids in tiers.items()}
        after["Redis"] = redis_cpu(redis)
    print(f"\nCPU per catalog request through the edge ({extra['rps']:,.0f}/s in that run):")
    for name in after:
        print(f"- {name}: {(after[name] - before[name]) / extra['requests'] * 1e6:.0f} µs")
    print(f"\n| path ({c} connections) | requests/s | p50 ms | p99 ms | errors |")
    print("|---|---:|---:|---:|---:|")
    for name, fig in medians.items():
        errors = int(fig["status_errors"] + fig["socket_errors"])
        print(f"| {name} | {fig['rps']:,.0f} | {fig['p50']:.1f} | {fig['p99']:.1f} | {errors} |")


if __name__ == "__main__":
    main()
