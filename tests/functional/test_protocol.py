"""Protocol rules of the catalog: media types, CORS, HEAD, rate limits, no 5xx."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from tests.functional.process_support import xapp_token
from tests.servers import LiveServer


@pytest.fixture
def token(auth_server: LiveServer, app_credentials: dict[str, str]) -> str:
    """An XAPP token of a fresh application."""
    return xapp_token(auth_server, app_credentials)


def test_unsupported_request_body_type_is_406(resource_server: LiveServer, token: str) -> None:
    r = requests.post(
        f"{resource_server.url}/api/artists",
        data="x=y",
        headers={"Content-Type": "invalid/type", "X-Xapp-Token": token},
        timeout=10,
    )
    assert r.status_code == 406
    assert r.json() == {"error": "The requested content-type 'invalid/type' is not supported."}


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("application/vnd.artcat-v2+json", "application/vnd.artcat-v2+json"),
        ("application/hal+json", "application/hal+json"),
        ("application/json", "application/json"),
        ("*/*", "application/json"),
        ("", "application/json"),
    ],
)
def test_accept_header_is_honoured(
    resource_server: LiveServer, token: str, accept: str, expected: str
) -> None:
    r = requests.get(
        f"{resource_server.url}/api/artists",
        headers={"Accept": accept, "X-Xapp-Token": token},
        timeout=10,
    )
    assert r.status_code == 200
    assert r.headers["Content-Type"].split(";")[0] == expected
    assert r.json()["_embedded"] == {"artists": []}


def test_cors_preflight_allows_token_headers(resource_server: LiveServer) -> None:
    r = requests.options(
        f"{resource_server.url}/api/artists",
        headers={
            "Origin": "https://app.example.org",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "X-Xapp-Token, X-Access-Token",
        },
        timeout=10,
    )
    assert r.status_code == 200
    assert r.headers["Access-Control-Allow-Origin"] == "*"
    assert "x-xapp-token" in r.headers["Access-Control-Allow-Headers"].lower()
    plain = requests.get(
        f"{resource_server.url}/api", headers={"Origin": "https://a.example"}, timeout=10
    )
    assert plain.headers["Access-Control-Allow-Origin"] == "*"


def test_head_answers_like_get_without_a_body(resource_server: LiveServer, token: str) -> None:
    r = requests.head(
        f"{resource_server.url}/api/artists", headers={"X-Xapp-Token": token}, timeout=10
    )
    assert r.status_code == 200 and r.content == b""
    assert requests.head(f"{resource_server.url}/api", timeout=10).status_code == 200


def test_rate_limit_per_application(
    resource_server: LiveServer,
    auth_server: LiveServer,
    app_credentials: dict[str, str],
    sessions: sessionmaker[Session],
) -> None:
    with sessions() as s, s.begin():
        s.execute(
            update(Application)
            .where(Application.client_id == app_credentials["client_id"])
            .values(rate_limit="3/minute")
        )
    token = xapp_token(auth_server, app_credentials)
    url = f"{resource_server.url}/api/artists"
    statuses = [
        requests.get(url, headers={"X-Xapp-Token": token}, timeout=10).status_code for _ in range(4)
    ]
    assert statuses == [200, 200, 200, 429]
    r = requests.get(url, headers={"X-Xapp-Token": token}, timeout=10)
    assert r.status_code == 429
    assert r.json()["type"] == "rate_limit_error" and "3/minute" in r.json()["message"]
    assert 1 <= int(r.headers["Retry-After"]) <= 60
    # Another application is not affected, and the root needs no token so it is not counted.
    assert requests.get(f"{resource_server.url}/api", timeout=10).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/api/artists?size=%00",
        "/api/artists?cursor=" + "A" * 5000,
        "/api/artists/%ff%fe",
        "/api/artists/" + "a" * 3000,
        "/api/artists?artwork_id[]=1&size[]=2",
        "/api/artists?total_count=1&sample=1&offset=999999999999999999999",
        "/api/%2e%2e/%2e%2e/etc/passwd",
        "/api/artists?gene_id=' OR 1=1 --",
    ],
)
def test_malformed_requests_never_5xx(resource_server: LiveServer, token: str, path: str) -> None:
    r = requests.get(f"{resource_server.url}{path}", headers={"X-Xapp-Token": token}, timeout=10)
    assert r.status_code < 500, (path, r.status_code, r.text)
    assert r.headers["Content-Type"].startswith("application/")


def test_hostile_tokens_never_5xx(resource_server: LiveServer) -> None:
    for value in ("\u00ff" * 10, "a" * 5000, "Bearer", "x|y|z", "N", "X"):
        h: dict[str, Any] = {"X-Xapp-Token": value.encode("latin-1", "replace")}
        r = requests.get(f"{resource_server.url}/api/artists", headers=h, timeout=10)
        assert r.status_code == 401, value


@pytest.mark.parametrize(
    "path",
    [
        "/api/artists/abc%00def",
        "/api/artists?gene_id=%00",
        "/api/artists?x%00=1",
        "/api/artists?cursor=WyJcdTAwMDAiXQ",
    ],
)
def test_nul_bytes_are_refused_before_any_lookup(
    resource_server: LiveServer, token: str, path: str
) -> None:
    r = requests.get(f"{resource_server.url}{path}", headers={"X-Xapp-Token": token}, timeout=10)
    assert r.status_code == 400, r.text
    assert r.json()["type"] == "param_error"
