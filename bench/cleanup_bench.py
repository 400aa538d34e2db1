"""How big the token table stays under sustained issuance with the storage cleanup on.

Serves the auth server (``artcat serve auth``, granian, two workers: each runs a background
cleaner, one at a time cleans) with short token lifetimes, issues XAPP tokens at a steady rate
for a while, and samples the table every few seconds. A token row lives its lifetime, then the
retention, then waits for the next run: runs are an interval apart, give or take the quarter
interval after which a process looks again, so the wait is half an interval on average and at
most about an interval and a half. The table should hold about
``rate x (lifetime + retention + interval / 2)`` rows, never much more than
``rate x (lifetime + retention + 1.5 x interval)``. Prints a markdown report: the machine, the
settings, the samples, the steady state against that estimate, and the cleaner's own counts
from ``/metrics``.

    python -m bench.cleanup_bench                                 # SQLite, embedded Redis
    DATABASE_URL=postgresql://... REDIS_URL=redis://... python -m bench.cleanup_bench
    python -m bench.cleanup_bench --rate 200 --duration 300 --ttl 60 --retention 60 --interval 30

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

from bench.fixture import prepare
from bench.harness import machine, serve
from common.db import make_engine
from common.models import Application, Token
from common.settings import AuthSettings


def issue(url: str, creds: dict[str, str], rate: float, until: float, errors: list[int]) -> int:
    """Issue tokens at ``rate`` a second (paced on a schedule) until ``until``; return how many."""
    session = requests.Session()
    issued = 0
    start = time.monotonic()
    while True:
        due = start + issued / rate
        now = time.monotonic()
        if due >= until:
            return issued
        if due > now:
            time.sleep(due - now)
        resp = session.post(url + "/api/tokens/xapp_token", data=creds, timeout=10)
        if resp.status_code != 201:
            errors.append(resp.status_code)
        issued += 1


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


def main() -> None:
    """Run the benchmark and print its report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=100, help="tokens issued a second")
    parser.add_argument("--duration", type=int, default=180, help="seconds of issuance")
    parser.add_argument("--ttl", type=int, default=30, help="token lifetime (XAPP_TOKEN_TTL)")
    parser.add_argument("--retention", type=int, default=30, help="CLEANUP_RETENTION")
    parser.add_argument("--interval", type=int, default=15, help="CLEANUP_INTERVAL")
    parser.add_argument("--batch-size", type=int, default=500, help="CLEANUP_BATCH_SIZE")
    parser.add_argument("--workers", type=int, default=2, help="the auth server's workers")
    parser.add_argument("--clients", type=int, default=4, help="issuing threads")
    parser.add_argument("--sample", type=float, default=5, help="seconds between samples")
    args = parser.parse_args()

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
    settings = AuthSettings.from_env(env)
    try:
        about = machine(settings)
    except FileNotFoundError:  # no wrk on this machine: the rest of the description
        about = {"cores": str(os.cpu_count()), "database": settings.sqlalchemy_url.split(":")[0]}
    about["load average at start"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    fx = prepare(settings)
    creds = {"client_id": fx.client_id, "client_secret": fx.client_secret}
    engine = make_engine(settings)
    server = serve("auth", "auth", args.workers, env, server="granian")
    samples: list[tuple[float, int, int]] = []
    errors: list[int] = []
    try:
        began = time.monotonic()
        until = began + args.duration
        threads = [
            threading.Thread(
                target=issue, args=(server.url, creds, args.rate / args.clients, until, errors)
            )
            for _ in range(args.clients)
        ]
        for thread in threads:
            thread.start()
        while time.monotonic() < until:
            time.sleep(args.sample)
            total, live = counts(engine, fx.client_id)
            samples.append((time.monotonic() - began, total, live))
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - began
        metrics = cleanup_metrics(server.url)
    finally:
        server.stop()
        engine.dispose()

    warm = args.ttl + args.retention + 1.5 * args.interval
    steady = [total for at, total, _live in samples if at >= warm]
    average = args.rate * (args.ttl + args.retention + args.interval / 2)
    ceiling = args.rate * (args.ttl + args.retention + 1.5 * args.interval)
    print("# Storage cleanup under sustained issuance\n")
    for key, value in about.items():
        print(f"- {key}: {value}")
    print(
        f"- auth server: granian, {args.workers} workers; XAPP_TOKEN_TTL={args.ttl}, "
        f"CLEANUP_RETENTION={args.retention}, CLEANUP_INTERVAL={args.interval}, "
        f"CLEANUP_BATCH_SIZE={args.batch_size}"
    )
    print(
        f"- asked {args.rate:g} tokens/s for {args.duration} s ({elapsed:.0f} s), "
        f"{len(errors)} refused\n"
    )
    print("| s | token rows | of which live |\n|---:|---:|---:|")
    for at, total, live in samples:
        print(f"| {at:.0f} | {total:,} | {live:,} |")
    if steady:
        print(
            f"\nSteady state (after {warm:.0f} s): mean {statistics.mean(steady):,.0f} rows, "
            f"max {max(steady):,}; estimate rate x (ttl + retention + interval/2) = "
            f"{average:,.0f}, ceiling rate x (ttl + retention + 1.5 interval) = {ceiling:,.0f}"
        )
    else:
        print(f"\nNo sample after {warm:.0f} s: run longer (--duration) for a steady state.")
    print(f"\nCleanup counters (/metrics, every worker): {metrics}")


if __name__ == "__main__":
    main()
