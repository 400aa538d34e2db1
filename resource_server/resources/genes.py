"""``/api/genes`` and ``/api/genes/{id}``."""

from __future__ import annotations

from typing import Any

from resource_server.params import Param
from resource_server.queries import genes as q
from resource_server.representations.genes import gene
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="genes",
    path="/genes",
    item_rel="gene",
    filters=(Param("artist_id"), Param("artwork_id")),
)


class GeneDocument(Responder):
    """What the genes list and item share: the type and its rendering."""

    route, model, listing = ROUTE, "Gene", q.GENES

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one."""
        return gene(row, call.urls, self.settings.web_url)


class Genes(GeneDocument, CatalogList):
    """The paginated list of genes."""


class GeneItem(GeneDocument, CatalogItem):
    """One gene, by id (or by slug, redirecting to the id URL)."""
