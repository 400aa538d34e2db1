"""Collection queries and writes, and the artworks of a collection in position order.

A collection is visible to its owner, and to everyone else when it is public; an invisible one
is "not found". Only the owner writes (a visible collection of someone else is forbidden).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Row, Select, or_, select
from sqlalchemy.orm import Session, sessionmaker

from common.api.errors import Forbidden, NotFound, ParamError
from common.api.keyset import PageResult, first, paginate, sample_one
from common.api.paging import PageParams
from common.models import Artwork, Collection, CollectionItem
from resource_server.queries.locking import write_transaction
from resource_server.queries.positions import position_page, random_position
from resource_server.queries.rows import select_rows


def visible_to(caller: str | None) -> ColumnElement[bool]:
    """Return the condition that a collection is visible to ``caller`` (None: no user)."""
    public = Collection.private.is_(False)
    return public if caller is None else or_(public, Collection.user_id == caller)


def listed(user_id: str, caller: str, *, private: bool) -> Select[Any]:
    """Return the select of a user's collections (private ones only for the owner who asks)."""
    stmt = select(Collection).where(Collection.user_id == user_id)
    if not (private and caller == user_id):
        stmt = stmt.where(Collection.private.is_(False))
    return stmt


def list_collections(
    session: Session, user_id: str, caller: str, page: PageParams, *, private: bool = False
) -> PageResult:
    """Return one page of a user's collections, ordered by id."""
    return paginate(session, listed(user_id, caller, private=private), [Collection.id], page)


def sample_collection(
    session: Session, user_id: str, caller: str, *, private: bool = False
) -> Collection | None:
    """Return a random collection of the listed set."""
    found: Collection | None = sample_one(
        session, listed(user_id, caller, private=private), Collection.id
    )
    return found


def find_collection(
    session: Session, collection_id: str, caller: str | None, user_id: str | None = None
) -> Collection | None:
    """Return a collection visible to ``caller`` (and owned by ``user_id`` when given)."""
    stmt = select(Collection).where(Collection.id == collection_id, visible_to(caller))
    if user_id is not None:
        stmt = stmt.where(Collection.user_id == user_id)
    return session.scalars(stmt).first()


def lock_collection(session: Session, collection_id: str) -> Collection | None:
    """Read a collection and lock it for the rest of the transaction (FOR UPDATE)."""
    stmt = select(Collection).where(Collection.id == collection_id).with_for_update()
    return session.scalars(stmt).first()


def check_writable(
    collection: Collection | None, caller: str, user_id: str | None = None, model: str = ""
) -> Collection:
    """Return a collection the caller may change: 404 when invisible, 403 when not the owner."""
    if (
        collection is None
        or (user_id is not None and collection.user_id != user_id)
        or (collection.private and collection.user_id != caller)
    ):
        raise NotFound(model or "Collection")
    if collection.user_id != caller:
        raise Forbidden("Only the owner can change a collection.")
    return collection


@dataclass(frozen=True)
class CollectionChanges:
    """Validated fields of a collection write (None: not given)."""

    name: str | None = None
    description: str | None = None
    private: bool | None = None
    default: bool | None = None


def create_collection(
    sessions: sessionmaker[Session], caller: str, user_id: str, changes: CollectionChanges
) -> Collection:
    """Create a collection of the caller's (never a default one)."""
    if user_id != caller:
        raise Forbidden("Collections can only be created for yourself.")
    if changes.default:
        raise ParamError("Default can't be set.", {"default": ["can't be set"]})

    def work(session: Session) -> Collection:
        collection = Collection(
            user_id=user_id,
            name=changes.name or "",
            description=changes.description or "",
            private=bool(changes.private),
            default=False,
        )
        session.add(collection)
        session.flush()
        return collection

    return write_transaction(sessions, work)


def update_collection(
    sessions: sessionmaker[Session],
    collection_id: str,
    caller: str,
    changes: CollectionChanges,
    user_id: str | None = None,
) -> Collection:
    """Change a collection of the caller's; which one is the default cannot change."""

    def work(session: Session) -> Collection:
        collection = check_writable(lock_collection(session, collection_id), caller, user_id)
        if changes.default is not None and changes.default != collection.default:
            raise ParamError("Default can't be changed.", {"default": ["can't be changed"]})
        if changes.name is not None:
            collection.name = changes.name
        if changes.description is not None:
            collection.description = changes.description
        if changes.private is not None:
            collection.private = changes.private
        session.flush()
        return collection

    return write_transaction(sessions, work)


def _artworks_in(
    collection_id: str, user_id: str, caller: str | None, base: Select[Any] | None
) -> Select[Any]:
    return (
        (base if base is not None else select_rows(Artwork))
        .join(CollectionItem, CollectionItem.artwork_id == Artwork.id)
        .join(Collection, Collection.id == CollectionItem.collection_id)
        .where(
            CollectionItem.collection_id == collection_id,
            Collection.user_id == user_id,
            visible_to(caller),
        )
    )


def collection_artworks(
    session: Session,
    collection_id: str,
    user_id: str,
    caller: str | None,
    page: PageParams,
    *,
    base: Select[Any] | None = None,
) -> PageResult:
    """Return one page of a collection's artworks in position order (404 when invisible).

    ``base`` is an optional select of the artworks' columns (``queries.rows``) carrying other
    filters. The visibility check rides in the page query; only an empty page costs a second
    query, to tell an empty collection from one the caller may not see.
    """
    stmt = _artworks_in(collection_id, user_id, caller, base)
    result = position_page(session, stmt, page)
    if not result.rows and find_collection(session, collection_id, caller, user_id) is None:
        raise NotFound("Collection")
    return result


def sample_collection_artwork(
    session: Session,
    collection_id: str,
    user_id: str,
    caller: str | None,
    *,
    base: Select[Any] | None = None,
) -> Row[Any] | None:
    """Return a random artwork of a collection (404 when invisible), found by position."""
    if find_collection(session, collection_id, caller, user_id) is None:
        raise NotFound("Collection")
    stmt = _artworks_in(collection_id, user_id, caller, base)
    if base is not None and base.whereclause is not None:
        # Other filters would make a random position miss: probe the id index instead.
        found: Row[Any] | None = sample_one(session, stmt, Artwork.id)
        return found
    position = random_position(session, collection_id)
    if position is None:
        return None
    return first(session, stmt.where(CollectionItem.position == position))
