"""The edge as production runs it: deploy/nginx.conf in a real nginx, in front of one auth and two
catalog processes (``artcat serve`` under granian, on the test database and a Redis of the
module's own), everything over real sockets.

- every route of both apps (from their own route tables) reaches its service, through the
  public listener, and both catalog processes get requests;
- the client's address reaches the per-address limits: two addresses have two budgets, and an
  ``X-Forwarded-For`` a client sends does not get it counted as someone else;
- one request id from the edge to the service's access line and back in the response;
- a body over the limit is refused by the edge (413), and never reaches a service;
- ``/metrics``, ``/healthz`` and ``/readyz`` are not public; the internal listener serves them
  to loopback only;
- a rolling restart of the catalog processes under load fails no request.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from common.settings import Settings
from tests.functional.edge.support import Nginx, running_nginx
from tests.functional.process_support import (
    RedisServer,
    Service,
    launch,
    poll,
    running,
    service_env,
    wait_healthy,
    xapp_token,
)
from tests.functional.source_address import client_from
from tests.pages import Account, make_account
from tests.routes import auth_routes, concrete, resource_routes

pytestmark = pytest.mark.functional

PROBES = ("/metrics", "/healthz", "/readyz")
PAGE_BUDGET = 3  # the catalog's HTML pages a client address may ask for (PAGE_RATE_LIMIT_BURST)
NGINX_ID = re.compile(r"[0-9a-f]{32}")  # nginx's $request_id
ONE_MIB = 1024 * 1024


@dataclass
class Edge:
    """The edge and the processes behind it."""

    nginx: Nginx
    services: list[Service]  # auth, then the two catalog processes
    env: dict[str, str]
    logs: Path
    account: Account

    @property
    def auth(self) -> Service:
        """Return the auth process."""
        return self.services[0]

    @property
    def catalogs(self) -> list[Service]:
        """Return the catalog processes."""
        return self.services[1:]

    def host_port(self, svc: Service) -> str:
        """Return a process's ``host:port``."""
        return svc.url.removeprefix("http://")


@pytest.fixture(scope="module")
def edge(
    module_db: Engine,
    redis_server: RedisServer,
    base_settings: Settings,
    sessions: sessionmaker[Session],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Edge]:
    """nginx with the shipped config in front of `artcat serve auth` and two `artcat serve
    resource`, under granian, trusting the proxy on loopback (TRUSTED_PROXY, one hop)."""
    account = make_account(sessions, base_settings)
    instance = tmp_path_factory.mktemp("edge")
    env = service_env(
        base_settings,
        database_url=base_settings.sqlalchemy_url,
        redis_url=redis_server.url,
        instance_dir=instance,
        WSGI_SERVER="granian",
        TRUSTED_PROXY="127.0.0.1",
        PAGE_RATE_LIMIT="1/minute",
        PAGE_RATE_LIMIT_BURST=str(PAGE_BUDGET),
        SHUTDOWN_GRACE="5",
    )
    logs = instance / "logs"
    with running([("auth", env), ("resource", env), ("resource", env)], logs) as services:
        upstreams = {
            "auth": [services[0].url.removeprefix("http://")],
            "resource": [svc.url.removeprefix("http://") for svc in services[1:]],
        }
        with running_nginx(instance / "nginx", upstreams) as nginx:
            yield Edge(nginx, services, env, logs, account)
            assert "[alert]" not in nginx.error_log() and "[emerg]" not in nginx.error_log()


def access_lines(svc: Service) -> list[dict[str, object]]:
    """Return the JSON access lines a process wrote (its other output skipped)."""
    lines = []
    for line in svc.output().splitlines():
        if line.startswith("{") and '"request_id"' in line:
            found = json.loads(line)
            if "status" in found:
                lines.append(found)
    return lines


def served_by(edge: Edge, rids: set[str], deadline: float = 10.0) -> dict[str, int]:
    """Return, for each request id, the index (in ``edge.services``) of the process that logged
    it, waiting until every id is logged."""
    end = time.monotonic() + deadline
    while True:
        where = {
            str(line["request_id"]): n
            for n, svc in enumerate(edge.services)
            for line in access_lines(svc)
            if line["request_id"] in rids
        }
        if set(where) == rids or time.monotonic() > end:
            return where
        time.sleep(0.1)


def edge_lines(edge: Edge, rids: set[str], deadline: float = 10.0) -> list[dict[str, object]]:
    """Return the edge's own access lines once those of ``rids`` are written (nginx writes a
    request's line after its answer is sent, so a client may read the answer first)."""
    end = time.monotonic() + deadline
    while True:
        lines = [json.loads(line) for line in edge.nginx.access_log().splitlines() if line]
        if rids <= {str(line["request_id"]) for line in lines} or time.monotonic() > end:
            return lines
        time.sleep(0.05)


# -- routing -----------------------------------------------------------------------------------


def test_every_route_reaches_its_service_and_both_catalogs_serve(edge: Edge) -> None:
    sent: dict[str, str] = {}  # request id -> the service that must answer it
    for service, rules in (("auth", auth_routes()), ("resource", resource_routes())):
        for n, rule in enumerate(sorted(r for r in rules if r not in PROBES)):
            rid = f"route-{service}-{n}"
            answer = requests.get(
                f"{edge.nginx.url}{concrete(rule)}",
                headers={"X-Request-Id": rid},
                allow_redirects=False,
                timeout=10,
            )
            # The service's answer, whatever it is (a 405 for a POST-only route, a 404 for the
            # sample id): never the edge's 502 or 404.
            assert answer.status_code != 502, (rule, answer.text[:200])
            assert answer.headers["X-Request-Id"] == rid
            sent[rid] = service
    where = served_by(edge, set(sent))
    assert set(where) == set(sent), sorted(set(sent) - set(where))
    for rid, service in sent.items():
        assert edge.services[where[rid]].service == service, rid
    catalogs = Counter(where[rid] for rid, service in sent.items() if service == "resource")
    assert set(catalogs) == {1, 2}, catalogs  # both catalog processes received requests


# -- the client's address ----------------------------------------------------------------------


def test_each_client_address_has_its_own_budget_and_cannot_borrow_one(edge: Edge) -> None:
    alice, bob = client_from("127.0.0.21"), client_from("127.0.0.22")
    page = f"{edge.nginx.url}/"
    for _ in range(PAGE_BUDGET):
        assert alice.get(page, timeout=10).status_code == 200
    assert alice.get(page, timeout=10).status_code == 429
    # Claiming to be someone else (or to be the edge itself) changes nothing: the edge
    # replaces X-Forwarded-For with the peer's address, and the service trusts that one hop.
    for claim in ("127.0.0.23", "127.0.0.22", "127.0.0.1", "127.0.0.24, 127.0.0.25"):
        spoofed = alice.get(page, headers={"X-Forwarded-For": claim}, timeout=10)
        assert spoofed.status_code == 429, claim
    # Another address has its whole budget.
    for _ in range(PAGE_BUDGET):
        assert bob.get(page, timeout=10).status_code == 200
    assert bob.get(page, timeout=10).status_code == 429
    # The services saw and logged each client's own address, never a claimed one.
    rid = "spoof-check"
    alice.get(page, headers={"X-Forwarded-For": "198.51.100.7", "X-Request-Id": rid}, timeout=10)
    where = served_by(edge, {rid})
    logged = [line for line in access_lines(edge.services[where[rid]]) if line["request_id"] == rid]
    assert [line["remote_addr"] for line in logged] == ["127.0.0.21"]
    # The per-page budget is not the API's: the same client still reads the API.
    assert alice.get(f"{edge.nginx.url}/api", timeout=10).status_code == 200


# -- request ids -------------------------------------------------------------------------------


def test_one_request_id_from_the_edge_to_the_service_and_back(edge: Edge) -> None:
    url = f"{edge.nginx.url}/api"
    made = requests.get(url, timeout=10)  # none sent: the edge makes one
    kept = requests.get(url, headers={"X-Request-Id": "trace.4711-a_b"}, timeout=10)
    # One the services would refuse (a space, too long) is replaced at the edge, not passed on.
    replaced = requests.get(url, headers={"X-Request-Id": "no good"}, timeout=10)
    too_long = requests.get(url, headers={"X-Request-Id": "x" * 129}, timeout=10)
    for answer in (made, replaced, too_long):
        assert answer.status_code == 200
        assert NGINX_ID.fullmatch(answer.headers["X-Request-Id"]), answer.headers
    assert kept.headers["X-Request-Id"] == "trace.4711-a_b"
    rids = {a.headers["X-Request-Id"] for a in (made, kept, replaced, too_long)}
    assert len(rids) == 4
    # The same id in the service's access line and in the edge's own.
    where = served_by(edge, rids)
    assert set(where) == rids
    at_edge = {str(line["request_id"]): line for line in edge_lines(edge, rids)}
    for rid in rids:
        assert edge.services[where[rid]].service == "resource"
        assert at_edge[rid]["status"] == 200 and at_edge[rid]["upstream"], at_edge[rid]
    # The edge's own answers carry one as well, once (the service's copy is not doubled).
    refused = requests.get(f"{edge.nginx.url}/metrics", timeout=10)
    assert NGINX_ID.fullmatch(refused.headers["X-Request-Id"])
    assert "," not in made.headers["X-Request-Id"]


# -- body size ---------------------------------------------------------------------------------


def test_a_body_over_the_limit_is_refused_at_the_edge(edge: Edge) -> None:
    too_big = b"a" * (ONE_MIB + 1)
    rids = set()
    for path in ("/api/tokens/xapp_token", "/api/artists", "/account/sign_in"):
        rid = f"too-big-{len(rids)}"
        rids.add(rid)
        answer = requests.post(
            f"{edge.nginx.url}{path}",
            data=too_big,
            headers={"X-Request-Id": rid, "Content-Type": "application/x-www-form-urlencoded"},
            timeout=30,
        )
        assert answer.status_code == 413, (path, answer.status_code)
        assert answer.headers.get("Server", "").startswith("nginx"), answer.headers
    # Refused by the edge alone: no service logged them.
    assert served_by(edge, rids, deadline=1.0) == {}
    # The limit is the services' own: a body of exactly 1 MiB passes the edge to the service,
    # which answers it (a form without credentials: 400 or 401, not 413).
    at_limit = requests.post(
        f"{edge.nginx.url}/api/tokens/xapp_token",
        data=b"a" * ONE_MIB,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        timeout=30,
    )
    assert at_limit.status_code in (400, 401), at_limit.text[:200]


# -- the operator's paths ----------------------------------------------------------------------


def test_metrics_and_probes_are_internal_only(edge: Edge) -> None:
    public = []
    for path in PROBES:
        for spelling in (path, f"/{path}", f"/.{path}", f"/api/..{path}", path + "?x=1"):
            rid = f"probe-{len(public)}"
            public.append(rid)
            answer = requests.get(
                f"{edge.nginx.url}{spelling}", headers={"X-Request-Id": rid}, timeout=10
            )
            assert answer.status_code in (403, 404), (spelling, answer.status_code)
            assert "artcat_" not in answer.text
    assert served_by(edge, set(public), deadline=1.0) == {}  # answered by the edge itself
    # The internal listener serves them, to loopback, from each service.
    for service in ("auth", "resource"):
        metrics = requests.get(f"{edge.nginx.internal_url}/{service}/metrics", timeout=10)
        assert metrics.status_code == 200 and "artcat_http_requests_total" in metrics.text
        assert f'service="{service}"' in metrics.text
        for probe in ("healthz", "readyz"):
            answer = requests.get(f"{edge.nginx.internal_url}/{service}/{probe}", timeout=10)
            assert answer.status_code == 200, (service, probe)
    # Nothing else there, and no one but loopback's 127.0.0.1 and ::1 (here: 127.0.0.2).
    assert requests.get(f"{edge.nginx.internal_url}/api", timeout=10).status_code == 404
    outsider = client_from("127.0.0.2")
    assert outsider.get(f"{edge.nginx.internal_url}/resource/metrics", timeout=10).status_code == (
        403
    )


# -- a rolling restart -------------------------------------------------------------------------


class Load:
    """Threads sending GETs through the edge until stopped, counting the statuses."""

    def __init__(self, url: str, token: str, threads: int = 4) -> None:
        self.url = url
        self.token = token
        self.statuses: Counter[int] = Counter()
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(threads)]

    def run(self) -> None:
        """Send requests until stopped (on a kept-alive connection, as clients do)."""
        http = requests.Session()
        while not self.stopping.is_set():
            try:
                answer = http.get(self.url, headers={"X-Xapp-Token": self.token}, timeout=30)
                status = answer.status_code
            except requests.RequestException as ex:
                with self.lock:
                    self.errors.append(repr(ex))
                continue
            with self.lock:
                self.statuses[status] += 1

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def total(self) -> int:
        """Return the requests answered so far."""
        with self.lock:
            return sum(self.statuses.values())


def loaded(svc: Service) -> bool:
    """Tell whether a process has answered the load's requests."""
    return any(line["path"] == "/api/artists" for line in access_lines(svc))


def answered(load: Load, more: int, what: str) -> None:
    """Wait until ``more`` requests of the load are answered from now."""
    before = load.total()
    poll(lambda: load.total() >= before + more, 30, what)


def back_in_rotation(svc: Service) -> None:
    """Wait until a (re)started process has answered a request of the load through the edge."""
    poll(lambda: loaded(svc), 30, "the restarted process getting a request through the edge")


def test_a_rolling_restart_under_load_fails_no_request(edge: Edge) -> None:
    creds = {"client_id": edge.account.client_id, "client_secret": edge.account.client_secret}
    token = xapp_token(edge.nginx, creds)  # issued through the edge too
    with Load(f"{edge.nginx.url}/api/artists", token) as load:
        answered(load, 20, "requests through the edge before the restart")
        for index in (1, 2):
            old = edge.services[index]
            old.terminate()  # SIGTERM: granian stops accepting, answers what it has, exits
            assert old.proc.wait(30) == 0, old.output()
            answered(load, 5, "requests answered, by the other process, with one stopped")
            port = int(old.url.rsplit(":", 1)[1])
            new = launch("resource", edge.env, edge.logs / f"restarted-{index}.log", port=port)
            edge.services[index] = new  # stopped with the others at the end
            wait_healthy([new])
            # Back in rotation (nginx tries a failed server again after its fail_timeout)
            # before the next one stops, as a rolling restart goes.
            back_in_rotation(new)
        answered(load, 20, "requests answered after the restarts")
    assert not load.errors, load.errors[:5]
    assert set(load.statuses) == {200}, load.statuses
    assert load.total() > 50, load.statuses
