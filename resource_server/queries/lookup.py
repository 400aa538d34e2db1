"""Find one row by id, or by its slug (or handle) when the path segment is not an id."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, bindparam
from sqlalchemy.orm import InstrumentedAttribute, Session

from common.api.keyset import fetch
from common.api.prepared import Prepared
from common.ids import is_id
from resource_server.queries.rows import select_rows

MAX_SLUG = 300
MAX_STATEMENTS = 256  # lookup statements kept built; past this many they are built afresh

# (model, column, base) -> (base, the statement): each built once with a bound parameter, so
# a lookup costs no statement construction and no cache-key computation. The base is kept
# with its statement: its id then names it alone.
_built: dict[tuple[Any, str, int], tuple[Select[Any] | None, Prepared]] = {}


def plausible_slug(value: str) -> bool:
    """Tell whether a path segment could be a stored slug (PostgreSQL text cannot hold NUL)."""
    return 0 < len(value) <= MAX_SLUG and "\x00" not in value


def lookup_statement(
    model: Any, column: InstrumentedAttribute[Any], base: Select[Any] | None = None
) -> Prepared:
    """Return the select of the first row of ``base`` (every column of ``model``) whose
    ``column`` equals the bound parameter ``key``, built once per base (a module constant)."""
    key = (model, column.key, id(base))
    built = _built.get(key)
    if built is None:
        stmt = base if base is not None else select_rows(model)
        if len(_built) >= MAX_STATEMENTS:
            _built.clear()
        built = _built[key] = (base, Prepared(stmt.where(column == bindparam("key")).limit(1)))
    return built[1]


def find(
    session: Session,
    model: Any,
    value: str,
    *,
    slug: InstrumentedAttribute[str] | None = None,
    base: Select[Any] | None = None,
) -> tuple[Any, bool]:
    """Return ``(row or None, found_by_slug)``; without a slug column only ids are looked up.

    Without ``base`` the row is a plain row of every column of ``model`` (``queries.rows``);
    a ``base`` should be a module constant (statements are kept built per base).
    """
    by_slug = not is_id(value)
    if by_slug and (slug is None or not plausible_slug(value)):
        return None, by_slug
    column = slug if by_slug and slug is not None else model.id
    found = fetch(session, lookup_statement(model, column, base), {"key": value})
    return (found[0] if found else None), by_slug
