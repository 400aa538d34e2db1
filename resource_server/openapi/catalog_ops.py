"""The catalog operations not generated from a collection route: the root, status, health,
search, the caller's user, and the writes of collections and their items."""

from __future__ import annotations

from common.search.documents import KINDS
from common.search.text import MAX_QUERY_CHARS
from resource_server.openapi.parts import (
    ANY_TOKEN,
    DESCRIPTION,
    ERROR_RESPONSES,
    FLAG,
    ID_PATH,
    NAME,
    POSITION,
    SOME_TEXT,
    USER,
    WRITE_ERRORS,
    Op,
    body,
    op,
)
from resource_server.openapi.parts import json_response as _json
from resource_server.openapi.schemas import ID, INT, STR, Schema, null, obj, ref
from resource_server.search.service import MAX_OFFSET, MAX_SIZE, WINDOW

KIND = "|".join(KINDS)

CATALOG_WRITES: dict[tuple[str, str], Op] = {
    ("/api", "get"): op("The root: links and templates", {"200": _json(ref("Root"), "Root")}),
    ("/api/status", "get"): op("Service status", {"200": _json(ref("Status"), "Status")}),
    ("/api/openapi.json", "get"): op(
        "This document", {"200": _json({"type": "object"}, "OpenAPI 3.1")}
    ),
    ("/healthz", "get"): op("Liveness", {"200": _json(ref("Health"), "Alive")}),
    ("/readyz", "get"): op(
        "Readiness (database and Redis)",
        {"200": _json(ref("Health"), "Ready"), "503": _json(ref("Health"), "Not ready")},
    ),
    ("/api/search", "get"): op(
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
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_SIZE},
            },
            {
                "name": "offset",
                "in": "query",
                "description": f"A query serves its best {WINDOW:,} matches: a page past them is "
                "empty",
                "schema": {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET},
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
        "Show the caller's private details",
        {"200": _json(ref("UserDetail"), "The details"), **ERROR_RESPONSES},
        security=USER,
        parameters=[ID_PATH],
    ),
    ("/api/current_user", "get"): op(
        "Redirect to the caller's user",
        {"302": _json(ref("Redirect"), "The user URL"), **ERROR_RESPONSES},
        security=USER,
    ),
    ("/api/collections", "post"): op(
        "Create a collection",
        {"201": _json(ref("Collection"), "Created"), **WRITE_ERRORS},
        security=USER,
        requestBody=body(
            {"user_id": ID, "name": NAME, "description": DESCRIPTION, "private": FLAG},
            ["user_id", "name"],
        ),
    ),
    ("/api/collections/{id}", "put"): op(
        "Update a collection",
        {"200": _json(ref("Collection"), "Updated"), **WRITE_ERRORS},
        security=USER,
        parameters=[ID_PATH],
        requestBody=body({"name": NAME, "description": DESCRIPTION, "private": FLAG}),
    ),
    ("/api/collection_items", "post"): op(
        "Add an artwork to a collection",
        {"201": _json(ref("CollectionItem"), "Added"), **WRITE_ERRORS},
        security=USER,
        requestBody=body(
            {"collection_id": ID, "user_id": ID, "artwork_id": ID},
            ["collection_id", "user_id", "artwork_id"],
        ),
    ),
    ("/api/collection_items/{id}", "put"): op(
        "Move a collection item",
        {"200": _json(ref("CollectionItem"), "Moved"), **WRITE_ERRORS},
        security=USER,
        parameters=[ID_PATH],
        requestBody=body({"position": POSITION}, ["position"]),
    ),
    ("/api/collection_items/{id}", "delete"): op(
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
