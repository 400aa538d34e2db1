"""Operations that are not generated from a collection declaration: writes, the root, health,
and every route of the authorization server (JSON APIs and HTML pages)."""

from __future__ import annotations

from typing import Any

from common.authorize_params import AUTHORIZE_PARAMS
from common.search.documents import KINDS
from common.search.text import MAX_QUERY_CHARS
from resource_server.openapi.schemas import BOOL, ID, INT, STR, STRINGS, TS, Schema, null, obj, ref
from resource_server.search.service import MAX_OFFSET, MAX_SIZE

Op = dict[str, Any]
KIND = "|".join(KINDS)


def _json(schema: Schema, description: str) -> Op:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _html(description: str) -> Op:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


ERROR = _json(ref("Error"), "An error")
ERROR_RESPONSES: dict[str, Op] = {
    "400": _json(ref("Error"), "A malformed parameter (`param_error`, naming it)"),
    "401": _json(ref("Error"), "A missing, unknown or expired token (`auth_error`)"),
    "404": _json(ref("Error"), "Not found (`<Model> Not Found`)"),
    "406": _json(ref("MediaTypeError"), "A request body neither form-urlencoded nor JSON"),
    "429": _json(ref("Error"), "Over the application's rate limit (`rate_limit_error`)"),
    "503": _json(ref("Error"), "A store is unavailable"),
}
# Answered by waitress before any app sees the request (a plain-text body), or by the app.
TOO_LARGE: Op = {
    "description": "A request body over 1 MiB",
    "content": {
        "application/json": {"schema": ref("Error")},
        "text/plain": {"schema": {"type": "string"}},
    },
}
WRITE_ERRORS: dict[str, Op] = {
    **ERROR_RESPONSES,
    "403": _json(ref("Error"), "Something the caller can see but does not own"),
    "409": _json(ref("Error"), "The change kept conflicting with concurrent changes"),
    "413": TOO_LARGE,
}
OAUTH_ERRORS: dict[str, Op] = {
    "400": _json(ref("OAuthError"), "invalid_request, invalid_grant, invalid_scope, ..."),
    "401": _json(ref("OAuthError"), "invalid_client"),
    "429": _json(ref("OAuthError"), "Too many attempts (slow_down), with Retry-After"),
    "413": TOO_LARGE,
}
# The rules the write routes enforce, stated: a name has a visible character and at most 200;
# a flag is a JSON boolean or its text; a position is within the collection (1..n, n < 2**31).
NAME: Schema = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": r"\S"}
DESCRIPTION: Schema = {"type": "string", "maxLength": 10_000}
FLAG: Schema = {
    "oneOf": [
        {"type": "boolean"},
        {"type": "string", "enum": ["true", "false", "1", "0", "yes", "no"]},
    ]
}
POSITION: Schema = {
    "type": "integer",
    "minimum": 1,
    "maximum": 2**31 - 1,
    "description": "1 to the number of items in the collection (a 400 beyond it)",
}
USER: list[dict[str, list[str]]] = [{"accessToken": []}, {"bearer": []}]
ANY_TOKEN: list[dict[str, list[str]]] = [{"xappToken": []}, {"accessToken": []}, {"bearer": []}]
# Any NUL in a URL is a 400 before any lookup (no text column holds one).
NO_NUL = "^[^\\u0000]*$"
SOME_TEXT = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
URL_TEXT: Schema = {"type": "string", "pattern": NO_NUL}
ID_PATH = {"name": "id", "in": "path", "required": True, "schema": URL_TEXT}


def _body(properties: dict[str, Schema], required: list[str] | None = None) -> Op:
    schema = {"type": "object", "properties": properties, "required": required or []}
    return {
        # A body with required fields must be sent (an absent one is a 400 naming them).
        "required": bool(required),
        "content": {
            "application/json": {"schema": schema},
            "application/x-www-form-urlencoded": {"schema": schema},
        },
    }


def op(summary: str, responses: dict[str, Op], **extra: Any) -> Op:
    """Return one operation with a stable operationId derived from its summary."""
    op_id = "".join(c if c.isalnum() else "_" for c in summary.lower()).strip("_")
    return {"operationId": op_id, "summary": summary, "responses": responses, **extra}


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
        requestBody=_body(
            {"user_id": ID, "name": NAME, "description": DESCRIPTION, "private": FLAG},
            ["user_id", "name"],
        ),
    ),
    ("/api/collections/{id}", "put"): op(
        "Update a collection",
        {"200": _json(ref("Collection"), "Updated"), **WRITE_ERRORS},
        security=USER,
        parameters=[ID_PATH],
        requestBody=_body({"name": NAME, "description": DESCRIPTION, "private": FLAG}),
    ),
    ("/api/collection_items", "post"): op(
        "Add an artwork to a collection",
        {"201": _json(ref("CollectionItem"), "Added"), **WRITE_ERRORS},
        security=USER,
        requestBody=_body(
            {"collection_id": ID, "user_id": ID, "artwork_id": ID},
            ["collection_id", "user_id", "artwork_id"],
        ),
    ),
    ("/api/collection_items/{id}", "put"): op(
        "Move a collection item",
        {"200": _json(ref("CollectionItem"), "Moved"), **WRITE_ERRORS},
        security=USER,
        parameters=[ID_PATH],
        requestBody=_body({"position": POSITION}, ["position"]),
    ),
    ("/api/collection_items/{id}", "delete"): op(
        "Remove a collection item",
        {"204": {"description": "Removed"}, **WRITE_ERRORS},
        security=USER,
        parameters=[ID_PATH],
    ),
}

# Text the OAuth endpoints read: no NUL (no text column holds one) and at most 4,096 characters;
# a blank client_id or secret is an absent one (RFC 6749 3.1), not a credential.
OAUTH_TEXT: Schema = {"type": "string", "maxLength": 4096, "pattern": NO_NUL}
NON_BLANK: Schema = {**OAUTH_TEXT, "minLength": 1, "pattern": SOME_TEXT}
CLIENT = {"client_id": NON_BLANK, "client_secret": NON_BLANK}


def _oauth_body(properties: dict[str, Schema], required: list[str]) -> Op:
    """Return an OAuth request body: every parameter text, its name at most 200 characters."""
    body = _body(properties, required)
    for media in body["content"].values():
        media["schema"] = {
            **media["schema"],
            "propertyNames": {"maxLength": 200, "pattern": NO_NUL},
            # Other parameters are read as text too (arrays and objects are not read at all).
            "additionalProperties": {"not": {"type": "string", "pattern": "\u0000"}},
        }
    return body


TOKEN_REQUEST = _oauth_body(
    {
        **CLIENT,
        "grant_type": {
            "type": "string",
            "enum": [
                "authorization_code",
                "client_credentials",
                "credentials",
                "oauth_token",
                "password",
            ],
        },
        "code": OAUTH_TEXT,
        "redirect_uri": OAUTH_TEXT,
        "code_verifier": OAUTH_TEXT,
        "email": OAUTH_TEXT,
        "username": OAUTH_TEXT,
        "password": OAUTH_TEXT,
        "oauth_provider": {"type": "string", "enum": ["facebook", "twitter"]},
        "oauth_token": OAUTH_TEXT,
        "oauth_token_secret": OAUTH_TEXT,
        "scope": OAUTH_TEXT,
        "state": OAUTH_TEXT,
    },
    ["grant_type"],
)
APP_FIELDS: dict[str, Schema] = {
    "name": NAME,
    "redirect_urls": STRINGS,
    "standard_token_response": FLAG,
}
APP_BODY = _body(APP_FIELDS)
# A new application needs a name; an update changes only what it names.
APP_CREATE_BODY = _body(APP_FIELDS, ["name"])

AUTH_API: dict[tuple[str, str], Op] = {
    ("/api/tokens/xapp_token", "post"): op(
        "Issue an application (XAPP) token",
        {"201": _json(ref("XappToken"), "Issued"), **WRITE_ERRORS},
        requestBody=_body(CLIENT, ["client_id", "client_secret"]),
    ),
    ("/api/tokens/access_token", "delete"): op(
        "Expire an access token",
        {"200": _json(ref("ExpiredToken"), "Expired"), **WRITE_ERRORS},
        parameters=[{"name": "access_token", "in": "query", "schema": URL_TEXT}],
    ),
    ("/oauth2/access_token", "post"): op(
        "Exchange a grant for an access token",
        {"200": _json(ref("AccessToken"), "Issued"), **OAUTH_ERRORS},
        requestBody=TOKEN_REQUEST,
    ),
    ("/oauth2/access_token", "get"): op(
        "Exchange a grant for an access token (old clients; secrets in the URL are refused)",
        {"200": _json(ref("AccessToken"), "Issued"), **OAUTH_ERRORS},
        parameters=[
            {"name": name, "in": "query", "schema": schema}
            for name, schema in TOKEN_REQUEST["content"]["application/json"]["schema"][
                "properties"
            ].items()
        ],
    ),
    ("/oauth2/revoke", "post"): op(
        "Revoke a token (RFC 7009)",
        {"200": _json({"type": "object"}, "Revoked, or unknown (an empty object)"), **OAUTH_ERRORS},
        requestBody=_oauth_body(
            {**CLIENT, "token": NON_BLANK, "token_type_hint": OAUTH_TEXT}, ["token"]
        ),
    ),
    ("/oauth2/introspect", "post"): op(
        "Introspect a token (RFC 7662)",
        {"200": _json(ref("Introspection"), "The token's state"), **OAUTH_ERRORS},
        requestBody=_oauth_body(
            {**CLIENT, "token": NON_BLANK, "token_type_hint": OAUTH_TEXT}, ["token"]
        ),
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
            **ERROR_RESPONSES,
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
        {"200": _json(ref("Application"), "The application"), **ERROR_RESPONSES},
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

PAGES: list[tuple[str, list[str], str]] = [
    ("/oauth2/authorize", ["get", "post"], "Authorization: sign-in, consent, redirect with a code"),
    ("/account", ["get"], "Account home"),
    ("/account/sign_in", ["get", "post"], "Sign in"),
    ("/account/sign_up", ["get", "post"], "Sign up"),
    ("/account/sign_out", ["get", "post"], "Sign out"),
    ("/account/password/forgot", ["get", "post"], "Ask for a password reset email"),
    ("/account/password/reset/{token}", ["get", "post"], "Set a new password"),
    ("/account/password/change", ["get", "post"], "Change the password"),
    ("/account/email/verify", ["get", "post"], "Confirm the email address"),
    ("/account/email/resend", ["post"], "Send a new email confirmation link"),
    ("/account/authorizations", ["get"], "Authorized applications"),
    ("/account/authorizations/{application_id}/revoke", ["post"], "Revoke an authorization"),
    ("/account/applications", ["get", "post"], "Your applications"),
    ("/account/applications/{application_id}/rotate", ["post"], "Rotate a client secret"),
    ("/account/static/{filename}", ["get"], "Stylesheet"),
    # The catalog's own pages (resource_server.web): the front door also answers the API root
    # document to a client that asks for JSON.
    ("/", ["get"], "The front door (HTML; the API root for Accept: application/json)"),
    ("/docs", ["get"], "The API docs (Swagger UI)"),
    ("/docs/assets/{name}", ["get"], "A file of Swagger UI"),
    ("/static/{name}", ["get"], "The pages' stylesheet and script"),
    ("/search", ["get"], "Search the catalog (a results page)"),
    ("/artists", ["get"], "Artists (a page)"),
    ("/artist/{key}", ["get"], "An artist, by id or slug (a page)"),
    ("/artworks", ["get"], "Artworks (a page)"),
    ("/artwork/{key}", ["get"], "An artwork, by id or slug (a page)"),
    ("/genes", ["get"], "Genes (a page)"),
    ("/gene/{key}", ["get"], "A gene, by id or slug (a page)"),
    ("/partners", ["get"], "Partners (a page)"),
    ("/partner/{key}", ["get"], "A partner, by id or slug (a page)"),
    ("/shows", ["get"], "Shows (a page)"),
    ("/show/{key}", ["get"], "A show, by id or slug (a page)"),
]

AUTHORIZE_GET = ("/oauth2/authorize", "get")
PAGE_RESPONSES: dict[str, Op] = {
    "200": _html("An HTML page"),
    "201": _html("An application registered (its secret is shown once)"),
    "302": {"description": "A redirect"},
    "400": _html("Error"),
    # An unknown application is an HTML page; an unknown route or file is JSON.
    "404": {
        "description": "Not found",
        "content": {**_html("")["content"], **ERROR["content"]},
    },
    "413": TOO_LARGE,
    "429": _html("Too many sign-in attempts"),
}

AUTHORIZE_QUERY = [{"name": name, "in": "query", "schema": URL_TEXT} for name in AUTHORIZE_PARAMS]

AUTH_PAGES: dict[tuple[str, str], Op] = {
    (path, method): op(
        f"{summary} ({method.upper()})",
        PAGE_RESPONSES,
        tags=["pages"],
        **({"parameters": AUTHORIZE_QUERY} if (path, method) == AUTHORIZE_GET else {}),
    )
    for path, methods, summary in PAGES
    for method in methods
}

AUTH_SCHEMAS: dict[str, Schema] = {
    "SearchResults": obj(
        {
            "total_count": INT,
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

EXTRA_OPERATIONS: dict[tuple[str, str], Op] = {**CATALOG_WRITES, **AUTH_API, **AUTH_PAGES}
