"""Collection item queries and writes: positions stay a contiguous 1..n in every collection.

Every write runs in one transaction that first locks the collection (see ``locking``), so adds,
moves and removals in one collection happen one after the other and each sees the positions
the previous one left; a conflict rolls the whole write back and runs it again.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from common.api.errors import NotFound, ParamError
from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.ids import utcnow
from common.models import Artwork, Collection, CollectionItem
from common.visibility import visible_artwork, visible_artwork_ids
from resource_server.queries.collections import (
    check_writable,
    find_collection,
    lock_collection,
    visible_to,
)
from resource_server.queries.locking import write_transaction
from resource_server.queries.positions import position_page, random_position

ITEM = "Collection Item"


def items_in(
    collection_id: str, user_id: str, caller: str, artwork_id: str | None = None
) -> Select[Any]:
    """Return the select of a visible collection's items (checked in the same query).

    An item of a hidden (unpublished) artwork is not shown: it keeps its place, and comes
    back when the artwork is published again.
    """
    stmt = (
        select(CollectionItem)
        .join(Collection, Collection.id == CollectionItem.collection_id)
        .where(
            CollectionItem.collection_id == collection_id,
            Collection.user_id == user_id,
            visible_to(caller),
            CollectionItem.artwork_id.in_(visible_artwork_ids()),
        )
    )
    if artwork_id is not None:
        stmt = stmt.where(CollectionItem.artwork_id == artwork_id)
    return stmt


def list_items(
    session: Session,
    collection_id: str,
    user_id: str,
    caller: str,
    page: PageParams,
    artwork_id: str | None = None,
) -> PageResult:
    """Return one page of a collection's items by position (404 when the collection is hidden)."""
    result = position_page(session, items_in(collection_id, user_id, caller, artwork_id), page)
    if not result.rows and find_collection(session, collection_id, caller, user_id) is None:
        raise NotFound("Collection")
    return result


def sample_item(
    session: Session, collection_id: str, user_id: str, caller: str, artwork_id: str | None = None
) -> CollectionItem | None:
    """Return a random item of a visible collection, picked by position from the index."""
    if find_collection(session, collection_id, caller, user_id) is None:
        raise NotFound("Collection")
    stmt = items_in(collection_id, user_id, caller, artwork_id)
    if artwork_id is None:
        position = random_position(session, collection_id)
        if position is None:
            return None
        # The first shown item from there (a hidden artwork's item may hold the position).
        at = stmt.where(CollectionItem.position >= position).order_by(CollectionItem.position)
        found = session.scalars(at.limit(1)).first()
        if found is not None:
            return found
    return session.scalars(stmt.order_by(CollectionItem.position).limit(1)).first()


def find_item(
    session: Session, item_id: str, collection_id: str, user_id: str, caller: str
) -> CollectionItem | None:
    """Return an item of a visible collection, by id."""
    stmt = items_in(collection_id, user_id, caller).where(CollectionItem.id == item_id)
    return session.scalars(stmt).first()


def count_items(session: Session, collection_id: str) -> int:
    """Return the number of items of a (locked) collection: its last position."""
    last = session.scalar(
        select(func.max(CollectionItem.position)).where(
            CollectionItem.collection_id == collection_id
        )
    )
    return int(last or 0)


def add_item(
    sessions: sessionmaker[Session], caller: str, collection_id: str, user_id: str, artwork_id: str
) -> CollectionItem:
    """Append an artwork to a collection of the caller's, at position n + 1."""

    def work(session: Session) -> CollectionItem:
        check_writable(lock_collection(session, collection_id), caller, user_id)
        visible = select(Artwork.id).where(Artwork.id == artwork_id, visible_artwork())
        if session.scalar(visible) is None:
            raise NotFound("Artwork")
        duplicate = select(CollectionItem.id).where(
            CollectionItem.collection_id == collection_id, CollectionItem.artwork_id == artwork_id
        )
        if session.scalar(duplicate) is not None:
            raise ParamError(
                "Artwork is already in this collection.",
                {"artwork_id": ["is already in this collection"]},
            )
        item = CollectionItem(
            collection_id=collection_id,
            artwork_id=artwork_id,
            position=count_items(session, collection_id) + 1,
        )
        session.add(item)
        session.flush()
        return item

    return write_transaction(sessions, work)


def _locked_item(
    session: Session,
    item_id: str,
    caller: str,
    collection_id: str | None,
    user_id: str | None,
) -> CollectionItem:
    """Lock the collection of an item and return the item, checking the caller owns it."""
    owner = select(CollectionItem.collection_id).where(CollectionItem.id == item_id)
    found_collection = session.scalar(owner)
    if found_collection is None or collection_id not in (None, found_collection):
        raise NotFound(ITEM)
    check_writable(lock_collection(session, found_collection), caller, user_id, ITEM)
    # Read again under the lock: a concurrent removal may have won the race.
    item = session.scalars(select(CollectionItem).where(CollectionItem.id == item_id)).first()
    if item is None or item.collection_id != found_collection:
        raise NotFound(ITEM)
    return item


def move_item(
    sessions: sessionmaker[Session],
    caller: str,
    item_id: str,
    position: int | None,
    collection_id: str | None = None,
    user_id: str | None = None,
) -> CollectionItem:
    """Move an item to ``position`` (1..n), shifting the items in between."""

    def work(session: Session) -> CollectionItem:
        item = _locked_item(session, item_id, caller, collection_id, user_id)
        if position is None or position == item.position:
            return item
        last = count_items(session, item.collection_id)
        if not 1 <= position <= last:
            reason = f"must be between 1 and {last}"
            raise ParamError(f"Position {reason}.", {"position": [reason]})
        current = item.position
        in_collection = CollectionItem.collection_id == item.collection_id
        if position < current:
            shift = update(CollectionItem).where(
                in_collection,
                CollectionItem.position >= position,
                CollectionItem.position < current,
            )
            session.execute(shift.values(position=CollectionItem.position + 1))
        else:
            shift = update(CollectionItem).where(
                in_collection,
                CollectionItem.position > current,
                CollectionItem.position <= position,
            )
            session.execute(shift.values(position=CollectionItem.position - 1))
        item.position = position
        item.updated_at = utcnow()
        session.flush()
        return item

    return write_transaction(sessions, work)


def remove_item(
    sessions: sessionmaker[Session],
    caller: str,
    item_id: str,
    collection_id: str | None = None,
    user_id: str | None = None,
) -> None:
    """Remove an item from its collection; the items after it move up to close the gap."""

    def work(session: Session) -> None:
        item = _locked_item(session, item_id, caller, collection_id, user_id)
        position, in_collection = item.position, item.collection_id
        session.delete(item)
        session.flush()
        shift = update(CollectionItem).where(
            CollectionItem.collection_id == in_collection, CollectionItem.position > position
        )
        session.execute(shift.values(position=CollectionItem.position - 1))

    write_transaction(sessions, work)
