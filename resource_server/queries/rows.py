"""Catalog rows without ORM objects: a model's columns selected as plain rows.

A read-only document needs the values of a row, not an object tracked by a session: a select
of the columns returns ``Row`` tuples (attribute access works, ``row.title``) and skips the
ORM's object construction, identity map and attribute instrumentation, which cost several
times the SQL itself on a catalog read. Statements built from these columns are cached
compiled by SQLAlchemy like any other, their values travel as bound parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from sqlalchemy import Row, Select, inspect, select
from sqlalchemy.orm import InstrumentedAttribute

from common.api.keyset import PLAIN_ROWS


@cache
def columns(model: Any) -> tuple[InstrumentedAttribute[Any], ...]:
    """Return the mapped column attributes of ``model``, in table order."""
    return tuple(getattr(model, attr.key) for attr in inspect(model).column_attrs)


@cache
def select_rows(model: Any) -> Select[Any]:
    """Return a select of every column of ``model``, whose results are plain rows.

    Built once per model: a select is immutable, each ``where`` makes a new one. The mark
    (an execution option, which every derived statement keeps) tells the pager to run it on
    the connection, not through the ORM.
    """
    return select(*columns(model)).execution_options(**{PLAIN_ROWS: True})


def grouped(rows: Sequence[Row[Any]], key: str) -> dict[str, list[Row[Any]]]:
    """Return ``rows`` grouped by the value of their column ``key``, in their order."""
    out: dict[str, list[Row[Any]]] = {}
    for row in rows:
        out.setdefault(getattr(row, key), []).append(row)
    return out
