"""``/api/shows`` and ``/api/shows/{id}``."""

from __future__ import annotations

from typing import Any

from resource_server.params import Param
from resource_server.queries import shows as q
from resource_server.representations.shows import show
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute
from resource_server.schedule import STATUSES

ROUTE = CollectionRoute(
    rel="shows",
    path="/shows",
    item_rel="show",
    filters=(Param("partner_id"), Param("status", "enum", STATUSES), Param("fair_id")),
)


class ShowDocument(Responder):
    """What the shows list and item share: the type and its rendering."""

    route, model, listing = ROUTE, "Show", q.SHOWS

    def context(self, call: Call) -> dict[str, Any]:
        """Return the clock the shows' status is computed at."""
        return {"now": call.now}

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one."""
        return show(row, call.urls, call.now, self.settings.web_url)


class Shows(ShowDocument, CatalogList):
    """The paginated list of shows; ``status`` is computed from the dates at request time."""


class ShowItem(ShowDocument, CatalogItem):
    """One show, by id (or by slug, redirecting to the id URL)."""
