"""``grant_type=refresh_token``: Authlib's refresh grant around our rotating refresh tokens.

The token presented is rotated (``auth_server.refresh.rotate``) while the request is validated,
so the client check, the rotation and the new pair all happen in the request's one transaction
(committed by ``Server.save_token``). Within the grace period a concurrent refresh with the same
token is answered the pair the first one got. With ``openid`` in its scope, a refresh also gets
a new ID token with the same ``sub`` and ``auth_time`` (OpenID Connect Core 12.2).
"""

from __future__ import annotations

from typing import Any

from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.errors import InvalidGrantError
from authlib.oauth2.rfc6749.hooks import hooked
from flask import g

from auth_server.context import services
from auth_server.inputs import is_clean
from auth_server.oidc import ArtcatOpenIDCode
from auth_server.refresh import (
    INVALID_REFRESH,
    FamilyUser,
    Presented,
    Renewal,
    Replay,
    family_user,
    rotate,
)
from auth_server.server import grace_pairs, request_db
from auth_server.token_params import TOKEN_METHODS

REPLAY_KEY = "refresh_replay"


class RefreshGrant(grants.RefreshTokenGrant):
    """Rotate on every use; a reuse revokes the family (except within the grace period)."""

    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]
    # Which methods a request may use is the server's to decide (Server.get_token_grant).
    TOKEN_ENDPOINT_HTTP_METHODS = TOKEN_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token: str) -> Presented:
        """Rotate the client's token (or find the pair a concurrent rotation just issued)."""
        if not is_clean(refresh_token, 512):
            raise InvalidGrantError(description=INVALID_REFRESH)
        settings = services().settings
        # The new pair, written by the rotation itself where it can (PostgreSQL). Its access
        # token has the family's scope and a refresh's lifetime: what ``Server.generate_token``
        # gives a refresh that names no narrower scope (``Server.save_token`` checks it, and
        # writes a pair of its own otherwise).
        renewal = None
        if not self.request.payload.scope:
            renewal = Renewal.draw(
                access_ttl=settings.refresh_access_token_ttl,
                refresh_ttl=settings.refresh_token_ttl,
            )
        outcome = rotate(
            request_db(self.request),
            services().stores.tokens,
            grace_pairs(),
            value=refresh_token,
            application_id=self.request.client.app.id,
            renewal=renewal,
        )
        if isinstance(outcome, Replay):
            g.setdefault(REPLAY_KEY, outcome)
            return outcome.presented
        return outcome

    def authenticate_user(self, refresh_token: Presented) -> FamilyUser:
        """Return the family's user, who must still be enabled (what a token and an ID token
        read of them only)."""
        user = family_user(request_db(self.request), refresh_token)
        if user is None or not user.enabled:
            raise InvalidGrantError(description="The user account is disabled.")
        return user

    @hooked
    def create_token_response(self) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        """Issue the new pair (or answer the one issued within the grace period)."""
        presented: Presented = self.request.refresh_token
        self.request.user = self.authenticate_user(presented)
        replay: Replay | None = g.pop(REPLAY_KEY, None)
        if replay is not None:
            token = dict(replay.body)
            if self.request.payload.state:  # this request's own (the reference API echoes it)
                token["state"] = self.request.payload.state
        else:
            token = self.issue_token(self.request.user, presented)
            self.save_token(token)
        # What a new ID token repeats of the original sign-in (set after save_token, which
        # reads a code's id here).
        self.request.authorization_code = presented
        return 200, token, self.TOKEN_RESPONSE_HEADER

    def revoke_old_credential(self, refresh_token: Presented) -> None:
        """Nothing left to do: the token was rotated in the transaction that issued the pair."""


class OpenIDRefresh(ArtcatOpenIDCode):
    """A new ID token on a refresh of an ``openid`` family started by the code flow."""

    def __call__(self, grant: Any) -> None:
        """Add the ID token to the token response only (no authorization request here)."""
        grant.register_hook("after_create_token_response", self.process_token)

    def process_token(self, grant: Any, response: Any) -> Any:
        """Sign a new ID token when the family began with a sign-in (the code flow)."""
        presented: Presented = grant.request.authorization_code
        if presented.get_auth_time() is None:
            return response[1]
        return super().process_token(grant, response)
