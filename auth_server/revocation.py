"""Ending what a user or an application holds: every live token and every pending code at once.

Used when an account or an application is disabled, a password is reset, or a user withdraws an
application's access. The caller commits, then tombstones the returned rows (see
``TokenStore.expire_where``), so every resource server process refuses them on its next request.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import CursorResult, update
from sqlalchemy.orm import Session

from auth_server.refresh import revoke_families
from common.ids import utcnow
from common.models import AuthorizationCode, DeviceAuthorization, RefreshFamily, Token
from common.models.device import APPROVED, PENDING, REVOKED
from common.tokens import TokenStore


def end_pending_codes(
    session: Session, *, user_id: str | None = None, application_id: str | None = None
) -> int:
    """Mark every unused code of a user and/or an application used; return how many."""
    conditions = _owner_conditions(AuthorizationCode, user_id, application_id)
    now = utcnow()
    result = cast(
        CursorResult[Any],
        session.execute(
            update(AuthorizationCode)
            .where(AuthorizationCode.used_at.is_(None), *conditions)
            .values(used_at=now)
            .execution_options(synchronize_session=False)
        ),
    )
    return int(result.rowcount or 0) + end_device_grants(
        session, user_id=user_id, application_id=application_id
    )


def end_device_grants(
    session: Session, *, user_id: str | None = None, application_id: str | None = None
) -> int:
    """Withdraw the device grants (RFC 8628) a device has not redeemed yet: an approved one
    would bring the access straight back; return how many."""
    conditions = _owner_conditions(DeviceAuthorization, user_id, application_id)
    result = cast(
        CursorResult[Any],
        session.execute(
            update(DeviceAuthorization)
            .where(DeviceAuthorization.status.in_((PENDING, APPROVED)), *conditions)
            .values(status=REVOKED)
            .execution_options(synchronize_session=False)
        ),
    )
    return int(result.rowcount or 0)


def revoke_all(
    session: Session,
    tokens: TokenStore,
    *,
    user_id: str | None = None,
    application_id: str | None = None,
    kind: str | None = None,
) -> list[Token]:
    """Expire the live tokens (of ``kind``, or all), refresh token families and pending codes
    of a user and/or an app.

    Returns the expired token rows: tombstone them once the transaction has committed.
    """
    end_pending_codes(session, user_id=user_id, application_id=application_id)
    families = revoke_families(
        session, tokens, *_owner_conditions(RefreshFamily, user_id, application_id)
    )
    conditions = _owner_conditions(Token, user_id, application_id)
    if kind is not None:
        conditions.append(Token.kind == kind)
    return families + tokens.expire_where(session, *conditions)


def _owner_conditions(
    model: type[Token] | type[AuthorizationCode] | type[DeviceAuthorization] | type[RefreshFamily],
    user_id: str | None,
    application_id: str | None,
) -> list[Any]:
    if user_id is None and application_id is None:
        raise ValueError("name a user or an application")
    conditions: list[Any] = []
    if user_id is not None:
        conditions.append(model.user_id == user_id)
    if application_id is not None:
        conditions.append(model.application_id == application_id)
    return conditions
