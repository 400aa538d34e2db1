"""How big the tables stay under sustained issuance with the storage cleanup on.

Serves the auth server (``artcat serve auth``, granian, two workers: each runs a background
cleaner, one at a time cleans) with short lifetimes, issues tokens at a steady rate for a while,
and samples the tables every few seconds. A row lives its lifetime, then the retention, then
waits for the next run: runs are an interval apart, give or take the quarter interval after
which a process looks again, so the wait is half an interval on average and at most about an
interval and a half. Under XAPP tokens (``--grant xapp``) the token table should hold about
``rate x (lifetime + retention + interval / 2)`` rows, never much more than
``rate x (lifetime + retention + 1.5 x interval)``. Under refresh-token grants (``--grant
refresh``: chains of rotations whose clients go away after a while, ``bench.cleanup_refresh``)
the access tokens, the refresh tokens and their families each have an estimate of that form.
Prints a markdown report: the machine, the settings, the samples, each table's steady state
against its estimate, and the cleaner's own counts from ``/metrics``.

    python -m bench.cleanup_bench                                 # SQLite, embedded Redis
    DATABASE_URL=postgresql://... REDIS_URL=redis://... python -m bench.cleanup_bench
    python -m bench.cleanup_bench --rate 200 --duration 300 --ttl 60 --retention 60 --interval 30
    python -m bench.cleanup_bench --grant refresh --rate 50 --duration 300 --refresh-ttl 90

The run adds its own user and application to the configured database; the counts are of its
application's rows only (others' rows do not move them).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime

import requests
from sqlalchemy import Engine, func, select

from bench import cleanup_refresh
from bench.fixture import prepare
from bench.harness import machine, paced, serve
from common.db import make_engine
from common.models import Application, Token
from common.settings import AuthSettings


def issue(url: str, creds: dict[str, str], rate: float, until: float, errors: list[int]) -> int:
    """Issue tokens at ``rate`` a second (paced on a schedule) until ``until``; return how many."""
    session = requests.Session()
    issued = 0
    for _ in paced(rate, until):
        resp = session.post(url + "/api/tokens/xapp_token", data=creds, timeout=10)
        if resp.status_code != 201:
            errors.append(resp.status_code)
        issued += 1
    return issued


def counts(engine: Engine, client_id: str) -> tuple[int, int]:
    """Return the application's token rows: all of them, and those still live."""
    now = datetime.now(UTC)
    with engine.connect() as conn:
        app_id = conn.scalar(select(Application.id).where(Application.client_id == client_id))
        total = conn.scalar(
            select(func.count()).select_from(Token).where(Token.application_id == app_id)
        )
        live = conn.scalar(
            select(func.count())
            .select_from(Token)
            .where(Token.application_id == app_id, Token.expires_at > now)
        )
    return int(total or 0), int(live or 0)


class XappLoad:
    """The XAPP scenario: one token table, its live rows beside it."""

    def __init__(self, settings: AuthSettings, args: argparse.Namespace) -> None:
        self.args = args
        fx = prepare(settings)
        self.client_id = fx.client_id
        self.creds = {"client_id": fx.client_id, "client_secret": fx.client_secret}

    def threads(self, url: str, until: float, errors: list[int]) -> list[threading.Thread]:
        """Return the issuing threads (not started)."""
        rate = self.args.rate / self.args.clients
        return [
            threading.Thread(target=issue, args=(url, self.creds, rate, until, errors))
            for _ in range(self.args.clients)
        ]

    def counts(self, engine: Engine) -> dict[str, int]:
        """Return the application's token rows, and those of them still live."""
        total, live = counts(engine, self.client_id)
        return {"token rows": total, "of which live": live}

    def estimates(self, waits: float = 0.5) -> dict[str, float]:
        """Return the token rows of the steady state (``waits``: as ``cleanup_refresh.Mix``)."""
        a = self.args
        return {"token rows": a.rate * (a.ttl + a.retention + waits * a.interval)}

    def formulas(self) -> dict[str, str]:
        """Return the estimate's formula with this run's figures."""
        a = self.args
        return {"token rows": f"{a.rate:g} x ({a.ttl} + {a.retention} + {a.interval / 2:g})"}

    def warm(self) -> float:
        """Return the seconds after which the table should have stopped growing."""
        return float(self.args.ttl + self.args.retention + 1.5 * self.args.interval)

    def describe(self) -> str:
        """Return the scenario's settings, as the report says them."""
        return f"XAPP_TOKEN_TTL={self.args.ttl}"


def cleanup_metrics(url: str) -> dict[str, float]:
    """Return the cleanup's counters from ``/metrics`` (every worker's, added up)."""
    text = requests.get(url + "/metrics", timeout=10).text
    found: dict[str, float] = {}
    for line in text.splitlines():
        match = re.match(r'artcat_cleanup_(\w+)_total\{(\w+)="(\w+)"\} ([0-9.e+]+)', line)
        if match:
            name, _label, value, number = match.groups()
            found[f"{name}.{value}"] = float(number)
    return found


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    add = parser.add_argument
    add("--grant", choices=("xapp", "refresh"), default="xapp", help="what is issued")
    add("--rate", type=float, default=100, help="tokens issued (or refreshes) a second")
    add("--duration", type=int, default=180, help="seconds of issuance")
    add("--ttl", type=int, default=30, help="XAPP token lifetime (XAPP_TOKEN_TTL)")
    add("--refresh-ttl", type=int, default=90, help="REFRESH_TOKEN_TTL (60 at least)")
    add("--access-ttl", type=int, default=60, help="REFRESH_ACCESS_TOKEN_TTL (60 at least)")
    add("--chain", type=int, default=25, help="refreshes of a family before its client goes")
    add("--chains", type=int, default=20, help="families refreshed at once (refresh)")
    add("--retention", type=int, default=30, help="CLEANUP_RETENTION")
    add("--interval", type=int, default=15, help="CLEANUP_INTERVAL")
    add("--batch-size", type=int, default=500, help="CLEANUP_BATCH_SIZE")
    add("--workers", type=int, default=2, help="the auth server's workers")
    add("--clients", type=int, default=4, help="issuing threads")
    add("--sample", type=float, default=5, help="seconds between samples")
    args = parser.parse_args(argv)
    if args.grant == "refresh" and (args.chains % args.clients or args.chains < args.clients):
        parser.error("--chains must be a multiple of --clients")
    return args


def main() -> None:
    """Run the benchmark and print its report."""
    args = parse_args()
    env = dict(os.environ)
    if not env.get("DATABASE_URL") and not env.get("INSTANCE_DIR"):
        env["INSTANCE_DIR"] = tempfile.mkdtemp(prefix="artcat-cleanup-bench-")
    env.update(
        XAPP_TOKEN_TTL=str(args.ttl),
        CLEANUP_RETENTION=str(args.retention),
        CLEANUP_INTERVAL=str(args.interval),
        CLEANUP_BATCH_SIZE=str(args.batch_size),
        XAPP_ATTEMPTS_PER_CLIENT="1000000/minute",
        XAPP_ATTEMPTS_PER_IP="1000000/minute",
        ACCESS_LOG="false",
        ENVIRONMENT="development",
    )
    if args.grant == "refresh":
        env.update(cleanup_refresh.environment(args))
    settings = AuthSettings.from_env(env)
    try:
        about = machine(settings)
    except FileNotFoundError:  # no wrk on this machine: the rest of the description
        about = {"cores": str(os.cpu_count()), "database": settings.sqlalchemy_url.split(":")[0]}
    about["load average at start"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    load: XappLoad | cleanup_refresh.Load = (
        cleanup_refresh.Load(settings, args)
        if args.grant == "refresh"
        else XappLoad(settings, args)
    )
    engine = make_engine(settings)
    server = serve("auth", "auth", args.workers, env, server="granian")
    samples: list[tuple[float, dict[str, int]]] = []
    errors: list[int] = []
    try:
        began = time.monotonic()
        until = began + args.duration
        threads = load.threads(server.url, until, errors)
        for thread in threads:
            thread.start()
        while time.monotonic() < until:
            time.sleep(args.sample)
            samples.append((time.monotonic() - began, load.counts(engine)))
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - began
        loads = " ".join(f"{x:.2f}" for x in os.getloadavg())
        metrics = cleanup_metrics(server.url)
    finally:
        server.stop()
        engine.dispose()
    report(args, load, about, samples, (elapsed, loads, errors, metrics))


def report(
    args: argparse.Namespace,
    load: XappLoad | cleanup_refresh.Load,
    about: dict[str, str],
    samples: list[tuple[float, dict[str, int]]],
    outcome: tuple[float, str, list[int], dict[str, float]],
) -> None:
    """Print the markdown report."""
    elapsed, loads, errors, metrics = outcome
    print(f"# Storage cleanup under sustained issuance ({args.grant})\n")
    for key, value in about.items():
        print(f"- {key}: {value}")
    print(f"- load average at the end: {loads}")
    print(
        f"- auth server: granian, {args.workers} workers; {load.describe()}, "
        f"CLEANUP_RETENTION={args.retention}, CLEANUP_INTERVAL={args.interval}, "
        f"CLEANUP_BATCH_SIZE={args.batch_size}"
    )
    print(
        f"- asked {args.rate:g} {args.grant} grants/s for {args.duration} s ({elapsed:.0f} s), "
        f"{len(errors)} refused {sorted(set(errors))}\n"
    )
    columns = list(samples[0][1]) if samples else []
    print("| s | " + " | ".join(columns) + " |\n|---:|" + "---:|" * len(columns))
    for at, found in samples:
        print(f"| {at:.0f} | " + " | ".join(f"{found[c]:,}" for c in columns) + " |")
    warm = load.warm()
    average, ceiling, formulas = load.estimates(), load.estimates(1.5), load.formulas()
    print(f"\nSteady state (samples after {warm:.0f} s), against the estimate")
    print("rate x (lifetime + retention + interval/2) and its ceiling (1.5 intervals):\n")
    print("| table | mean | max | estimate | ceiling |\n|---|---:|---:|---:|---:|")
    for name, estimate in average.items():
        steady = [found[name] for at, found in samples if at >= warm]
        if not steady:
            print(f"| {name} | - | - | {estimate:,.0f} | {ceiling[name]:,.0f} |")
            continue
        print(
            f"| {name} | {statistics.mean(steady):,.0f} | {max(steady):,} | "
            f"{estimate:,.0f} = {formulas[name]} | {ceiling[name]:,.0f} |"
        )
    if not any(at >= warm for at, _found in samples):
        print(f"\nNo sample after {warm:.0f} s: run longer (--duration) for a steady state.")
    print(f"\nCleanup counters (/metrics, every worker): {metrics}")


if __name__ == "__main__":
    main()
