"""The per-request fixed cost of the catalog, in-process: what a request costs before its work.

Calls WSGI apps directly (no network, no server), each request a fresh environ, and prints the
CPU time per request in microseconds (best of several runs: on a shared machine, wall time
mostly measures the neighbours):

- the falcon hello-world of the HTTP benchmark (the baseline);
- the catalog's ``/healthz``: every middleware, no token;
- ``/api/search?q=`` with an XAPP token: the request gate too (the token read, the rate-limit
  hit and the catalog version in one Redis round trip), then a 400 before any database read;
- an artwork (``/api/artworks/{id}``), a page of twenty artworks and a search page
  (``/api/search?q=...``, ``--search`` sets the query), each read each time (the document
  caches off) and answered from the cache.

``--profile`` adds a cProfile of the gated request, ``--profile CASE`` of the case whose label
starts so: where its time goes, by own time.

    DATABASE_URL=... REDIS_URL=... python -m bench.fixed_cost --profile "artwork, read"

The code measured is the checkout in the current directory: to measure another (the code
before a change), run the same command from that checkout's folder.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from sqlalchemy import delete, select

from auth_server.accounts import create_application
from bench.hello_app import build_app as hello_app
from common.models import Application, Artwork, Token
from common.settings import ResourceSettings
from common.stores import Stores
from resource_server.app import create_app


def environ(path: str, headers: dict[str, str]) -> dict[str, Any]:
    """Return a WSGI environ for a GET of ``path`` from a loopback client."""
    route, _, query = path.partition("?")
    env: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": route,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": sys.stderr,
    }
    for name, value in headers.items():
        env["HTTP_" + name.upper().replace("-", "_")] = value
    return env


def call(app: Callable[..., Any], path: str, headers: dict[str, str]) -> str:
    """Make one request; return its status line."""
    status: list[str] = []
    body = app(environ(path, headers), lambda s, _h, _e=None: status.append(s))
    b"".join(body)
    if hasattr(body, "close"):
        body.close()
    return status[0]


def cpu_us(app: Callable[..., Any], path: str, headers: dict[str, str], n: int) -> float:
    """Return the best CPU time per request (microseconds) over 5 runs of ``n`` requests."""
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        for _ in range(n):
            call(app, path, headers)
        best = min(best, (time.process_time() - started) / n)
    return best * 1e6


def main() -> None:
    """Print the fixed cost of each path, and optionally a profile of the gated one."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("-n", type=int, default=2000, help="requests per run")
    parser.add_argument(
        "--profile",
        nargs="?",
        const="token + 400",
        metavar="CASE",
        help="profile a case (the start of its label; default: the gated 400)",
    )
    parser.add_argument("--search", default="turner", help="the query of the search cases")
    args = parser.parse_args()
    settings = ResourceSettings.from_env(rate_limit="1000000/second", access_log=True)
    stores = Stores.connect(settings)
    import logging

    logging.getLogger("artcat.access").handlers[:] = [logging.StreamHandler(io.StringIO())]
    with stores.sessions() as session, session.begin():
        application = create_application(session, name="fixed cost", owner=None).application
        issued = stores.tokens.issue(
            session, kind="xapp", application_id=application.id, user_id=None, ttl=3600
        )
        artwork = session.scalars(select(Artwork.id).limit(1)).first()
    stores.tokens.publish(issued.row)
    token = {"X-Xapp-Token": issued.value}
    catalog = create_app(settings, stores)
    paths = [
        ("hello-world (baseline)", hello_app(), "/hello", {}),
        ("catalog /healthz (middleware)", catalog, "/healthz", {}),
        ("token + 400 (middleware and gate)", catalog, "/api/search?q=", token),
    ]
    uncached = create_app(replace(settings, document_cache_size=0), stores)
    if artwork is not None:
        paths.append(("cached artwork", catalog, f"/api/artworks/{artwork}", token))
        paths.append(("artwork, read each time", uncached, f"/api/artworks/{artwork}", token))
    paths.append(("artworks size=20, read each time", uncached, "/api/artworks?size=20", token))
    paths.append(("artworks size=20, cached page", catalog, "/api/artworks?size=20", token))
    search = f"/api/search?q={quote(args.search)}"
    paths.append(("search, read each time", uncached, search, token))
    paths.append(("search, cached page", catalog, search, token))
    try:
        for label, app, path, headers in paths:
            cost = cpu_us(app, path, headers, args.n)
            print(f"{label:<36} {call(app, path, headers):<16} {cost:7.1f} us")
        if args.profile:
            _, app, path, headers = next(p for p in paths if p[0].startswith(args.profile))
            profile = cProfile.Profile(time.process_time)  # CPU: the neighbours left out
            profile.enable()
            for _ in range(args.n):
                call(app, path, headers)
            profile.disable()
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(
                os.environ.get("SORT", "tottime")
            ).print_stats(int(os.environ.get("TOP", "25")))
            print(out.getvalue())
    finally:
        with stores.sessions() as session, session.begin():
            session.execute(delete(Token).where(Token.application_id == application.id))
            session.execute(delete(Application).where(Application.id == application.id))


if __name__ == "__main__":
    main()
