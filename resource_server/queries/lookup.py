"""Find one row by id, or by its slug (or handle) when the path segment is not an id."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select
from sqlalchemy.orm import InstrumentedAttribute, Session

from common.ids import is_id
from resource_server.pagination import first
from resource_server.queries.rows import select_rows

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
    """Return ``(row or None, found_by_slug)``; without a slug column only ids are looked up.

    Without ``base`` the row is a plain row of every column of ``model`` (``queries.rows``).
    """
    by_slug = not is_id(value)
    if by_slug and (slug is None or not plausible_slug(value)):
        return None, by_slug
    stmt = base if base is not None else select_rows(model)
    column = slug if by_slug and slug is not None else model.id
    return first(session, stmt.where(column == value)), by_slug
