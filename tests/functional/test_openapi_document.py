"""The OpenAPI document served over HTTP, and the check of every response against it."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import requests
from openapi_spec_validator import validate

from common.openapi import compose
from resource_server.app import ROUTE_TABLE
from resource_server.openapi import build_part
from tests import servers
from tests.openapi_check import check_response, document, operation_for
from tests.servers import LiveServer


def test_document_is_served_without_a_token(resource_server: LiveServer) -> None:
    r = requests.get(f"{resource_server.url}/api/openapi.json", timeout=10)
    assert r.status_code == 200
    doc = r.json()
    validate(doc)
    assert doc["servers"] == [{"url": resource_server.url}]
    assert "/api/artists" in doc["paths"] and "/oauth2/access_token" in doc["paths"]


def _get(url: str) -> dict[str, Any]:
    r = requests.get(url, timeout=10)
    assert r.status_code == 200, (url, r.status_code)
    body: dict[str, Any] = r.json()
    return body


def test_the_auth_server_serves_its_own_part(auth_server: LiveServer) -> None:
    part = _get(f"{auth_server.url}/oauth2/openapi.json")
    validate(part)
    assert part["servers"] == [{"url": auth_server.url}]
    assert "/oauth2/access_token" in part["paths"] and "/account/sign_in" in part["paths"]
    assert not [path for path in part["paths"] if path.startswith(("/api/artists", "/docs"))]


def test_the_document_is_the_same_whether_the_services_run_together_or_apart(
    resource_server: LiveServer, auth_server: LiveServer, combined_server: LiveServer
) -> None:
    apart = _get(f"{resource_server.url}/api/openapi.json")
    together = _get(f"{combined_server.url}/api/openapi.json")
    # Composed here from what each service says of itself (the auth server's part as served).
    auth_part = _get(f"{auth_server.url}/oauth2/openapi.json")
    parts = compose([build_part(ROUTE_TABLE), auth_part], "http://x")
    validate(together)
    for doc in (apart, together, parts):
        doc.pop("servers")
    assert apart == together == parts


def test_the_docs_serve_the_oauth2_redirect_page(resource_server: LiveServer) -> None:
    page = requests.get(f"{resource_server.url}/docs/assets/oauth2-redirect.html", timeout=10)
    assert page.status_code == 200
    assert page.headers["Content-Type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert 'src="oauth2-redirect.js"' in page.text
    script = requests.get(f"{resource_server.url}/docs/assets/oauth2-redirect.js", timeout=10)
    assert script.status_code == 200 and "swaggerUIRedirectOauth2" in script.text
    docs = requests.get(f"{resource_server.url}/docs", timeout=10).text
    assert 'data-oauth2-redirect="/docs/assets/oauth2-redirect.html"' in docs
    # The docs show the API's operations; /docs?pages also shows the HTML pages'.
    assert 'href="/docs?pages"' in docs
    assert requests.get(f"{resource_server.url}/docs?pages", timeout=10).status_code == 200


def test_every_response_of_the_servers_is_checked(resource_server: LiveServer) -> None:
    # The autouse fixture wraps requests' transport for the servers under test.
    assert requests.Session.send.__qualname__.endswith("<locals>.send")
    # The fixture compares the port of each request's URL (an int) with the set: a server's
    # own port must be there in the same type, or nothing is ever checked.
    assert urlsplit(resource_server.url).port in servers.CHECKED_PORTS


def test_a_rule_no_schema_can_state_is_in_the_parameters_description(
    resource_server: LiveServer,
) -> None:
    doc = requests.get(f"{resource_server.url}/api/openapi.json", timeout=10).json()
    params = {p["name"]: p for p in doc["paths"]["/api/artworks"]["get"]["parameters"]}
    assert "Only with `user_id`" in params["collection_id"]["description"]


def test_a_request_head_too_large_is_in_the_document(http_auth_server: LiveServer) -> None:
    # The HTTP server answers 431 before any app sees the request: on the token routes as on
    # every other, and the document says so for every operation.
    big = {"X-Big": "a" * 70_000}
    for method, path in (("POST", "/oauth2/access_token"), ("POST", "/api/tokens/xapp_token")):
        url = f"{http_auth_server.url}{path}"
        r = requests.request(method, url, headers=big, timeout=10)
        assert r.status_code == 431, (path, r.status_code)
        found = operation_for(method, url)
        assert found is not None and "431" in found[1]["responses"], path
        content_type = r.headers.get("Content-Type", "")
        assert check_response(method, url, 431, content_type, None) is None
    for path, ops in document()["paths"].items():
        for method, op in ops.items():
            assert "431" in op["responses"], (method, path)


def test_the_response_check_finds_a_body_that_breaks_the_document() -> None:
    # The check every functional test's responses go through: a body missing what the document
    # requires, or with a value of the wrong type, is reported with where it breaks.
    url = "http://127.0.0.1/api/artworks/abc"
    problem = check_response("GET", url, 200, "application/hal+json", {"id": 5})
    assert problem is not None and "is a required property" in problem
    error = {"type": "error", "message": 7}
    problem = check_response("GET", url, 404, "application/json", error)
    assert problem is not None and "message" in problem
    fine = {"type": "x", "message": "m"}
    assert check_response("GET", url, 404, "application/json", fine) is None
