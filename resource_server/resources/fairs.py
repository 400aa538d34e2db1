"""``/api/fairs`` and ``/api/fairs/{id}``."""

from __future__ import annotations

from resource_server.params import Param
from resource_server.queries import fairs as q
from resource_server.representations.fairs import fair
from resource_server.resources.catalog_pages import CatalogItem, CatalogList, Scheduled
from resource_server.routes import CollectionRoute
from resource_server.schedule import STATUSES

ROUTE = CollectionRoute(
    rel="fairs", path="/fairs", item_rel="fair", filters=(Param("status", "enum", STATUSES),)
)


class FairDocument(Scheduled):
    """What the fairs list and item share: the type and its rendering."""

    route, model, listing, document = ROUTE, "Fair", q.FAIRS, fair
    replica_reads = True


class Fairs(FairDocument, CatalogList):
    """The paginated list of fairs; ``status`` is computed from the dates at request time."""


class FairItem(FairDocument, CatalogItem):
    """One fair, by id (or by slug, redirecting to the id URL)."""
