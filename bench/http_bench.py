"""HTTP benchmark: the catalog and the auth server side by side with a falcon hello-world.

Starts the services as production serves them (``artcat serve SERVICE --workers N``, under
granian unless ``--server waitress``) and the baseline on the same server and cores, loads
them with wrk (Debian package ``wrk``) and prints a markdown report: each path's median
requests a second and latency, its ratio to the baseline measured in the same run, and the
targets. Two serving setups, as on a 2-core machine:

- ``pinned``: one worker pinned to core 0, wrk pinned to core 1 (the server's throughput, not
  the load generator's);
- ``2 workers``: one worker per core, wrk sharing the cores (what one machine serves in all).

Data: the database of the environment (``DATABASE_URL``/``INSTANCE_DIR``, as ``artcat`` reads
them) holding the museums' import (``make bench-data``); the deep-cursor path needs more than
100,000 artworks. A benchmark application (rate limit lifted) and user are added on each run.

    python -m bench.http_bench                  # everything
    python -m bench.http_bench --only catalog --duration 5 --runs 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from bench import report
from bench.auth_timings import credentials_grant, throttle_in_process
from bench.fixture import DEEP, Fixture, deep_cursor, prepare, xapp_token
from bench.harness import Spec, machine, measure, running
from bench.scenarios import Scenario, auth_scenarios, before, catalog_scenarios, only_paths
from common.settings import AuthSettings

SERVERS = ["granian", "waitress"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n", 1)[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--duration", type=int, default=8, help="seconds per wrk run")
    add("--runs", type=int, default=3, help="runs per path (the median is kept)")
    add("--only", choices=["catalog", "auth"], help="one part only")
    add("--skip-2workers", action="store_true", help="pinned setup only")
    add("--skip-deep", action="store_true", help="no deep-cursor path")
    add(
        "--compare",
        metavar="CHECKOUT",
        help="also serve the catalog from another checkout (a worktree of main: the code before "
        "a change), each of its paths run next to this one's, marked (before)",
    )
    add("--server", choices=SERVERS, default="granian", help="the services' and baseline's server")
    add("--threads", type=int, help="the services' threads (default: each service's own)")
    add(
        "--compare-threads",
        type=int,
        metavar="N",
        help="serve the --compare checkout's catalog with N threads (--compare . compares "
        "thread counts of this checkout, in the same run)",
    )
    add(
        "--compare-server",
        choices=SERVERS,
        help="serve the --compare checkout's catalog with this server (--compare . compares "
        "the two servers on this checkout, in the same run; the baseline is --server's)",
    )
    add(
        "--paths",
        metavar="NAMES",
        help="only the catalog paths whose names start with one of these (comma-separated; "
        "the baseline at 32 connections is always run), e.g. 'list,search uncached'",
    )
    return parser.parse_args(argv)


def environment(settings: AuthSettings) -> dict[str, str]:
    """The servers' environment: this one's stores, quiet access logs, XAPP throttle lifted."""
    env = dict(os.environ)
    env.setdefault("INSTANCE_DIR", str(settings.instance_dir))
    env.setdefault("SECRET_KEY", settings.secret_key)
    env["ACCESS_LOG"] = env.get("ACCESS_LOG", "0")  # the figures are of the service, not stderr
    # XAPP issuance is measured flat out from one client and one address: lift its throttle.
    env.setdefault("XAPP_ATTEMPTS_PER_CLIENT", "100000000/minute")
    env.setdefault("XAPP_ATTEMPTS_PER_IP", "100000000/minute")
    return env


def specs(args: argparse.Namespace, workers: int) -> list[Spec]:
    """The servers one setup needs."""
    out = [Spec("auth", "auth", workers)]
    if args.only == "auth":
        return out
    out += [
        Spec("resource", "resource", workers),
        Spec("uncached", "resource", workers, {"DOCUMENT_CACHE_SIZE": "0"}),
        Spec("baseline", "baseline", workers),
    ]
    if args.compare:
        path = {"PYTHONPATH": str(Path(args.compare).resolve())}
        for name, extra in (("resource", {}), ("uncached", {"DOCUMENT_CACHE_SIZE": "0"})):
            served = (args.compare_server, args.compare_threads)
            out.append(Spec(f"{name}-before", "resource", workers, {**path, **extra}, *served))
    return out


def scenarios(args: argparse.Namespace, fx: Fixture) -> list[Scenario]:
    """The paths one setup runs."""
    out: list[Scenario] = []
    if args.only != "auth":
        out += catalog_scenarios(fx)
        if args.compare:
            out += before(catalog_scenarios(fx))
    if args.paths:
        out = only_paths(out, args.paths)
    if args.only != "catalog":
        out += auth_scenarios(fx)
    return out


def run_setup(
    args: argparse.Namespace,
    settings: AuthSettings,
    fx: Fixture,
    setup: tuple[str, int, int | None],
) -> list[str]:
    """Start one setup's servers, measure its paths, and return its part of the report."""
    title, workers, core = setup
    server_cores = None if core is None else str(1 - core)  # the core wrk does not use
    env = environment(settings)
    with running(
        specs(args, workers), env=env, cores=server_cores, server=args.server, threads=args.threads
    ) as servers:
        fx.xapp_token = xapp_token(servers["auth"].url, fx)
        if args.only != "auth" and not fx.deep_path and fx.artworks > DEEP and not args.skip_deep:
            print("walking to the deep cursor ...", file=sys.stderr)
            fx.deep_path = deep_cursor(servers["resource"].url, fx.xapp_token)
        cred = throttle = None
        if args.only != "catalog" and workers == 1:
            # Before the sign-in flood, which throttles this client's address.
            cred = credentials_grant(servers["auth"].url, fx, settings)
            throttle = throttle_in_process(settings, fx)
        print(f"{title}:", file=sys.stderr)
        res, runs = measure(
            scenarios(args, fx), servers, runs=args.runs, duration=args.duration, core=core
        )
        rss = {name: s.peak_rss for name, s in servers.items()}
    return report.setup_section(title, res, runs, report.setup_notes(rss, cred, throttle))


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print a markdown report."""
    args = parse_args(argv)
    if not shutil.which("wrk"):
        sys.exit("wrk is needed: apt-get install -y wrk")
    settings = AuthSettings.from_env()
    info = machine(settings)
    fx = prepare(settings)
    threads = args.threads or "the services' default"
    out = report.machine_section(
        info,
        [
            f"- artworks in the catalog: {fx.artworks:,}",
            f"- {args.runs} runs of {args.duration:g} s per path, medians; wrk 2 threads",
            f"- services and baseline served by {args.server}; threads: {threads}",
        ],
    )
    setups: list[tuple[str, int, int | None]] = [
        ("pinned: 1 worker on core 0, wrk on core 1", 1, 1)  # (title, workers, wrk's core)
    ]
    if not args.skip_2workers:
        setups.append(("2 workers (one per core), wrk on the same cores", 2, None))
    for setup in setups:
        out += run_setup(args, settings, fx, setup)
    print("\n".join(out))


if __name__ == "__main__":
    main()
