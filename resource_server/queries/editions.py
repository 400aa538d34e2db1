"""Edition queries: always within one artwork."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, Select, bindparam
from sqlalchemy.orm import Session

from common.api.keyset import fetch
from common.api.prepared import Prepared
from common.ids import is_id
from common.models import Edition
from common.visibility import visible_artwork_ids
from resource_server.queries.listing import Listing
from resource_server.queries.rows import select_rows


def filtered(filters: dict[str, Any]) -> Select[Any]:
    """Return the select of the editions of the artwork named by the filters."""
    return select_rows(Edition).where(
        Edition.artwork_id == filters["artwork_id"], Edition.artwork_id.in_(visible_artwork_ids())
    )


EDITIONS = Listing(Edition, filtered)


def find_edition(session: Session, edition_id: str, artwork_id: str) -> Row[Any] | None:
    """Return an edition of an artwork by id."""
    if not is_id(edition_id):
        return None
    found = fetch(session, ONE_EDITION, {"artwork_id": artwork_id, "edition_id": edition_id})
    return found[0] if found else None


ONE_EDITION = Prepared(
    filtered({"artwork_id": bindparam("artwork_id")})
    .where(Edition.id == bindparam("edition_id"))
    .limit(1)
)
