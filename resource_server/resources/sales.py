"""``/api/sales`` (user tokens only) and ``/api/sales/{id}``; unpublished sales are Admin-only."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from resource_server.params import Param
from resource_server.queries import sales as q
from resource_server.queries.access import is_admin
from resource_server.representations.sales import sale
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="sales",
    path="/sales",
    item_rel="sale",
    filters=(Param("published", "bool"), Param("live", "bool"), Param("is_auction", "bool")),
    auth="user",
)


class SaleDocument(Responder):
    """A sale's document; whether the caller is an Admin decides which sales it sees."""

    route, model, listing, document = ROUTE, "Sale", q.SALES, sale

    def enter(self, session: Session, call: Call) -> None:
        """Read whether the caller is an Admin."""
        call.admin = is_admin(session, call.req.context.token)

    def context(self, call: Call) -> dict[str, Any]:
        """Return the clock (``live``) and whether the caller sees unpublished sales."""
        return {"now": call.now, "admin": call.admin}


class Sales(SaleDocument, CatalogList):
    """The paginated list of sales, for user tokens; ``live``: running now."""

    auth = ROUTE.auth


class SaleItem(SaleDocument, CatalogItem):
    """One sale, by id (or by slug, redirecting); an unpublished one is 404 but for Admins."""

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id or slug."""
        return q.find_sale(session, key, admin=call.admin)
