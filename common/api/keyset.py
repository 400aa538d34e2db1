"""Keyset (cursor) pagination over SQLAlchemy on an indexed sort key, and random samples."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, bindparam, func, select, tuple_
from sqlalchemy.orm import InstrumentedAttribute, Session

from common.api.errors import ParamError
from common.api.paging import PageParams, encode_cursor
from common.api.prepared import Prepared


@dataclass
class PageResult:
    """The rows of a page, the cursor of the next one and the optional total."""

    rows: list[Any]
    next_cursor: str | None
    total_count: int | None


# The execution option that marks a select of plain rows (``queries.rows.select_rows``); it
# travels with every statement derived from the select (``where``, ``order_by``, ``limit``).
PLAIN_ROWS = "plain_rows"


def plain_rows(stmt: Select[Any]) -> bool:
    """Tell whether ``stmt`` selects plain rows (``queries.rows``) rather than ORM objects."""
    return bool(stmt.get_execution_options().get(PLAIN_ROWS))


def fetch(
    session: Session, stmt: Select[Any] | Prepared, params: Mapping[str, Any] | None = None
) -> Any:
    """Return the results of ``stmt``: plain rows for a select of rows, else the ORM objects.

    The catalog's read path selects columns (``queries.rows``) and runs them on the session's
    connection: Core execution, with no ORM compile state, object construction or identity
    map on the way (the user-data queries still select entities, through the session). A
    statement built once is ``Prepared``: compiled once and run on the driver's cursor.
    """
    if isinstance(stmt, Prepared):
        return stmt.rows(session.connection(), params)
    if plain_rows(stmt):
        return session.connection().execute(stmt, params).all()
    return session.scalars(stmt, params).all()


def first(session: Session, stmt: Select[Any]) -> Any:
    """Return the first result of ``stmt`` (object or row, as :func:`fetch`), or None."""
    found = fetch(session, stmt.limit(1))
    return found[0] if found else None


MAX_SHAPES = 512  # page statements kept built; past this many they are built afresh
_built: dict[Hashable, tuple[Select[Any] | Prepared, Select[Any] | Prepared | None]] = {}


def paginate(
    session: Session,
    stmt: Select[Any],
    keys: Sequence[InstrumentedAttribute[Any]],
    params: PageParams,
    *,
    descending: bool = False,
    shape: Hashable | None = None,
    values: Mapping[str, Any] | None = None,
) -> PageResult:
    """Run one page of ``stmt`` ordered by ``keys`` (the last one unique), keyset style.

    A ``shape`` says that ``stmt`` holds bound parameters (``values``) instead of the filter
    values, and names it: its page and count statements are then built once and reused, with
    the cursor, offset and limit bound too. A statement run again as the same object costs no
    construction, no cache-key computation and no result-map adaptation, which for a select
    of thirty columns cost more than the query itself.
    """
    cursor = cursor_values(keys, params.cursor) if params.cursor is not None else None
    bound: dict[str, Any] = {**(values or {}), "page_limit": params.size + 1}
    page_stmt: Select[Any] | Prepared
    count_stmt: Select[Any] | Prepared | None
    if shape is None:
        page_stmt, count_stmt = _page_statements(
            stmt, keys, descending, cursor, params.offset, count=params.total_count
        )
    else:
        key = (shape, cursor is not None, bool(params.offset), descending)
        built = _built.get(key)
        if built is None:
            if len(_built) >= MAX_SHAPES:
                _built.clear()
            markers: list[Any] | None = None
            if cursor is not None:
                markers = [bindparam(f"after_{i}") for i in range(len(keys))]
            offset: Any = bindparam("page_offset") if params.offset else 0
            page, counted = _page_statements(stmt, keys, descending, markers, offset)
            if plain_rows(stmt):  # kept and run as they are: compiled once (``Prepared``)
                built = (Prepared(page), Prepared(counted) if counted is not None else None)
            else:
                built = (page, counted)
            _built[key] = built
        page_stmt, count_stmt = built
        bound.update({f"after_{i}": value for i, value in enumerate(cursor or ())})
        if params.offset:
            bound["page_offset"] = params.offset
    rows = list(fetch(session, page_stmt, bound))
    next_cursor = None
    if len(rows) > params.size:
        rows = rows[: params.size]
        last = rows[-1]
        next_cursor = encode_cursor([_plain(getattr(last, k.key)) for k in keys])
    total = None
    if params.total_count and count_stmt is not None:
        if isinstance(count_stmt, Prepared):
            total = count_stmt.scalar(session.connection(), bound)
        elif plain_rows(stmt):
            total = session.connection().execute(count_stmt, bound).scalar()
        else:
            total = session.scalar(count_stmt, bound)
    return PageResult(rows, next_cursor, total)


def _page_statements(
    stmt: Select[Any],
    keys: Sequence[InstrumentedAttribute[Any]],
    descending: bool,
    cursor: Sequence[Any] | None,
    offset: Any,
    *,
    count: bool = True,
) -> tuple[Select[Any], Select[Any] | None]:
    """Return the page statement (its limit the ``page_limit`` parameter) and the count."""
    page_stmt = stmt.order_by(*[k.desc() if descending else k.asc() for k in keys])
    if cursor is not None:
        page_stmt = page_stmt.where(_after(keys, cursor, descending))
    if offset is not None and not (isinstance(offset, int) and offset == 0):
        page_stmt = page_stmt.offset(offset)
    counted = select(func.count()).select_from(stmt.order_by(None).subquery()) if count else None
    return page_stmt.limit(bindparam("page_limit")), counted


def sample_one(session: Session, stmt: Select[Any], id_col: InstrumentedAttribute[str]) -> Any:
    """Pick a random element of the filtered set by probing the id index, without a scan."""
    pivot = os.urandom(12).hex()
    row = first(session, stmt.where(id_col >= pivot).order_by(id_col.asc()))
    if row is None:
        row = first(session, stmt.where(id_col < pivot).order_by(id_col.desc()))
    return row


def cursor_values(keys: Sequence[InstrumentedAttribute[Any]], values: Sequence[Any]) -> list[Any]:
    """Return a cursor's values as the sort keys' types, raising a ParamError for a forged one.

    A decoded cursor is any JSON list: a number where a key is text, a null, or an integer past
    64 bits would make the database refuse the comparison (a 500) instead of this 400.
    """
    if len(values) != len(keys):
        raise ParamError.invalid("cursor")
    return [_cursor_value(key, value) for key, value in zip(keys, values, strict=True)]


def _cursor_value(key: InstrumentedAttribute[Any], value: Any) -> Any:
    column_type = getattr(key.type, "impl_instance", key.type)  # a TypeDecorator's own type
    try:
        expected = column_type.python_type
    except NotImplementedError:
        expected = object
    if expected is str and isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        raise ParamError.invalid("cursor")
    if expected is int and isinstance(value, int) and -(2**63) <= value < 2**63:
        return value
    if expected is float and isinstance(value, int | float) and math.isfinite(value):
        return value
    if expected is datetime and isinstance(value, str):
        with contextlib.suppress(ValueError):
            return datetime.fromisoformat(value)
    raise ParamError.invalid("cursor")


def _after(
    keys: Sequence[InstrumentedAttribute[Any]], values: Sequence[Any], descending: bool
) -> ColumnElement[bool]:
    if len(keys) == 1:
        return keys[0] < values[0] if descending else keys[0] > values[0]
    left, right = tuple_(*keys), tuple_(*values)
    return left < right if descending else left > right


def _plain(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value
