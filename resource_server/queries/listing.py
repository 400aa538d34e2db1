"""One catalog type's set: its pages in id order, a random member, one row by id or slug.

Each query module states its type's ``Listing`` once (the model, the filtered select, the slug
column); the list and item responders page, sample and find through it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, Select
from sqlalchemy.orm import Session

from common.api.keyset import PageResult, sample_one
from common.api.paging import PageParams
from resource_server.queries.lookup import find
from resource_server.queries.paging import page_by_id

# Filtered statements kept by what selects them: (model, filters, context). Only plain values
# make a key: a context holding the clock or a token record builds its statement each time.
MAX_STATEMENTS = 256
_statements: dict[Hashable, Select[Any]] = {}
_KEYED = (str, int, bool, type(None))


def _statement_key(model: Any, filters: dict[str, Any], context: dict[str, Any]) -> Hashable:
    """Return the key of a filtered statement, or None when a value is not a plain one."""
    if not all(isinstance(v, _KEYED) for v in (*filters.values(), *context.values())):
        return None
    # Each value with its type: True and 1 are equal, and a filter may read them apart.
    given = tuple((k, type(v).__name__, v) for k, v in sorted(filters.items()))
    read = tuple((k, type(v).__name__, v) for k, v in sorted(context.items()))
    return ("listing", model.__name__, given, read)


@dataclass(frozen=True)
class Listing:
    """A catalog type: ``filtered(filters, **context)`` selects its rows matching the filters.

    ``context`` is what a type's filters read besides the filters: the clock (``now``),
    whether the caller is an Admin (``admin``), the caller's token (``token``).
    """

    model: Any
    filtered: Callable[..., Select[Any]]
    slug: Any = None  # the slug (or handle) column; a column typed here reads as its value
    base: Select[Any] | None = None  # the rows ``find`` may return (a module constant): all

    def page(
        self, session: Session, filters: dict[str, Any], page: PageParams, **context: Any
    ) -> PageResult:
        """Return one page of the filtered set, ordered by id.

        The statement of a set asked for again (the same filters and context) is the one
        built for it before, and so are its page statements (``paginate``'s shape): a
        statement built anew costs its construction, its cache key and the adaptation of its
        results to the compiled form, a third of a page of twenty artists.
        """
        key = _statement_key(self.model, filters, context)
        if key is None:
            return page_by_id(session, self.filtered(filters, **context), self.model.id, page)
        stmt = _statements.get(key)
        if stmt is None:
            if len(_statements) >= MAX_STATEMENTS:
                _statements.clear()
            stmt = _statements[key] = self.filtered(filters, **context)
        return page_by_id(session, stmt, self.model.id, page, shape=key)

    def sample(self, session: Session, filters: dict[str, Any], **context: Any) -> Row[Any] | None:
        """Return a random row of the filtered set."""
        stmt = self.filtered(filters, **context)
        result: Row[Any] | None = sample_one(session, stmt, self.model.id)
        return result

    def find(self, session: Session, key: str) -> tuple[Row[Any] | None, bool]:
        """Return a row by id (or by slug, when the type has one) and whether it was by slug."""
        found: tuple[Row[Any] | None, bool] = find(
            session, self.model, key, slug=self.slug, base=self.base
        )
        return found
