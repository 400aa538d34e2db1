"""The catalog's part of the OpenAPI 3.1 document, generated from its route table, and the
whole document: this part composed with the authorization server's (``common.openapi``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from common.api.paging import MAX_OFFSET
from common.openapi import AUTH_PART, Part, compose, describe, stored_part
from common.openapi.parts import ANY_TOKEN, EMPTY, ERROR_RESPONSES, ID_PATH, NO_NUL, USER, Op
from common.openapi.parts import json_response as _json
from resource_server.openapi.catalog_ops import CATALOG_SCHEMAS, CATALOG_WRITES
from resource_server.openapi.pages import CATALOG_PAGES
from resource_server.openapi.schemas import ACCOUNTS, CATALOG, CATALOG_COMMON, schema_name
from resource_server.params import Param
from resource_server.routes import CollectionRoute, PlainRoute


class Mounted(Protocol):
    """A route of the route table, with the tag its operations are listed under."""

    @property
    def route(self) -> CollectionRoute | PlainRoute:
        """The route."""

    @property
    def tag(self) -> str:
        """The tag of its operations."""


PARAM_SCHEMAS: dict[str, dict[str, Any]] = {
    "id": {"type": "string", "pattern": "^[0-9a-f]{24}$"},
    "bool": {"type": "string", "enum": ["true", "false", "1", "0", "yes", "no"]},
    "int": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999},
    "str": {"type": "string", "maxLength": 500, "pattern": NO_NUL},
}
# An empty optional filter (``?partner_id=``) is an absent one.


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


# An empty paging value is the same as none (a form's empty field), as for every optional value.
PAGING = [
    {
        "name": "size",
        "in": "query",
        "schema": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 100}, EMPTY]},
    },
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
        "schema": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": MAX_OFFSET}, EMPTY]},
    },
    {"name": "total_count", "in": "query", "schema": PARAM_SCHEMAS["bool"]},
    {"name": "sample", "in": "query", "schema": PARAM_SCHEMAS["bool"]},
]
# The token a route's ``auth`` level asks for: any token (``app``) or a user's (``user``).
SECURITY: dict[str, list[dict[str, list[str]]]] = {"app": ANY_TOKEN, "user": USER}
# The operations not generated from a collection route, declared by concern.
EXTRA_OPERATIONS: dict[tuple[str, str], Op] = {**CATALOG_WRITES, **CATALOG_PAGES}


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


def collection_operations(route: CollectionRoute, tag: str) -> dict[str, dict[str, Any]]:
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
                "tags": [tag],
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
                "tags": [tag],
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


def operations(table: Sequence[Mounted]) -> Iterator[tuple[str, str, Op]]:
    """Yield the catalog's operations: generated for each collection, then the declared."""
    for mount in table:
        if isinstance(mount.route, CollectionRoute):
            for path, ops in collection_operations(mount.route, mount.tag).items():
                for method, op in ops.items():
                    # A declared operation stands for the generated one (search's).
                    if (path, method) not in EXTRA_OPERATIONS:
                        yield path, method, op
    # A declared operation is listed under its route's tag (an item's: its collection's).
    tags = {f"/api{mount.route.path}": mount.tag for mount in table}
    for (path, method), op in EXTRA_OPERATIONS.items():
        tag = tags.get(path.removesuffix("/{id}"))
        yield path, method, ({"tags": [tag], **op} if tag and "tags" not in op else op)


def build_part(table: Sequence[Mounted]) -> Part:
    """Return the catalog's part of the document (its own routes only)."""
    return describe(operations(table), {**CATALOG, **ACCOUNTS, **CATALOG_COMMON, **CATALOG_SCHEMAS})


def build_document(table: Sequence[Mounted], server_url: str) -> dict[str, Any]:
    """Return the whole document: the catalog's part and the authorization server's, written
    at build time (the catalog never describes the other server's routes itself)."""
    return compose([build_part(table), stored_part(AUTH_PART)], server_url)
