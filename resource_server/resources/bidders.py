"""``/api/bidders`` and ``/api/bidders/{id}``: the caller's registrations (all, for an Admin)."""

from __future__ import annotations

import falcon

from common.api.errors import NotFound
from common.ids import is_id
from resource_server.params import Param, parse_filters
from resource_server.queries import bidders as q
from resource_server.representations.bidders import bidder
from resource_server.resources.base import Resource, redirect
from resource_server.resources.listing import caller_of, render_page
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="bidders",
    path="/bidders",
    item_rel="bidder",
    filters=(Param("sale_id"), Param("user_id")),
    auth="user",
    item_auth="user",
)


class Bidders(Resource):
    """Registrations to bid, optionally in one sale."""

    auth = ROUTE.auth

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List the bidders the caller may read."""
        caller = caller_of(req)
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls = self.urls(req)
        with self.stores.reads() as session:
            if page.sample:
                one = q.sample_bidder(session, filters, caller)
                if one is None:
                    raise NotFound("Bidder")
                redirect(resp, urls.api(f"/bidders/{one.id}"))
                return
            result = q.list_bidders(session, filters, caller, page)
        items = [bidder(b, urls, caller) for b in result.rows]
        resp.media = render_page(req, urls, "bidders", "/bidders", filters, page, result, items)


class BidderItem(Resource):
    """One registration: the caller's own, or any for an Admin."""

    auth = ROUTE.item_auth

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show a bidder (404 for another user's, unless the caller is an Admin)."""
        caller = caller_of(req)
        found = None
        if is_id(id):
            with self.stores.reads() as session:
                found = q.find_bidder(session, id, caller)
        if found is None:
            raise NotFound("Bidder")
        resp.media = bidder(found, self.urls(req), caller)
