"""Sale queries; unpublished sales exist only for Admin callers."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, Select
from sqlalchemy.orm import Session

from common.models import Sale
from resource_server.queries.listing import Listing
from resource_server.queries.lookup import find
from resource_server.queries.rows import select_rows
from resource_server.schedule import not_running, status_condition

ANY = select_rows(Sale)
PUBLISHED = ANY.where(Sale.published.is_(True))  # what a caller who is not an Admin sees


def filtered(filters: dict[str, Any], now: datetime, *, admin: bool) -> Select[Any]:
    """Return the select of sales matching the filters; ``live`` means running at ``now``."""
    stmt = select_rows(Sale)
    if not admin:
        stmt = stmt.where(Sale.published.is_(True))
    if "published" in filters:
        stmt = stmt.where(Sale.published == filters["published"])
    if "is_auction" in filters:
        stmt = stmt.where(Sale.is_auction == filters["is_auction"])
    if "live" in filters:
        running = status_condition(Sale.start_at, Sale.end_at, "running", now)
        stmt = stmt.where(
            running if filters["live"] else not_running(Sale.start_at, Sale.end_at, now)
        )
    return stmt


SALES = Listing(Sale, filtered, slug=Sale.slug)


def find_sale(session: Session, id_or_slug: str, *, admin: bool) -> tuple[Row[Any] | None, bool]:
    """Return a sale by id or slug (published ones only unless Admin), and how it was found."""
    return find(session, Sale, id_or_slug, slug=Sale.slug, base=ANY if admin else PUBLISHED)
