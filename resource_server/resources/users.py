"""``/api/users``, ``/api/users/{id}``, ``/api/current_user`` and ``/api/user_details/{id}``."""

from __future__ import annotations

import falcon

from common.api.errors import NotFound
from common.ids import is_id
from resource_server.params import Param, parse_filters
from resource_server.queries import users as q
from resource_server.representations.users import user, user_detail
from resource_server.resources.base import Resource, redirect
from resource_server.resources.listing import ItemRoute, caller_of, render_page
from resource_server.routes import CollectionRoute, PlainRoute

ROUTE = CollectionRoute(
    rel="users",
    path="/users",
    item_rel="user",
    filters=(Param("collected_artwork_id"), Param("term", "str")),
    auth="user",
    item_auth="user",
)
CURRENT_USER = PlainRoute("current_user", "/current_user")
USER_DETAIL = ItemRoute("user_detail", "/user_details")


class Users(Resource):
    """Users: those who collected an artwork publicly, or whose name starts with a term."""

    auth = ROUTE.auth

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List users matching the filters."""
        caller = caller_of(req)
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls = self.urls(req)
        with self.stores.reads() as session:
            if page.sample:
                one = q.sample_user(session, filters, caller)
                if one is None:
                    raise NotFound("User")
                redirect(resp, urls.api(f"/users/{one.id}"))
                return
            result = q.list_users(session, filters, caller, page)
            profiles = q.profiles_of(session, [u.id for u in result.rows])
        items = [user(u, urls, caller, profiles.get(u.id)) for u in result.rows]
        resp.media = render_page(req, urls, "users", "/users", filters, page, result, items)


class UserItem(Resource):
    """One user: its name for anyone, more for itself."""

    auth = ROUTE.item_auth

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show a user."""
        caller = caller_of(req)
        found = None
        if is_id(id):
            with self.stores.reads() as session:
                found = q.find_user(session, id, caller)
        if found is None:
            raise NotFound("User")
        resp.media = user(found[0], self.urls(req), caller, found[1])


class CurrentUser(Resource):
    """The caller: a redirect to its user (the root is the same for everyone)."""

    auth = "user"

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Redirect to the caller's user."""
        redirect(resp, self.urls(req).api(f"/users/{caller_of(req)}"))


class UserDetailItem(Resource):
    """A user's private details, for that user only."""

    auth = "user"

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show the caller's details (404 for anyone else's)."""
        found = None
        if id == caller_of(req):
            with self.stores.reads() as session:
                found = q.find_user_detail(session, id)
        if found is None:
            raise NotFound("User Detail")
        resp.media = user_detail(found[0], found[1], self.urls(req))
