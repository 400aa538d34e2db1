"""``/api/shows`` and ``/api/shows/{id}``."""

from __future__ import annotations

from resource_server.params import Param
from resource_server.queries import shows as q
from resource_server.representations.shows import show
from resource_server.resources.catalog_pages import CatalogItem, CatalogList, Scheduled
from resource_server.routes import CollectionRoute
from resource_server.schedule import STATUSES

ROUTE = CollectionRoute(
    rel="shows",
    path="/shows",
    item_rel="show",
    filters=(Param("partner_id"), Param("status", "enum", STATUSES), Param("fair_id")),
)


class ShowDocument(Scheduled):
    """What the shows list and item share: the type and its rendering."""

    route, model, listing, document = ROUTE, "Show", q.SHOWS, show
    replica_reads = True


class Shows(ShowDocument, CatalogList):
    """The paginated list of shows; ``status`` is computed from the dates at request time."""


class ShowItem(ShowDocument, CatalogItem):
    """One show, by id (or by slug, redirecting to the id URL)."""
