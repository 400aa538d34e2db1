"""``/api/sale_artworks`` and ``/api/sale_artworks/{id}``: the lots of sales."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from resource_server.params import Param
from resource_server.queries import sale_artworks as q
from resource_server.queries.access import is_admin
from resource_server.representations.sale_artworks import sale_artwork
from resource_server.resources.catalog_pages import ApiLinked, Call, CatalogItem, CatalogList
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="sale_artworks",
    path="/sale_artworks",
    item_rel="sale_artwork",
    filters=(Param("sale_id"), Param("artwork_id"), Param("published", "bool")),
)


class SaleArtworkDocument(ApiLinked):
    """A lot's document; lots of unpublished sales are seen by Admins only."""

    route, model, listing, document = ROUTE, "Sale Artwork", q.SALE_ARTWORKS, sale_artwork

    def enter(self, session: Session, call: Call) -> None:
        """Read whether the caller is an Admin."""
        call.admin = is_admin(session, call.req.context.token)

    def context(self, call: Call) -> dict[str, Any]:
        """Return whether the caller sees the lots of unpublished sales."""
        return {"admin": call.admin}


class SaleArtworks(SaleArtworkDocument, CatalogList):
    """The paginated list of lots (``published``: the artwork's)."""


class SaleArtworkItem(SaleArtworkDocument, CatalogItem):
    """One lot, by id (404 in an unpublished sale, but for Admins)."""

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id."""
        return q.find_sale_artwork(session, key, admin=call.admin), False
