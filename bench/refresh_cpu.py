"""The CPU time of one refresh-token grant, in-process: the auth server's WSGI app called
directly (no network, no server), each refresh presenting the token the one before it got.

Prints the CPU time per refresh of this thread (``time.thread_time``: the database server,
Redis and the neighbours left out) for ``refresh`` (scope ``offline_access``) and ``refresh +
ID token`` (``openid`` too, and a sign-in time: an ES256 ID token each time). ``--profile`` adds
a cProfile of one of them. Stores: the environment's (``DATABASE_URL``/``REDIS_URL``, else
SQLite and the embedded Redis)::

    python -m bench.refresh_cpu [-n 500] [--profile refresh|openid]

On a shared machine even CPU time moves with the neighbours (caches, a busy core). ``--compare
CHECKOUT`` measures this checkout and another (a worktree of the code before a change) at the
same moment: two processes pinned to the same core, refreshing for the same ``--seconds``, each
run; it prints each one's CPU time per refresh and their ratio, run by run and the medians::

    python -m bench.refresh_cpu --compare ../before --runs 3 --seconds 8
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from bench.refresh_bench import prepare, seed
from common.settings import AuthSettings

PATH = "/oauth2/access_token"
SCOPES = {"refresh": "offline_access", "openid": "offline_access openid"}


def environ(body: bytes) -> dict[str, Any]:
    """Return a WSGI environ for a form POST to the token endpoint from a loopback client."""
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": PATH,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
    }


class Chain:
    """A chain of refreshes: each presents the token the one before it got."""

    def __init__(self, app: Callable[..., Any], form: str, token: str) -> None:
        self.app = app
        self.form = form
        self.token = token

    def step(self) -> None:
        """Refresh once."""
        status: list[str] = []
        env = environ((self.form + self.token).encode())
        result = self.app(env, lambda s, _h, _e=None: status.append(s))
        body = b"".join(result)
        if hasattr(result, "close"):
            result.close()
        if not status[0].startswith("200"):
            sys.exit(f"refresh failed: {status[0]} {body!r}")
        self.token = orjson.loads(body)["refresh_token"]


def chains(settings: AuthSettings, names: list[str]) -> dict[str, Chain]:
    """Build the auth server's app, an application and a user; return a chain per scenario,
    warmed up (the first requests start the background work and make the signing keys)."""
    from auth_server.app import create_app

    app = create_app(settings)
    client_id, secret, app_id, user_id = prepare(settings)
    form = f"grant_type=refresh_token&client_id={client_id}&client_secret={secret}&refresh_token="
    found = {
        name: Chain(app, form, seed(settings, app_id, user_id, 1, SCOPES[name])[0])
        for name in names
    }
    for chain in found.values():
        for _ in range(50):
            chain.step()
    return found


def race(scenario: str, start_at: float, seconds: float) -> None:
    """Refresh from ``start_at`` for ``seconds`` (``--compare``'s worker); print JSON."""
    os.environ.setdefault("ACCESS_LOG", "0")
    chain = chains(AuthSettings.from_env(), [scenario])[scenario]
    while time.time() < start_at:
        time.sleep(0.005)
    count, cpu, end = 0, time.thread_time(), start_at + seconds
    while time.time() < end:
        chain.step()
        count += 1
    print(json.dumps({"count": count, "cpu_us": (time.thread_time() - cpu) / count * 1e6}))


def compare(args: argparse.Namespace) -> None:
    """Run this checkout and ``args.compare`` at once on one core, scenario by scenario."""
    settings = AuthSettings.from_env()
    here = Path(__file__).resolve().parents[1]
    checkouts = {"this": here, "before": Path(args.compare).resolve()}
    env = dict(os.environ, SECRET_KEY=settings.secret_key, ACCESS_LOG="0")
    pin = ["taskset", "-c", "0"] if sys.platform.startswith("linux") else []
    with tempfile.TemporaryDirectory(prefix="refresh-cpu-") as scratch:
        for scenario in args.only or list(SCOPES):
            ratios, costs = [], {name: [] for name in checkouts}
            for run in range(args.runs):
                start = time.time() + args.setup
                procs = {}
                for name, checkout in checkouts.items():
                    # SQLite: an instance of its own each (one database file would make each
                    # process wait for the other's writes); PostgreSQL: the one database.
                    own = dict(env, PYTHONPATH=str(checkout))
                    if settings.embedded_redis:
                        own["INSTANCE_DIR"] = str(Path(scratch, name))
                    argv = [sys.executable, str(Path(__file__).resolve()), "--race", scenario]
                    argv += [str(start), str(args.seconds)]
                    procs[name] = subprocess.Popen(
                        pin + argv, env=own, cwd=checkout, stdout=subprocess.PIPE, text=True
                    )
                got = {}
                for name, proc in procs.items():
                    out, _ = proc.communicate()
                    if proc.returncode:
                        sys.exit(f"{name} failed")
                    got[name] = json.loads(out.strip().splitlines()[-1])
                    costs[name].append(got[name]["cpu_us"])
                ratios.append(got["this"]["cpu_us"] / got["before"]["cpu_us"])
                print(
                    f"{scenario} run {run + 1}: this {got['this']['cpu_us']:.0f} us "
                    f"({got['this']['count']} refreshes), before {got['before']['cpu_us']:.0f} us "
                    f"({got['before']['count']}), ratio {ratios[-1]:.2f}",
                    flush=True,
                )
            print(
                f"{scenario}: median this {statistics.median(costs['this']):.0f} us, before "
                f"{statistics.median(costs['before']):.0f} us, ratio "
                f"{statistics.median(ratios):.2f} (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )


def main() -> None:
    """Print the CPU time per refresh of each scenario, and optionally a profile."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    add = parser.add_argument
    add("-n", type=int, default=500, help="refreshes per run")
    add("--runs", type=int, default=5, help="runs per scenario (best kept; --compare: median)")
    add("--profile", choices=list(SCOPES), help="profile a scenario")
    add("--only", choices=list(SCOPES), action="append", help="run this scenario only")
    add("--compare", metavar="CHECKOUT", help="measure another checkout at the same time")
    add("--seconds", type=float, default=8.0, help="--compare: seconds of each run")
    add("--setup", type=float, default=40.0, help="--compare: seconds left to start up")
    add("--race", nargs=3, metavar=("SCENARIO", "START", "SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.race:
        race(args.race[0], float(args.race[1]), float(args.race[2]))
        return
    if args.compare:
        compare(args)
        return
    os.environ.setdefault("ACCESS_LOG", "0")
    found = chains(AuthSettings.from_env(), args.only or list(SCOPES))
    for name, chain in found.items():
        best = float("inf")
        walls = []
        for _ in range(args.runs):
            started, wall = time.thread_time(), time.perf_counter()
            for _ in range(args.n):
                chain.step()
            best = min(best, (time.thread_time() - started) / args.n)
            walls.append((time.perf_counter() - wall) / args.n)
        print(
            f"{name:<8} CPU {best * 1e6:7.0f} us/refresh ({1 / best:,.0f}/s of CPU), "
            f"wall best {min(walls) * 1e6:.0f} us"
        )
    if args.profile:
        chain = found[args.profile]
        profile = cProfile.Profile(time.thread_time)
        profile.enable()
        for _ in range(args.n):
            chain.step()
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(os.environ.get("SORT", "tottime")).print_stats(
            int(os.environ.get("TOP", "40"))
        )
        print(out.getvalue())


if __name__ == "__main__":
    main()
