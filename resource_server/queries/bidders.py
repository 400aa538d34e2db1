"""Bidder queries: a caller sees its own registrations, an Admin sees every one."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, exists, or_, select
from sqlalchemy.orm import Session

from common.models import Bidder, User
from resource_server.queries.listing import Listing


def readable_by(caller: str) -> ColumnElement[bool]:
    """Return the condition that the caller may read a bidder (the admin check is in the query)."""
    is_admin = exists().where(User.id == caller, User.type == "Admin")
    return or_(Bidder.user_id == caller, is_admin)


def filtered(filters: dict[str, Any], caller: str) -> Select[Any]:
    """Return the select of the bidders the caller may read, matching the filters."""
    stmt = select(Bidder).where(readable_by(caller))
    if "sale_id" in filters:
        stmt = stmt.where(Bidder.sale_id == filters["sale_id"])
    if "user_id" in filters:
        stmt = stmt.where(Bidder.user_id == filters["user_id"])
    return stmt


BIDDERS = Listing(Bidder, filtered)  # context: the caller


def find_bidder(session: Session, bidder_id: str, caller: str) -> Bidder | None:
    """Return a bidder the caller may read."""
    stmt = select(Bidder).where(Bidder.id == bidder_id, readable_by(caller))
    return session.scalars(stmt).first()
