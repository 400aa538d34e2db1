"""``grant_type=client_credentials``: an application (XAPP) token, throttled before any check."""

from __future__ import annotations

from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.errors import InvalidScopeError
from flask import request

from auth_server.oauth import SlowDownError
from auth_server.throttles import xapp_throttle
from auth_server.token_params import TOKEN_METHODS


class XappGrant(grants.ClientCredentialsGrant):
    """The standard grant for the reference API's XAPP tokens (they act for no user)."""

    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]
    # Which methods a request may use is the server's to decide (Server.get_token_grant).
    TOKEN_ENDPOINT_HTTP_METHODS = TOKEN_METHODS

    def validate_token_request(self) -> None:
        """Count the attempt, authenticate the client (Authlib), then count the token.

        Until the secret proves right the attempt counts as a failure of this client id from this
        address; the client's own issuance budget counts right secrets only.
        """
        client_id = self.request.payload.client_id or basic_client_id()
        throttle = xapp_throttle()
        attempt = throttle.attempt(client_id=client_id or "", ip=request.remote_addr or "")
        if attempt.wait is not None:
            raise SlowDownError(attempt.wait)
        if self.request.payload.scope:
            raise InvalidScopeError(description="Application tokens take no scope.")
        with throttle.unless_unchecked(attempt):
            super().validate_token_request()
        wait = throttle.issued(attempt)
        if wait is not None:
            raise SlowDownError(wait)


def basic_client_id() -> str | None:
    """Return the client id of HTTP Basic credentials, if any."""
    auth = request.authorization
    return auth.username if auth is not None and auth.type == "basic" else None
