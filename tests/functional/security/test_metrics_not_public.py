"""``/metrics`` (route counts, failures, memory) is not reachable from the public side.

The finding: the compose proxy passed ``/metrics`` on to the services, so anyone could read the
operator's Prometheus metrics through the public port. Now, in every shipped topology:

- behind the compose proxy: ``deploy/nginx.conf`` (the file compose mounts) answers every
  spelling of ``/metrics`` itself with 404 and passes nothing on, while the API still works
  through it (the metrics are on its internal listener, for loopback: tests/functional/edge).
  Shown by running that very file in a real nginx, against real upstreams (whose
  ``/metrics`` answers a loopback peer such as this nginx: the refusal is the proxy's own);
- ``artcat serve`` / ``serve all`` on their public port: ``/metrics`` is answered only to the
  addresses of ``METRICS_ALLOW`` (loopback by default), matched against the client's address as
  the trusted proxy forwards it; a public client gets the 404 of a path that does not exist.
  Shown on both of the command's servers (waitress, granian).
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import Engine

from common.observability import METRICS_PATH
from common.settings import Settings
from tests.functional.edge.support import Nginx, running_nginx
from tests.functional.process_support import (
    RedisServer,
    Service,
    free_port,
    running,
    service_env,
)
from tests.pages import Account
from tests.servers import LiveServer

pytestmark = pytest.mark.functional

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "deploy" / "nginx.conf"
PUBLIC_CLIENT = "203.0.113.9"  # TEST-NET-3: a client on the internet, as the proxy forwards it
METRICS_TEXT = "artcat_http_requests_total"
# Spellings of /metrics a client may try on the proxy: nginx matches its locations on the
# normalised path (percent-decoded, dot segments resolved, slashes merged).
SPELLINGS = [
    "/metrics",
    "/metrics?name[]=artcat_http_requests_total",
    "/%6Detrics",
    "/%6d%65trics",
    "//metrics",
    "///metrics",
    "/./metrics",
    "/api/../metrics",
    "/%2E/metrics",
    "/%2Fmetrics",
    "/account/%2e%2e/metrics",
]


def host_port(live: LiveServer) -> str:
    """Return an upstream's ``host:port``."""
    return live.url.removeprefix("http://")


@pytest.fixture
def nginx(tmp_path: Path, auth_server: LiveServer, resource_server: LiveServer) -> Iterator[Nginx]:
    """The shipped proxy config in a real nginx on free loopback ports, with a temporary prefix,
    in front of the auth server and the catalog (skipped when nginx is not installed)."""
    upstreams = {"auth": [host_port(auth_server)], "resource": [host_port(resource_server)]}
    with running_nginx(tmp_path / "nginx", upstreams) as edge:
        yield edge


def raw_request(port: int, method: str, target: str) -> tuple[int, str]:
    """Send a request target exactly as written (no client-side normalisation)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, target, headers={"Host": f"127.0.0.1:{port}"})
        answer = conn.getresponse()
        return answer.status, answer.read().decode("latin-1")
    finally:
        conn.close()


def test_the_compose_proxy_keeps_metrics_off_the_public_side(
    nginx: Nginx, auth_server: LiveServer, resource_server: LiveServer, account: Account
) -> None:
    # The upstreams would answer a loopback peer, such as this nginx: the refusal is the proxy's.
    for upstream in (auth_server, resource_server):
        direct = requests.get(f"{upstream.url}{METRICS_PATH}", timeout=10)
        assert direct.status_code == 200 and METRICS_TEXT in direct.text
    targets = [*SPELLINGS, f"http://127.0.0.1:{nginx.port}/metrics"]  # absolute-form too
    for method in ("GET", "HEAD", "POST"):
        for target in targets:
            status, body = raw_request(nginx.port, method, target)
            assert status in (403, 404), (method, target, status, body[:200])
            assert "artcat_" not in body, (method, target)
    # The proxy answered those itself: no upstream saw a request for /metrics.
    lines = [json.loads(line) for line in nginx.access_log().splitlines()]
    assert sum(line["method"] == "GET" for line in lines) >= len(targets)
    assert not [line for line in lines if line["upstream"] or line["status"] == 200], lines

    # The API still works through it: an application token from the auth server, used on the
    # catalog; the auth server's metadata; the catalog's pages.
    token = requests.post(
        f"{nginx.url}/api/tokens/xapp_token",
        data={"client_id": account.client_id, "client_secret": account.client_secret},
        timeout=10,
    )
    assert token.status_code == 201, token.text
    xapp = token.json()["token"]
    artists = requests.get(f"{nginx.url}/api/artists", headers={"X-Xapp-Token": xapp}, timeout=10)
    assert artists.status_code == 200 and "_embedded" in artists.json()
    assert requests.get(f"{nginx.url}/api/artists", timeout=10).status_code == 401
    meta = requests.get(f"{nginx.url}/.well-known/oauth-authorization-server", timeout=10)
    assert meta.status_code == 200 and "token_endpoint" in meta.json()
    assert requests.get(f"{nginx.url}/api", timeout=10).status_code == 200
    assert requests.get(f"{nginx.url}/account/sign_in", timeout=10).status_code == 200
    # The health probes are the operator's too: on the internal listener only.
    assert requests.get(f"{nginx.url}/healthz", timeout=10).status_code == 404
    assert requests.get(f"{nginx.internal_url}/resource/healthz", timeout=10).status_code == 200


# -- `artcat serve` on its public port --------------------------------------------------------


@pytest.fixture(scope="module", params=["waitress", "granian"])
def served(
    request: pytest.FixtureRequest,
    module_db: Engine,
    redis_server: RedisServer,
    base_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[list[Service]]:
    """`artcat serve all` behind a proxy on the same host (TRUSTED_PROXY=127.0.0.1), twice: with
    METRICS_ALLOW's default (loopback), and with the operator's monitoring network allowed."""
    instance = tmp_path_factory.mktemp(f"metrics-{request.param}")
    env = service_env(
        base_settings,
        database_url=base_settings.sqlalchemy_url,
        redis_url=redis_server.url,
        instance_dir=instance,
        WSGI_SERVER=request.param,
        TRUSTED_PROXY="127.0.0.1",
    )
    monitoring = {**env, "METRICS_ALLOW": "198.51.100.0/24"}
    with running([("all", env), ("all", monitoring)], instance / "logs") as services:
        yield services


def metrics_of(base: str, client: str | None = None) -> requests.Response:
    """GET /metrics as a direct loopback client, or as ``client`` through the local proxy."""
    headers = {"X-Forwarded-For": client} if client else {}
    return requests.get(f"{base}{METRICS_PATH}", headers=headers, timeout=10)


def test_serve_answers_metrics_to_the_allowed_addresses_only(served: list[Service]) -> None:
    default, monitoring = served
    # The operator on the host reads them; a public client through the proxy gets a 404, the
    # answer of a path that does not exist.
    own = metrics_of(default.url)
    assert own.status_code == 200 and METRICS_TEXT in own.text
    public = metrics_of(default.url, PUBLIC_CLIENT)
    assert public.status_code == 404 and "artcat_" not in public.text
    nowhere = requests.get(f"{default.url}/nowhere", timeout=10)
    assert (public.status_code, public.headers.get("Content-Type")) == (
        nowhere.status_code,
        nowhere.headers.get("Content-Type"),
    )
    assert metrics_of(default.url, "10.1.2.3").status_code == 404  # a private address: no
    # The API is served to the same public client.
    assert requests.get(
        f"{default.url}/api", headers={"X-Forwarded-For": PUBLIC_CLIENT}, timeout=10
    ).ok
    # METRICS_ALLOW names the monitoring network: it reads them, and no one else does.
    scraper = metrics_of(monitoring.url, "198.51.100.20")
    assert scraper.status_code == 200 and METRICS_TEXT in scraper.text
    for other in (PUBLIC_CLIENT, None):  # None: the host itself, no longer listed
        refused = metrics_of(monitoring.url, other)
        assert refused.status_code == 404 and "artcat_" not in refused.text, other


def test_a_wrong_metrics_allow_stops_the_start(tmp_path: Path, base_settings: Settings) -> None:
    env: dict[str, Any] = service_env(
        base_settings,
        database_url=base_settings.sqlalchemy_url,
        redis_url=base_settings.redis_url,
        instance_dir=tmp_path,
        METRICS_ALLOW="127.0.0.1, monitoring.internal",
    )
    out = subprocess.run(
        [sys.executable, "-m", "artcat", "serve", "all", "--port", str(free_port()), "--no-demo"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode != 0
    assert "METRICS_ALLOW: 'monitoring.internal' is not an address or network" in out.stderr
