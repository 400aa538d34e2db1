"""The catalog operations not generated from a collection route: the root, status, health,
search, the caller's user, and the writes of collections and their items.

An operation is listed under the tag of its route in the route table; those outside it (the
root, health, this document) name their own."""

from __future__ import annotations

from common.openapi.parts import (
    ANY_TOKEN,
    DESCRIPTION,
    EMPTY,
    ERROR_RESPONSES,
    FLAG,
    ID,
    ID_PATH,
    INT,
    NAME,
    POSITION,
    SOME_TEXT,
    STR,
    USER,
    WRITE_ERRORS,
    Op,
    Schema,
    body,
    null,
    obj,
    op,
    ref,
)
from common.openapi.parts import json_response as _json
from common.search.documents import KINDS
from common.search.text import MAX_QUERY_CHARS
from resource_server.search.service import MAX_OFFSET, MAX_SIZE, WINDOW

KIND = "|".join(KINDS)

CATALOG_WRITES: dict[tuple[str, str], Op] = {
    ("/api", "get"): op(
        "get_root",
        "The root: links and templates",
        {"200": _json(ref("Root"), "Root")},
        tags=["service"],
    ),
    ("/api/status", "get"): op(
        "get_status", "Service status", {"200": _json(ref("Status"), "Status")}
    ),
    ("/api/openapi.json", "get"): op(
        "get_openapi",
        "This document",
        {"200": _json({"type": "object"}, "OpenAPI 3.1")},
        tags=["service"],
    ),
    # Described as the authorization server describes its own (both answer them alike).
    ("/healthz", "get"): op(
        "healthz", "Liveness", {"200": _json(ref("Health"), "Alive")}, tags=["service"]
    ),
    ("/readyz", "get"): op(
        "readyz",
        "Readiness (database and Redis)",
        {"200": _json(ref("Health"), "Ready"), "503": _json(ref("Health"), "Not ready")},
        tags=["service"],
    ),
    ("/api/search", "get"): op(
        "search",
        "Search artists, artworks, profiles, genes, shows, fairs, partners and sales",
        {
            "200": _json(ref("SearchResults"), "Results (an empty list when nothing matches)"),
            "302": _json(ref("Redirect"), "A spelling correction that has results"),
            **ERROR_RESPONSES,
        },
        security=ANY_TOKEN,
        parameters=[
            {
                "name": "q",
                "in": "query",
                "required": True,
                "schema": {"type": "string", "maxLength": MAX_QUERY_CHARS, "pattern": SOME_TEXT},
            },
            {
                "name": "size",
                "in": "query",
                "schema": {
                    "anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_SIZE}, EMPTY]
                },
            },
            {
                "name": "offset",
                "in": "query",
                "description": f"A query serves its best {WINDOW:,} matches: a page past them is "
                "empty",
                "schema": {
                    "anyOf": [{"type": "integer", "minimum": 0, "maximum": MAX_OFFSET}, EMPTY]
                },
            },
            {
                "name": "type",
                "in": "query",
                "description": "Kinds to search, comma-separated",
                "schema": {"type": "string", "pattern": f"^({KIND})(,({KIND}))*$"},
            },
        ],
    ),
    ("/api/user_details/{id}", "get"): op(
        "get_user_details",
        "Show the caller's private details",
        {"200": _json(ref("UserDetail"), "The details"), **ERROR_RESPONSES},
        security=USER,
        parameters=[ID_PATH],
    ),
    ("/api/current_user", "get"): op(
        "get_current_user",
        "Redirect to the caller's user",
        {"302": _json(ref("Redirect"), "The user URL"), **ERROR_RESPONSES},
        security=USER,
    ),
    ("/api/collections", "post"): op(
        "create_collection",
        "Create a collection",
        {"201": _json(ref("Collection"), "Created"), **WRITE_ERRORS},
        security=USER,
        requestBody=body(
            {"user_id": ID, "name": NAME, "description": DESCRIPTION, "private": FLAG},
            ["user_id", "name"],
        ),
    ),
    ("/api/collections/{id}", "put"): op(
        "update_collection",
        "Update a collection",
        {"200": _json(ref("Collection"), "Updated"), **WRITE_ERRORS},
        security=USER,
        parameters=[ID_PATH],
        requestBody=body({"name": NAME, "description": DESCRIPTION, "private": FLAG}),
    ),
    ("/api/collection_items", "post"): op(
        "add_collection_item",
        "Add an artwork to a collection",
        {"201": _json(ref("CollectionItem"), "Added"), **WRITE_ERRORS},
        security=USER,
        requestBody=body(
            {"collection_id": ID, "user_id": ID, "artwork_id": ID},
            ["collection_id", "user_id", "artwork_id"],
        ),
    ),
    ("/api/collection_items/{id}", "put"): op(
        "move_collection_item",
        "Move a collection item",
        {"200": _json(ref("CollectionItem"), "Moved"), **WRITE_ERRORS},
        security=USER,
        parameters=[ID_PATH],
        requestBody=body({"position": POSITION}, ["position"]),
    ),
    ("/api/collection_items/{id}", "delete"): op(
        "remove_collection_item",
        "Remove a collection item",
        {"204": {"description": "Removed"}, **WRITE_ERRORS},
        security=USER,
        parameters=[ID_PATH],
    ),
}

CATALOG_SCHEMAS: dict[str, Schema] = {
    "SearchResults": obj(
        {
            "total_count": {
                **INT,
                "description": f"The number of matches, counted up to {WINDOW:,} (the most a "
                "query serves)",
            },
            "offset": INT,
            "q": STR,
            "_links": {"type": "object", "required": ["self"]},
            "_embedded": obj(
                {
                    "results": {
                        "type": "array",
                        "items": obj(
                            {
                                "type": null(STR),
                                "title": STR,
                                "description": null(STR),
                                "og_type": STR,
                                "_links": {"type": "object", "required": ["self"]},
                            }
                        ),
                    }
                }
            ),
        }
    ),
}
