"""Paging through a collection in position order, stable while items are added and removed.

Positions are not a stable sort key: removing or moving an item renumbers the items after it,
so a cursor that only remembered "after position 7" would skip an item after a removal above
it. The cursor therefore names items, not places: ``[position, anchor id, next id]``, the last
item of the page (the anchor), its position then, and the first item of the next page. The
next page starts after the anchor's *current* position; if the anchor was removed, at the next
item's current position; if both were removed, at the anchor's old position (the items after
both moved up by two). Removals and additions anywhere else keep every remaining item
reachable exactly once. Moves while paging reorder the list itself: the walk continues after
the anchor in the new order. Each page is one query on the (collection_id, position) index,
the anchor lookups being scalar subqueries on the primary key.
"""

from __future__ import annotations

import random
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from common.api.errors import ParamError
from common.api.keyset import PageResult, plain_rows
from common.api.paging import PageParams, encode_cursor
from common.ids import is_id
from common.models import CollectionItem

MAX_POSITION = 2**31 - 1  # the position column is a 32-bit integer


def anchor(page: PageParams) -> tuple[int, str, str] | None:
    """Return the ``(position, anchor id, next id)`` a cursor names (ParamError for a bad one)."""
    if page.cursor is None:
        return None
    values = page.cursor
    if (
        len(values) != 3
        or not isinstance(values[0], int)
        or isinstance(values[0], bool)
        or not 0 <= values[0] <= MAX_POSITION  # past 64 bits the database refuses it (a 500)
        or not all(isinstance(v, str) and is_id(v) for v in values[1:])
    ):
        raise ParamError.invalid("cursor")
    return values[0], values[1], values[2]


def _current_position(item_id: str) -> Any:
    return (
        select(CollectionItem.position)
        .where(CollectionItem.id == item_id)
        .correlate(None)
        .scalar_subquery()
    )


def position_page(session: Session, stmt: Select[Any], page: PageParams) -> PageResult:
    """Run one page of ``stmt`` (an entity, or columns) in collection position order.

    ``stmt`` must select from ``collection_items`` (joined as needed) filtered to one collection.
    """
    # Labelled apart from the entity's own columns: a row of columns keeps its ``id``.
    stmt = stmt.add_columns(
        CollectionItem.position.label("item_position"), CollectionItem.id.label("item_id")
    )
    ordered = stmt.order_by(CollectionItem.position.asc(), CollectionItem.id.asc())
    start = anchor(page)
    if start is not None:
        position, anchor_id, next_id = start
        after = func.coalesce(
            _current_position(anchor_id), _current_position(next_id) - 1, position - 1
        )
        ordered = ordered.where(CollectionItem.position > after)
    if page.offset:
        ordered = ordered.offset(page.offset)
    rows = list(fetch_tuples(session, ordered.limit(page.size + 1)))
    next_cursor = None
    if len(rows) > page.size:
        last, following = rows[page.size - 1], rows[page.size]
        next_cursor = encode_cursor([last[-2], last[-1], following[-1]])
        rows = rows[: page.size]
    total = None
    if page.total_count:
        total = session.scalar(select(func.count()).select_from(stmt.order_by(None).subquery()))
    rows_wanted = plain_rows(stmt)
    return PageResult([row if rows_wanted else row[0] for row in rows], next_cursor, total)


def fetch_tuples(session: Session, stmt: Select[Any]) -> Any:
    """Return the result tuples of ``stmt``: on the connection for plain rows (``queries.rows``)."""
    if plain_rows(stmt):
        return session.connection().execute(stmt).all()
    return session.execute(stmt).all()


def random_position(session: Session, collection_id: str) -> int | None:
    """Return a random position of a collection (its positions are 1..n), from the index."""
    last = session.scalar(
        select(func.max(CollectionItem.position)).where(
            CollectionItem.collection_id == collection_id
        )
    )
    if not last:
        return None
    return random.randint(1, int(last))
