"""``/api/artists`` and ``/api/artists/{id}``."""

from __future__ import annotations

import falcon

from common.api.errors import NotFound
from common.hal import Page
from common.ids import is_id
from resource_server.params import Param, parse_filters
from resource_server.queries import artists as q
from resource_server.queries.access import is_admin
from resource_server.representations.artists import artist
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_set
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


class Artists(Resource):
    """The paginated list of artists."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List artists matching the filters (or the set similar to one artist)."""
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls = self.urls(req)
        with self.stores.reads() as session:
            # Only a sale filter depends on the caller (unpublished sales are Admin-only).
            admin = "sale_id" in filters and is_admin(session, req.context.token)
            if "similar_to_artist_id" in filters:
                rows = q.similar(session, filters, admin=admin)
                items = [artist(a, urls, self.settings.web_url) for a in rows]
                render_set(
                    resp, urls, path="/artists", plural="artists", filters=filters, items=items
                )
                return
            if page.sample:
                one = q.sample_artist(session, filters, admin=admin)
                if one is None:
                    raise NotFound("Artist")
                redirect(resp, urls.api(f"/artists/{one.id}"))
                return
            result = q.list_artists(session, filters, page, admin=admin)
        query = {**filters, **page.echo()}
        if page.cursor is not None:
            query["cursor"] = req.get_param("cursor")
        if page.offset:
            query["offset"] = page.offset
        resp.media = Page(
            "artists",
            [artist(a, urls, self.settings.web_url) for a in result.rows],
            urls.api("/artists", query),
            urls.api("/artists", {**filters, **page.echo(), "cursor": result.next_cursor})
            if result.next_cursor
            else None,
            result.total_count,
        ).render()


class ArtistItem(Resource):
    """One artist, by id (or by slug, redirecting to the id URL)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show an artist."""
        by_slug = not is_id(id)
        with self.stores.reads() as session:
            found = q.find_artist(session, id, by_slug=by_slug)
        if found is None:
            raise NotFound("Artist")
        urls = self.urls(req)
        if by_slug:
            redirect(resp, urls.api(f"/artists/{found.id}"))
            return
        resp.media = artist(found, urls, self.settings.web_url)
