"""The CPU time of one refresh-token grant, in-process: the auth server's WSGI app called
directly (no network, no server), each refresh presenting the token the one before it got.

Prints the CPU time per refresh of this thread (``time.thread_time``: the database server,
Redis and the neighbours left out, so the figure holds on a loaded machine), best of several
runs, for ``refresh`` (scope ``offline_access``) and ``refresh + ID token`` (``openid`` too,
and a sign-in time: an ES256 ID token each time). ``--profile`` adds a cProfile of one of them.
Stores: the environment's (``DATABASE_URL``/``REDIS_URL``, else SQLite and the embedded Redis)::

    python -m bench.refresh_cpu [-n 500] [--profile refresh|openid]

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
from typing import Any

import orjson

from bench.refresh_bench import prepare, seed
from common.settings import AuthSettings

PATH = "/oauth2/access_token"


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


def main() -> None:
    """Print the CPU time per refresh of each scenario, and optionally a profile."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("-n", type=int, default=500, help="refreshes per run")
    parser.add_argument("--runs", type=int, default=5, help="runs per scenario (best kept)")
    parser.add_argument("--profile", choices=("refresh", "openid"), help="profile a scenario")
    parser.add_argument("--only", choices=("refresh", "openid"), help="run one scenario only")
    args = parser.parse_args()
    os.environ.setdefault("ACCESS_LOG", "0")
    settings = AuthSettings.from_env()
    from auth_server.app import create_app

    app = create_app(settings)
    client_id, secret, app_id, user_id = prepare(settings)
    form = f"grant_type=refresh_token&client_id={client_id}&client_secret={secret}&refresh_token="
    scopes = {"refresh": "offline_access", "openid": "offline_access openid"}
    chains = {
        name: Chain(app, form, seed(settings, app_id, user_id, 1, scope)[0])
        for name, scope in scopes.items()
        if args.only in (None, name)
    }
    for name, chain in chains.items():
        for _ in range(50):  # warm up: the first requests start the background work
            chain.step()
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
        chain = chains[args.profile]
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
