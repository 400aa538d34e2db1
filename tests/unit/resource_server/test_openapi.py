"""The OpenAPI document: valid 3.1, composed of each service's own part, and not one route of
either service missing from it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import falcon.inspect
import pytest
from openapi_spec_validator import validate
from redis import Redis

from auth_server.app import create_app as create_auth
from auth_server.app import describe as describe_auth
from common.openapi import TAG_NAMES, compose
from common.settings import AuthSettings, ResourceSettings
from common.stores import Stores
from resource_server.app import ROUTE_TABLE
from resource_server.app import create_app as create_resource
from resource_server.openapi import build_document, build_part
from resource_server.web import front

STORES = Stores(engine=None, sessions=None, redis=Redis(), tokens=None)  # type: ignore[arg-type]


def served_operations() -> set[tuple[str, str]]:
    """Every (path, method) the two apps answer, in OpenAPI path syntax."""
    ops: set[tuple[str, str]] = set()
    resource = create_resource(ResourceSettings(secret_key="x"), STORES)
    for route in falcon.inspect.inspect_routes(resource):
        for m in route.methods:
            # Every GET answers HEAD: the document says so once, not per operation.
            if not m.internal and m.method not in ("OPTIONS", "HEAD"):
                ops.add((route.path, m.method.lower()))
    auth = create_auth(AuthSettings(secret_key="x"), STORES)
    for rule in auth.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule.rule)
        for method in rule.methods or ():
            if method not in ("OPTIONS", "HEAD"):
                ops.add((path, method.lower()))
    return ops


def documented_operations() -> set[tuple[str, str]]:
    """Every (path, method) the document describes."""
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")
    return {(path, method) for path, item in doc["paths"].items() for method in item}


def test_document_is_valid_openapi_3_1() -> None:
    validate(build_document(ROUTE_TABLE, "https://api.example.org"))


def test_every_served_route_is_documented() -> None:
    missing = served_operations() - documented_operations()
    assert not missing, f"routes missing from the OpenAPI document: {sorted(missing)}"


def test_the_document_names_no_route_that_does_not_exist() -> None:
    served = served_operations()
    extra = {
        (path, method) for path, method in documented_operations() if (path, method) not in served
    }
    assert not extra, f"documented but not served: {sorted(extra)}"


def test_operation_ids_are_unique() -> None:
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))


def test_security_says_which_token_each_catalog_route_needs() -> None:
    # A route whose resource wants a user token must not advertise XAPP tokens (and the other
    # way round): generated clients, and Schemathesis, send what the document says.
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")
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
        user = {"accessToken", "bearer", "oauth2"}
        expected = {"none": set(), "app": {"xappToken", *user}}.get(level, user)
        assert schemes == expected, (path, level, schemes)
        checked += 1
    assert checked > 30


def test_required_parameters_are_marked_required() -> None:
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")

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
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")

    def page(path: str) -> dict[str, Any]:
        schema: dict[str, Any] = doc["paths"][path]["get"]["responses"]["200"]["content"]
        return schema["application/json"]["schema"]

    assert "total_count" not in page("/api/artists")["required"]
    assert "total_count" not in page("/api/artworks")["required"]
    assert "total_count" in page("/api/genes")["required"]


def test_writes_and_pages_document_their_refusals() -> None:
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")
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


def operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(p, method, op) for p, item in doc["paths"].items() for method, op in item.items()]


def test_every_operation_has_one_known_tag() -> None:
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")
    for path, method, op in operations(doc):
        assert len(op["tags"]) == 1 and op["tags"][0] in TAG_NAMES, (method, path)
    assert [tag["name"] for tag in doc["tags"]] == TAG_NAMES
    tag = {(path, method): op["tags"][0] for path, method, op in operations(doc)}
    assert tag[("/api/artists", "get")] == "catalog"
    assert tag[("/api/search", "get")] == "search"
    assert tag[("/api/sale_artworks/{id}", "get")] == "auctions"
    assert tag[("/api/collections/{id}", "put")] == "accounts"
    assert tag[("/api/applications", "post")] == "accounts"
    assert tag[("/api/tokens/xapp_token", "post")] == "tokens"
    assert tag[("/oauth2/access_token", "post")] == "OAuth"


def test_operation_ids_are_short_and_unique() -> None:
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")
    ids = [op["operationId"] for _, _, op in operations(doc)]
    assert len(ids) == len(set(ids))
    for op_id in ids:
        assert re.fullmatch(r"[a-z][a-z0-9_]{1,39}", op_id), op_id
        assert op_id.count("_") <= 4, op_id


def test_head_is_not_an_operation_and_the_info_says_every_get_answers_it() -> None:
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")
    assert not [path for path, item in doc["paths"].items() if "head" in item]
    assert "Every GET operation also answers HEAD" in doc["info"]["description"]


def test_pages_are_tagged_pages_and_only_they() -> None:
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")
    for path, method, op in operations(doc):
        html = "text/html" in op["responses"].get("200", {}).get("content", {})
        assert (op["tags"] == ["pages"]) == (html and not path.startswith("/api")), (method, path)


def test_the_docs_page_hides_the_pages_at_first_and_has_the_oauth_redirect() -> None:
    # Swagger UI (docs.js) leaves the operations tagged `pages` out unless asked for them,
    # and its OAuth redirect page is one of the files the docs serve.
    script = (Path(front.__file__).parent / "static" / "docs.js").read_text()
    assert '"pages"' in script and "oauth2RedirectUrl" in script
    assert "usePkceWithAuthorizationCodeGrant: true" in script
    assert {"oauth2-redirect.html", "oauth2-redirect.js"} <= set(front.DOCS_ASSETS)
    doc = build_document(ROUTE_TABLE, "http://127.0.0.1")
    flow = doc["components"]["securitySchemes"]["oauth2"]["flows"]["authorizationCode"]
    assert flow["authorizationUrl"] == "/oauth2/authorize"
    assert ("/oauth2/authorize", "get") in documented_operations()


def test_each_service_describes_only_its_own_routes() -> None:
    catalog = {(p, m) for p, item in build_part(ROUTE_TABLE)["paths"].items() for m in item}
    auth = {(p, m) for p, item in describe_auth()["paths"].items() for m in item}
    # Both answer the health routes, described alike; nothing else is in both.
    assert catalog & auth == {("/healthz", "get"), ("/readyz", "get")}
    assert not {p for p, _ in catalog if p.startswith(("/oauth2", "/account", "/api/tokens"))}
    assert not {p for p, _ in catalog if p.startswith("/api/applications")}
    assert {p for p, _ in auth} <= {p for p, _ in served_auth_operations()}


def served_auth_operations() -> set[tuple[str, str]]:
    auth = create_auth(AuthSettings(secret_key="x"), STORES)
    return {
        (re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule.rule), method.lower())
        for rule in auth.url_map.iter_rules()
        for method in rule.methods or ()
    }


def test_the_composed_document_is_the_same_from_the_stored_part() -> None:
    # What the catalog serves alone (the stored part) is what both describe now.
    live = compose([build_part(ROUTE_TABLE), describe_auth()], "http://127.0.0.1")
    assert build_document(ROUTE_TABLE, "http://127.0.0.1") == live
    validate(live)


def test_composing_refuses_an_operation_or_id_described_two_ways() -> None:
    catalog = build_part(ROUTE_TABLE)
    healthz = catalog["paths"]["/healthz"]["get"]
    other = {"paths": {"/healthz": {"get": {**healthz, "summary": "Alive?"}}}}
    with pytest.raises(ValueError, match="described two ways"):
        compose([catalog, {**catalog, **other}], "http://127.0.0.1")
    twin = {"paths": {"/elsewhere": {"get": healthz}}}
    with pytest.raises(ValueError, match="used twice"):
        compose([catalog, {**catalog, **twin}], "http://127.0.0.1")
