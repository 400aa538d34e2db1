"""The OpenAPI document: valid 3.1, and not one route of either service missing from it."""

from __future__ import annotations

import re

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
