"""The authorization server's JSON operations: tokens, revocation, introspection, metadata and
applications. The token endpoints' parameters come from their table in ``common``, which the
authorization server reads them by."""

from __future__ import annotations

from common.token_params import CLIENT_PARAMS, CREDENTIAL, TOKEN_HINT_PARAMS, TOKEN_PARAMS, Kind
from resource_server.openapi.parts import (
    ERROR_RESPONSES,
    FLAG,
    ID_PATH,
    NAME,
    NO_NUL,
    SOME_TEXT,
    TOO_LARGE,
    URL_TEXT,
    USER,
    WRITE_ERRORS,
    Op,
    body,
    op,
)
from resource_server.openapi.parts import json_response as _json
from resource_server.openapi.schemas import BOOL, ID, INT, STR, STRINGS, TS, Schema, null, obj, ref

OAUTH_ERRORS: dict[str, Op] = {
    "400": _json(ref("OAuthError"), "invalid_request, invalid_grant, invalid_scope, ..."),
    "401": _json(ref("OAuthError"), "invalid_client"),
    "429": _json(ref("OAuthError"), "Too many attempts (slow_down), with Retry-After"),
    "413": TOO_LARGE,
}
# Text the OAuth endpoints read: no NUL (no text column holds one) and at most 4,096 characters;
# a blank client_id or secret is an absent one (RFC 6749 3.1), not a credential.
OAUTH_TEXT: Schema = {"type": "string", "maxLength": 4096, "pattern": NO_NUL}
NON_BLANK: Schema = {**OAUTH_TEXT, "minLength": 1, "pattern": SOME_TEXT}


def _oauth_body(properties: dict[str, Schema], required: list[str]) -> Op:
    """Return an OAuth request body: every parameter text, its name at most 200 characters."""
    request_body = body(properties, required)
    for media in request_body["content"].values():
        media["schema"] = {
            **media["schema"],
            "propertyNames": {"maxLength": 200, "pattern": NO_NUL},
            # Other parameters are read as text too (arrays and objects are not read at all).
            "additionalProperties": {"not": {"type": "string", "pattern": "\u0000"}},
        }
    return request_body


def _schema(kind: Kind) -> Schema:
    """Return the schema of a token endpoint parameter of this kind."""
    if isinstance(kind, tuple):
        return {"type": "string", "enum": list(kind)}
    return NON_BLANK if kind == CREDENTIAL else OAUTH_TEXT


def _properties(params: dict[str, Kind]) -> dict[str, Schema]:
    return {name: _schema(kind) for name, kind in params.items()}


TOKEN_REQUEST = _oauth_body(_properties(TOKEN_PARAMS), ["grant_type"])


def _in_query(params: dict[str, Kind], *, but: tuple[str, ...] = ()) -> list[Op]:
    """Return these parameters as query parameters (the reference API took them in the URL
    too; URL_CREDENTIALS=refuse takes no secret there, and a password is never taken)."""
    return [
        {"name": name, "in": "query", "schema": _schema(kind)}
        for name, kind in params.items()
        if name not in but
    ]


NOT_IN_URL = ("password",)
URL_NOTE = (
    "Parameters may also be sent in the query string, as the reference API took them (unless "
    "the operator set URL_CREDENTIALS=refuse); a password in a URL is refused. A parameter "
    "sent in both the query string and the body must have one value there (else 400)."
)
HINT_REQUEST = _oauth_body(_properties(TOKEN_HINT_PARAMS), ["token"])
APP_FIELDS: dict[str, Schema] = {
    "name": NAME,
    "redirect_urls": STRINGS,
    "standard_token_response": FLAG,
}
APP_BODY = body(APP_FIELDS)
# A new application needs a name; an update changes only what it names.
APP_CREATE_BODY = body(APP_FIELDS, ["name"])
# Only a first-party application's user token may read the user's applications (as write them).
APP_READ_ERRORS: dict[str, Op] = {
    **ERROR_RESPONSES,
    "403": _json(ref("Error"), "A token of a third-party application"),
}

AUTH_API: dict[tuple[str, str], Op] = {
    ("/api/tokens/xapp_token", "post"): op(
        "Issue an application (XAPP) token",
        {"201": _json(ref("XappToken"), "Issued"), **WRITE_ERRORS},
        description=URL_NOTE,
        parameters=_in_query(CLIENT_PARAMS),
        requestBody=body(_properties(CLIENT_PARAMS), ["client_id", "client_secret"]),
    ),
    ("/api/tokens/access_token", "delete"): op(
        "Expire an access token",
        {"200": _json(ref("ExpiredToken"), "Expired"), **WRITE_ERRORS},
        parameters=[{"name": "access_token", "in": "query", "schema": URL_TEXT}],
    ),
    ("/oauth2/access_token", "post"): op(
        "Exchange a grant for an access token",
        {"200": _json(ref("AccessToken"), "Issued"), **OAUTH_ERRORS},
        description=URL_NOTE,
        parameters=_in_query(TOKEN_PARAMS, but=NOT_IN_URL),
        requestBody=TOKEN_REQUEST,
    ),
    ("/oauth2/access_token", "get"): op(
        "Exchange a grant for an access token by GET (the reference API's form)",
        {"200": _json(ref("AccessToken"), "Issued"), **OAUTH_ERRORS},
        description=(
            "Every parameter in the query string. Not for the password grants (a password in a "
            "URL is refused); answered invalid_request when the operator set "
            "URL_CREDENTIALS=refuse."
        ),
        parameters=[
            {**param, "required": param["name"] == "grant_type"}
            for param in _in_query(TOKEN_PARAMS, but=NOT_IN_URL)
        ],
    ),
    ("/oauth2/revoke", "post"): op(
        "Revoke a token (RFC 7009)",
        {"200": _json({"type": "object"}, "Revoked, or unknown (an empty object)"), **OAUTH_ERRORS},
        requestBody=HINT_REQUEST,
    ),
    ("/oauth2/introspect", "post"): op(
        "Introspect a token (RFC 7662)",
        {"200": _json(ref("Introspection"), "The token's state"), **OAUTH_ERRORS},
        requestBody=HINT_REQUEST,
    ),
    ("/.well-known/oauth-authorization-server", "get"): op(
        "Authorization server metadata (RFC 8414)",
        {"200": _json({"type": "object", "required": ["issuer", "token_endpoint"]}, "Metadata")},
    ),
    ("/api/applications", "get"): op(
        "List the caller's applications",
        {
            "200": _json(
                {
                    "type": "object",
                    "required": ["total_count", "_links", "_embedded"],
                    "properties": {
                        "_embedded": obj(
                            {"applications": {"type": "array", "items": ref("Application")}}
                        )
                    },
                },
                "A page of applications",
            ),
            "302": _json(ref("Redirect"), "Without user_id: the caller's list"),
            **APP_READ_ERRORS,
        },
        security=USER,
        # An empty user_id is an absent one: the caller's list.
        parameters=[{"name": "user_id", "in": "query", "schema": {"anyOf": [ID, {"const": ""}]}}],
    ),
    ("/api/applications", "post"): op(
        "Register an application (its secret is shown once)",
        {"201": _json(ref("Application"), "Created"), **WRITE_ERRORS},
        security=USER,
        requestBody=APP_CREATE_BODY,
    ),
    ("/api/applications/{id}", "get"): op(
        "Show one of the caller's applications",
        {"200": _json(ref("Application"), "The application"), **APP_READ_ERRORS},
        security=USER,
        parameters=[ID_PATH],
    ),
    ("/api/applications/{id}", "put"): op(
        "Update an application",
        {"200": _json(ref("Application"), "Updated"), **WRITE_ERRORS},
        security=USER,
        parameters=[ID_PATH],
        requestBody=APP_BODY,
    ),
    ("/api/applications/{id}", "delete"): op(
        "Delete an application (its tokens expire)",
        {"204": {"description": "Deleted"}, **WRITE_ERRORS},
        security=USER,
        parameters=[ID_PATH],
    ),
}

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
        {"id": ID, "type": {"const": "access_token"}, "token": STR, "expired_at": TS}
    ),
    "AccessToken": obj(
        {"access_token": STR, "expires_in": {"anyOf": [TS, INT]}},
        {"token_type": STR, "scope": STR, "state": STR},
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
