"""The OAuth endpoints: token (every grant), revocation (RFC 7009), introspection (RFC 7662)."""

from __future__ import annotations

from flask import Response

from auth_server.server import authorization_server
from auth_server.token_params import TOKEN_HINT_PARAMS, TOKEN_PARAMS
from auth_server.views.described import (
    OAUTH_ERRORS,
    URL_NOTE,
    Described,
    in_query,
    oauth_body,
    properties,
)
from common.openapi.parts import json_response, op, ref


def access_token() -> Response:
    """``/oauth2/access_token``: authenticate the client, run its grant, answer the token."""
    response: Response = authorization_server().create_token_response()
    return response


def revoke() -> Response:
    """RFC 7009: expire one of the client's own tokens; 200 whether or not there was one."""
    response: Response = authorization_server().create_endpoint_response("revocation")
    return response


def introspect() -> Response:
    """RFC 7662: describe one of the client's own live tokens; ``{active: false}`` otherwise."""
    response: Response = authorization_server().create_endpoint_response("introspection")
    return response


NOT_IN_URL = ("password",)
HINT_REQUEST = oauth_body(properties(TOKEN_HINT_PARAMS), ["token"])
ISSUED = {"200": json_response(ref("AccessToken"), "Issued"), **OAUTH_ERRORS}

bp = Described("oauth", __name__, tag="OAuth")
bp.declare(
    "/oauth2/access_token",
    access_token,
    get=op(
        "token_by_get",
        "Exchange a grant for an access token by GET (the reference API's form)",
        ISSUED,
        description=(
            "Every parameter in the query string. Not for the password grants (a password in a "
            "URL is refused); answered invalid_request when the operator set "
            "URL_CREDENTIALS=refuse."
        ),
        parameters=[
            {**param, "required": param["name"] == "grant_type"}
            for param in in_query(TOKEN_PARAMS, but=NOT_IN_URL)
        ],
    ),
    post=op(
        "token",
        "Exchange a grant for an access token",
        ISSUED,
        description=URL_NOTE,
        parameters=in_query(TOKEN_PARAMS, but=NOT_IN_URL),
        requestBody=oauth_body(properties(TOKEN_PARAMS), ["grant_type"]),
    ),
)
bp.declare(
    "/oauth2/revoke",
    revoke,
    post=op(
        "revoke_token",
        "Revoke a token (RFC 7009)",
        {
            "200": json_response({"type": "object"}, "Revoked, or unknown (an empty object)"),
            **OAUTH_ERRORS,
        },
        requestBody=HINT_REQUEST,
    ),
)
bp.declare(
    "/oauth2/introspect",
    introspect,
    post=op(
        "introspect_token",
        "Introspect a token (RFC 7662)",
        {"200": json_response(ref("Introspection"), "The token's state"), **OAUTH_ERRORS},
        requestBody=HINT_REQUEST,
    ),
)
