"""The route table: each mounted resource serves its own route, and the token endpoints'
parameters are described from the table the authorization server reads them by."""

from __future__ import annotations

from auth_server.server import KNOWN_PARAMS
from auth_server.token_params import GRANT_TYPES, OAUTH_PROVIDERS, TOKEN_HINT_PARAMS, TOKEN_PARAMS
from resource_server.app import ROOT_ROUTES, ROUTE_TABLE
from resource_server.openapi import build_document
from resource_server.resources.catalog_pages import CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute


def test_every_mounted_responder_serves_its_route() -> None:
    for mount in ROUTE_TABLE:
        for resource in (mount.collection, mount.item):
            if resource is not None and issubclass(resource, Responder):
                assert resource.route is mount.route, resource
        assert mount.collection is None or not issubclass(mount.collection, CatalogItem)
        assert mount.item is None or not issubclass(mount.item, CatalogList)


def test_root_routes_follow_the_table() -> None:
    assert [mount.route for mount in ROUTE_TABLE] == ROOT_ROUTES


def test_user_routes_answer_with_the_route_auth() -> None:
    for mount in ROUTE_TABLE:
        route, collection = mount.route, mount.collection
        if isinstance(route, CollectionRoute) and collection is not None:
            assert collection.auth == route.auth


def test_token_request_is_described_from_the_shared_table() -> None:
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")
    body = doc["paths"]["/oauth2/access_token"]["post"]["requestBody"]["content"]
    schema = body["application/json"]["schema"]
    assert list(schema["properties"]) == list(TOKEN_PARAMS)
    assert schema["properties"]["grant_type"]["enum"] == list(GRANT_TYPES)
    assert schema["properties"]["oauth_provider"]["enum"] == list(OAUTH_PROVIDERS)
    revoke = doc["paths"]["/oauth2/revoke"]["post"]["requestBody"]["content"]
    assert list(revoke["application/json"]["schema"]["properties"]) == list(TOKEN_HINT_PARAMS)


def test_the_auth_server_names_every_token_parameter() -> None:
    assert set(TOKEN_PARAMS) | set(TOKEN_HINT_PARAMS) <= KNOWN_PARAMS
