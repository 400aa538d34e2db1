"""``/api/artists`` and ``/api/artists/{id}``."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from common.ids import is_id
from resource_server.params import Param
from resource_server.queries import artists as q
from resource_server.queries.access import is_admin
from resource_server.representations.artists import artist
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="artists",
    path="/artists",
    item_rel="artist",
    filters=(
        Param("artwork_id"),
        Param("similar_to_artist_id"),
        Param("similarity_type", "enum", ("default", "contemporary")),
        Param("gene_id"),
        Param("partner_id"),
        Param("artworks", "bool"),
        Param("published_artworks", "bool"),
        Param("sale_id"),
    ),
)


class ArtistDocument(Responder):
    """What the artists list and item share: the type and its rendering."""

    route, model, listing, document = ROUTE, "Artist", q.ARTISTS, artist
    replica_reads = True


class Artists(ArtistDocument, CatalogList):
    """The paginated list of artists (or the set similar to one artist)."""

    def enter(self, session: Session, call: Call) -> None:
        """Only a sale filter depends on the caller (unpublished sales are Admin-only)."""
        call.admin = "sale_id" in call.filters and is_admin(session, call.req.context.token)

    def on_replica(self, call: Call) -> bool:
        """Read a sale's artists on the primary (what they show depends on the caller's role)."""
        return "sale_id" not in call.filters

    def similar(self, session: Session, call: Call) -> list[Any] | None:
        """Return the artists similar to ``similar_to_artist_id``."""
        if "similar_to_artist_id" not in call.filters:
            return None
        return q.similar(session, call.filters, admin=call.admin)

    def context(self, call: Call) -> dict[str, Any]:
        """Return whether the caller sees unpublished sales' artists."""
        return {"admin": call.admin}


class ArtistItem(ArtistDocument, CatalogItem):
    """One artist, by id (or by slug, redirecting to the id URL)."""

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id or slug."""
        by_slug = not is_id(key)
        return q.find_artist(session, key, by_slug=by_slug), by_slug
