"""``/api/fairs`` and ``/api/fairs/{id}``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.hal import Urls
from resource_server.params import Param
from resource_server.queries import fairs as q
from resource_server.representations.fairs import fair
from resource_server.resources.catalog_pages import CatalogItem, CatalogList
from resource_server.routes import CollectionRoute
from resource_server.schedule import STATUSES

ROUTE = CollectionRoute(
    rel="fairs", path="/fairs", item_rel="fair", filters=(Param("status", "enum", STATUSES),)
)


class Fairs(CatalogList):
    """The paginated list of fairs; ``status`` is computed from the dates at request time."""

    route, model = ROUTE, "Fair"

    def query(
        self, session: Session, filters: dict[str, Any], page: PageParams, now: datetime
    ) -> PageResult:
        """Return one page."""
        return q.list_fairs(session, filters, page, now)

    def sample(self, session: Session, filters: dict[str, Any], now: datetime) -> Any:
        """Return a random element."""
        return q.sample_fair(session, filters, now)

    def render(self, row: Any, urls: Urls, now: datetime) -> dict[str, Any]:
        """Render one."""
        return fair(row, urls, now, self.settings.web_url)


class FairItem(CatalogItem):
    """One fair, by id (or by slug, redirecting to the id URL)."""

    route, model = ROUTE, "Fair"

    def find(self, session: Session, key: str) -> tuple[Any, bool]:
        """Find by id or slug."""
        return q.find_fair(session, key)

    def render(self, row: Any, urls: Urls, now: datetime) -> dict[str, Any]:
        """Render it."""
        return fair(row, urls, now, self.settings.web_url)
