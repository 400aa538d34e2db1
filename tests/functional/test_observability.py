"""Request ids, access lines and ``/metrics`` of both services, over real HTTP."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from redis import Redis

from auth_server.app import create_app as create_auth
from common.settings import AuthSettings, ResourceSettings
from common.stores import Stores
from common.tokens import digest
from resource_server.app import create_app as create_resource
from tests.functional import log_secrets
from tests.functional.in_process import serve_in_process
from tests.functional.process_support import poll, xapp_token
from tests.servers import LiveServer

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
UNKNOWN_ID = "0123456789abcdef01234567"
DEADLINE = 20.0  # a hang guard


def scrape(live: LiveServer) -> Samples:
    """Return every sample of a server's /metrics."""
    r = requests.get(f"{live.url}/metrics", timeout=10)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain")
    out: Samples = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def requests_of(samples: Samples, service: str, route: str, method: str, status: str) -> float:
    labels = {"service": service, "route": route, "method": method, "status": status}
    return samples.get(("artcat_http_requests_total", frozenset(labels.items())), 0.0)


def counter(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((f"{name}_total", frozenset(labels.items())), 0.0)


def test_request_ids_are_echoed_or_generated(
    auth_server: LiveServer, resource_server: LiveServer
) -> None:
    for live, path in ((resource_server, "/api"), (auth_server, "/healthz")):
        given = requests.get(
            f"{live.url}{path}", headers={"X-Request-Id": "trace.4-2_x"}, timeout=10
        )
        assert given.headers["X-Request-Id"] == "trace.4-2_x"
        fresh = requests.get(f"{live.url}{path}", timeout=10).headers["X-Request-Id"]
        assert len(fresh) == 32 and int(fresh, 16) >= 0
        hostile = requests.get(
            f"{live.url}{path}", headers={"X-Request-Id": "<script>" + "x" * 200}, timeout=10
        )
        assert (
            hostile.headers["X-Request-Id"] != fresh and len(hostile.headers["X-Request-Id"]) == 32
        )
    cors = requests.get(f"{resource_server.url}/api", headers={"Origin": "https://a.b"}, timeout=10)
    assert "x-request-id" in cors.headers["Access-Control-Expose-Headers"].lower()


def test_metrics_count_requests_by_route_template_and_status(
    auth_server: LiveServer, resource_server: LiveServer, app_credentials: dict[str, str]
) -> None:
    token = xapp_token(auth_server, app_credentials)
    before = scrape(resource_server)
    for _ in range(2):
        r = requests.get(
            f"{resource_server.url}/api/artists/{UNKNOWN_ID}",
            headers={"X-Xapp-Token": token},
            timeout=10,
        )
        assert r.status_code == 404
    assert requests.get(f"{resource_server.url}/no/such/thing", timeout=10).status_code == 404
    assert requests.get(f"{auth_server.url}/api/applications/x", timeout=10).status_code == 401
    xapp_token(auth_server, app_credentials)

    def delta(service: str, route: str, method: str, status: str) -> float:
        now = scrape(resource_server)  # one registry per process: both services are in it
        return requests_of(now, service, route, method, status) - requests_of(
            before, service, route, method, status
        )

    # A streamed response is counted when waitress closes it: wait for it.
    poll(lambda: delta("auth", "/api/tokens/xapp_token", "POST", "201") == 1, DEADLINE, "xapp")
    assert delta("resource", "/api/artists/{id}", "GET", "404") == 2
    assert delta("resource", "unmatched", "GET", "404") == 1
    assert delta("auth", "/api/applications/<app_id>", "GET", "401") == 1
    latency = ("artcat_http_request_duration_seconds_count", "/api/artists/{id}")
    after = scrape(auth_server)
    labels = frozenset({"service": "resource", "route": latency[1], "method": "GET"}.items())
    assert after[(latency[0], labels)] - before.get((latency[0], labels), 0) >= 2
    assert counter(after, "artcat_token_validations", outcome="valid") >= 2


def test_token_validations_and_cache_misses_are_counted(
    auth_server: LiveServer,
    resource_server: LiveServer,
    app_credentials: dict[str, str],
    stores: Stores,
    redis_client: Redis,
) -> None:
    token = xapp_token(auth_server, app_credentials)
    garbage = "not-a-token-" + "q" * 20
    url = f"{resource_server.url}/api/artists"

    def get(value: str) -> int:
        return requests.get(url, headers={"X-Xapp-Token": value}, timeout=10).status_code

    before = scrape(resource_server)
    assert get(token) == 200  # Redis hit
    assert get(garbage) == 401  # Redis miss, SQL: unknown (then remembered as unknown)
    assert get(garbage) == 401  # Redis hit: the unknown marker
    redis_client.delete(stores.tokens.key(digest(token)))
    assert get(token) == 200  # Redis miss, SQL: valid (written back)
    stores.tokens.expire(token)
    assert get(token) == 401  # the tombstone
    after = scrape(resource_server)

    def grew(name: str, outcome: str) -> float:
        return counter(after, name, outcome=outcome) - counter(before, name, outcome=outcome)

    assert grew("artcat_token_validations", "valid") == 2
    assert grew("artcat_token_validations", "unknown") == 2
    assert grew("artcat_token_validations", "expired") == 1
    assert grew("artcat_token_cache_misses", "unknown") == 1
    assert grew("artcat_token_cache_misses", "valid") == 1
    assert grew("artcat_token_cache_misses", "expired") == 0


def test_rate_limit_rejections_are_counted_and_metrics_are_never_limited(
    auth_server: LiveServer,
    app_credentials: dict[str, str],
    resource_settings: ResourceSettings,
    stores: Stores,
) -> None:
    settings = replace(resource_settings, rate_limit="1/minute", rate_limit_burst=1)
    live = serve_in_process(create_resource(settings, stores))
    try:
        token = xapp_token(auth_server, app_credentials)
        before = scrape(live)
        statuses = [
            requests.get(
                f"{live.url}/api/artists", headers={"X-Xapp-Token": token}, timeout=10
            ).status_code
            for _ in range(3)
        ]
        assert statuses == [200, 429, 429]
        for _ in range(3):  # no token needed, and never limited, even with the limited token
            r = requests.get(f"{live.url}/metrics", headers={"X-Xapp-Token": token}, timeout=10)
            assert r.status_code == 200
            assert requests.get(f"{live.url}/healthz", timeout=10).status_code == 200
        after = scrape(live)
        grown = counter(after, "artcat_rate_limit_rejections") - counter(
            before, "artcat_rate_limit_rejections"
        )
        assert grown == 2
        assert (
            requests_of(after, "resource", "/api/artists", "GET", "429")
            - requests_of(before, "resource", "/api/artists", "GET", "429")
            == 2
        )
    finally:
        live.stop()


def test_metrics_can_be_switched_off(
    auth_settings: AuthSettings, resource_settings: ResourceSettings, stores: Stores
) -> None:
    apps: list[Any] = [
        create_resource(replace(resource_settings, metrics_enabled=False), stores),
        create_auth(replace(auth_settings, metrics_enabled=False), stores),
    ]
    for app in apps:
        live = serve_in_process(app)
        try:
            r = requests.get(f"{live.url}/metrics", timeout=10)
            assert r.status_code == 404 and r.headers["X-Request-Id"]
        finally:
            live.stop()


def test_access_lines_carry_the_request_id_and_no_token(
    auth_server: LiveServer,
    resource_server: LiveServer,
    app_credentials: dict[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = xapp_token(auth_server, app_credentials)
    with caplog.at_level(logging.INFO, logger="artcat.access"):
        r = requests.get(
            f"{resource_server.url}/api/artists",
            params={"xapp_token": token, "size": "2"},
            headers={"X-Request-Id": "line-check-1", "User-Agent": "obs-test/1"},
            timeout=10,
        )
        assert r.status_code == 200
        requests.post(
            f"{auth_server.url}/api/tokens/xapp_token",
            data=app_credentials,
            headers={"X-Request-Id": "line-check-2"},
            timeout=10,
        )

        def lines() -> dict[str, str]:
            out = {}
            for record in caplog.records:
                message = record.getMessage()
                for rid in ("line-check-1", "line-check-2"):
                    if record.name == "artcat.access" and f'"request_id":"{rid}"' in message:
                        out[rid] = message
            return out

        poll(lambda: len(lines()) == 2, DEADLINE, "both access lines")
    resource_line, auth_line = lines()["line-check-1"], lines()["line-check-2"]
    assert '"route":"/api/artists"' in resource_line and '"status":200' in resource_line
    assert "xapp_token=[redacted]" in resource_line and "size=2" in resource_line
    assert '"user_agent":"obs-test/1"' in resource_line and '"service":"resource"' in resource_line
    assert '"route":"/api/tokens/xapp_token"' in auth_line and '"status":201' in auth_line
    for line in (resource_line, auth_line):
        assert token not in line and app_credentials["client_secret"] not in line


def test_the_log_grep_finds_a_leaked_secret() -> None:
    token = "Zq3vN8pR2kLm5tW9xYc1-bD4fG7hJ0sA_eU6iO"
    lines = ['{"path":"/api","query":"size=5"}', f"artcat.auth refused {token}!"]
    assert log_secrets.leaks(lines, {token, "Correct horse 42"}) == [
        f"{token!r} in: artcat.auth refused {token}!"
    ]
    assert log_secrets.leaks(["password=Correct+horse+42"], {"Correct horse 42"})
    assert not log_secrets.leaks(lines, {token[:-1] + "Q"})
