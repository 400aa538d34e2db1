"""The token a request to the auth server's JSON API carries, and the user it acts for."""

from __future__ import annotations

from collections.abc import Mapping

from flask import Request

from auth_server.context import services
from auth_server.errors import AuthError
from common.tokens import TokenRecord

INVALID_TOKEN = "The access token is invalid or has expired."  # noqa: S105  # nosec B105 # a message
TOKEN_HEADERS = ("X-Access-Token", "X-Auth-Token")


def request_token(req: Request, params: Mapping[str, str] | None = None) -> str | None:
    """Return the token from ``access_token``, X-Access-Token/X-Auth-Token, or a Bearer header."""
    value = (params or {}).get("access_token") or req.args.get("access_token")
    if value:
        return value.strip()
    for name in TOKEN_HEADERS:
        value = req.headers.get(name)
        if value and value.strip():
            return value.strip()
    scheme, _, value = req.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def require_user(req: Request) -> TokenRecord:
    """Return the record of the request's user access token, or raise a 401 ``auth_error``."""
    token = request_token(req)
    record = services().stores.tokens.lookup(token) if token else None
    if record is None or not record.is_user:
        raise AuthError(INVALID_TOKEN)
    return record
