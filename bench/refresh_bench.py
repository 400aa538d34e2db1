"""Refresh-token grants a second, and ID tokens a second, on the auth server (one worker).

Every refresh rotates its token, so wrk cannot replay a fixed list of requests: each wrk thread
keeps a queue of live refresh tokens, sends the first of them, and queues the one each answer
brings (a chain per connection, never a token used twice). Each run starts from fresh families
written straight to the database (no password grant, whose argon2 would dominate the setup):
``refresh`` with the scope ``offline_access``, ``refresh + ID token`` with ``openid
offline_access`` and a sign-in time, so that each of its refreshes also signs an ES256 ID token.

The pinned setup of ``bench.http_bench``: the auth server under granian with one worker on core
0, wrk on core 1. Data: the database of the environment (``DATABASE_URL``/``INSTANCE_DIR``, as
``artcat`` reads them)::

    python -m bench.refresh_bench --duration 5 --runs 3 [--compare ../before]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import LUA, Spec, machine, median_of, running
from bench.http_bench import environment
from common.settings import AuthSettings

# The request and reply halves of the chain (the summary is the harness's own ``done``).
CHAIN_LUA = """
local seeds = {seeds}
local per_thread = {per_thread}
local form = {form}
local headers = {{["Content-Type"] = "application/x-www-form-urlencoded"}}
local next_thread = 0
setup = function(thread)
  local mine = {{}}
  for i = 1, per_thread do
    mine[i] = seeds[next_thread * per_thread + i]
  end
  thread:set("seed", table.concat(mine, ","))
  next_thread = next_thread + 1
end
local queue = {{}}
init = function(args)
  for token in string.gmatch(seed, "[^,]+") do
    table.insert(queue, token)
  end
end
request = function()
  local token = table.remove(queue, 1) or "exhausted"
  return wrk.format("POST", "/oauth2/access_token", headers, form .. token)
end
response = function(status, headers, body)
  local token = string.match(body, '"refresh_token"%s*:%s*"([^"]+)"')
  if token then
    table.insert(queue, token)
  end
end
"""
THREADS = 2


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    add = parser.add_argument
    add("--duration", type=int, default=5, help="seconds per wrk run")
    add("--runs", type=int, default=3, help="runs per scenario (the median is kept)")
    add("--connections", type=int, default=16, help="wrk connections")
    add(
        "--compare",
        metavar="CHECKOUT",
        help="also serve the auth server from another checkout (a worktree of main: the code "
        "before a change), each of its runs next to this one's, marked (before)",
    )
    return parser.parse_args(argv)


def prepare(settings: AuthSettings) -> tuple[str, str, str, str]:
    """Add a user and an application registered for refresh tokens; return the client's
    credentials, the application's id and the user's id."""
    from auth_server.accounts import create_application, create_user, password_hasher
    from common.db import make_engine, make_sessionmaker, upgrade

    upgrade(settings)
    engine = make_engine(settings)
    tag = os.urandom(4).hex()
    with make_sessionmaker(engine)() as session, session.begin():
        user = create_user(
            session,
            password_hasher(settings),
            email=f"bench-refresh-{tag}@example.org",
            name="Benchmark",
            password=os.urandom(12).hex(),
        )
        new = create_application(session, name=f"bench refresh {tag}", owner=user)
        new.application.refresh_tokens = True
        found = (new.application.client_id, new.client_secret, new.application.id, user.id)
    engine.dispose()
    return found


def seed(settings: AuthSettings, app_id: str, user_id: str, count: int, scope: str) -> list[str]:
    """Start ``count`` families of ``scope`` and return their first refresh tokens."""
    from auth_server.refresh import issue_refresh, start_family
    from common.db import make_engine, make_sessionmaker

    engine = make_engine(settings)
    auth_time = int(time.time()) if "openid" in scope else None
    tokens = []
    with make_sessionmaker(engine)() as session, session.begin():
        for _ in range(count):
            family = start_family(
                session, application_id=app_id, user_id=user_id, scope=scope, auth_time=auth_time
            )
            tokens.append(
                issue_refresh(
                    session,
                    family_id=family,
                    application_id=app_id,
                    access_token_id=None,
                    ttl=settings.refresh_token_ttl,
                )
            )
    engine.dispose()
    return tokens


def run_chain(
    url: str, seeds: list[str], form: str, connections: int, duration: int
) -> dict[str, float]:
    """Run wrk once over chains of refreshes; return its figures."""
    script = CHAIN_LUA.format(
        seeds="{" + ",".join(json.dumps(t) for t in seeds) + "}",
        per_thread=len(seeds) // THREADS,
        form=json.dumps(form),
    )
    # The harness's summary (``done``) after the chain's own functions.
    summary = LUA.split("done = function", 1)[1].replace("{{", "{").replace("}}", "}")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
        fh.write(script + "done = function" + summary)
        path = fh.name
    argv = ["wrk", f"-t{THREADS}", f"-c{connections}", f"-d{duration}s", "-s", path]
    argv += ["--timeout", "10s", url]
    if shutil.which("taskset"):
        argv = ["taskset", "-c", "1", *argv]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    data = json.loads(out.rsplit("@@", 1)[1])
    return {
        "rps": data["requests"] / (data["duration_us"] / 1e6),
        "p50": data["p50_us"] / 1000,
        "p99": data["p99_us"] / 1000,
        "status_errors": data["status_errors"],
        "socket_errors": data["socket_errors"],
    }


def main(argv: list[str] | None = None) -> None:
    """Run the two scenarios, interleaved, and print a markdown report."""
    args = parse_args(argv)
    if not shutil.which("wrk"):
        sys.exit("wrk is needed: apt-get install -y wrk")
    settings = AuthSettings.from_env()
    info = machine(settings)
    client_id, secret, app_id, user_id = prepare(settings)
    form = f"grant_type=refresh_token&client_id={client_id}&client_secret={secret}&refresh_token="
    scenarios = {"refresh": "offline_access", "refresh + ID token": "offline_access openid"}
    env = environment(settings)
    specs = [Spec("auth", "auth", 1)]
    if args.compare:
        path = {"PYTHONPATH": str(Path(args.compare).resolve())}
        specs.append(Spec("auth (before)", "auth", 1, path))
    results: dict[str, list[dict[str, float]]] = {}
    loads: list[str] = []
    per_connection = 4  # spare links, should an answer ever come back without a token
    seeds = args.connections * per_connection
    with running(specs, env=env, cores="0") as servers:
        for run in range(args.runs):
            for name, scope in scenarios.items():
                for server in specs:
                    label = name + server.name[len("auth") :]
                    tokens = seed(settings, app_id, user_id, seeds, scope)
                    loads.append(f"{os.getloadavg()[0]:.1f}")
                    url = servers[server.name].url
                    got = run_chain(url, tokens, form, args.connections, args.duration)
                    results.setdefault(label, []).append(got)
                    print(
                        f"  run {run + 1} {label}: {got['rps']:,.0f}/s p50 {got['p50']:.1f} ms "
                        f"p99 {got['p99']:.1f} ms errors {got['status_errors']:.0f}/"
                        f"{got['socket_errors']:.0f}",
                        file=sys.stderr,
                    )
    lines = [f"- {key}: {value}" for key, value in info.items()]
    lines.append(f"- load average (1 min) before each run: {', '.join(loads)}")
    lines.append(f"- {args.runs} runs of {args.duration} s each, {args.connections} connections")
    lines += [
        "",
        "| scenario | per second (median) | p50 ms | p99 ms | errors |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, runs in results.items():
        m: dict[str, Any] = median_of(runs)
        errors = sum(r["status_errors"] + r["socket_errors"] for r in runs)
        lines.append(
            f"| {name} | {m['rps']:,.0f} | {m['p50']:.1f} | {m['p99']:.1f} | {errors:.0f} |"
        )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
