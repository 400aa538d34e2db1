"""The OpenAPI 3.1 description of the API, composed from the parts the services describe.

Each service describes its own routes (``describe``), from the declarations that register them,
and serves that part on its own. The document clients read at ``/api/openapi.json`` is
``compose`` of both parts: the catalog's, built as it starts, and the authorization server's,
written at build time to ``auth.json`` beside this module (``make openapi``) so that the catalog
serves the whole document whether the services run together or apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from common.openapi.parts import COMMON, HEAD_TOO_LARGE, URL_TEXT, Op, Schema

Part = dict[str, Any]
OPENAPI = "3.1.0"
# The part each service serves, by name (``stored_part``): written by ``make openapi``.
AUTH_PART = "auth.json"
INFO: dict[str, Any] = {
    "title": "artcat",
    "version": "2",
    "description": (
        "An art catalog served as JSON+HAL, and its OAuth2 server.\n\n"
        "Every GET operation also answers HEAD: the same status and headers, without a body.\n\n"
        "Tokens: an application's XAPP token (`POST /api/tokens/xapp_token`) reads the "
        "catalog; a user's access token (the OAuth flows at `/oauth2/authorize` and "
        "`/oauth2/access_token`) also reads and writes what the user owns. Send it as "
        "`X-Access-Token` or `Authorization: Bearer`. The HTML pages for people are "
        "operations tagged `pages`."
    ),
}
# The tags of the operations, in the order the docs list them.
TAGS: list[dict[str, str]] = [
    {
        "name": "catalog",
        "description": "Artists, artworks, editions, genes, shows, partners, fairs, profiles "
        "and images",
    },
    {"name": "search", "description": "Full-text search across the catalog"},
    {"name": "auctions", "description": "Sales, their lots and bidders"},
    {
        "name": "accounts",
        "description": "Users, their collections, and the applications they register",
    },
    {"name": "tokens", "description": "XAPP tokens, and expiring an access token"},
    {
        "name": "OAuth",
        "description": "The OAuth2 server: the token endpoint, revocation, introspection and "
        "metadata",
    },
    {"name": "service", "description": "The API root, status, health and this description"},
    {"name": "pages", "description": "The HTML pages for people (not shown by /docs at first)"},
]
TAG_NAMES = [tag["name"] for tag in TAGS]
SECURITY_SCHEMES: dict[str, Any] = {
    "xappToken": {"type": "apiKey", "in": "header", "name": "X-Xapp-Token"},
    "accessToken": {"type": "apiKey", "in": "header", "name": "X-Access-Token"},
    "bearer": {"type": "http", "scheme": "bearer"},
    # How tokens are had: the flows of the authorization server (RFC 6749). The docs page's
    # "Authorize" button runs the authorization-code flow (with PKCE) against these URLs.
    "oauth2": {
        "type": "oauth2",
        "flows": {
            "authorizationCode": {
                "authorizationUrl": "/oauth2/authorize",
                "tokenUrl": "/oauth2/access_token",
                "scopes": {"offline_access": "A token that lasts 25 years, not 60 days"},
            },
            "password": {"tokenUrl": "/oauth2/access_token", "scopes": {}},
            "clientCredentials": {"tokenUrl": "/oauth2/access_token", "scopes": {}},
        },
    },
}
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def _finish(path: str, method: str, op: Op) -> Op:
    """Return the operation with what every operation has: a tag, the 431 the HTTP server
    answers before any app, and a parameter for each name in its path."""
    if method == "head":
        raise ValueError(f"HEAD {path}: every GET answers HEAD; it is not an operation")
    tags = op.get("tags") or []
    if len(tags) != 1 or tags[0] not in TAG_NAMES:
        raise ValueError(f"{method.upper()} {path}: one tag of {TAG_NAMES}, not {tags}")
    params = list(op.get("parameters", []))
    for name in re.findall(r"\{([^}]+)\}", path):
        if not any(p.get("in") == "path" and p.get("name") == name for p in params):
            params.insert(0, {"name": name, "in": "path", "required": True, "schema": URL_TEXT})
    finished = {**op, "responses": {**op["responses"], "431": HEAD_TOO_LARGE}}
    if params:
        finished["parameters"] = params
    return finished


def describe(operations: Iterable[tuple[str, str, Op]], schemas: Mapping[str, Schema]) -> Part:
    """Return a service's part: its operations, as (path, method, operation), and the schemas
    they refer to (the common ones are added)."""
    paths: dict[str, dict[str, Op]] = {}
    for path, method, op in operations:
        item = paths.setdefault(path, {})
        if method in item:
            raise ValueError(f"{method.upper()} {path} is declared twice")
        item[method] = _finish(path, method, op)
    return {
        "openapi": OPENAPI,
        "info": INFO,
        "tags": TAGS,
        "paths": {path: _ordered(ops) for path, ops in sorted(paths.items())},
        "components": {
            "schemas": dict(sorted({**COMMON, **schemas}.items())),
            "securitySchemes": SECURITY_SCHEMES,
        },
    }


def _ordered(ops: dict[str, Op]) -> dict[str, Op]:
    return {method: ops[method] for method in METHODS if method in ops}


def compose(parts: Iterable[Part], server_url: str) -> dict[str, Any]:
    """Return the whole document of these parts, served at ``server_url``.

    An operation (or schema) two parts both describe must be described alike: both services
    answer ``/healthz``, and both use the common schemas.
    """
    paths: dict[str, dict[str, Op]] = {}
    schemas: dict[str, Schema] = {}
    for part in parts:
        for path, ops in part["paths"].items():
            item = paths.setdefault(path, {})
            for method, op in ops.items():
                if item.setdefault(method, op) != op:
                    raise ValueError(f"{method.upper()} {path} is described two ways")
        for name, schema in part["components"]["schemas"].items():
            if schemas.setdefault(name, schema) != schema:
                raise ValueError(f"the schema {name} is described two ways")
    ids = [op["operationId"] for ops in paths.values() for op in ops.values()]
    if len(ids) != len(set(ids)):
        twice = sorted({op_id for op_id in ids if ids.count(op_id) > 1})
        raise ValueError(f"operation ids used twice: {twice}")
    used = {tag for ops in paths.values() for op in ops.values() for tag in op["tags"]}
    return {
        "openapi": OPENAPI,
        "info": INFO,
        "servers": [{"url": server_url}],
        "tags": [tag for tag in TAGS if tag["name"] in used],
        "paths": {path: _ordered(ops) for path, ops in sorted(paths.items())},
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "securitySchemes": SECURITY_SCHEMES,
        },
    }


def part_json(part: Part) -> str:
    """Return a part as the stored file holds it (one line per item, for readable diffs)."""
    return json.dumps(part, indent=1, ensure_ascii=False) + "\n"


@cache
def stored_part(name: str) -> Part:
    """Return a part written at build time beside this module (``AUTH_PART``)."""
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    part: Part = json.loads(text)
    return part
