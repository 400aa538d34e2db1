"""Fair queries; ``status`` is computed from the dates in SQL."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Select

from common.models import Fair
from resource_server.queries.listing import Listing
from resource_server.queries.rows import select_rows
from resource_server.schedule import status_condition


def filtered(filters: dict[str, Any], now: datetime) -> Select[Any]:
    """Return the select of fairs matching the list filters at ``now``."""
    stmt = select_rows(Fair)
    if "status" in filters:
        stmt = stmt.where(status_condition(Fair.start_at, Fair.end_at, filters["status"], now))
    return stmt


FAIRS = Listing(Fair, filtered, slug=Fair.slug)
