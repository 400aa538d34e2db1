"""``/api/sale_artworks`` and ``/api/sale_artworks/{id}``: the lots of sales."""

from __future__ import annotations

import falcon

from common.api.errors import NotFound
from resource_server.params import Param, parse_filters
from resource_server.queries import sale_artworks as q
from resource_server.queries.access import is_admin
from resource_server.representations.sale_artworks import sale_artwork
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_page
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="sale_artworks",
    path="/sale_artworks",
    item_rel="sale_artwork",
    filters=(Param("sale_id"), Param("artwork_id"), Param("published", "bool")),
)


class SaleArtworks(Resource):
    """The paginated list of lots (of published sales, unless the caller is an Admin)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List sale artworks matching the filters (``published``: the artwork's)."""
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls = self.urls(req)
        with self.stores.reads() as session:
            admin = is_admin(session, req.context.token)
            if page.sample:
                one = q.sample_sale_artwork(session, filters, admin=admin)
                if one is None:
                    raise NotFound("Sale Artwork")
                redirect(resp, urls.api(f"/sale_artworks/{one.id}"))
                return
            result = q.list_sale_artworks(session, filters, page, admin=admin)
        render_page(
            req,
            resp,
            urls,
            path="/sale_artworks",
            plural="sale_artworks",
            filters=filters,
            page=page,
            result=result,
            items=[sale_artwork(a, urls) for a in result.rows],
        )


class SaleArtworkItem(Resource):
    """One lot, by id (404 in an unpublished sale, but for Admins)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show a sale artwork."""
        with self.stores.reads() as session:
            admin = is_admin(session, req.context.token)
            found = q.find_sale_artwork(session, id, admin=admin)
        if found is None:
            raise NotFound("Sale Artwork")
        resp.media = sale_artwork(found, self.urls(req))
