"""``/api/genes`` and ``/api/genes/{id}``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.hal import Urls
from resource_server.params import Param
from resource_server.queries import genes as q
from resource_server.representations.genes import gene
from resource_server.resources.catalog_pages import CatalogItem, CatalogList
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="genes",
    path="/genes",
    item_rel="gene",
    filters=(Param("artist_id"), Param("artwork_id")),
)


class Genes(CatalogList):
    """The paginated list of genes."""

    route, model = ROUTE, "Gene"

    def query(
        self, session: Session, filters: dict[str, Any], page: PageParams, now: datetime
    ) -> PageResult:
        """Return one page."""
        return q.list_genes(session, filters, page)

    def sample(self, session: Session, filters: dict[str, Any], now: datetime) -> Any:
        """Return a random element."""
        return q.sample_gene(session, filters)

    def render(self, row: Any, urls: Urls, now: datetime) -> dict[str, Any]:
        """Render one."""
        return gene(row, urls, self.settings.web_url)


class GeneItem(CatalogItem):
    """One gene, by id (or by slug, redirecting to the id URL)."""

    route, model = ROUTE, "Gene"

    def find(self, session: Session, key: str) -> tuple[Any, bool]:
        """Find by id or slug."""
        return q.find_gene(session, key)

    def render(self, row: Any, urls: Urls, now: datetime) -> dict[str, Any]:
        """Render it."""
        return gene(row, urls, self.settings.web_url)
