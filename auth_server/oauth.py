"""What the OAuth endpoints share: scope parsing, lifetimes, our errors and their one JSON shape.

Errors are Authlib's RFC 6749 error classes, answered as ``{error, error_description[, state]}``
with ``Cache-Control: no-store``, whether Authlib's server answers them or they escape to Flask.
"""

from __future__ import annotations

from authlib.oauth2.rfc6749.errors import InvalidClientError, InvalidScopeError, OAuth2Error
from flask import Flask, Response, g, jsonify

from auth_server.context import current_request
from common.api.constants import BAD_CLIENT, OFFLINE_ACCESS, SUPPORTED_SCOPES
from common.settings import AuthSettings

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
# The token type of every token this server issues (RFC 6750 bearer tokens).
BEARER = "Bearer"
# OpenID Connect's scopes: openid asks for an ID token, profile and email for those claims.
OPENID = "openid"
OIDC_SCOPES = frozenset({OPENID, "profile", "email"})
HINT_UNSUPPORTED = "This token_type_hint is not supported."
# Descriptions for Authlib errors raised without one (a body always says what went wrong).
DEFAULT_DESCRIPTIONS = {
    "invalid_request": "The request is missing a parameter or is malformed.",
    "invalid_client": BAD_CLIENT,
    "invalid_grant": "The grant is invalid, expired or was issued to another client.",
    "unsupported_grant_type": "This grant_type is not supported.",
    "unsupported_token_type": HINT_UNSUPPORTED,
}


class SlowDownError(OAuth2Error):
    """Too many attempts: 429 with ``Retry-After`` (``slow_down`` is a registered token error)."""

    error = "slow_down"
    status_code = 429

    def __init__(self, retry_after: int) -> None:
        super().__init__(description=f"Too many attempts. Try again in {retry_after} seconds.")
        self.retry_after = retry_after


def parse_scope(raw: str | None) -> str | None:
    """Return the normalised scope (None when absent); unknown scopes are invalid_scope."""
    if raw is None:
        return None
    parts = set(raw.split())
    if parts - SUPPORTED_SCOPES - OIDC_SCOPES:
        raise InvalidScopeError(
            description="Unknown scope. The scopes are offline_access, and openid with profile "
            "and email."
        )
    if parts & OIDC_SCOPES and OPENID not in parts:
        raise InvalidScopeError(description="The profile and email scopes come with openid.")
    return " ".join(sorted(parts))


def token_ttl(settings: AuthSettings, scope: str) -> int:
    """Return the lifetime of an access token: 25 years for offline_access, else 60 days."""
    if OFFLINE_ACCESS in scope.split():
        return settings.offline_token_ttl
    return settings.access_token_ttl


def error_response(
    ex: OAuth2Error, state: str | None
) -> tuple[int, dict[str, str], list[tuple[str, str]]]:
    """Return the status, body and headers answering an OAuth error."""
    body: dict[str, str] = {"error": str(ex.error)}
    description = ex.description or DEFAULT_DESCRIPTIONS.get(str(ex.error), "")
    if description:
        body["error_description"] = str(description)
    state = ex.state or state
    if state:
        body["state"] = state
    headers = [("Content-Type", "application/json"), *NO_STORE.items()]
    status = int(ex.status_code)
    if isinstance(ex, InvalidClientError):
        status = 401
        # RFC 6749 5.2: a client that tried HTTP Basic is told which scheme to use.
        if current_request().headers.get("Authorization", "")[:6].lower() == "basic ":
            headers.append(("WWW-Authenticate", 'Basic realm="oauth2", error="invalid_client"'))
    if isinstance(ex, SlowDownError):
        headers.append(("Retry-After", str(ex.retry_after)))
    return status, body, headers


def no_store(resp: Response) -> Response:
    """Mark a response as not cacheable (anything carrying or describing a credential)."""
    resp.headers.update(NO_STORE)
    return resp


def register(app: Flask) -> None:
    """Answer OAuth errors raised outside Authlib's server (request parsing) the same way."""

    @app.errorhandler(OAuth2Error)
    def _oauth_error(ex: OAuth2Error) -> tuple[Response, int, list[tuple[str, str]]]:
        status, body, headers = error_response(ex, g.get("oauth_state"))
        return jsonify(body), status, headers
