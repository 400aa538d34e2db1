"""``/api/collection_items`` (list, add) and ``/api/collection_items/{id}`` (show, move, remove)."""

from __future__ import annotations

import falcon

from common.api.errors import NotFound
from common.ids import is_id
from resource_server.fields import (
    FieldErrors,
    optional_ids,
    query_fields,
    request_fields,
    required_ids,
)
from resource_server.params import Param, parse_filters
from resource_server.queries import collection_items as q
from resource_server.representations.collections import collection_item
from resource_server.resources.base import Resource, redirect
from resource_server.resources.listing import caller_of, render_page
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


class CollectionItems(Resource):
    """The items of one collection, in position order."""

    auth = ROUTE.auth

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List a collection's items (``collection_id`` and ``user_id`` required)."""
        caller = caller_of(req)
        scope = required_ids(query_fields(req), *SCOPE)
        filters = parse_filters(req.params, ROUTE.filters)
        collection_id, user_id = scope["collection_id"], scope["user_id"]
        artwork_id = filters.get("artwork_id")
        page = self.page_params(req)
        urls = self.urls(req)
        with self.stores.reads() as session:
            if page.sample:
                one = q.sample_item(session, collection_id, user_id, caller, artwork_id)
                if one is None:
                    raise NotFound("Collection Item")
                redirect(resp, urls.api(f"/collection_items/{one.id}", scope))
                return
            result = q.list_items(session, collection_id, user_id, caller, page, artwork_id)
        items = [collection_item(i, user_id, urls) for i in result.rows]
        resp.media = render_page(
            req, urls, "collection_items", "/collection_items", filters, page, result, items
        )

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


class CollectionItemResource(Resource):
    """One item of a collection."""

    auth = ROUTE.item_auth

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show an item (``collection_id`` and ``user_id`` required)."""
        caller = caller_of(req)
        scope = required_ids(query_fields(req), *SCOPE)
        found = None
        if is_id(id):
            with self.stores.reads() as session:
                found = q.find_item(session, id, scope["collection_id"], scope["user_id"], caller)
        if found is None:
            raise NotFound("Collection Item")
        resp.media = collection_item(found, scope["user_id"], self.urls(req))

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
        scope = optional_ids(query_fields(req), *SCOPE)
        if not is_id(id):
            raise NotFound("Collection Item")
        q.remove_item(
            self.stores.sessions, caller, id, scope.get("collection_id"), scope.get("user_id")
        )
        resp.status = falcon.HTTP_204
