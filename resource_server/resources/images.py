"""``/api/images?show_id=`` (a show's installation shots) and ``/api/images/{id}``."""

from __future__ import annotations

import falcon

from common.api.errors import NotFound
from resource_server.params import Param, parse_filters
from resource_server.queries import images as q
from resource_server.representations.images import image
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_page, require
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="images", path="/images", item_rel="image", filters=(Param("show_id", required=True),)
)


class Images(Resource):
    """The paginated installation shots of a show (``show_id`` is required)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List a show's images."""
        filters = parse_filters(req.params, ROUTE.filters)
        require(filters, "show_id")
        page = self.page_params(req)
        urls = self.urls(req)
        with self.stores.reads() as session:
            if page.sample:
                one = q.sample_image(session, filters)
                if one is None:
                    raise NotFound("Image")
                redirect(resp, urls.api(f"/images/{one.id}"))
                return
            result = q.list_images(session, filters, page)
        render_page(
            req,
            resp,
            urls,
            path="/images",
            plural="images",
            filters=filters,
            page=page,
            result=result,
            items=[image(i, urls) for i in result.rows],
        )


class ImageItem(Resource):
    """One image, by id."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show an image."""
        with self.stores.reads() as session:
            found = q.find_image(session, id)
        if found is None:
            raise NotFound("Image")
        resp.media = image(found, self.urls(req))
