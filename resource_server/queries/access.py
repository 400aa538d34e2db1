"""Who the caller is, for the few catalog rules that depend on it (unpublished sales), and
which artworks anyone may see."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, exists, false, select, true
from sqlalchemy.orm import Session

from common.models import Artwork, User

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


def visible_artwork() -> ColumnElement[bool]:
    """Return the one rule for which artworks the API shows: the published ones, to every caller.

    The reference API exposed "a subset of artworks"; an unpublished one is not in any list,
    cannot be read by id, added to a collection or found by search (each query uses this).
    """
    return Artwork.published.is_(True)


def visible_artwork_ids() -> Select[Any]:
    """Return the ids of the visible artworks (for rows that hang off an artwork)."""
    return select(Artwork.id).where(visible_artwork())
