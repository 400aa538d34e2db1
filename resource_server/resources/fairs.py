"""``/api/fairs`` and ``/api/fairs/{id}``."""

from __future__ import annotations

import falcon

from common.ids import utcnow
from resource_server.errors import NotFound
from resource_server.params import Param, parse_filters
from resource_server.queries import fairs as q
from resource_server.representations.fairs import fair
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_page
from resource_server.routes import CollectionRoute
from resource_server.schedule import STATUSES

ROUTE = CollectionRoute(
    rel="fairs", path="/fairs", item_rel="fair", filters=(Param("status", "enum", STATUSES),)
)


class Fairs(Resource):
    """The paginated list of fairs; ``status`` is computed from the dates at request time."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List fairs matching the filters."""
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls, now = self.urls(req), utcnow()
        with self.stores.sessions() as session:
            if page.sample:
                one = q.sample_fair(session, filters, now)
                if one is None:
                    raise NotFound("Fair")
                redirect(resp, urls.api(f"/fairs/{one.id}"))
                return
            result = q.list_fairs(session, filters, page, now)
        web = self.settings.web_url
        render_page(
            req,
            resp,
            urls,
            path="/fairs",
            plural="fairs",
            filters=filters,
            page=page,
            result=result,
            items=[fair(f, urls, now, web) for f in result.rows],
        )


class FairItem(Resource):
    """One fair, by id (or by slug, redirecting to the id URL)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show a fair."""
        with self.stores.sessions() as session:
            found, by_slug = q.find_fair(session, id)
        if found is None:
            raise NotFound("Fair")
        urls = self.urls(req)
        if by_slug:
            redirect(resp, urls.api(f"/fairs/{found.id}"))
            return
        resp.media = fair(found, urls, utcnow(), self.settings.web_url)
