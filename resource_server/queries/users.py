"""User and user detail queries: a page of users is one query, plus one for their profiles."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, func, or_, select
from sqlalchemy.orm import Session

from common.models import Collection, CollectionItem, Profile, User, UserDetail
from common.visibility import visible_artwork_ids
from resource_server.queries.listing import Listing

LIKE_ESCAPE = "\\"


def prefix_pattern(term: str) -> str:
    """Return a LIKE pattern matching names that start with ``term`` (wildcards escaped)."""
    escaped = term.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2).replace("%", "\\%").replace("_", "\\_")
    return escaped.lower() + "%"


def filtered(filters: dict[str, Any], caller: str) -> Select[Any]:
    """Return the select of users matching the list filters (disabled users only see themselves)."""
    stmt = select(User).where(or_(User.enabled.is_(True), User.id == caller))
    term = (filters.get("term") or "").strip()
    if term:
        stmt = stmt.where(func.lower(User.name).like(prefix_pattern(term), escape=LIKE_ESCAPE))
    if "collected_artwork_id" in filters:
        collectors = (
            select(Collection.user_id)
            .join(CollectionItem, CollectionItem.collection_id == Collection.id)
            .where(
                CollectionItem.artwork_id == filters["collected_artwork_id"],
                Collection.private.is_(False),
                CollectionItem.artwork_id.in_(visible_artwork_ids()),
            )
        )
        stmt = stmt.where(User.id.in_(collectors))
    return stmt


USERS = Listing(User, filtered)  # context: the caller


def profiles_of(session: Session, user_ids: list[str]) -> dict[str, str]:
    """Return the profile id of each user that owns one (one query for a whole page)."""
    if not user_ids:
        return {}
    stmt = select(Profile.owner_id, Profile.id).where(
        Profile.owner_type == "user", Profile.owner_id.in_(user_ids)
    )
    return {owner: profile for owner, profile in session.execute(stmt)}


def find_user(session: Session, user_id: str, caller: str) -> tuple[User, str | None] | None:
    """Return a user and the id of its profile (if any), in one query."""
    profile = (
        select(Profile.id)
        .where(Profile.owner_type == "user", Profile.owner_id == User.id)
        .order_by(Profile.id)
        .limit(1)
        .scalar_subquery()
    )
    stmt = select(User, profile).where(
        User.id == user_id, or_(User.enabled.is_(True), User.id == caller)
    )
    row = session.execute(stmt).first()
    return None if row is None else (row[0], row[1])


def find_user_detail(session: Session, user_id: str) -> tuple[UserDetail, User] | None:
    """Return a user's details with the user row, in one query."""
    stmt = select(UserDetail, User).join(User, User.id == UserDetail.id).where(User.id == user_id)
    row = session.execute(stmt).first()
    return None if row is None else (row[0], row[1])
