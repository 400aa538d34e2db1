"""Profile queries: found by id or by handle."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select

from common.models import Profile
from resource_server.queries.listing import Listing
from resource_server.queries.rows import select_rows


def filtered(filters: dict[str, Any]) -> Select[Any]:
    """Return the select of profiles (the list has no filters)."""
    return select_rows(Profile)


PROFILES = Listing(Profile, filtered, slug=Profile.handle)
