"""Profile queries: found by id or by handle."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, Select
from sqlalchemy.orm import Session

from common.api.keyset import PageResult, sample_one
from common.api.paging import PageParams
from common.models import Profile
from resource_server.queries.lookup import find
from resource_server.queries.paging import page_by_id
from resource_server.queries.rows import select_rows


def filtered(filters: dict[str, Any]) -> Select[Any]:
    """Return the select of profiles (the list has no filters)."""
    return select_rows(Profile)


def list_profiles(session: Session, filters: dict[str, Any], page: PageParams) -> PageResult:
    """Return one page of profiles, ordered by id."""
    return page_by_id(session, filtered(filters), Profile.id, page)


def sample_profile(session: Session, filters: dict[str, Any]) -> Row[Any] | None:
    """Return a random profile."""
    result: Row[Any] | None = sample_one(session, filtered(filters), Profile.id)
    return result


def find_profile(session: Session, id_or_handle: str) -> tuple[Row[Any] | None, bool]:
    """Return a profile by id or handle, and whether it was found by handle."""
    return find(session, Profile, id_or_handle, slug=Profile.handle)
