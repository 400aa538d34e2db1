"""Show queries; ``status`` is computed from the dates in SQL."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Select

from common.models import Show
from resource_server.queries.listing import Listing
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


SHOWS = Listing(Show, filtered, slug=Show.slug)
