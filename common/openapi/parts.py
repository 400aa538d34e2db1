"""The building blocks of the OpenAPI operations both services describe: schemas, responses,
bodies, rules and security."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]
Op = dict[str, Any]

ID: Schema = {"type": "string", "pattern": "^[0-9a-f]{24}$"}
TS: Schema = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$"}
STR: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
BOOL: Schema = {"type": "boolean"}
# An optional query value given empty: the same as none (a form's empty field).
EMPTY: Schema = {"type": "string", "maxLength": 0}
STRINGS: Schema = {"type": "array", "items": STR}


def null(schema: Schema) -> Schema:
    """Allow null besides the schema."""
    return {"anyOf": [schema, {"type": "null"}]}


def ref(name: str) -> Schema:
    """Refer to a component schema."""
    return {"$ref": f"#/components/schemas/{name}"}


def obj(required: dict[str, Schema], optional: dict[str, Schema] | None = None) -> Schema:
    """An object with required (and optional) properties; more properties are allowed."""
    return {
        "type": "object",
        "required": list(required),
        "properties": {**required, **(optional or {})},
    }


def links_with(rels: list[str]) -> Schema:
    """A ``_links`` object: every value a link, the named relations required."""
    return {
        "type": "object",
        "required": rels,
        "additionalProperties": ref("Link"),
    }


# The schemas every service's responses use: errors, links, redirects and health.
COMMON: dict[str, Schema] = {
    "Link": obj({"href": STR}, {"templated": BOOL}),
    "Error": obj(
        {"type": STR, "message": STR},
        {"detail": {"type": "object", "additionalProperties": STRINGS}},
    ),
    "MediaTypeError": obj({"error": STR}),
    "Redirect": obj({"_links": obj({"location": ref("Link")})}),
    "Health": obj({"status": STR}, {"checks": {"type": "object"}}),
}


def json_response(schema: Schema, description: str) -> Op:
    """Return a JSON response of ``schema``."""
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def html_response(description: str) -> Op:
    """Return an HTML page response."""
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


ERROR = json_response(ref("Error"), "An error")
ERROR_RESPONSES: dict[str, Op] = {
    "400": json_response(ref("Error"), "A malformed parameter (`param_error`, naming it)"),
    "401": json_response(ref("Error"), "A missing, unknown or expired token (`auth_error`)"),
    "404": json_response(ref("Error"), "Not found (`<Model> Not Found`)"),
    "406": json_response(ref("MediaTypeError"), "A request body neither form-urlencoded nor JSON"),
    "429": json_response(ref("Error"), "Over the application's rate limit (`rate_limit_error`)"),
    "503": json_response(ref("Error"), "A store is unavailable"),
}
# Answered by waitress before any app sees the request (a plain-text body), or by the app.
TOO_LARGE: Op = {
    "description": "A request body over 1 MiB",
    "content": {
        "application/json": {"schema": ref("Error")},
        "text/plain": {"schema": {"type": "string"}},
    },
}
# A request line and headers over 64 KiB: answered by the HTTP server (waitress or granian) before
# any app sees the request, so on every operation (the token routes' included).
HEAD_TOO_LARGE: Op = {
    "description": "Request header fields too large: a request head over 64 KiB",
    "content": {"text/plain": {"schema": {"type": "string"}}},
}
WRITE_ERRORS: dict[str, Op] = {
    **ERROR_RESPONSES,
    "403": json_response(ref("Error"), "Something the caller can see but does not own"),
    "409": json_response(ref("Error"), "The change kept conflicting with concurrent changes"),
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
# The token an operation asks for: a user's, or any (an application's XAPP token too). A token
# had through the OAuth flows is sent as a bearer token.
USER: list[dict[str, list[str]]] = [{"accessToken": []}, {"bearer": []}, {"oauth2": []}]
ANY_TOKEN: list[dict[str, list[str]]] = [{"xappToken": []}, *USER]
# Any NUL in a URL is a 400 before any lookup (no text column holds one).
NO_NUL = "^[^\\u0000]*$"
SOME_TEXT = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
URL_TEXT: Schema = {"type": "string", "pattern": NO_NUL}
ID_PATH = {"name": "id", "in": "path", "required": True, "schema": URL_TEXT}


def body(properties: dict[str, Schema], required: list[str] | None = None) -> Op:
    """Return a request body of these fields, as JSON or a form."""
    schema = {"type": "object", "properties": properties, "required": required or []}
    return {
        # A body with required fields must be sent (an absent one is a 400 naming them).
        "required": bool(required),
        "content": {
            "application/json": {"schema": schema},
            "application/x-www-form-urlencoded": {"schema": schema},
        },
    }


def op(op_id: str, summary: str, responses: dict[str, Op], **extra: Any) -> Op:
    """Return one operation: a short, stable ``operationId``, its summary and responses."""
    return {"operationId": op_id, "summary": summary, "responses": responses, **extra}


# The HTML pages: what any of them may answer.
PAGE_RESPONSES: dict[str, Op] = {
    "200": html_response("An HTML page"),
    "201": html_response("An application registered (its secret is shown once)"),
    "302": {"description": "A redirect"},
    "400": html_response("Error"),
    # An unknown application is an HTML page; an unknown route or file is JSON.
    "404": {
        "description": "Not found",
        "content": {**html_response("")["content"], **ERROR["content"]},
    },
    "413": TOO_LARGE,
    "429": html_response(
        "Too many requests (sign-in attempts, or pages from one address): Retry-After"
    ),
}


def page(op_id: str, summary: str, method: str, **extra: Any) -> Op:
    """Return the operation of an HTML page (tagged ``pages``: /docs hides them at first)."""
    return op(
        f"page_{op_id}_{method}",
        f"{summary} ({method.upper()})",
        PAGE_RESPONSES,
        tags=["pages"],
        **extra,
    )
