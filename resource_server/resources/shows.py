"""``/api/shows`` and ``/api/shows/{id}``."""

from __future__ import annotations

import falcon

from common.ids import utcnow
from resource_server.errors import NotFound
from resource_server.params import Param, parse_filters
from resource_server.queries import shows as q
from resource_server.representations.shows import show
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_page
from resource_server.routes import CollectionRoute
from resource_server.schedule import STATUSES

ROUTE = CollectionRoute(
    rel="shows",
    path="/shows",
    item_rel="show",
    filters=(Param("partner_id"), Param("status", "enum", STATUSES), Param("fair_id")),
)


class Shows(Resource):
    """The paginated list of shows; ``status`` is computed from the dates at request time."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List shows matching the filters."""
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls, now = self.urls(req), utcnow()
        with self.stores.sessions() as session:
            if page.sample:
                one = q.sample_show(session, filters, now)
                if one is None:
                    raise NotFound("Show")
                redirect(resp, urls.api(f"/shows/{one.id}"))
                return
            result = q.list_shows(session, filters, page, now)
        web = self.settings.web_url
        render_page(
            req,
            resp,
            urls,
            path="/shows",
            plural="shows",
            filters=filters,
            page=page,
            result=result,
            items=[show(s, urls, now, web) for s in result.rows],
        )


class ShowItem(Resource):
    """One show, by id (or by slug, redirecting to the id URL)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show a show."""
        with self.stores.sessions() as session:
            found, by_slug = q.find_show(session, id)
        if found is None:
            raise NotFound("Show")
        urls = self.urls(req)
        if by_slug:
            redirect(resp, urls.api(f"/shows/{found.id}"))
            return
        resp.media = show(found, urls, utcnow(), self.settings.web_url)
