"""One catalog type's set: its pages in id order, a random member, one row by id or slug.

Each query module states its type's ``Listing`` once (the model, the filtered select, the slug
column); the list and item responders page, sample and find through it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, Select
from sqlalchemy.orm import Session

from common.api.keyset import PageResult, sample_one
from common.api.paging import PageParams
from resource_server.queries.lookup import find
from resource_server.queries.paging import page_by_id


@dataclass(frozen=True)
class Listing:
    """A catalog type: ``filtered(filters, **context)`` selects its rows matching the filters.

    ``context`` is what a type's filters read besides the filters: the clock (``now``),
    whether the caller is an Admin (``admin``), the caller's token (``token``).
    """

    model: Any
    filtered: Callable[..., Select[Any]]
    slug: Any = None  # the slug (or handle) column; a column typed here reads as its value

    def page(
        self, session: Session, filters: dict[str, Any], page: PageParams, **context: Any
    ) -> PageResult:
        """Return one page of the filtered set, ordered by id."""
        return page_by_id(session, self.filtered(filters, **context), self.model.id, page)

    def sample(self, session: Session, filters: dict[str, Any], **context: Any) -> Row[Any] | None:
        """Return a random row of the filtered set."""
        stmt = self.filtered(filters, **context)
        result: Row[Any] | None = sample_one(session, stmt, self.model.id)
        return result

    def find(self, session: Session, key: str) -> tuple[Row[Any] | None, bool]:
        """Return a row by id (or by slug, when the type has one) and whether it was by slug."""
        found: tuple[Row[Any] | None, bool] = find(session, self.model, key, slug=self.slug)
        return found
