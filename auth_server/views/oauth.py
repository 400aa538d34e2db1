"""The OAuth endpoints: token (every grant), revocation (RFC 7009), introspection (RFC 7662)."""

from __future__ import annotations

from flask import Response

from auth_server.server import authorization_server


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
