"""Blueprints whose routes carry their OpenAPI operations, and what the operations share.

A view module makes one ``Described`` blueprint and declares each route with the operations it
answers: the methods registered are the operations described, so the server's description
(``auth_server.app.describe``) cannot miss a route or name one it does not serve.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from flask import Blueprint

from auth_server.token_params import CREDENTIAL, Kind
from common.openapi.parts import (
    BOOL,
    ID,
    INT,
    NO_NUL,
    SOME_TEXT,
    STR,
    STRINGS,
    TOO_LARGE,
    TS,
    Op,
    Schema,
    body,
    json_response,
    null,
    obj,
    page,
    ref,
)

# A rule's variable (``<token>``, ``<path:filename>``) as an OpenAPI path template names it.
_VARIABLE = re.compile(r"<(?:[a-z]+:)?([a-z_]+)>")


def openapi_path(rule: str) -> str:
    """Return a URL rule in OpenAPI's path syntax (``/a/<path:b>`` → ``/a/{b}``)."""
    return _VARIABLE.sub(r"{\1}", rule)


class Described(Blueprint):
    """A blueprint of one view module: its routes, each with its operations, under one tag."""

    def __init__(self, name: str, import_name: str, *, tag: str) -> None:
        super().__init__(name, import_name)
        self.tag = tag
        self.operations: list[tuple[str, str, Op]] = []

    def declare(
        self, rule: str, view: Callable[..., Any], *, endpoint: str | None = None, **ops: Op
    ) -> None:
        """Register ``view`` at ``rule`` for the methods of ``ops``, each described by its
        operation (tagged with the blueprint's tag unless it names its own)."""
        methods = [method.upper() for method in ops]
        declared = getattr(view, "methods", None)
        if declared is not None and set(declared) != set(methods):
            raise ValueError(f"{rule}: {sorted(declared)} served, {sorted(methods)} described")
        self.add_url_rule(rule, endpoint or view.__name__, view, methods=methods)
        for method, operation in ops.items():
            self.operations.append((openapi_path(rule), method, {"tags": [self.tag], **operation}))


# The OAuth endpoints' errors (RFC 6749 5.2), and the text their parameters are.
OAUTH_ERRORS: dict[str, Op] = {
    "400": json_response(ref("OAuthError"), "invalid_request, invalid_grant, invalid_scope, ..."),
    "401": json_response(ref("OAuthError"), "invalid_client"),
    "429": json_response(ref("OAuthError"), "Too many attempts (slow_down), with Retry-After"),
    "413": TOO_LARGE,
}
# Text the OAuth endpoints read: no NUL (no text column holds one) and at most 4,096 characters;
# a blank client_id or secret is an absent one (RFC 6749 3.1), not a credential.
OAUTH_TEXT: Schema = {"type": "string", "maxLength": 4096, "pattern": NO_NUL}
NON_BLANK: Schema = {**OAUTH_TEXT, "minLength": 1, "pattern": SOME_TEXT}


# A text holding a NUL, which no parameter of the token endpoints may (``auth_server.inputs``).
NUL_TEXT: Schema = {"type": "string", "pattern": "\u0000"}


def oauth_body(properties: dict[str, Schema], required: list[str]) -> Op:
    """Return an OAuth request body: every parameter text, its name at most 200 characters."""
    request_body = body(properties, required)
    for media in request_body["content"].values():
        media["schema"] = {
            **media["schema"],
            "propertyNames": {"maxLength": 200, "pattern": NO_NUL},
            # Other parameters are read as text too, each value of a repeated one (an array)
            # included: none may hold a NUL (objects are not read at all).
            "additionalProperties": {
                "not": {"anyOf": [NUL_TEXT, {"type": "array", "contains": NUL_TEXT}]}
            },
        }
    return request_body


def param_schema(kind: Kind) -> Schema:
    """Return the schema of a token endpoint parameter of this kind."""
    if isinstance(kind, tuple):
        return {"type": "string", "enum": list(kind)}
    return NON_BLANK if kind == CREDENTIAL else OAUTH_TEXT


def properties(params: dict[str, Kind]) -> dict[str, Schema]:
    """Return the body properties of these parameters."""
    return {name: param_schema(kind) for name, kind in params.items()}


def in_query(params: dict[str, Kind], *, but: tuple[str, ...] = ()) -> list[Op]:
    """Return these parameters as query parameters (the reference API took them in the URL
    too; URL_CREDENTIALS=refuse takes no secret there, and a password is never taken)."""
    return [
        {"name": name, "in": "query", "schema": param_schema(kind)}
        for name, kind in params.items()
        if name not in but
    ]


URL_NOTE = (
    "Parameters may also be sent in the query string, as the reference API took them (unless "
    "the operator set URL_CREDENTIALS=refuse); a password in a URL is refused. A parameter "
    "sent in both the query string and the body must have one value there (else 400)."
)


def pages(op_id: str, summary: str, *methods: str, **extra: Any) -> dict[str, Any]:
    """Return the page operations of one route, by method: ``declare``'s keywords (typed Any,
    as the keywords a ``**`` spreads are, so that they may stand beside ``endpoint``)."""
    return {method: page(op_id, summary, method, **extra) for method in methods}


# The schemas of the server's JSON answers.
AUTH_SCHEMAS: dict[str, Schema] = {
    "XappToken": obj(
        {
            "type": {"const": "xapp_token"},
            "token": STR,
            "expires_at": TS,
            "_links": {"type": "object"},
        }
    ),
    "ExpiredToken": obj(
        {
            "id": ID,
            "type": {"enum": ["access_token", "refresh_token"]},
            "token": STR,
            "expired_at": TS,
        }
    ),
    "AccessToken": obj(
        {"access_token": STR, "expires_in": {"anyOf": [TS, INT]}},
        {"token_type": STR, "scope": STR, "state": STR, "id_token": STR, "refresh_token": STR},
    ),
    "OAuthError": obj({"error": STR}, {"error_description": STR, "state": STR}),
    "Introspection": obj(
        {"active": BOOL},
        {"scope": STR, "client_id": STR, "token_type": STR, "exp": INT, "iat": INT, "iss": STR},
    ),
    "Application": obj(
        {
            "id": ID,
            "created_at": TS,
            "updated_at": TS,
            "name": STR,
            "client_id": STR,
            "enabled": BOOL,
            "redirect_urls": STRINGS,
            "standard_token_response": BOOL,
            "_links": {"type": "object", "required": ["self", "user"]},
        },
        {"client_secret": STR, "user_id": null(ID)},
    ),
}
