"""RFC 7009 revocation and RFC 7662 introspection: Authlib's endpoints on our token rows.

A client sees only its own tokens: another client's token is neither revoked nor described, and
the answer does not tell whether it exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from authlib.oauth2.rfc6749 import TokenMixin
from authlib.oauth2.rfc6749.errors import InvalidRequestError
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from sqlalchemy import select

from auth_server.audit import audit
from auth_server.clients import OAuthClient
from auth_server.context import issuer, services
from auth_server.inputs import is_clean
from auth_server.oauth import BEARER
from auth_server.refresh import GRANT_TYPE as REFRESH_GRANT
from auth_server.refresh import LiveRefresh, live_refresh, revoke_presented
from common.ids import utcnow
from common.models import Token
from common.tokens import digest


class StoredToken(TokenMixin):
    """A token row (or a live refresh token, for introspection), as Authlib's endpoints read
    it."""

    def __init__(self, row: Token | LiveRefresh) -> None:
        self.row = row
        self.client_id = ""  # the owning client's id, once a permission check found it

    def check_client(self, client: OAuthClient) -> bool:
        """Tell whether the token was issued to ``client``."""
        return self.row.application_id == client.app.id

    def get_scope(self) -> str:
        """Return the token's scope."""
        return self.row.scope

    def get_expires_in(self) -> int:
        """Return the seconds left."""
        return max(0, int((self.row.expires_at - utcnow()).total_seconds()))

    def is_expired(self) -> bool:
        """Tell whether the token outlived its lifetime."""
        return self.row.expires_at <= utcnow()

    def is_revoked(self) -> bool:
        """Tell whether the token was expired early (revoked, signed out, replayed)."""
        return self.row.expired_at is not None


def find_token(value: str) -> StoredToken | None:
    """Return the stored token with this clear value, if any."""
    if not is_clean(value, 512):
        return None
    with services().stores.reads() as session:
        row = session.scalar(select(Token).where(Token.digest == digest(value)))
    return StoredToken(row) if row is not None else None


def check_token_param(request: Any) -> None:
    """Require the token parameter (a token_type_hint is only a hint: RFC 7009 2.1)."""
    if not request.form.get("token"):
        raise InvalidRequestError(description="The token parameter is required.")


@dataclass(frozen=True)
class RefreshHandle:
    """A refresh token presented for revocation: revoking it revokes its family."""

    value: str
    application_id: str


class Revocation(RevocationEndpoint):
    """Expire one of the client's own tokens at once, at every process; 200 whatever it was.

    A refresh token revokes its whole family: its refresh tokens and the access tokens issued
    from it. An access token revokes itself only.
    """

    # RFC 7009 2.1: a public client revokes with its client_id alone.
    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]

    def check_params(self, request: Any, client: OAuthClient) -> None:
        """Require the token parameter."""
        check_token_param(request)

    def authenticate_token(
        self, request: Any, client: OAuthClient
    ) -> StoredToken | RefreshHandle | None:
        """Return the token when it is the client's own; None (silently) otherwise."""
        self.check_params(request, client)
        value = request.form["token"]
        token = self.query_token(value, None)
        if token is None and is_clean(value, 512):
            return RefreshHandle(value, client.app.id)
        return token if token is not None and token.check_client(client) else None

    def query_token(self, token_string: str, token_type_hint: str | None) -> StoredToken | None:
        """Find the token by its digest."""
        return find_token(token_string)

    def revoke_token(self, token: StoredToken | RefreshHandle, request: Any) -> None:
        """Expire the token in SQL, then tombstone it in Redis."""
        store = services().stores
        if isinstance(token, RefreshHandle):
            with store.sessions() as session:
                revoke_presented(
                    session, store.tokens, token.value, application_id=token.application_id
                )
            return
        if not isinstance(token.row, Token):
            return  # revocation looks up access tokens only (a refresh token is a handle)
        with store.sessions() as session, session.begin():
            rows = store.tokens.expire_where(session, Token.id == token.row.id)
        store.tokens.tombstone(rows)
        for row in rows:
            audit(
                "token.revoked",
                token_id=row.id,
                application_id=row.application_id,
                user_id=row.user_id,
            )


class Introspection(IntrospectionEndpoint):
    """Describe one of the client's own live tokens, access or refresh; ``{active: false}``
    otherwise."""

    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def check_params(self, request: Any, client: OAuthClient) -> None:
        """Require the token parameter."""
        check_token_param(request)

    def query_token(self, token_string: str, token_type_hint: str | None) -> StoredToken | None:
        """Find the access token by its digest, else the live refresh token (whatever the hint
        says: it is only a hint, RFC 7662 2.1)."""
        found = find_token(token_string)
        if found is not None or not is_clean(token_string, 512):
            return found
        with services().stores.reads() as session:
            live = live_refresh(session, token_string)
        return StoredToken(live) if live is not None else None

    def check_permission(self, token: StoredToken, client: OAuthClient, request: Any) -> bool:
        """Let a client introspect only its own tokens."""
        if not token.check_client(client):
            return False
        token.client_id = client.get_client_id()
        return True

    def introspect_token(self, token: StoredToken) -> dict[str, Any]:
        """Describe a live token (a refresh token with ``token_use``, as ORY Hydra does: RFC
        7662's ``token_type`` names access token types only)."""
        row = token.row
        body: dict[str, Any] = {
            "active": True,
            "scope": row.scope,
            "client_id": token.client_id,
            "exp": int(row.expires_at.timestamp()),
            "iat": int(row.created_at.timestamp()),
            "iss": issuer(),
        }
        if isinstance(row, LiveRefresh):
            body["token_use"] = REFRESH_GRANT  # "refresh_token"
        else:
            body["token_type"] = BEARER
        if row.user_id:
            body["sub"] = row.user_id
        return body
