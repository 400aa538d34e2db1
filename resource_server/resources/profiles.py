"""``/api/profiles`` and ``/api/profiles/{id}`` (id or handle)."""

from __future__ import annotations

import falcon

from resource_server.errors import NotFound
from resource_server.params import parse_filters
from resource_server.queries import profiles as q
from resource_server.representations.profiles import profile
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_page
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(rel="profiles", path="/profiles", item_rel="profile")


class Profiles(Resource):
    """The paginated list of profiles."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List profiles."""
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls = self.urls(req)
        with self.stores.sessions() as session:
            if page.sample:
                one = q.sample_profile(session, filters)
                if one is None:
                    raise NotFound("Profile")
                redirect(resp, urls.api(f"/profiles/{one.id}"))
                return
            result = q.list_profiles(session, filters, page)
        web = self.settings.web_url
        render_page(
            req,
            resp,
            urls,
            path="/profiles",
            plural="profiles",
            filters=filters,
            page=page,
            result=result,
            items=[profile(p, urls, web) for p in result.rows],
        )


class ProfileItem(Resource):
    """One profile, by id (or by handle, redirecting to the id URL)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show a profile."""
        with self.stores.sessions() as session:
            found, by_handle = q.find_profile(session, id)
        if found is None:
            raise NotFound("Profile")
        urls = self.urls(req)
        if by_handle:
            redirect(resp, urls.api(f"/profiles/{found.id}"))
            return
        resp.media = profile(found, urls, self.settings.web_url)
