"""Where a request carries its token (the request gate checks it: ``resource_server.gate``)."""

from __future__ import annotations

import falcon

TOKEN_HEADERS = ("X-XAPP-TOKEN", "X-ACCESS-TOKEN", "X-AUTH-TOKEN")
TOKEN_QUERY_PARAMS = ("xapp_token", "access_token")


def token_from_request(req: falcon.Request) -> str | None:
    """Return the token a request carries, from a header or the query string."""
    for name in TOKEN_HEADERS:
        value = req.get_header(name)
        if value:
            return value.strip()
    auth = req.get_header("AUTHORIZATION")
    if auth:
        scheme, _, value = auth.strip().partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    for name in TOKEN_QUERY_PARAMS:
        value = req.get_param(name)
        if value:
            return value
    return None
