"""``/api/collection_items`` (list, add) and ``/api/collection_items/{id}`` (show, move, remove)."""

from __future__ import annotations

from typing import Any

import falcon
from sqlalchemy.orm import Session

from common.api.errors import NotFound
from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.ids import is_id
from resource_server.fields import FieldErrors, query_ids, request_fields
from resource_server.params import Param, parse_filters
from resource_server.queries import collection_items as q
from resource_server.representations.collections import collection_item
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList, Responder
from resource_server.resources.listing import caller_of
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="collection_items",
    path="/collection_items",
    item_rel="collection_item",
    filters=(
        Param("user_id", required=True),
        Param("collection_id", required=True),
        Param("artwork_id"),
    ),
    item_params=("collection_id", "user_id"),
    item_required=("collection_id", "user_id"),
    auth="user",
    item_auth="user",
)
SCOPE = ("collection_id", "user_id")


class CollectionItemDocument(Responder):
    """An item of a collection, within the collection and user its request names."""

    route, model = ROUTE, "Collection Item"

    def read(self, req: falcon.Request, call: Call) -> None:
        """Read the required ``collection_id`` and ``user_id``."""
        call.scope = query_ids(req, *SCOPE, required=True)

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one item."""
        return collection_item(row, call.scope["user_id"], call.urls)


class CollectionItems(CollectionItemDocument, CatalogList):
    """The items of one collection, in position order (``collection_id``, ``user_id`` required)."""

    auth = ROUTE.auth

    def read(self, req: falcon.Request, call: Call) -> None:
        """Read the scope, then the filters."""
        super().read(req, call)
        call.filters = parse_filters(req.params, ROUTE.filters)

    def query(self, session: Session, call: Call, page: PageParams) -> PageResult:
        """Return one page of the collection's items."""
        collection_id, user_id = call.scope["collection_id"], call.scope["user_id"]
        artwork_id = call.filters.get("artwork_id")
        return q.list_items(session, collection_id, user_id, call.user, page, artwork_id)

    def sample(self, session: Session, call: Call) -> Any:
        """Return a random element."""
        collection_id, user_id = call.scope["collection_id"], call.scope["user_id"]
        artwork_id = call.filters.get("artwork_id")
        return q.sample_item(session, collection_id, user_id, call.user, artwork_id)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Add an artwork at the end of a collection of the caller's (201)."""
        caller = caller_of(req)
        fields = request_fields(req)
        errors = FieldErrors()
        ids = {name: errors.ident(fields, name, required=True) for name in (*SCOPE, "artwork_id")}
        errors.raise_if_any()
        collection_id, user_id, artwork_id = (str(ids[n]) for n in (*SCOPE, "artwork_id"))
        item = q.add_item(self.stores.sessions, caller, collection_id, user_id, artwork_id)
        resp.status = falcon.HTTP_201
        resp.media = collection_item(item, user_id, self.urls(req))


class CollectionItemResource(CollectionItemDocument, CatalogItem):
    """One item of a collection."""

    auth = ROUTE.item_auth

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id within the collection."""
        if not is_id(key):
            return None, False
        scope = call.scope
        return q.find_item(session, key, scope["collection_id"], scope["user_id"], call.user), False

    def on_put(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Move an item to ``position``; the items in between shift by one."""
        caller = caller_of(req)
        fields = request_fields(req)
        errors = FieldErrors()
        scope = {name: errors.ident(fields, name) for name in SCOPE}
        position = errors.integer(fields, "position")
        errors.raise_if_any()
        if not is_id(id):
            raise NotFound("Collection Item")
        item = q.move_item(
            self.stores.sessions, caller, id, position, scope["collection_id"], scope["user_id"]
        )
        resp.media = collection_item(item, caller, self.urls(req))

    def on_delete(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Remove an item; the items after it move up (204)."""
        caller = caller_of(req)
        scope = query_ids(req, *SCOPE)
        if not is_id(id):
            raise NotFound("Collection Item")
        q.remove_item(
            self.stores.sessions, caller, id, scope.get("collection_id"), scope.get("user_id")
        )
        resp.status = falcon.HTTP_204
