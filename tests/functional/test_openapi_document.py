"""The OpenAPI document served over HTTP, and the check of every response against it."""

from __future__ import annotations

from urllib.parse import urlsplit

import requests
from openapi_spec_validator import validate

from tests.functional import conftest
from tests.functional.conftest import LiveServer
from tests.openapi_check import check_response, document, operation_for


def test_document_is_served_without_a_token(resource_server: LiveServer) -> None:
    r = requests.get(f"{resource_server.url}/api/openapi.json", timeout=10)
    assert r.status_code == 200
    doc = r.json()
    validate(doc)
    assert doc["servers"] == [{"url": resource_server.url}]
    assert "/api/artists" in doc["paths"] and "/oauth2/access_token" in doc["paths"]


def test_every_response_of_the_servers_is_checked(resource_server: LiveServer) -> None:
    # The autouse fixture wraps requests' transport for the servers under test.
    assert requests.Session.send.__qualname__.endswith("<locals>.send")
    # The fixture compares the port of each request's URL (an int) with the set: a server's
    # own port must be there in the same type, or nothing is ever checked.
    assert urlsplit(resource_server.url).port in conftest.CHECKED_PORTS


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
