"""``/api/bidders`` and ``/api/bidders/{id}``: the caller's registrations (all, for an Admin)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from common.ids import is_id
from resource_server.params import Param
from resource_server.queries import bidders as q
from resource_server.representations.bidders import bidder
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="bidders",
    path="/bidders",
    item_rel="bidder",
    filters=(Param("sale_id"), Param("user_id")),
    auth="user",
    item_auth="user",
)


class BidderDocument(Responder):
    """A registration to bid, as the caller may see it."""

    route, model, listing = ROUTE, "Bidder", q.BIDDERS

    def context(self, call: Call) -> dict[str, Any]:
        """Return the caller (the bidders are those the caller may read)."""
        return {"caller": call.user}

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one bidder."""
        return bidder(row, call.urls, call.user)


class Bidders(BidderDocument, CatalogList):
    """Registrations to bid, optionally in one sale."""

    auth = ROUTE.auth


class BidderItem(BidderDocument, CatalogItem):
    """One registration: the caller's own, or any for an Admin (404 for another user's)."""

    auth = ROUTE.item_auth

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id."""
        return (q.find_bidder(session, key, call.user) if is_id(key) else None), False
