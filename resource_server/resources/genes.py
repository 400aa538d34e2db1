"""``/api/genes`` and ``/api/genes/{id}``."""

from __future__ import annotations

from resource_server.params import Param
from resource_server.queries import genes as q
from resource_server.representations.genes import gene
from resource_server.resources.catalog_pages import CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="genes",
    path="/genes",
    item_rel="gene",
    filters=(Param("artist_id"), Param("artwork_id")),
)


class GeneDocument(Responder):
    """What the genes list and item share: the type and its rendering."""

    route, model, listing, document = ROUTE, "Gene", q.GENES, gene
    replica_reads = True


class Genes(GeneDocument, CatalogList):
    """The paginated list of genes."""


class GeneItem(GeneDocument, CatalogItem):
    """One gene, by id (or by slug, redirecting to the id URL)."""
