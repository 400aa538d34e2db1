"""Partner queries, with the handles of their profiles batch-loaded for the ``profile`` link."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from common.models import Partner, PartnerUser, Profile
from resource_server.queries.access import may_see_user
from resource_server.queries.listing import Listing
from resource_server.queries.rows import select_rows


def filtered(filters: dict[str, Any], token: Any = None) -> Select[Any]:
    """Return the select of partners matching the list filters.

    ``user_id`` selects the partners that user can access (PartnerUser); only that user or an
    Admin may ask, anyone else gets an empty set. With ``partner_id`` too, the page says whether
    the user can access that one partner.
    """
    stmt = select_rows(Partner)
    if "user_id" in filters:
        user_id = filters["user_id"]
        managed = select(PartnerUser.partner_id).where(PartnerUser.user_id == user_id)
        stmt = stmt.where(Partner.id.in_(managed), may_see_user(token, user_id))
    if "partner_id" in filters:
        stmt = stmt.where(Partner.id == filters["partner_id"])
    if "eligible_for_partner_analytics" in filters:
        wanted = filters["eligible_for_partner_analytics"]
        stmt = stmt.where(Partner.eligible_for_partner_analytics == wanted)
    return stmt


PARTNERS = Listing(Partner, filtered, slug=Partner.slug)


def profile_handles(session: Session, partner_ids: Sequence[str]) -> dict[str, str]:
    """Return the profile handle of each partner that has a profile, in one query."""
    if not partner_ids:
        return {}
    stmt = select(Profile.owner_id, Profile.handle).where(
        Profile.owner_type == "partner", Profile.owner_id.in_(list(partner_ids))
    )
    return {owner_id: handle for owner_id, handle in session.execute(stmt)}
