"""OAuth endpoint plumbing: parameters, client authentication, scopes, errors, token responses.

Errors are Authlib's RFC 6749 error classes, answered once (``register``) as
``{error, error_description[, state]}`` with ``Cache-Control: no-store``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from urllib.parse import unquote_plus

from authlib.oauth2.rfc6749.errors import (
    InvalidClientError,
    InvalidRequestError,
    InvalidScopeError,
    OAuth2Error,
)
from flask import Flask, Request, Response, g, jsonify
from sqlalchemy.orm import Session

from auth_server.accounts import authenticate_client
from auth_server.audit import audit
from auth_server.errors import APIError
from auth_server.inputs import is_clean
from auth_server.params import request_params
from common.ids import format_ts
from common.models import Application
from common.settings import AuthSettings

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
OFFLINE_ACCESS = "offline_access"
SUPPORTED_SCOPES = frozenset({OFFLINE_ACCESS})
BAD_CLIENT = "The client id or secret is invalid."


class ClientAuthError(InvalidClientError):
    """Client authentication failed: 401, with a Basic challenge when Basic was tried."""

    status_code = 401

    def __init__(self, description: str, *, basic: bool) -> None:
        super().__init__(description=description)
        self.basic = basic


class SlowDownError(OAuth2Error):
    """Too many attempts: 429 with ``Retry-After`` (``slow_down`` is a registered token error)."""

    error = "slow_down"
    status_code = 429

    def __init__(self, retry_after: int) -> None:
        super().__init__(description=f"Too many attempts. Try again in {retry_after} seconds.")
        self.retry_after = retry_after


def oauth_params(req: Request, names: Iterable[str]) -> dict[str, str]:
    """Return the known parameters of an OAuth request; malformed ones are invalid_request."""
    try:
        raw = request_params(req)
    except APIError:
        raise InvalidRequestError(description="The request body is not a JSON object.") from None
    state = raw.get("state")
    if state and is_clean(state):
        g.oauth_state = state  # echoed in the error body, whatever goes wrong next
    params: dict[str, str] = {}
    for name in names:
        value = raw.get(name)
        if value is None:
            continue
        if not is_clean(value):
            raise InvalidRequestError(description=f"The {name} parameter is malformed.")
        params[name] = value
    return params


def client_credentials(req: Request, params: dict[str, str]) -> tuple[str, str, bool]:
    """Return ``(client_id, client_secret, via_basic)`` from HTTP Basic or the parameters."""
    header = req.headers.get("Authorization", "")
    if header[:6].lower() == "basic ":
        auth = req.authorization
        if auth is None or auth.type != "basic" or not auth.username or not auth.password:
            raise ClientAuthError("The Basic credentials are malformed.", basic=True)
        # RFC 6749 2.3.1: the id and secret are form-encoded before Basic encoding.
        client_id, secret = unquote_plus(auth.username), unquote_plus(auth.password)
        if "client_secret" in params or params.get("client_id", client_id) != client_id:
            raise InvalidRequestError(description="Use one client authentication method only.")
        if not (is_clean(client_id, 200) and is_clean(secret, 200)):
            raise ClientAuthError(BAD_CLIENT, basic=True)
        return client_id, secret, True
    client_id, secret = params.get("client_id", ""), params.get("client_secret", "")
    if not client_id or not secret:
        raise ClientAuthError(
            "Client authentication (client_id, client_secret) is required.", basic=False
        )
    return client_id, secret, False


def authenticate(session: Session, req: Request, params: dict[str, str]) -> Application:
    """Authenticate the calling application (constant-time), or raise invalid_client."""
    client_id, secret, basic = client_credentials(req, params)
    app = authenticate_client(session, client_id, secret)
    if app is None:
        audit("client.auth_failed", client_id=client_id[:64], ip=req.remote_addr)
        raise ClientAuthError(BAD_CLIENT, basic=basic)
    return app


def parse_scope(raw: str | None) -> str | None:
    """Return the normalised scope (None when absent); unknown scopes are invalid_scope."""
    if raw is None:
        return None
    parts = set(raw.split())
    if parts - SUPPORTED_SCOPES:
        raise InvalidScopeError(description="Unknown scope. The only scope is offline_access.")
    return " ".join(sorted(parts))


def token_ttl(settings: AuthSettings, scope: str) -> int:
    """Return the lifetime of an access token: 25 years for offline_access, else 60 days."""
    if OFFLINE_ACCESS in scope.split():
        return settings.offline_token_ttl
    return settings.access_token_ttl


def token_response(
    app: Application, token: str, expires_at: datetime, ttl: int, scope: str, state: str | None
) -> Response:
    """Answer a token: the reference format, or RFC 6749's for ``standard_token_response`` apps."""
    body: dict[str, object] = {"access_token": token}
    if app.standard_token_response:
        body.update(token_type="Bearer", expires_in=ttl)  # noqa: S106  # nosec B106 # a token type
    else:
        body["expires_in"] = format_ts(expires_at)  # the reference API's timestamp string
    if scope:
        body["scope"] = scope
    if state:
        body["state"] = state
    resp = jsonify(body)
    resp.headers.update(NO_STORE)
    return resp


def no_store(resp: Response) -> Response:
    """Mark a response as not cacheable (anything carrying or describing a credential)."""
    resp.headers.update(NO_STORE)
    return resp


def register(app: Flask) -> None:
    """Answer Authlib's OAuth errors as JSON ``{error, error_description[, state]}``."""

    @app.errorhandler(OAuth2Error)
    def _oauth_error(ex: OAuth2Error) -> tuple[Response, int, dict[str, str]]:
        body: dict[str, str] = {"error": str(ex.error)}
        description = ex.description or ex.get_error_description()
        if description:
            body["error_description"] = str(description)
        state = ex.state or g.get("oauth_state")
        if state:
            body["state"] = state
        headers = dict(NO_STORE)
        if isinstance(ex, ClientAuthError) and ex.basic:
            headers["WWW-Authenticate"] = 'Basic realm="oauth2", error="invalid_client"'
        if isinstance(ex, SlowDownError):
            headers["Retry-After"] = str(ex.retry_after)
        return jsonify(body), int(ex.status_code), headers
