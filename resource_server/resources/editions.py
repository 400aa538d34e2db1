"""``/api/editions?artwork_id=`` and ``/api/editions/{id}?artwork_id=``."""

from __future__ import annotations

import falcon

from common.api.errors import NotFound
from resource_server.params import Param, parse_filters
from resource_server.queries import editions as q
from resource_server.representations.editions import edition
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_page, require
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="editions",
    path="/editions",
    item_rel="edition",
    filters=(Param("artwork_id", required=True),),
    item_params=("artwork_id",),
    item_required=("artwork_id",),
)


class Editions(Resource):
    """The paginated editions of one artwork (``artwork_id`` is required)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List an artwork's editions."""
        filters = parse_filters(req.params, ROUTE.filters)
        require(filters, "artwork_id")
        page = self.page_params(req)
        urls = self.urls(req)
        with self.stores.reads() as session:
            if page.sample:
                one = q.sample_edition(session, filters)
                if one is None:
                    raise NotFound("Edition")
                redirect(resp, urls.api(f"/editions/{one.id}", {"artwork_id": one.artwork_id}))
                return
            result = q.list_editions(session, filters, page)
        render_page(
            req,
            resp,
            urls,
            path="/editions",
            plural="editions",
            filters=filters,
            page=page,
            result=result,
            items=[edition(e, urls) for e in result.rows],
        )


class EditionItem(Resource):
    """One edition of an artwork: ``/api/editions/{id}?artwork_id=`` (``artwork_id`` required)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show an edition."""
        filters = parse_filters(req.params, ROUTE.filters)
        artwork_id = require(filters, "artwork_id")
        with self.stores.reads() as session:
            found = q.find_edition(session, id, artwork_id)
        if found is None:
            raise NotFound("Edition")
        resp.media = edition(found, self.urls(req))
