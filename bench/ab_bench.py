"""Two checkouts' catalog under granian, loaded at the same time on one core: their ratio.

A change of 10% cannot be told from the noise by running one checkout after the other on a
shared machine: its load moves the rate of a path by tens of percent from one run to the next.
Here both checkouts serve at once, each ``artcat serve resource --server granian --workers 1``
(its code from ``PYTHONPATH=<checkout>``), both pinned to core 0, and two wrk processes on
core 1 load them together, one each, for every round: the two servers share one core under the
same neighbours, so the ratio of their rates within a round is the inverse ratio of their CPU
costs per request, whatever the rest of the machine does meanwhile. Each path's figure is the
median over the rounds of that ratio (B over A). The granian hello-world (``bench.granian_app``)
is loaded alone on the same core in each round, for scale: each rate is also given as a
share of it.

    INSTANCE_DIR=/tmp/benchinst python bench/ab_bench.py --a /tmp/before --b . --rounds 7
    DATABASE_URL=postgresql://... REDIS_URL=redis://... python bench/ab_bench.py --a ... --b ...

Paths (``--paths``): ``token`` (a gated request answered 400 before any read), ``artwork``
(cached documents over 1,000 published artworks), ``artwork-uncached``, ``list-uncached``
(``/api/artworks?size=20``) and ``search-uncached`` (five queries in turn), the uncached ones
served with ``DOCUMENT_CACHE_SIZE=0``. Data: the catalog of the environment (``artcat load
demo --artworks 20000`` is enough); a benchmark application is added (and removed) each run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import delete, select

from auth_server.accounts import create_application
from bench.harness import answers
from common.models import Application, Artwork, Token
from common.settings import ResourceSettings
from common.stores import Stores

ARTCAT = str(Path(sys.executable).with_name("artcat"))
GRANIAN = str(Path(sys.executable).with_name("granian"))
ROOT = Path(__file__).resolve().parents[1]
SEARCHES = ("turner", "portrait", "landscape", "the thames", "study")

LUA = """
local paths = {paths}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1], {{["X-Xapp-Token"] = {token}}})
end
done = function(summary, latency, requests)
  io.write(string.format('\\n@@{{"requests":%d,"duration_us":%d,"errors":%d}}\\n',
    summary.requests, summary.duration, summary.errors.timeout))
end
"""


def free_port() -> int:
    """Return a free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(argv: list[str], env: dict[str, str], probe: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server pinned to core 0; wait until ``probe`` answers 200."""
    port = free_port()
    argv = ["taskset", "-c", "0", *[a.replace("{port}", str(port)) for a in argv]]
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    if answers(proc, url + probe, str(argv), within=120):
        return proc, url
    stop(proc)
    raise RuntimeError(f"{argv} did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End a server and its workers (its own process group)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextlib.contextmanager
def servers(checkouts: dict[str, str], env: dict[str, str]) -> Iterator[dict[str, str]]:
    """Serve the baseline, and each checkout's catalog cached and uncached; yield their urls."""
    procs: list[subprocess.Popen[bytes]] = []
    urls: dict[str, str] = {}
    try:
        hello = [GRANIAN, "--interface", "wsgi", "--factory", "bench.granian_app:hello"]
        hello += ["--working-dir", str(ROOT), "--host", "127.0.0.1", "--port", "{port}"]
        hello += ["--workers", "1", "--blocking-threads", "4", "--no-ws", "--http", "auto"]
        hello += ["--log-level", "warning"]
        proc, urls["baseline"] = start(hello, env, "/hello")
        procs.append(proc)
        serve = [ARTCAT, "serve", "resource", "--no-demo", "--server", "granian"]
        serve += ["--port", "{port}", "--workers", "1"]
        for name, checkout in checkouts.items():
            for cached in (True, False):
                own = {**env, "PYTHONPATH": str(Path(checkout).resolve())}
                if not cached:
                    own["DOCUMENT_CACHE_SIZE"] = "0"
                proc, url = start(serve, own, "/healthz")
                procs.append(proc)
                urls[f"{name} {'cached' if cached else 'uncached'}"] = url
        yield urls
    finally:
        for proc in procs:
            stop(proc)


def wrk(url: str, paths: list[str], token: str, duration: int, conns: int) -> subprocess.Popen[str]:
    """Start wrk on core 1 against ``url`` cycling through ``paths``; see ``rate``."""
    lua = LUA.format(
        paths=json.dumps(paths).replace("[", "{").replace("]", "}"), token=json.dumps(token)
    )
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)  # noqa: SIM115
    script.write(lua)
    script.close()
    argv = ["taskset", "-c", "1", "wrk", "-t1", f"-c{conns}", f"-d{duration}s", "-s", script.name]
    proc = subprocess.Popen(
        [*argv, url], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    proc.script = script.name  # type: ignore[attr-defined]
    return proc


def rate(proc: subprocess.Popen[str]) -> float:
    """Wait for a wrk started by ``wrk``; return its answers a second (a 400 is an answer: the
    gated path's; a request that timed out is not)."""
    out, _ = proc.communicate()
    os.unlink(proc.script)  # type: ignore[attr-defined]
    line = next(x for x in out.splitlines() if x.startswith("@@"))
    summary = json.loads(line[2:])
    return float(summary["requests"] - summary["errors"]) / (summary["duration_us"] / 1e6)


def fixture(stores: Stores) -> tuple[str, list[int], Any]:
    """Issue an XAPP token of a new application without a rate limit to speak of; pick 1,000
    published artworks spread over the catalog."""
    with stores.sessions() as session, session.begin():
        application = create_application(session, name="ab bench", owner=None).application
        application.rate_limit = "1000000/second"
        issued = stores.tokens.issue(
            session, kind="xapp", application_id=application.id, user_id=None, ttl=7200
        )
        ids = session.scalars(
            select(Artwork.id).where(Artwork.published.is_(True)).order_by(Artwork.id)
        ).all()
    stores.tokens.publish(issued.row)
    return issued.value, list(ids[:: max(1, len(ids) // 1000)][:1000]), application.id


def main() -> None:
    """Print, for each path, B's rate over A's in each round and their median."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--a", required=True, help="checkout A (the reference)")
    parser.add_argument("--b", required=True, help="checkout B")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--duration", type=int, default=4, help="seconds per load")
    parser.add_argument("--connections", type=int, default=16, help="per server")
    parser.add_argument(
        "--paths", default="token,artwork,artwork-uncached,list-uncached,search-uncached"
    )
    args = parser.parse_args()
    settings = ResourceSettings.from_env()
    stores = Stores.connect(settings)
    token, ids, application_id = fixture(stores)
    env = {**os.environ, "ACCESS_LOG": "0", "INSTANCE_DIR": str(settings.instance_dir)}
    env.setdefault("SECRET_KEY", settings.secret_key)
    searches = [f"/api/search?q={q.replace(' ', '+')}" for q in SEARCHES]
    cases = {
        "token": ("cached", ["/api/search?q="]),
        "artwork": ("cached", [f"/api/artworks/{i}" for i in ids]),
        "artwork-uncached": ("uncached", [f"/api/artworks/{i}" for i in ids]),
        "list-uncached": ("uncached", ["/api/artworks?size=20"]),
        "search-uncached": ("uncached", searches),
    }
    wanted = [p.strip() for p in args.paths.split(",") if p.strip()]
    ratios: dict[str, list[float]] = {p: [] for p in wanted}
    shares: dict[str, list[tuple[float, float]]] = {p: [] for p in wanted}
    base: list[float] = []
    print(f"A: {args.a}  B: {args.b}  load average at start: {os.getloadavg()[0]:.2f}")
    try:
        with servers({"A": args.a, "B": args.b}, env) as urls:
            for path in wanted:  # warm-up: connections, compiled statements, cached documents
                kind, paths = cases[path]
                for side in "AB":
                    rate(wrk(urls[f"{side} {kind}"], paths, token, 2, args.connections))
            for n in range(1, args.rounds + 1):
                base.append(rate(wrk(urls["baseline"], ["/hello"], token, args.duration, 32)))
                for path in wanted:
                    kind, paths = cases[path]
                    pair = [
                        wrk(urls[f"{side} {kind}"], paths, token, args.duration, args.connections)
                        for side in "AB"
                    ]
                    a, b = (rate(p) for p in pair)
                    ratios[path].append(b / a)
                    shares[path].append((a / base[-1], b / base[-1]))
                    print(
                        f"  round {n} {path}: A {a:,.0f}/s B {b:,.0f}/s B/A {b / a:.3f}",
                        file=sys.stderr,
                    )
    finally:
        with stores.sessions() as session, session.begin():
            session.execute(delete(Token).where(Token.application_id == application_id))
            session.execute(delete(Application).where(Application.id == application_id))
    print(f"baseline (hello-world alone) median {statistics.median(base):,.0f}/s")
    print("| path | B/A, median of rounds | rounds | A, B as a share of the baseline (median) |")
    print("|---|---:|---|---:|")
    for path in wanted:
        per = ", ".join(f"{r:.2f}" for r in ratios[path])
        a_share = statistics.median(s[0] for s in shares[path])
        b_share = statistics.median(s[1] for s in shares[path])
        ratio = statistics.median(ratios[path])
        print(f"| {path} | {ratio:.3f} | {per} | {a_share:.1%}, {b_share:.1%} |")


if __name__ == "__main__":
    main()
