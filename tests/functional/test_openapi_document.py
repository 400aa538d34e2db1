"""The OpenAPI document served over HTTP, and the check of every response against it."""

from __future__ import annotations

import requests
from openapi_spec_validator import validate

from tests.functional import conftest
from tests.functional.conftest import LiveServer


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
    assert resource_server.server.effective_port in conftest.CHECKED_PORTS


def test_a_rule_no_schema_can_state_is_in_the_parameters_description(
    resource_server: LiveServer,
) -> None:
    doc = requests.get(f"{resource_server.url}/api/openapi.json", timeout=10).json()
    params = {p["name"]: p for p in doc["paths"]["/api/artworks"]["get"]["parameters"]}
    assert "Only with `user_id`" in params["collection_id"]["description"]
