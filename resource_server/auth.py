"""Token middleware: one Redis GET per request validates the caller's token."""

from __future__ import annotations

from typing import Any

import falcon

from common.tokens import TokenStore
from resource_server.errors import AuthError

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


class TokenMiddleware:
    """Check the token before a resource runs, by the resource's ``auth`` level."""

    def __init__(self, tokens: TokenStore) -> None:
        self.tokens = tokens

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        """Reject a request without a valid token (or without a user token where one is needed)."""
        req.context.token = None
        level = getattr(resource, "auth", "app")
        if level == "none" or req.method == "OPTIONS" or resource is None:
            return
        token = token_from_request(req)
        record = self.tokens.lookup(token) if token else None
        if record is None or (level == "user" and not record.is_user):
            raise AuthError()
        req.context.token = record
