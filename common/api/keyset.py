"""Keyset (cursor) pagination over SQLAlchemy on an indexed sort key, and random samples."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select, tuple_
from sqlalchemy.orm import InstrumentedAttribute, Session

from common.api.errors import ParamError
from common.api.paging import PageParams, encode_cursor


@dataclass
class PageResult:
    """The rows of a page, the cursor of the next one and the optional total."""

    rows: list[Any]
    next_cursor: str | None
    total_count: int | None


def paginate(
    session: Session,
    stmt: Select[Any],
    keys: Sequence[InstrumentedAttribute[Any]],
    params: PageParams,
    *,
    descending: bool = False,
) -> PageResult:
    """Run one page of ``stmt`` ordered by ``keys`` (the last one unique), keyset style."""
    order = [k.desc() if descending else k.asc() for k in keys]
    page_stmt = stmt.order_by(*order)
    if params.cursor is not None:
        page_stmt = page_stmt.where(_after(keys, cursor_values(keys, params.cursor), descending))
    if params.offset:
        page_stmt = page_stmt.offset(params.offset)
    rows = list(session.scalars(page_stmt.limit(params.size + 1)))
    next_cursor = None
    if len(rows) > params.size:
        rows = rows[: params.size]
        last = rows[-1]
        next_cursor = encode_cursor([_plain(getattr(last, k.key)) for k in keys])
    total = None
    if params.total_count:
        total = session.scalar(select(func.count()).select_from(stmt.order_by(None).subquery()))
    return PageResult(rows, next_cursor, total)


def sample_one(session: Session, stmt: Select[Any], id_col: InstrumentedAttribute[str]) -> Any:
    """Pick a random element of the filtered set by probing the id index, without a scan."""
    pivot = os.urandom(12).hex()
    row = session.scalars(stmt.where(id_col >= pivot).order_by(id_col.asc()).limit(1)).first()
    if row is None:
        row = session.scalars(stmt.where(id_col < pivot).order_by(id_col.desc()).limit(1)).first()
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
