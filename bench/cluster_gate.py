"""The request gate on one Redis server against a 3-primary Redis Cluster: admissions per second.

Calls ``RequestGate.admit`` in-process (no HTTP) for a valid token whose application is known,
the steady state of every catalog request: the token's GET, the catalog versions' MGET and the
rate-limit hit. On one server they go out together on a kept connection (one round trip to one
server); on a cluster they live in three slots (the token's, the application's window, the
catalog versions') and go through the cluster client's pipeline, to up to three nodes. Both
Redis setups are private servers started here (``redis-server``, ``redis-cli``) on loopback,
the SQL store a temporary SQLite file (read once per token, then never on this path).

Prints, per setup, the best of ``--rounds`` rounds of ``--seconds`` each, for one thread and
for ``--threads`` threads: admissions per second and CPU microseconds per admission.

    python -m bench.cluster_gate --rounds 5 --seconds 3
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import select

from auth_server.accounts import create_application, create_user, password_hasher
from common.db import make_engine, make_sessionmaker, upgrade
from common.models import Application
from common.redis_store import connect_redis
from common.settings import AuthSettings, Settings
from common.stores import Stores
from resource_server.gate import RequestGate
from resource_server.ratelimit import RateLimiter
from tests.functional.cluster_support import private_cluster
from tests.functional.process_support import private_redis

TOKENS = 100


def setup(settings: Settings) -> tuple[RequestGate, list[str]]:
    """Return a gate on ``settings``' Redis and valid tokens of one application (issued)."""
    stores = Stores.connect(settings)
    with stores.sessions() as session, session.begin():
        auth = AuthSettings(**vars(settings))
        user = create_user(
            session,
            password_hasher(auth),
            email=f"bench-{secrets.token_hex(4)}@example.org",
            name="Benchmark",
            password=secrets.token_urlsafe(12),
        )
        app = create_application(session, name="bench", owner=user).application
        app.rate_limit = "100000000/second"
        app_id = app.id
    issued = []
    with stores.sessions() as session, session.begin():
        assert session.scalar(select(Application.id).where(Application.id == app_id))
        for _ in range(TOKENS):
            issued.append(
                stores.tokens.issue(
                    session, kind="xapp", application_id=app_id, user_id=None, ttl=3600
                )
            )
    for token in issued:
        stores.tokens.publish(token.row)
    limiter = RateLimiter(
        stores.redis,
        stores.sessions,
        rate="100000000/second",
        burst=1,
        prefix=settings.redis_prefix,
    )
    gate = RequestGate(stores.redis, stores.tokens, limiter, prefix=settings.redis_prefix)
    values = [token.value for token in issued]
    for value in values:  # the gate learns each token's application
        assert gate.admit(value).record is not None
        assert gate.admit(value).within_limit
    return gate, values


def run(gate: RequestGate, tokens: list[str], seconds: float, threads: int) -> tuple[float, float]:
    """Admit tokens in ``threads`` threads for ``seconds``; return admissions/s and CPU µs each."""
    counts = [0] * threads
    stop = threading.Event()

    def work(slot: int) -> None:
        n, i = 0, slot
        while not stop.is_set():
            assert gate.admit(tokens[i % len(tokens)]).record is not None
            n += 1
            i += 1
        counts[slot] = n

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    cpu, wall = time.process_time(), time.monotonic()
    for worker in workers:
        worker.start()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    total = sum(counts)
    return total / wall, cpu / total * 1e6


@contextlib.contextmanager
def redis_setups() -> Iterator[dict[str, str]]:
    """Start one Redis server and one cluster; yield their REDIS_URLs by name."""
    with private_redis() as single, private_cluster() as cluster:
        yield {"one server": single.url, "cluster": cluster.url}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, redis_setups() as urls:
        base = Settings(
            instance_dir=Path(tmp),
            database_url=f"sqlite:///{tmp}/bench.db",
            secret_key="bench-" + "x" * 40,
        )
        upgrade(base)
        make_sessionmaker(make_engine(base))  # the schema is there
        print(f"{'setup':<12} {'threads':>7} {'admissions/s':>13} {'CPU µs each':>12}")
        for name, url in urls.items():
            settings = Settings(**{**vars(base), "redis_url": url})
            gate, tokens = setup(settings)
            for threads in (1, args.threads):
                best = max(
                    (run(gate, tokens, args.seconds, threads) for _ in range(args.rounds)),
                    key=lambda figures: figures[0],
                )
                print(f"{name:<12} {threads:>7} {best[0]:>13,.0f} {best[1]:>12,.0f}")
            connect_redis(settings).close()


if __name__ == "__main__":
    main()
