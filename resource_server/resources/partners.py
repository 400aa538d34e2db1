"""``/api/partners`` and ``/api/partners/{id}``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from resource_server.params import Param
from resource_server.queries import partners as q
from resource_server.representations.partners import partner
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="partners",
    path="/partners",
    item_rel="partner",
    filters=(
        Param("user_id"),
        Param("partner_id"),
        Param("eligible_for_partner_analytics", "bool"),
    ),
)


class PartnerDocument(Responder):
    """A partner's document, with its profile's handle (read once for a whole page)."""

    route, model, listing = ROUTE, "Partner", q.PARTNERS
    replica_reads = True

    def context(self, call: Call) -> dict[str, Any]:
        """Return the caller's token (``user_id`` lists the partners the user can access)."""
        return {"token": call.req.context.token}

    def related(self, session: Session, rows: Sequence[Any], call: Call) -> Mapping[Any, Any]:
        """Return the partners' profile handles by partner id."""
        return q.profile_handles(session, [p.id for p in rows])

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one partner."""
        return partner(row, call.related.get(row.id), call.urls, self.settings.web_url)


class Partners(PartnerDocument, CatalogList):
    """The paginated list of partners (``user_id``: those the user can access)."""

    def on_replica(self, call: Call) -> bool:
        """Read the partners a user can access (``user_id``) on the primary."""
        return "user_id" not in call.filters


class PartnerItem(PartnerDocument, CatalogItem):
    """One partner, by id (or by slug, redirecting to the id URL)."""
