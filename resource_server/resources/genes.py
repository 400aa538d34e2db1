"""``/api/genes`` and ``/api/genes/{id}``."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from common.api.keyset import PageResult
from common.api.paging import PageParams
from resource_server.params import Param
from resource_server.queries import genes as q
from resource_server.representations.genes import gene
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList
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

    def query(self, session: Session, call: Call, page: PageParams) -> PageResult:
        """Return one page."""
        return q.list_genes(session, call.filters, page)

    def sample(self, session: Session, call: Call) -> Any:
        """Return a random element."""
        return q.sample_gene(session, call.filters)

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one."""
        return gene(row, call.urls, self.settings.web_url)


class GeneItem(CatalogItem):
    """One gene, by id (or by slug, redirecting to the id URL)."""

    route, model = ROUTE, "Gene"

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id or slug."""
        return q.find_gene(session, key)

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render it."""
        return gene(row, call.urls, self.settings.web_url)
