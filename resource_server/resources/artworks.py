"""``/api/artworks`` and ``/api/artworks/{id}``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.settings import ResourceSettings
from common.stores import Stores
from resource_server.doccache import PAGE_BYTES
from resource_server.params import Param, require
from resource_server.queries import artworks as q
from resource_server.queries import collections as collected
from resource_server.representations.artworks import artwork
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="artworks",
    path="/artworks",
    item_rel="artwork",
    filters=(
        Param("artist_id"),
        Param("partner_id"),
        Param("show_id"),
        Param("gene_id"),
        Param("similar_to_artwork_id"),
        Param("published", "bool"),
        Param(
            "collection_id",
            description="Only with `user_id`, the collection's owner (a 400 without it); the "
            "collection's artworks come in its order, with a cursor of their own.",
        ),
        Param("user_id"),
    ),
)


class ArtworkDocument(Responder):
    """An artwork's document, with its editions embedded (read once for a whole page)."""

    route, model = ROUTE, "Artwork"
    replica_reads = True

    def related(self, session: Session, rows: Sequence[Any], call: Call) -> Mapping[Any, Any]:
        """Return the artworks' editions by artwork id."""
        return q.editions_for(session, [a.id for a in rows])

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one artwork."""
        return artwork(row, call.related.get(row.id, []), call.urls, self.settings.web_url)


class Artworks(ArtworkDocument, CatalogList):
    """The paginated list of artworks (or the set similar to one artwork).

    A collection's artworks (``collection_id`` with ``user_id``) page through the collection
    queries, in the collection's order with a cursor of their own; the editions are embedded
    and the HAL page rendered as for any other filter.

    Pages of the catalog's own filters are kept rendered, like artwork documents (see
    ``CatalogList``); a collection's pages (whose visibility depends on the caller) are not.
    """

    def __init__(self, stores: Stores, settings: ResourceSettings) -> None:
        super().__init__(stores, settings)
        self.cache = self.document_cache("artworks", "editions", max_bytes=PAGE_BYTES)

    def cacheable(self, call: Call, page: PageParams) -> bool:
        """Every page but a collection's, and but a sample (random) or a similar set."""
        return (
            not page.sample
            and "collection_id" not in call.filters
            and ("similar_to_artwork_id" not in call.filters)
        )

    def on_replica(self, call: Call) -> bool:
        """Read a collection's artworks on the primary (its owner sees their own write)."""
        return "collection_id" not in call.filters

    def similar(self, session: Session, call: Call) -> list[Any] | None:
        """Return the artworks similar to ``similar_to_artwork_id``."""
        if "similar_to_artwork_id" not in call.filters:
            return None
        return q.similar(session, call.filters)

    def query(self, session: Session, call: Call, page: PageParams) -> PageResult:
        """Return the page of artworks the filters select (in id order, but a collection's)."""
        if "collection_id" in call.filters:
            scope = self.collection_scope(call)
            return collected.collection_artworks(
                session, *scope, page, base=q.filtered(call.filters)
            )
        return q.list_artworks(session, call.filters, page)

    def sample(self, session: Session, call: Call) -> Any:
        """Return a random artwork of the filtered set (of the collection's, with one)."""
        if "collection_id" in call.filters:
            scope = self.collection_scope(call)
            return collected.sample_collection_artwork(
                session, *scope, base=q.filtered(call.filters)
            )
        return q.sample_artwork(session, call.filters)

    @staticmethod
    def collection_scope(call: Call) -> tuple[str, str, str | None]:
        """Return the collection, its owner (a 400 without it) and the caller."""
        owner = require(call.filters, "user_id")
        return call.filters["collection_id"], owner, call.req.context.token.user_id


class ArtworkItem(ArtworkDocument, CatalogItem):
    """One artwork, by id (or by slug, redirecting to the id URL).

    The most requested document of the API: rendered documents are kept in memory for the
    catalog version the request gate read (see ``resource_server.doccache``).
    """

    def __init__(self, stores: Stores, settings: ResourceSettings) -> None:
        super().__init__(stores, settings)
        self.cache = self.document_cache("artworks", "editions")

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id or slug, with the editions (one statement: see ``related``)."""
        found, editions, by_slug = q.find_artwork_with_editions(session, key)
        if found is not None:
            call.related = {found.id: editions}
        return found, by_slug

    def related(self, session: Session, rows: Sequence[Any], call: Call) -> Mapping[Any, Any]:
        """Return the editions ``find`` read with the artwork."""
        return call.related
