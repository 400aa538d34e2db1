"""``/api/sales`` (user tokens only) and ``/api/sales/{id}``; unpublished sales are Admin-only."""

from __future__ import annotations

import falcon

from common.api.errors import NotFound
from common.ids import utcnow
from resource_server.params import Param, parse_filters
from resource_server.queries import sales as q
from resource_server.queries.access import is_admin
from resource_server.representations.sales import sale
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_page
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="sales",
    path="/sales",
    item_rel="sale",
    filters=(Param("published", "bool"), Param("live", "bool"), Param("is_auction", "bool")),
    auth="user",
)


class Sales(Resource):
    """The paginated list of sales, for user tokens; ``live``: running now."""

    auth = ROUTE.auth

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List sales matching the filters (unpublished ones only for Admins)."""
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls, now = self.urls(req), utcnow()
        with self.stores.reads() as session:
            admin = is_admin(session, req.context.token)
            if page.sample:
                one = q.sample_sale(session, filters, now, admin=admin)
                if one is None:
                    raise NotFound("Sale")
                redirect(resp, urls.api(f"/sales/{one.id}"))
                return
            result = q.list_sales(session, filters, page, now, admin=admin)
        web = self.settings.web_url
        render_page(
            req,
            resp,
            urls,
            path="/sales",
            plural="sales",
            filters=filters,
            page=page,
            result=result,
            items=[sale(s, urls, web) for s in result.rows],
        )


class SaleItem(Resource):
    """One sale, by id (or by slug, redirecting); an unpublished one is 404 but for Admins."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show a sale."""
        with self.stores.reads() as session:
            admin = is_admin(session, req.context.token)
            found, by_slug = q.find_sale(session, id, admin=admin)
        if found is None:
            raise NotFound("Sale")
        urls = self.urls(req)
        if by_slug:
            redirect(resp, urls.api(f"/sales/{found.id}"))
            return
        resp.media = sale(found, urls, self.settings.web_url)
