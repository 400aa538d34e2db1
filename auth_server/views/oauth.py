"""The OAuth endpoints: token (every grant), revocation (RFC 7009), introspection (RFC 7662)."""

from __future__ import annotations

from authlib.oauth2.rfc6749.errors import (
    InvalidRequestError,
    UnauthorizedClientError,
    UnsupportedGrantTypeError,
)
from flask import Response, g, jsonify, request
from sqlalchemy import select

from auth_server.audit import audit
from auth_server.context import services
from auth_server.grants import GRANTS, GrantRequest, grant_allowed
from auth_server.oauth import authenticate, no_store, oauth_params, parse_scope, token_response
from auth_server.views.discovery import issuer
from common.ids import format_ts, utcnow
from common.models import Application, Token
from common.tokens import digest

TOKEN_PARAMS = (
    "client_id",
    "client_secret",
    "grant_type",
    "scope",
    "state",
    "code",
    "redirect_uri",
    "code_verifier",
    "email",
    "password",
    "oauth_provider",
    "oauth_token",
    "oauth_token_secret",
)
# The token type RFC 7662 names in an introspection answer (RFC 6750 bearer tokens).
BEARER = "Bearer"
TOKEN_ONLY_PARAMS = ("client_id", "client_secret", "token", "token_type_hint")


def access_token() -> Response:
    """``/oauth2/access_token``: authenticate the client, run its grant, answer the token."""
    params = oauth_params(request, TOKEN_PARAMS)
    if "password" in request.args:
        # Query strings end up in logs and browser history: refuse, whatever the grant.
        audit("signin.refused", reason="password_in_query", ip=request.remote_addr)
        raise InvalidRequestError(description="Send the password in the request body.")
    svc = services()
    with svc.stores.reads() as session:
        app = authenticate(session, request, params)
    grant_type = params.get("grant_type")
    if not grant_type:
        raise InvalidRequestError(description="The grant_type parameter is required.")
    grant = GRANTS.get(grant_type)
    if grant is None:
        raise UnsupportedGrantTypeError(grant_type)
    if not grant_allowed(app, grant_type):
        description = "This application may not use this grant type."
        raise UnauthorizedClientError(description=description)
    scope = parse_scope(params.get("scope"))
    ip = request.remote_addr or ""
    granted = grant(GrantRequest(svc, app, params, scope, ip))
    row = granted.issued.row  # committed and published by the grant
    audit(
        "token.issued",
        grant=grant_type,
        token_id=row.id,
        application_id=row.application_id,
        user_id=row.user_id,
        scope=row.scope,
        expires_at=format_ts(row.expires_at),
        ip=ip,
    )
    return token_response(
        app, granted.issued.value, row.expires_at, granted.ttl, granted.scope, g.get("oauth_state")
    )


def revoke() -> Response:
    """RFC 7009: expire one of the client's own tokens; 200 whether or not there was one."""
    params = oauth_params(request, TOKEN_ONLY_PARAMS)
    svc = services()
    with svc.stores.reads() as session:
        app = authenticate(session, request, params)
    token = _token_param(params)
    with svc.stores.sessions() as session, session.begin():
        # Another client's token is left alone, and the answer does not say it exists.
        rows = svc.stores.tokens.expire_where(
            session, Token.digest == digest(token), Token.application_id == app.id
        )
    svc.stores.tokens.tombstone(rows)
    for row in rows:
        audit("token.revoked", token_id=row.id, application_id=app.id, user_id=row.user_id)
    return no_store(Response(status=200))


def introspect() -> Response:
    """RFC 7662: describe one of the client's own live tokens; ``{active: false}`` otherwise."""
    params = oauth_params(request, TOKEN_ONLY_PARAMS)
    svc = services()
    with svc.stores.reads() as session:
        app = authenticate(session, request, params)
        row = session.scalar(select(Token).where(Token.digest == digest(_token_param(params))))
    if row is None or not _active(row, app):
        return no_store(jsonify({"active": False}))
    body: dict[str, object] = {
        "active": True,
        "scope": row.scope,
        "client_id": app.client_id,
        "token_type": BEARER,
        "exp": int(row.expires_at.timestamp()),
        "iat": int(row.created_at.timestamp()),
        "iss": issuer(),
    }
    if row.user_id:
        body["sub"] = row.user_id
    return no_store(jsonify(body))


def _token_param(params: dict[str, str]) -> str:
    token = params.get("token")
    if not token:
        raise InvalidRequestError(description="The token parameter is required.")
    return token


def _active(row: Token, app: Application) -> bool:
    return row.application_id == app.id and row.expired_at is None and row.expires_at > utcnow()
