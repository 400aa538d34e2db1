"""``/api/artworks`` and ``/api/artworks/{id}``."""

from __future__ import annotations

from typing import Any

import falcon
import orjson
from sqlalchemy import Row
from sqlalchemy.orm import Session

from common.api.errors import NotFound
from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.settings import ResourceSettings
from common.stores import Stores
from resource_server.doccache import DocumentCache
from resource_server.params import Param, parse_filters
from resource_server.queries import artworks as q
from resource_server.queries import collections as collected
from resource_server.representations.artworks import artwork
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_page, render_set, require
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


class Artworks(Resource):
    """The paginated list of artworks, each with its editions embedded."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List artworks matching the filters (or the set similar to one artwork)."""
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls = self.urls(req)
        web = self.settings.web_url
        with self.stores.reads() as session:
            if "similar_to_artwork_id" in filters:
                rows = q.similar(session, filters)
                editions = q.editions_for(session, [a.id for a in rows])
                items = [artwork(a, editions.get(a.id, []), urls, web) for a in rows]
                render_set(
                    resp, urls, path="/artworks", plural="artworks", filters=filters, items=items
                )
                return
            if page.sample:
                one = self.sample_of(session, filters, req)
                if one is None:
                    raise NotFound("Artwork")
                redirect(resp, urls.api(f"/artworks/{one.id}"))
                return
            result = self.page_of(session, filters, page, req)
            editions = q.editions_for(session, [a.id for a in result.rows])
        items = [artwork(a, editions.get(a.id, []), urls, web) for a in result.rows]
        render_page(
            req,
            resp,
            urls,
            path="/artworks",
            plural="artworks",
            filters=filters,
            page=page,
            result=result,
            items=items,
        )

    def page_of(
        self, session: Session, filters: dict[str, Any], page: PageParams, req: falcon.Request
    ) -> PageResult:
        """Return the page of artworks the filters select, in id order.

        The hook for scopes with an order of their own: a collection's artworks
        (``collection_id`` with ``user_id``, position order, its own cursor) page here through
        the collection queries, once ROUTE declares those two filters; the editions are
        embedded and the HAL page rendered as for any other filter.
        """
        if "collection_id" in filters:
            return collected.collection_artworks(
                session,
                filters["collection_id"],
                require(filters, "user_id"),
                req.context.token.user_id,
                page,
                base=q.filtered(filters),
            )
        return q.list_artworks(session, filters, page)

    def sample_of(
        self, session: Session, filters: dict[str, Any], req: falcon.Request
    ) -> Row[Any] | None:
        """Return a random artwork of the filtered set (the collection hook applies here too)."""
        if "collection_id" in filters:
            return collected.sample_collection_artwork(
                session,
                filters["collection_id"],
                require(filters, "user_id"),
                req.context.token.user_id,
                base=q.filtered(filters),
            )
        return q.sample_artwork(session, filters)


class ArtworkItem(Resource):
    """One artwork, by id (or by slug, redirecting to the id URL).

    The most requested document of the API: rendered documents are kept in memory for the
    catalog version the request gate read (see ``resource_server.doccache``).
    """

    def __init__(self, stores: Stores, settings: ResourceSettings) -> None:
        super().__init__(stores, settings)
        self.cache = DocumentCache(settings.document_cache_size, kinds=("artworks", "editions"))

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show an artwork with its editions."""
        urls = self.urls(req)
        version = getattr(req.context, "catalog_version", None)
        types = getattr(req.context, "catalog_versions", ())
        cached = self.cache.get(version, (urls.base, id), types)
        if cached is not None:
            resp.data = cached
            return
        with self.stores.reads() as session:
            found, by_slug = q.find_artwork(session, id)
            if found is None:
                raise NotFound("Artwork")
            if by_slug:
                redirect(resp, urls.api(f"/artworks/{found.id}"))
                return
            editions = q.editions_for(session, [found.id])
            data = orjson.dumps(
                artwork(found, editions.get(found.id, []), urls, self.settings.web_url)
            )
        self.cache.put(version, (urls.base, id), data, types)
        resp.data = data
