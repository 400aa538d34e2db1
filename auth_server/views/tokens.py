"""Token routes: ``POST /api/tokens/xapp_token`` and ``DELETE /api/tokens/access_token``."""

from __future__ import annotations

from flask import Response, current_app, jsonify, request

from auth_server.accounts import authenticate_client_id
from auth_server.audit import audit
from auth_server.bearer import request_token
from auth_server.context import services
from auth_server.inputs import is_clean
from auth_server.oauth import no_store
from auth_server.params import request_params
from auth_server.refresh import revoke_presented
from auth_server.throttles import xapp_throttle
from auth_server.token_params import CLIENT_PARAMS
from auth_server.views.described import URL_NOTE, Described, in_query, properties
from common.api.constants import BAD_CLIENT, INVALID_TOKEN
from common.api.errors import AuthError, ParamError, TooManyRequests
from common.ids import format_ts, utcnow
from common.openapi.parts import URL_TEXT, WRITE_ERRORS, body, json_response, op, ref


def xapp_token() -> tuple[Response, int, dict[str, str]]:
    """Issue an application (XAPP) token for valid client credentials (201)."""
    params = request_params(request)
    throttle = xapp_throttle()
    attempt = throttle.attempt(client_id=params.get("client_id", ""), ip=request.remote_addr or "")
    if attempt.wait is not None:
        audit("xapp_token.throttled", ip=request.remote_addr, retry_after=attempt.wait)
        raise _too_many(attempt.wait)
    missing = [f for f in ("client_id", "client_secret") if not params.get(f)]
    if missing:
        raise ParamError.missing(*missing)
    if not (is_clean(params["client_id"], 200) and is_clean(params["client_secret"], 200)):
        # A NUL byte or a lone surrogate would make PostgreSQL refuse the query (a 500).
        raise AuthError(BAD_CLIENT)
    svc = services()
    # Core, not the ORM: this is the most frequent write of the service.
    with throttle.unless_unchecked(attempt), svc.stores.engine.begin() as conn:
        app_id = authenticate_client_id(conn, params["client_id"], params["client_secret"])
        if app_id is None:
            audit("xapp_token.denied", client_id=params["client_id"][:64], ip=request.remote_addr)
            raise AuthError(BAD_CLIENT)
        # The right secret: its attempt is no failure; the token counts in the client's budget.
        wait = throttle.issued(attempt)
        if wait is not None:
            audit("xapp_token.throttled", application_id=app_id, retry_after=wait)
            raise _too_many(wait)
        issued = svc.stores.tokens.issue(
            conn,
            kind="xapp",
            application_id=app_id,
            user_id=None,
            ttl=svc.settings.xapp_token_ttl,
        )
    svc.stores.tokens.publish(issued.row)
    audit("xapp_token.issued", application_id=issued.row.application_id, token_id=issued.row.id)
    current_app.logger.debug("xapp token issued for %s", issued.row.application_id)
    body: dict[str, object] = {
        "type": "xapp_token",
        "token": issued.value,
        "expires_at": format_ts(issued.row.expires_at),
        "_links": {},
    }
    return jsonify(body), 201, {"Cache-Control": "no-store"}


def _too_many(wait: int) -> TooManyRequests:
    return TooManyRequests(f"Too many attempts. Try again in {wait} seconds.", retry_after=wait)


def expire_access_token() -> Response:
    """Expire a token at once (sign out); every resource server refuses it on its next request.

    A refresh token ends its whole family: its refresh tokens and the access tokens issued
    from it.
    """
    params = request_params(request)
    token = request_token(request, params)
    if not token:
        raise ParamError.missing("access_token")
    stores = services().stores
    row = stores.tokens.expire(token)
    if row is None:
        return expire_refresh_token(token)
    audit(
        "token.expired",
        token_id=row.id,
        application_id=row.application_id,
        user_id=row.user_id,
        ip=request.remote_addr,
    )
    body = {
        "id": row.id,
        "type": "access_token",
        "token": token,
        "expired_at": format_ts(row.expired_at),
    }
    return no_store(jsonify(body))


def expire_refresh_token(token: str) -> Response:
    """Revoke the family of a refresh token presented to the expiry route."""
    stores = services().stores
    with stores.sessions() as session:
        found = revoke_presented(session, stores.tokens, token) if is_clean(token, 512) else None
    if found is None:
        raise AuthError(INVALID_TOKEN)
    body = {
        "id": found[0],
        "type": "refresh_token",
        "token": token,
        "expired_at": format_ts(utcnow()),
    }
    return no_store(jsonify(body))


bp = Described("tokens", __name__, tag="tokens")
bp.declare(
    "/api/tokens/xapp_token",
    xapp_token,
    post=op(
        "issue_xapp_token",
        "Issue an application (XAPP) token",
        {"201": json_response(ref("XappToken"), "Issued"), **WRITE_ERRORS},
        description=URL_NOTE,
        parameters=in_query(CLIENT_PARAMS),
        requestBody=body(properties(CLIENT_PARAMS), ["client_id", "client_secret"]),
    ),
)
bp.declare(
    "/api/tokens/access_token",
    expire_access_token,
    delete=op(
        "expire_access_token",
        "Expire an access token (or a refresh token and its family)",
        {"200": json_response(ref("ExpiredToken"), "Expired"), **WRITE_ERRORS},
        parameters=[{"name": "access_token", "in": "query", "schema": URL_TEXT}],
    ),
)
