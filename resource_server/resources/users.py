"""``/api/users``, ``/api/users/{id}``, ``/api/current_user`` and ``/api/user_details/{id}``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import falcon
from sqlalchemy.orm import Session

from common.ids import is_id
from resource_server.params import Param
from resource_server.queries import users as q
from resource_server.representations.users import user, user_detail
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList
from resource_server.resources.listing import ItemRoute, caller_of
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


class Users(CatalogList):
    """Users: those who collected an artwork publicly, or whose name starts with a term."""

    route, model, auth, listing = ROUTE, "User", ROUTE.auth, q.USERS

    def context(self, call: Call) -> dict[str, Any]:
        """Return the caller (a user list is what the caller may read)."""
        return {"caller": call.user}

    def related(self, session: Session, rows: Sequence[Any], call: Call) -> Mapping[Any, Any]:
        """Return the users' profiles by user id."""
        return q.profiles_of(session, [u.id for u in rows])

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one."""
        return user(row, call.urls, call.user, call.related.get(row.id))


class UserItem(CatalogItem):
    """One user: its name for anyone, more for itself."""

    route, model, auth = ROUTE, "User", ROUTE.item_auth

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id: the user and its profile."""
        return (q.find_user(session, key, call.user) if is_id(key) else None), False

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render it."""
        return user(row[0], call.urls, call.user, row[1])


class CurrentUser(Resource):
    """The caller: a redirect to its user (the root is the same for everyone)."""

    auth = "user"

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Redirect to the caller's user."""
        redirect(resp, self.urls(req).api(f"/users/{caller_of(req)}"))


class UserDetailItem(CatalogItem):
    """A user's private details, for that user only (404 for anyone else's)."""

    route, model, auth = USER_DETAIL, "User Detail", "user"

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find the caller's details: the user and its profile."""
        return (q.find_user_detail(session, key) if key == call.user else None), False

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render them."""
        return user_detail(row[0], row[1], call.urls)
