"""Authorization codes: issued at consent, redeemed once (atomically) at the token endpoint.

Only the SHA-256 digest of a code is stored. Redemption is one conditional UPDATE, so of any
number of concurrent redemptions exactly one wins; a second use of a code also expires every
token issued from it (RFC 6749 4.1.2, RFC 9700 4.5). Authlib's authorization code grant calls
these through its hooks (``auth_server.grants.authorization_code``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from authlib.oauth2.rfc6749 import AuthorizationCodeMixin
from authlib.oauth2.rfc6749.errors import InvalidGrantError
from sqlalchemy import CursorResult, select, update
from sqlalchemy.orm import Session

from auth_server.audit import audit
from auth_server.oauth import parse_scope
from auth_server.refresh import revoke_families
from common.ids import new_id, utcnow
from common.models import (
    Application,
    AuthorizationCode,
    RefreshFamily,
    RefreshToken,
    Token,
    User,
)
from common.tokens import TokenStore, digest, generate_secret

# RFC 7636 4.2: BASE64URL(SHA256(verifier)) is exactly 43 characters.
S256_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")
S256 = "S256"
INVALID_CODE = "The authorization code is invalid, expired or already used."


@dataclass
class PendingCode(AuthorizationCodeMixin):
    """A code found at the token endpoint, as Authlib's grant and PKCE extension read it."""

    id: str
    user_id: str
    redirect_uri: str
    scope: str
    code_challenge: str | None
    code_challenge_method: str | None
    nonce: str | None = None
    auth_time: int | None = None  # Unix seconds: when the user signed in

    def get_redirect_uri(self) -> str:
        """Return the redirect URI the code was issued for."""
        return self.redirect_uri

    def get_scope(self) -> str:
        """Return the scope the user consented to (or the narrower one the client asked for)."""
        return self.scope

    def get_nonce(self) -> str | None:
        """Return the OpenID Connect nonce of the authorization request."""
        return self.nonce

    def get_auth_time(self) -> int | None:
        """Return when the user signed in (the browser session's start)."""
        return self.auth_time

    def get_acr(self) -> None:
        """No authentication context classes are defined here."""

    def get_amr(self) -> list[str] | None:
        """Return how the user signed in: browser sessions start with a password only."""
        return ["pwd"] if self.auth_time is not None else None


def issue_code(
    session: Session,
    *,
    application: Application,
    user: User,
    redirect_uri: str,
    scope: str = "",
    code_challenge: str | None = None,
    code_challenge_method: str | None = None,
    ttl: int,
    value: str | None = None,
    nonce: str | None = None,
    auth_time: datetime | None = None,
) -> str:
    """Store a single-use code (its digest only) and return the clear code, shown once.

    Raises ValueError for a PKCE challenge that is not S256 (the authorization endpoint has
    refused those already: this guards every other caller).
    """
    pkce = code_challenge is not None or code_challenge_method is not None
    if pkce and (code_challenge_method != S256 or not S256_CHALLENGE.match(code_challenge or "")):
        raise ValueError("only well-formed S256 code challenges are stored")
    value = value or generate_secret()
    now = utcnow()
    row = AuthorizationCode(
        id=new_id(),
        digest=digest(value),
        application_id=application.id,
        user_id=user.id,
        redirect_uri=redirect_uri,
        scope=parse_scope(scope) or "",
        code_challenge=code_challenge,
        code_challenge_method=code_challenge_method,
        nonce=nonce,
        auth_time=auth_time,
        created_at=now,
        expires_at=now + timedelta(seconds=ttl),
    )
    session.add(row)
    session.flush()
    audit("code.issued", code_id=row.id, application_id=application.id, user_id=user.id)
    return value


def find_code(
    session: Session, tokens: TokenStore, *, code: str, application_id: str, max_age: int
) -> PendingCode | None:
    """Return the unused, live code of ``application_id``; None for any other code.

    A code already used is a replay: the tokens issued from it are expired and committed
    here, then InvalidGrantError is raised.
    """
    now = utcnow()
    row = session.scalar(select(AuthorizationCode).where(AuthorizationCode.digest == digest(code)))
    if row is None:
        return None
    if row.used_at is not None:
        replayed(session, tokens, row.id)
    if row.application_id != application_id:
        return None
    if row.expires_at <= now or row.created_at <= now - timedelta(seconds=max_age):
        return None
    return PendingCode(
        row.id,
        row.user_id,
        row.redirect_uri,
        row.scope,
        row.code_challenge,
        row.code_challenge_method,
        row.nonce,
        int(row.auth_time.timestamp()) if row.auth_time is not None else None,
    )


def spend_code(session: Session, tokens: TokenStore, code: PendingCode) -> None:
    """Mark the code used in the caller's transaction (the token it buys commits with it).

    One conditional UPDATE: when another redemption won the race, this one is a replay.
    """
    now = utcnow()
    result = cast(
        CursorResult[Any],
        session.execute(
            update(AuthorizationCode)
            .where(
                AuthorizationCode.id == code.id,
                AuthorizationCode.used_at.is_(None),
                AuthorizationCode.expires_at > now,
            )
            .values(used_at=now)
            .execution_options(synchronize_session=False)
        ),
    )
    if result.rowcount == 1:
        return
    used_at = session.scalar(
        select(AuthorizationCode.used_at).where(AuthorizationCode.id == code.id)
    )
    if used_at is not None:
        replayed(session, tokens, code.id)
    raise InvalidGrantError(description=INVALID_CODE)  # it expired this very second


def replayed(session: Session, tokens: TokenStore, code_id: str) -> None:
    """Expire every token issued from a used code (committed at once), then refuse."""
    session.rollback()  # nothing of this request's own work survives a replay
    row = session.get_one(AuthorizationCode, code_id)
    # The refresh token families the code started go too, with every token issued from them.
    started = (
        select(RefreshToken.family_id)
        .join(Token, Token.id == RefreshToken.access_token_id)
        .where(Token.code_id == code_id)
    )
    expired = revoke_families(session, tokens, RefreshFamily.id.in_(started))
    expired += tokens.expire_where(session, Token.code_id == code_id)
    session.commit()
    tokens.tombstone(expired)
    audit(
        "code.replayed",
        code_id=code_id,
        application_id=row.application_id,
        user_id=row.user_id,
        tokens_expired=[t.id for t in expired],
    )
    raise InvalidGrantError(description=INVALID_CODE)
