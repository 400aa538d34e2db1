"""``/api/editions?artwork_id=`` and ``/api/editions/{id}?artwork_id=``."""

from __future__ import annotations

from typing import Any

import falcon
from sqlalchemy.orm import Session

from resource_server.params import Param, parse_filters, require
from resource_server.queries import editions as q
from resource_server.representations.editions import edition
from resource_server.resources.catalog_pages import ApiLinked, Call, CatalogItem, CatalogList
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="editions",
    path="/editions",
    item_rel="edition",
    filters=(Param("artwork_id", required=True),),
    item_params=("artwork_id",),
    item_required=("artwork_id",),
)


class EditionDocument(ApiLinked):
    """What the editions list and item share: the type and its rendering."""

    route, model, listing, document = ROUTE, "Edition", q.EDITIONS, edition
    replica_reads = True


class Editions(EditionDocument, CatalogList):
    """The paginated editions of one artwork (``artwork_id`` is required)."""

    def sample_query(self, row: Any, call: Call) -> dict[str, Any]:
        """Name the edition's artwork, which its item route requires."""
        return {"artwork_id": row.artwork_id}


class EditionItem(EditionDocument, CatalogItem):
    """One edition of an artwork: ``/api/editions/{id}?artwork_id=`` (``artwork_id`` required)."""

    def read(self, req: falcon.Request, call: Call) -> None:
        """Read the required ``artwork_id``."""
        filters = parse_filters(req.params, ROUTE.filters)
        call.scope = {"artwork_id": require(filters, "artwork_id")}

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id within the artwork."""
        return q.find_edition(session, key, call.scope["artwork_id"]), False
