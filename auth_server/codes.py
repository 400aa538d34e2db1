"""Authorization codes: issued at consent, redeemed once (atomically) at the token endpoint.

Only the SHA-256 digest of a code is stored. Redemption is one conditional UPDATE, so of any
number of concurrent redemptions exactly one wins; a second use of a code also expires every
token issued from it (RFC 6749 4.1.2, RFC 9700 4.5).
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, cast

from authlib.oauth2.rfc6749.errors import InvalidGrantError, InvalidRequestError, OAuth2Error
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from sqlalchemy import CursorResult, select, update
from sqlalchemy.orm import Session

from auth_server.audit import audit
from auth_server.oauth import parse_scope
from common.ids import new_id, utcnow
from common.models import Application, AuthorizationCode, Token, User
from common.tokens import TokenStore, digest, generate_secret

PKCE_VALUE = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")
S256 = "S256"
INVALID_CODE = "The authorization code is invalid, expired or already used."


@dataclass
class Redemption:
    """The outcome of a redemption: the code row, or an error plus the tokens it expired."""

    code: AuthorizationCode | None
    error: OAuth2Error | None = None
    expired: list[Token] = field(default_factory=list)


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
) -> str:
    """Store a new single-use code (its digest only) and return the clear code, shown once.

    Raises ValueError for a PKCE challenge that is not S256 or malformed, and Authlib's
    InvalidScopeError for an unknown scope.
    """
    if code_challenge is not None or code_challenge_method is not None:
        if code_challenge_method != S256:
            raise ValueError("only the S256 code challenge method is supported")
        if code_challenge is None or not PKCE_VALUE.match(code_challenge):
            raise ValueError("malformed code challenge")
    value = generate_secret()
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
        created_at=now,
        expires_at=now + timedelta(seconds=ttl),
    )
    session.add(row)
    session.flush()
    audit("code.issued", code_id=row.id, application_id=application.id, user_id=user.id)
    return value


def redeem_code(
    session: Session,
    tokens: TokenStore,
    *,
    code: str,
    application_id: str,
    redirect_uri: str,
    code_verifier: str | None,
    max_age: int,
) -> Redemption:
    """Redeem a code for ``application_id`` inside the caller's transaction.

    On success the code is marked used (the caller issues the token in the same transaction).
    On a replay the tokens issued from the code are expired in this transaction; the caller
    tombstones ``Redemption.expired`` once it has committed.
    """
    now = utcnow()
    row = session.scalar(select(AuthorizationCode).where(AuthorizationCode.digest == digest(code)))
    if row is None:
        return Redemption(None, InvalidGrantError(description=INVALID_CODE))
    if row.used_at is not None:
        return _replayed(session, tokens, row)
    if row.application_id != application_id:
        return Redemption(None, InvalidGrantError(description=INVALID_CODE))
    if row.expires_at <= now or row.created_at <= now - timedelta(seconds=max_age):
        return Redemption(None, InvalidGrantError(description=INVALID_CODE))
    if not hmac.compare_digest(redirect_uri.encode(), row.redirect_uri.encode()):
        description = "The redirect_uri does not match the authorization request."
        return Redemption(None, InvalidGrantError(description=description))
    pkce_error = _check_pkce(row, code_verifier)
    if pkce_error is not None:
        return Redemption(None, pkce_error)
    result = cast(
        CursorResult[Any],
        session.execute(
            update(AuthorizationCode)
            .where(
                AuthorizationCode.id == row.id,
                AuthorizationCode.used_at.is_(None),
                AuthorizationCode.expires_at > now,
            )
            .values(used_at=now)
            .execution_options(synchronize_session=False)
        ),
    )
    if result.rowcount != 1:
        # Another redemption won the race (or the code expired this very second).
        used_at = session.scalar(
            select(AuthorizationCode.used_at).where(AuthorizationCode.id == row.id)
        )
        if used_at is not None:
            return _replayed(session, tokens, row)
        return Redemption(None, InvalidGrantError(description=INVALID_CODE))
    row.used_at = now
    return Redemption(row)


def _check_pkce(row: AuthorizationCode, verifier: str | None) -> OAuth2Error | None:
    if row.code_challenge is None:
        if verifier is not None:
            # RFC 9700 2.1.1: a verifier without a challenge is a PKCE downgrade attempt.
            return InvalidGrantError(description="No code_challenge was sent for this code.")
        return None
    if not verifier:
        return InvalidRequestError(description="The code_verifier is required for this code.")
    if not PKCE_VALUE.match(verifier):
        return InvalidRequestError(description="The code_verifier is malformed.")
    expected = create_s256_code_challenge(verifier)
    if not hmac.compare_digest(expected.encode(), row.code_challenge.encode()):
        return InvalidGrantError(description="The code_verifier does not match the challenge.")
    return None


def _replayed(session: Session, tokens: TokenStore, row: AuthorizationCode) -> Redemption:
    expired = tokens.expire_where(session, Token.code_id == row.id)
    audit(
        "code.replayed",
        code_id=row.id,
        application_id=row.application_id,
        user_id=row.user_id,
        tokens_expired=[t.id for t in expired],
    )
    return Redemption(None, InvalidGrantError(description=INVALID_CODE), expired)
