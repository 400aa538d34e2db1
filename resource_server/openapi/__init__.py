"""The OpenAPI 3.1 document of both services, generated from the route declarations."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from common.api.paging import MAX_OFFSET
from resource_server.openapi.auth_ops import AUTH_API, AUTH_SCHEMAS
from resource_server.openapi.catalog_ops import CATALOG_SCHEMAS, CATALOG_WRITES
from resource_server.openapi.pages import AUTH_PAGES
from resource_server.openapi.parts import (
    ERROR_RESPONSES,
    HEAD_TOO_LARGE,
    ID_PATH,
    NO_NUL,
    URL_TEXT,
    Op,
)
from resource_server.openapi.parts import json_response as _json
from resource_server.openapi.schemas import ACCOUNTS, CATALOG, COMMON, components, schema_name
from resource_server.params import Param
from resource_server.routes import CollectionRoute, PlainRoute

PARAM_SCHEMAS: dict[str, dict[str, Any]] = {
    "id": {"type": "string", "pattern": "^[0-9a-f]{24}$"},
    "bool": {"type": "string", "enum": ["true", "false", "1", "0", "yes", "no"]},
    "int": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999},
    "str": {"type": "string", "maxLength": 500, "pattern": NO_NUL},
}
# An empty optional filter (``?partner_id=``) is an absent one.
EMPTY: dict[str, Any] = {"type": "string", "maxLength": 0}


def _param(p: Param) -> dict[str, Any]:
    schema = (
        {"type": "string", "enum": list(p.choices)} if p.kind == "enum" else PARAM_SCHEMAS[p.kind]
    )
    if not p.required and p.kind != "str":
        schema = {"anyOf": [schema, EMPTY]}
    doc: dict[str, Any] = {"name": p.name, "in": "query", "required": p.required, "schema": schema}
    if p.description:
        doc["description"] = p.description
    return doc


PAGING = [
    {"name": "size", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}},
    {
        "name": "cursor",
        "in": "query",
        "description": "Opaque: copy it from a `next` link. Not with `offset` (a 400).",
        "schema": {"type": "string", "maxLength": 1000, "pattern": "^[A-Za-z0-9_-]*={0,2}$"},
    },
    {
        "name": "offset",
        "in": "query",
        "description": "Items to skip before the first page. Not with `cursor` (a 400).",
        "schema": {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET},
    },
    {"name": "total_count", "in": "query", "schema": PARAM_SCHEMAS["bool"]},
    {"name": "sample", "in": "query", "schema": PARAM_SCHEMAS["bool"]},
]
# The token a route's ``auth`` level asks for: any token (``app``) or a user's (``user``).
SECURITY: dict[str, list[dict[str, list[str]]]] = {
    "app": [{"xappToken": []}, {"accessToken": []}, {"bearer": []}],
    "user": [{"accessToken": []}, {"bearer": []}],
}
# The operations not generated from a collection route, declared by concern.
EXTRA_OPERATIONS: dict[tuple[str, str], Op] = {**CATALOG_WRITES, **AUTH_API, **AUTH_PAGES}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _page_schema(plural: str, item: str, *, sets: bool = False) -> dict[str, Any]:
    # A similarity set (``similar_to_*``) is not paginated: it has no total_count and no next.
    required = ["_links", "_embedded"] if sets else ["total_count", "_links", "_embedded"]
    return {
        "type": "object",
        "required": required,
        "properties": {
            "total_count": {"type": ["integer", "null"]},
            "_links": _ref("PageLinks"),
            "_embedded": {
                "type": "object",
                "required": [plural],
                "properties": {plural: {"type": "array", "items": _ref(item)}},
            },
        },
    }


def collection_operations(route: CollectionRoute) -> dict[str, dict[str, Any]]:
    """Return the generated GET operations of a collection route and its item route."""
    name = schema_name(route)
    sets = any(p.name.startswith("similar_to_") for p in route.filters)
    page_description = f"A page of {route.rel}" + (
        " (or, with a similar_to_ filter, the set of similar ones: no total_count, no next)"
        if sets
        else ""
    )
    ops: dict[str, dict[str, Any]] = {
        f"/api{route.path}": {
            "get": {
                "operationId": f"list_{route.rel}",
                "summary": f"List {route.rel.replace('_', ' ')}",
                "parameters": [_param(p) for p in route.filters] + (PAGING if route.paged else []),
                "security": SECURITY[route.auth],
                "responses": {
                    "200": _json(_page_schema(route.rel, name, sets=sets), page_description),
                    "302": {"description": "`sample`: the URL of one random element"},
                    **ERROR_RESPONSES,
                },
            }
        }
    }
    if route.item_rel:
        ops[f"/api{route.item_path}"] = {
            "get": {
                "operationId": f"get_{route.item_rel}",
                "summary": f"Show one {route.item_rel.replace('_', ' ')}",
                "parameters": [ID_PATH]
                + [
                    {
                        "name": n,
                        "in": "query",
                        "required": n in route.item_required,
                        "schema": PARAM_SCHEMAS["id"],
                    }
                    for n in route.item_params
                ],
                "security": SECURITY[route.item_auth],
                "responses": {
                    "200": _json(_ref(name), f"The {route.item_rel.replace('_', ' ')}"),
                    "302": {"description": "A slug or handle: the id URL"},
                    **ERROR_RESPONSES,
                },
            }
        }
    return ops


def build_document(
    routes: Sequence[CollectionRoute | PlainRoute], server_url: str
) -> dict[str, Any]:
    """Build the whole document: generated catalog operations plus the declared others."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        if isinstance(route, CollectionRoute):
            for path, ops in collection_operations(route).items():
                paths.setdefault(path, {}).update(ops)
    for (path, method), op in EXTRA_OPERATIONS.items():
        paths.setdefault(path, {})[method] = op
    for path, ops in paths.items():
        for method, op in ops.items():
            ops[method] = {**op, "responses": {**op["responses"], "431": HEAD_TOO_LARGE}}
        if "get" in ops and "head" not in ops:
            ops["head"] = {**ops["get"], "operationId": ops["get"]["operationId"] + "_head"}
        for name in re.findall(r"\{([^}]+)\}", path):
            for method, op in ops.items():
                params = op.get("parameters", [])
                if not any(p.get("in") == "path" and p.get("name") == name for p in params):
                    path_param = {"name": name, "in": "path", "required": True, "schema": URL_TEXT}
                    ops[method] = {**op, "parameters": [path_param, *params]}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "artcat",
            "version": "2",
            "description": "An art catalog served as JSON+HAL, and its OAuth2 server.",
        },
        "servers": [{"url": server_url}],
        "paths": dict(sorted(paths.items())),
        "components": components(CATALOG, ACCOUNTS, COMMON, CATALOG_SCHEMAS, AUTH_SCHEMAS),
    }
