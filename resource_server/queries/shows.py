"""Show queries; ``status`` is computed from the dates in SQL."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, Select
from sqlalchemy.orm import Session

from common.api.keyset import PageResult, sample_one
from common.api.paging import PageParams
from common.models import Show
from resource_server.queries.lookup import find
from resource_server.queries.paging import page_by_id
from resource_server.queries.rows import select_rows
from resource_server.schedule import status_condition


def filtered(filters: dict[str, Any], now: datetime) -> Select[Any]:
    """Return the select of shows matching the list filters at ``now``."""
    stmt = select_rows(Show)
    if "partner_id" in filters:
        stmt = stmt.where(Show.partner_id == filters["partner_id"])
    if "fair_id" in filters:
        stmt = stmt.where(Show.fair_id == filters["fair_id"])
    if "status" in filters:
        stmt = stmt.where(status_condition(Show.start_at, Show.end_at, filters["status"], now))
    return stmt


def list_shows(
    session: Session, filters: dict[str, Any], page: PageParams, now: datetime
) -> PageResult:
    """Return one page of shows, ordered by id."""
    return page_by_id(session, filtered(filters, now), Show.id, page)


def sample_show(session: Session, filters: dict[str, Any], now: datetime) -> Row[Any] | None:
    """Return a random show of the filtered set."""
    result: Row[Any] | None = sample_one(session, filtered(filters, now), Show.id)
    return result


def find_show(session: Session, id_or_slug: str) -> tuple[Row[Any] | None, bool]:
    """Return a show by id or slug, and whether it was found by slug."""
    return find(session, Show, id_or_slug, slug=Show.slug)
