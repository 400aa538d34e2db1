"""``/api/shows`` and ``/api/shows/{id}``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.hal import Urls
from resource_server.params import Param
from resource_server.queries import shows as q
from resource_server.representations.shows import show
from resource_server.resources.catalog_pages import CatalogItem, CatalogList
from resource_server.routes import CollectionRoute
from resource_server.schedule import STATUSES

ROUTE = CollectionRoute(
    rel="shows",
    path="/shows",
    item_rel="show",
    filters=(Param("partner_id"), Param("status", "enum", STATUSES), Param("fair_id")),
)


class Shows(CatalogList):
    """The paginated list of shows; ``status`` is computed from the dates at request time."""

    route, model = ROUTE, "Show"

    def query(
        self, session: Session, filters: dict[str, Any], page: PageParams, now: datetime
    ) -> PageResult:
        """Return one page."""
        return q.list_shows(session, filters, page, now)

    def sample(self, session: Session, filters: dict[str, Any], now: datetime) -> Any:
        """Return a random element."""
        return q.sample_show(session, filters, now)

    def render(self, row: Any, urls: Urls, now: datetime) -> dict[str, Any]:
        """Render one."""
        return show(row, urls, now, self.settings.web_url)


class ShowItem(CatalogItem):
    """One show, by id (or by slug, redirecting to the id URL)."""

    route, model = ROUTE, "Show"

    def find(self, session: Session, key: str) -> tuple[Any, bool]:
        """Find by id or slug."""
        return q.find_show(session, key)

    def render(self, row: Any, urls: Urls, now: datetime) -> dict[str, Any]:
        """Render it."""
        return show(row, urls, now, self.settings.web_url)
