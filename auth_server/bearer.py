"""The token a request to the auth server's JSON API carries, and the user it acts for."""

from __future__ import annotations

from collections.abc import Mapping

from flask import Request

from auth_server.context import services
from common.api.errors import AuthError
from common.bearer import bearer_credential
from common.tokens import TokenRecord

TOKEN_HEADERS = ("X-Access-Token", "X-Auth-Token")


def request_tokens(req: Request, params: Mapping[str, str] | None = None) -> list[str]:
    """Return every distinct token presented: ``access_token``, the headers, a Bearer header.

    A blank value presents nothing, but ``Authorization: Bearer`` without a token is a
    malformed credential: a 401 ``auth_error`` (``common.bearer``).
    """
    found: list[str] = []
    values = [(params or {}).get("access_token"), *req.args.getlist("access_token")]
    values += [req.headers.get(name) for name in TOKEN_HEADERS]
    values.append(bearer_credential(req.headers.get("Authorization")))  # empty Bearer: a 401
    # An application token acts for no user here, but a bad one is still a bad credential.
    values += [req.headers.get("X-Xapp-Token"), *req.args.getlist("xapp_token")]
    for value in values:
        value = (value or "").strip()
        if value and value not in found:
            found.append(value)
    return found


def request_token(req: Request, params: Mapping[str, str] | None = None) -> str | None:
    """Return the first token from ``access_token``, X-Access-Token/X-Auth-Token, or Bearer."""
    tokens = request_tokens(req, params)
    return tokens[0] if tokens else None


def require_user(req: Request) -> TokenRecord:
    """Return the record of the request's user access token, or raise a 401 ``auth_error``.

    Every token presented must be valid and name the same user: a garbage credential in one
    header is never ignored because another carries a valid one.
    """
    store = services().stores.tokens
    records = [store.lookup(token) for token in request_tokens(req)]
    users = {r.user_id for r in records if r is not None and r.is_user}
    if not records or None in records or len(users) != 1:
        raise AuthError()
    return next(r for r in records if r is not None and r.is_user)
