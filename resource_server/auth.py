"""Where a request carries its tokens (the request gate checks them: ``resource_server.gate``)."""

from __future__ import annotations

import falcon

from common.bearer import bearer_credential

TOKEN_HEADERS = ("X-XAPP-TOKEN", "X-ACCESS-TOKEN", "X-AUTH-TOKEN")
# The same headers as the WSGI environ names them (read there: falcon's get_header normalises
# the name on every call, six times a request).
_ENVIRON_KEYS = tuple("HTTP_" + name.replace("-", "_") for name in TOKEN_HEADERS)
TOKEN_QUERY_PARAMS = ("xapp_token", "access_token")


def tokens_from_request(req: falcon.Request) -> list[str]:
    """Return every distinct token a request presents, headers first, then the query string.

    A blank token header presents nothing, but ``Authorization: Bearer`` without a token is a
    malformed credential (a 401, raised here). The gate refuses the request when any of them is
    invalid, so a garbage credential is never ignored because another header carries a valid one.
    """
    found: list[str] = []

    def add(value: str | None) -> None:
        value = (value or "").strip()
        if value and value not in found:
            found.append(value)

    env = req.env
    for key in _ENVIRON_KEYS:
        add(env.get(key))
    auth = env.get("HTTP_AUTHORIZATION")
    if auth:
        add(bearer_credential(auth))  # a Bearer without a token is a 401 (malformed)
    if env.get("QUERY_STRING"):
        for name in TOKEN_QUERY_PARAMS:
            for value in req.get_param_as_list(name) or []:
                add(value)
    return found


def token_from_request(req: falcon.Request) -> str | None:
    """Return the first token a request carries, from a header or the query string."""
    tokens = tokens_from_request(req)
    return tokens[0] if tokens else None
