"""Find one row by id, or by its slug (or handle) when the path segment is not an id."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from common.ids import is_id

MAX_SLUG = 300


def plausible_slug(value: str) -> bool:
    """Tell whether a path segment could be a stored slug (PostgreSQL text cannot hold NUL)."""
    return 0 < len(value) <= MAX_SLUG and "\x00" not in value


def find(
    session: Session,
    model: Any,
    value: str,
    *,
    slug: InstrumentedAttribute[str] | None = None,
    base: Select[Any] | None = None,
) -> tuple[Any, bool]:
    """Return ``(row or None, found_by_slug)``; without a slug column only ids are looked up."""
    by_slug = not is_id(value)
    if by_slug and (slug is None or not plausible_slug(value)):
        return None, by_slug
    stmt = base if base is not None else select(model)
    column = slug if by_slug and slug is not None else model.id
    return session.scalars(stmt.where(column == value).limit(1)).first(), by_slug
