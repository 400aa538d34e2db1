"""What the HTTP benchmark measures: each path, its requests, on which server, at what load.

A scenario names the server it loads (``resource``, ``uncached``, ``auth``, ``baseline``, or one
of those with ``-before`` for a ``--compare`` checkout) and the requests wrk sends in turn. The
baseline runs at the same connection counts as the paths compared with it, so that every ratio
is taken between two figures of one run.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace

from bench.fixture import Fixture

Request = tuple[str, str, dict[str, str], str | None]  # method, path, headers, body

# Searches run in turn: an artist, titles, a subject, a phrase, an unaccented name.
SEARCHES = ("turner", "ophelia", "portrait", "picasso", "the thames", "landscape", "cezanne")

# The baseline's name at 32 connections: the paths' ratios and the targets are taken against it.
BASELINE = "baseline c32"


@dataclass
class Scenario:
    """One path under load: its requests and how many connections."""

    name: str
    server: str
    requests: list[Request]
    connections: int
    expect_status_errors: bool = False


def catalog_scenarios(fx: Fixture) -> list[Scenario]:
    """The catalog paths and their baseline."""
    auth = {"X-Xapp-Token": fx.xapp_token}
    items: list[Request] = [("GET", f"/api/artworks/{i}", auth, None) for i in fx.artwork_ids]
    hello: list[Request] = [("GET", "/hello", {}, None)]
    out = []
    for conns in (8, 32, 64):
        out.append(Scenario(f"baseline c{conns}", "baseline", hello, conns))
        out.append(Scenario(f"artwork c{conns}", "resource", items, conns))
    # The per-request fixed cost: the middleware alone (no token), then with the request gate
    # (a token checked and counted, then a 400 for a blank search: no database read).
    out.append(Scenario("healthz c32", "resource", [("GET", "/healthz", {}, None)], 32))
    gated: list[Request] = [("GET", "/api/search?q=", auth, None)]
    out.append(Scenario("token + 400 c32", "resource", gated, 32, expect_status_errors=True))
    # The same items with the rendered-document cache off: what a cold cache costs.
    out.append(Scenario("artwork uncached c32", "uncached", items, 32))
    # Lists and search twice: answered from the pages each process keeps ("cached": the same
    # URL again and again), and read and rendered every time (the caches off).
    listing: list[Request] = [("GET", "/api/artworks?size=20", auth, None)]
    search: list[Request] = [
        ("GET", f"/api/search?q={q.replace(' ', '+')}", auth, None) for q in SEARCHES
    ]
    for server, label in (("resource", ""), ("uncached", " uncached")):
        out.append(Scenario(f"list size=20{label}", server, listing, 32))
        if fx.deep_path:
            deep: list[Request] = [("GET", fx.deep_path, auth, None)]
            out.append(Scenario(f"deep cursor{label}", server, deep, 32))
        out.append(Scenario(f"search{label}", server, search, 32))
    return out


def before(scenarios: list[Scenario]) -> list[Scenario]:
    """The catalog paths again, on the ``--compare`` checkout's servers, marked (before)."""
    return [
        replace(s, name=f"{s.name} (before)", server=f"{s.server}-before")
        for s in scenarios
        if s.server != "baseline"
    ]


def auth_scenarios(fx: Fixture) -> list[Scenario]:
    """XAPP issuance, and the throttle turning away a flood of sign-in attempts."""
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    xapp: list[Request] = [
        (
            "POST",
            "/api/tokens/xapp_token",
            form,
            f"client_id={fx.client_id}&client_secret={fx.client_secret}",
        )
    ]
    flood = (
        f"grant_type=credentials&client_id={fx.client_id}&client_secret={fx.client_secret}"
        f"&email={fx.email.replace('@', '%40')}&password=wrong-{secrets.token_hex(4)}"
    )
    sign_in: list[Request] = [("POST", "/oauth2/access_token", form, flood)]
    return [
        Scenario("xapp c8", "auth", xapp, 8),
        Scenario("xapp c32", "auth", xapp, 32),
        Scenario("throttled sign-in c1", "auth", sign_in, 1, expect_status_errors=True),
    ]


def only_paths(scenarios: list[Scenario], names: str) -> list[Scenario]:
    """Keep the paths whose names start with one of ``names`` (comma-separated).

    The baseline stays at 32 connections (the targets are taken against it) and at the
    connections of every path kept: each ratio is taken at the same load.
    """
    wanted = tuple(p.strip() for p in names.split(",") if p.strip())
    kept = [s for s in scenarios if s.server != "baseline" and s.name.startswith(wanted)]
    loads = {32} | {s.connections for s in kept}
    return [
        s
        for s in scenarios
        if s in kept or (s.server == "baseline" and (s.name == BASELINE or s.connections in loads))
    ]
