"""Search benchmark: latency of the query interface and of GET /api/search, and reindex time.

Runs against the configured database, as the service does (INSTANCE_DIR for SQLite, or
DATABASE_URL for PostgreSQL; REDIS_URL, or the embedded Redis, for the HTTP part). Import the
catalog first (``make bench-data``), then:

    INSTANCE_DIR=/tmp/search_bench python -m bench.search_bench --reindex

Every query of ``search_queries.txt`` runs ``--rounds`` times in-process (a session per query,
as a request has), after one warm-up pass; then a sample of them over HTTP through a real
waitress server with an XAPP token (created for the run and deleted after it).
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import requests
from sqlalchemy import delete, func, select, text
from waitress.server import create_server

from auth_server.accounts import create_application
from common.db import make_engine, upgrade
from common.models import Application, Token
from common.search.indexer import reindex
from common.search.models import SearchDocument
from common.settings import ResourceSettings
from common.stores import Stores
from resource_server.app import create_app
from resource_server.search.service import SearchRequest, search

QUERIES = Path(__file__).with_name("search_queries.txt")


def load_queries(path: Path) -> list[str]:
    """Return the queries of the list file (blank and comment lines skipped)."""
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def percentile(values: list[float], pct: float) -> float:
    """Return the nearest-rank percentile of ``values``."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(pct / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def summary(label: str, samples: list[float]) -> str:
    """Return one line of figures (milliseconds) for a list of samples (seconds)."""
    ms = [s * 1000 for s in samples]
    return (
        f"{label:<44} n={len(ms):<5} p50={statistics.median(ms):6.2f}  "
        f"p90={percentile(ms, 90):6.2f}  p99={percentile(ms, 99):6.2f}  max={max(ms):6.2f} ms"
    )


def machine(stores: Stores) -> list[str]:
    """Describe the machine and the database."""
    cpu = "unknown"
    if Path("/proc/cpuinfo").exists():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = ""
    if Path("/proc/meminfo").exists():
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kb / 1024 / 1024:.1f} GiB RAM"
    with stores.engine.connect() as conn:
        dialect = conn.dialect.name
        if dialect == "postgresql":
            version = conn.execute(text("SHOW server_version")).scalar_one()
            database = f"PostgreSQL {version} (tsvector + GIN, pg_trgm)"
        else:
            database = f"SQLite {sqlite3.sqlite_version} (FTS5)"
        docs = conn.execute(select(func.count()).select_from(SearchDocument)).scalar_one()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        f"machine: {cpu}, {os.cpu_count()} cores{memory}; load average {load}",
        f"system: {platform.platform()}; Python {platform.python_version()}",
        f"database: {database}; {docs:,} search documents",
    ]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``fn`` and return (seconds, result)."""
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def bench_reindex(stores: Stores) -> list[str]:
    """Time an empty index's first build and an unchanged catalog's reindex."""
    with stores.engine.begin() as conn:
        clear, _ = timed(lambda: conn.execute(delete(SearchDocument)))
    first, built = timed(lambda: reindex(stores.engine))
    again, same = timed(lambda: reindex(stores.engine))
    return [
        f"reindex, empty index (first build): {first:.1f} s ({built.summary()})",
        f"reindex, nothing changed:           {again:.1f} s ({same.summary()})",
        f"(emptying the index before: {clear:.1f} s)",
    ]


def bench_in_process(stores: Stores, queries: list[str], rounds: int) -> list[str]:
    """Time every query through the query interface, ``rounds`` times after a warm-up."""

    def run(q: str) -> Any:
        with stores.reads() as session:  # as the service reads: autocommit on PostgreSQL
            return search(session.connection(), SearchRequest(q))

    outcome = {q: run(q) for q in queries}  # warm-up (caches, connections)
    samples: dict[str, list[float]] = {q: [] for q in queries}
    for _ in range(rounds):
        for q in queries:
            samples[q].append(timed(partial(run, q))[0])
    every = [s for q in queries for s in samples[q]]
    medians = {q: statistics.median(samples[q]) for q in queries}
    fixed = [q for q in queries if outcome[q].correction is not None]
    empty = [q for q in queries if not outcome[q].total_count and outcome[q].correction is None]
    slowest = sorted(queries, key=medians.__getitem__, reverse=True)[:6]
    return [
        summary(f"in-process, all samples ({len(queries)} queries)", every),
        summary("in-process, per-query medians", list(medians.values())),
        summary(f"in-process, spelling corrections ({len(fixed)})", [medians[q] for q in fixed]),
        f"queries with results: {len(queries) - len(fixed) - len(empty)}, corrected: "
        f"{len(fixed)}, empty: {len(empty)} {empty[:5]}",
        "slowest (median ms): " + ", ".join(f"{q!r} {medians[q] * 1000:.1f}" for q in slowest),
    ]


def bench_http(
    stores: Stores, settings: ResourceSettings, queries: list[str], rounds: int
) -> list[str]:
    """Time a sample of the queries over HTTP through waitress, with an XAPP token."""
    with stores.sessions() as session, session.begin():
        app = create_application(session, name="search bench", owner=None).application
        issued = stores.tokens.issue(
            session, kind="xapp", application_id=app.id, user_id=None, ttl=3600
        )
    stores.tokens.publish(issued.row)
    server = create_server(create_app(settings, stores), host="127.0.0.1", port=0, threads=4)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.effective_port}/api/search"  # type: ignore[union-attr]
    samples: list[float] = []
    try:
        with requests.Session() as http:
            http.headers["X-Xapp-Token"] = issued.value
            for q in queries:  # warm-up
                http.get(url, params={"q": q}, allow_redirects=False, timeout=30)
            for _ in range(rounds):
                for q in queries:
                    params = {"q": q}
                    elapsed, r = timed(partial(http.get, url, params=params, allow_redirects=False))
                    assert r.status_code in (200, 302), (q, r.status_code, r.text[:200])
                    samples.append(elapsed)
    finally:
        server.close()
        thread.join(timeout=10)
        with stores.sessions() as session, session.begin():
            session.execute(delete(Token).where(Token.application_id == app.id))
            session.execute(delete(Application).where(Application.id == app.id))
    return [summary(f"HTTP GET /api/search ({len(queries)} queries)", samples)]


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--queries", type=Path, default=QUERIES)
    parser.add_argument("--rounds", type=int, default=5, help="timed passes over the list")
    parser.add_argument("--http", type=int, default=40, help="queries sampled for HTTP")
    parser.add_argument("--reindex", action="store_true", help="also time a full reindex")
    args = parser.parse_args()
    settings = ResourceSettings.from_env(rate_limit="1000000/second")
    upgrade(settings)
    stores = Stores.connect(settings, engine=make_engine(settings))
    queries = load_queries(args.queries)
    lines = machine(stores)
    if args.reindex:
        lines += bench_reindex(stores)
    lines += bench_in_process(stores, queries, args.rounds)
    step = max(1, len(queries) // max(args.http, 1))
    lines += bench_http(stores, settings, queries[::step][: args.http], args.rounds)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
