"""What a user already granted an application: the live grants the account pages list.

No consent is stored apart from the grants themselves. A user has authorized an application for
a scope while it holds, for them, a live access token or a live refresh token family (one with a
live refresh token) of a scope that covers it: what "Authorized applications" and the account
page list, and what their Revoke buttons end. Revoked, expired or another user's grants count
for nothing. OpenID Connect's ``prompt=none`` succeeds silently on such a grant (OIDC Core
3.1.2.1); the consent page itself is still shown every time.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from auth_server.refresh import live_token_exists
from common.ids import utcnow
from common.models import RefreshFamily, Token

# The grants looked at (latest first): a user holds a handful per application.
LOOKED_AT = 50


def holds_grant(db: Session, *, user_id: str, application_id: str, scope: str) -> bool:
    """Tell whether the application holds a live grant of the user covering ``scope``."""
    wanted = set(scope.split())
    now = utcnow()
    access = (
        select(Token.scope)
        .where(
            Token.user_id == user_id,
            Token.application_id == application_id,
            Token.kind == "access",
            Token.expired_at.is_(None),
            Token.expires_at > now,
        )
        .order_by(Token.created_at.desc())
        .limit(LOOKED_AT)
    )
    live_token = live_token_exists(now)
    families = (
        select(RefreshFamily.scope)
        .where(
            RefreshFamily.user_id == user_id,
            RefreshFamily.application_id == application_id,
            RefreshFamily.revoked_at.is_(None),
            live_token,
        )
        .order_by(RefreshFamily.used_at.desc())
        .limit(LOOKED_AT)
    )
    for query in (access, families):
        if any(wanted <= set((granted or "").split()) for granted in db.scalars(query)):
            return True
    return False
