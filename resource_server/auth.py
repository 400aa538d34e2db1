"""Where a request carries its tokens (the request gate checks them: ``resource_server.gate``)."""

from __future__ import annotations

import falcon

TOKEN_HEADERS = ("X-XAPP-TOKEN", "X-ACCESS-TOKEN", "X-AUTH-TOKEN")
TOKEN_QUERY_PARAMS = ("xapp_token", "access_token")


def tokens_from_request(req: falcon.Request) -> list[str]:
    """Return every distinct token a request presents, headers first, then the query string.

    A blank value presents nothing. The gate refuses the request when any of them is invalid,
    so a garbage credential is never ignored because another header carries a valid one.
    """
    found: list[str] = []

    def add(value: str | None) -> None:
        value = (value or "").strip()
        if value and value not in found:
            found.append(value)

    for name in TOKEN_HEADERS:
        add(req.get_header(name))
    auth = req.get_header("AUTHORIZATION")
    if auth:
        scheme, _, value = auth.strip().partition(" ")
        if scheme.lower() == "bearer":
            add(value)
    for name in TOKEN_QUERY_PARAMS:
        for value in req.get_param_as_list(name) or []:
            add(value)
    return found


def token_from_request(req: falcon.Request) -> str | None:
    """Return the first token a request carries, from a header or the query string."""
    tokens = tokens_from_request(req)
    return tokens[0] if tokens else None
