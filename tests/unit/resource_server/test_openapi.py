"""The OpenAPI document: valid 3.1, and not one route of either service missing from it."""

from __future__ import annotations

import re
from typing import Any

import falcon.inspect
from openapi_spec_validator import validate
from redis import Redis

from auth_server.app import create_app as create_auth
from common.settings import AuthSettings, ResourceSettings
from common.stores import Stores
from resource_server.app import ROOT_ROUTES
from resource_server.app import create_app as create_resource
from resource_server.openapi import build_document

STORES = Stores(engine=None, sessions=None, redis=Redis(), tokens=None)  # type: ignore[arg-type]


def served_operations() -> set[tuple[str, str]]:
    """Every (path, method) the two apps answer, in OpenAPI path syntax."""
    ops: set[tuple[str, str]] = set()
    resource = create_resource(ResourceSettings(secret_key="x"), STORES)
    for route in falcon.inspect.inspect_routes(resource):
        for m in route.methods:
            if not m.internal and m.method not in ("OPTIONS",):
                ops.add((route.path, m.method.lower()))
    auth = create_auth(AuthSettings(secret_key="x"), STORES)
    for rule in auth.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule.rule)
        path = path.replace("{app_id}", "{id}")
        for method in rule.methods or ():
            if method not in ("OPTIONS", "HEAD"):
                ops.add((path, method.lower()))
    return ops


def documented_operations() -> set[tuple[str, str]]:
    """Every (path, method) the document describes."""
    doc = build_document(ROOT_ROUTES, "http://127.0.0.1")
    return {(path, method) for path, item in doc["paths"].items() for method in item}


def test_document_is_valid_openapi_3_1() -> None:
    validate(build_document(ROOT_ROUTES, "https://api.example.org"))


def test_every_served_route_is_documented() -> None:
    missing = served_operations() - documented_operations()
    assert not missing, f"routes missing from the OpenAPI document: {sorted(missing)}"


def test_the_document_names_no_route_that_does_not_exist() -> None:
    served = served_operations()
    extra = {
        (path, method)
        for path, method in documented_operations()
        if method != "head" and (path, method) not in served
    }
    assert not extra, f"documented but not served: {sorted(extra)}"


def test_operation_ids_are_unique() -> None:
    doc = build_document(ROOT_ROUTES, "http://127.0.0.1")
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))


def test_security_says_which_token_each_catalog_route_needs() -> None:
    # A route whose resource wants a user token must not advertise XAPP tokens (and the other
    # way round): generated clients, and Schemathesis, send what the document says.
    doc = build_document(ROOT_ROUTES, "http://127.0.0.1")
    app = create_resource(ResourceSettings(secret_key="x"), STORES)
    checked = 0
    for path, item in doc["paths"].items():
        if not path.startswith("/api") or "get" not in item:
            continue
        found = app._router.find(path.replace("{id}", "x"))
        if found is None:  # an auth server route
            continue
        level = getattr(found[0], "auth", "app")
        schemes = {name for requirement in item["get"].get("security", []) for name in requirement}
        expected = {"none": set(), "app": {"xappToken", "accessToken", "bearer"}}.get(
            level, {"accessToken", "bearer"}
        )
        assert schemes == expected, (path, level, schemes)
        checked += 1
    assert checked > 30


def test_required_parameters_are_marked_required() -> None:
    doc = build_document(ROOT_ROUTES, "http://127.0.0.1")

    def required(path: str) -> set[str]:
        params = doc["paths"][path]["get"]["parameters"]
        return {p["name"] for p in params if p.get("required") and p["in"] == "query"}

    assert required("/api/collection_items") == {"collection_id", "user_id"}
    assert required("/api/collection_items/{id}") == {"collection_id", "user_id"}
    assert required("/api/collections") == {"user_id"}
    assert required("/api/editions") == required("/api/editions/{id}") == {"artwork_id"}
    # Images need show_id or artwork_id: neither alone is required (a 400 names both).
    assert required("/api/images") == set()
    assert required("/api/search") == {"q"}
    assert required("/api/artists") == set()


def test_similar_sets_need_no_total_count_but_pages_do() -> None:
    doc = build_document(ROOT_ROUTES, "http://127.0.0.1")

    def page(path: str) -> dict[str, Any]:
        schema: dict[str, Any] = doc["paths"][path]["get"]["responses"]["200"]["content"]
        return schema["application/json"]["schema"]

    assert "total_count" not in page("/api/artists")["required"]
    assert "total_count" not in page("/api/artworks")["required"]
    assert "total_count" in page("/api/genes")["required"]


def test_writes_and_pages_document_their_refusals() -> None:
    doc = build_document(ROOT_ROUTES, "http://127.0.0.1")
    for path, method in (
        ("/api/collections", "post"),
        ("/api/collection_items/{id}", "put"),
        ("/api/applications", "post"),
        ("/api/tokens/xapp_token", "post"),
    ):
        assert {"403", "409", "413"} <= set(doc["paths"][path][method]["responses"])
    assert "413" in doc["paths"]["/oauth2/access_token"]["post"]["responses"]
    page = doc["paths"]["/account/static/{filename}"]["get"]["responses"]
    assert {"404", "429"} <= set(page)
