"""``/api/partners`` and ``/api/partners/{id}``."""

from __future__ import annotations

import falcon

from common.api.errors import NotFound
from resource_server.params import Param, parse_filters
from resource_server.queries import partners as q
from resource_server.representations.partners import partner
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_page
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="partners",
    path="/partners",
    item_rel="partner",
    filters=(
        Param("user_id"),
        Param("partner_id"),
        Param("eligible_for_partner_analytics", "bool"),
    ),
)


class Partners(Resource):
    """The paginated list of partners (``user_id``: those the user can access)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List partners matching the filters."""
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls = self.urls(req)
        token = req.context.token
        with self.stores.reads() as session:
            if page.sample:
                one = q.sample_partner(session, filters, token)
                if one is None:
                    raise NotFound("Partner")
                redirect(resp, urls.api(f"/partners/{one.id}"))
                return
            result = q.list_partners(session, filters, page, token)
            handles = q.profile_handles(session, [p.id for p in result.rows])
        web = self.settings.web_url
        render_page(
            req,
            resp,
            urls,
            path="/partners",
            plural="partners",
            filters=filters,
            page=page,
            result=result,
            items=[partner(p, handles.get(p.id), urls, web) for p in result.rows],
        )


class PartnerItem(Resource):
    """One partner, by id (or by slug, redirecting to the id URL)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show a partner."""
        urls = self.urls(req)
        with self.stores.reads() as session:
            found, by_slug = q.find_partner(session, id)
            if found is None:
                raise NotFound("Partner")
            if by_slug:
                redirect(resp, urls.api(f"/partners/{found.id}"))
                return
            handle = q.profile_handles(session, [found.id]).get(found.id)
        resp.media = partner(found, handle, urls, self.settings.web_url)
