"""Who the caller is, for the few catalog rules that depend on it (unpublished sales).

Which artworks anyone may see is ``common.visibility`` (search builds on it too)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, exists, false, select, true
from sqlalchemy.orm import Session

from common.models import User

ADMIN = "Admin"


def caller_user_id(token: Any) -> str | None:
    """Return the user a token acts for, or None for an application (XAPP) token."""
    if token is None or not getattr(token, "is_user", False):
        return None
    user_id: str | None = token.user_id
    return user_id


def is_admin(session: Session, token: Any) -> bool:
    """Tell whether the caller is a user of type Admin (one primary-key query, users only)."""
    user_id = caller_user_id(token)
    if user_id is None:
        return False
    kind = session.scalar(select(User.type).where(User.id == user_id))
    return kind == ADMIN


def may_see_user(token: Any, user_id: str) -> ColumnElement[bool]:
    """Return a SQL condition: the caller is ``user_id`` or an Admin (folded into the query)."""
    caller = caller_user_id(token)
    if caller is None:
        return false()
    if caller == user_id:
        return true()
    return exists().where(User.id == caller, User.type == ADMIN)
