"""OpenID Connect's endpoints: the signing keys (JWKS) and the userinfo endpoint."""

from __future__ import annotations

from flask import Response, jsonify, request

from auth_server.context import services
from auth_server.keys import JWKS_MAX_AGE
from auth_server.oauth import NO_STORE, OPENID
from auth_server.oidc import keyring, user_claims
from auth_server.views.described import Described
from common.api.constants import INVALID_TOKEN
from common.api.errors import AuthError
from common.bearer import bearer_credential
from common.models import User
from common.openapi.parts import BOOL, INT, STR, json_response, obj, op

JWKS_PATH = "/oauth2/jwks"
USERINFO_PATH = "/oauth2/userinfo"
REALM = 'Bearer realm="artcat"'


def jwks() -> Response:
    """Publish the public half of every signing key: next, current, and retired but still
    verifying tokens. Cacheable for as long as a next key is published before it signs."""
    resp = jsonify(keyring().jwks())
    resp.headers["Cache-Control"] = f"public, max-age={JWKS_MAX_AGE}"
    return resp


def _refuse(status: int, error: str, description: str, extra: str = "") -> Response:
    resp = jsonify({"error": error, "error_description": description})
    resp.status_code = status
    resp.headers.update(NO_STORE)
    resp.headers["WWW-Authenticate"] = f'{REALM}, error="{error}"{extra}'
    return resp


def userinfo() -> Response:
    """Answer the claims about the token's user that its scope grants (RFC 6750 Bearer token,
    in the Authorization header or, by POST, as the ``access_token`` form field)."""
    try:
        token = bearer_credential(request.headers.get("Authorization"))
    except AuthError:
        token = None
    if token is None and request.method == "POST":
        token = request.form.get("access_token") or None
    if token is None:
        resp = _refuse(401, "invalid_token", INVALID_TOKEN)
        resp.headers["WWW-Authenticate"] = REALM  # RFC 6750 3.1: no error without a token
        return resp
    svc = services()
    record = svc.stores.tokens.lookup(token)
    if record is None or not record.is_user or record.user_id is None:
        return _refuse(401, "invalid_token", INVALID_TOKEN)
    if OPENID not in record.scope.split():
        description = "The access token was not granted the openid scope."
        return _refuse(403, "insufficient_scope", description, f', scope="{OPENID}"')
    with svc.stores.sessions() as db:
        user = db.get(User, record.user_id)
        if user is None or not user.enabled:
            return _refuse(401, "invalid_token", INVALID_TOKEN)
        claims = dict(user_claims(user, record.scope))
    resp = jsonify(claims)
    resp.headers.update(NO_STORE)
    return resp


USERINFO_SCHEMA = obj(
    {"sub": STR},
    {"name": STR, "updated_at": INT, "email": STR, "email_verified": BOOL},
)
USERINFO_ERRORS = {
    "401": json_response(obj({"error": STR}, {"error_description": STR}), "invalid_token"),
    "403": json_response(
        obj({"error": STR}, {"error_description": STR}), "insufficient_scope (no openid)"
    ),
}
USERINFO_SECURITY: list[dict[str, list[str]]] = [{"bearer": []}]

bp = Described("openid", __name__, tag="OAuth")
bp.declare(
    JWKS_PATH,
    jwks,
    get=op(
        "jwks",
        "The keys that sign ID tokens (a JWK set, RFC 7517)",
        {"200": json_response(obj({"keys": {"type": "array"}}), "JWK set")},
    ),
)
bp.declare(
    USERINFO_PATH,
    userinfo,
    get=op(
        "userinfo",
        "Claims about the token's user (OpenID Connect userinfo)",
        {"200": json_response(USERINFO_SCHEMA, "Claims"), **USERINFO_ERRORS},
        security=USERINFO_SECURITY,
    ),
    post=op(
        "userinfo_by_post",
        "Claims about the token's user, by POST (OpenID Connect userinfo)",
        {"200": json_response(USERINFO_SCHEMA, "Claims"), **USERINFO_ERRORS},
        security=USERINFO_SECURITY,
    ),
)
