"""``/api/collections`` (list, create) and ``/api/collections/{id}`` (show, update)."""

from __future__ import annotations

from typing import Any

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
from resource_server.queries import collections as q
from resource_server.representations.collections import collection
from resource_server.resources.base import Resource, redirect
from resource_server.resources.listing import caller_of, render_page
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="collections",
    path="/collections",
    item_rel="collection",
    filters=(Param("user_id", required=True), Param("private", "bool")),
    item_params=("user_id",),
    auth="user",
    item_auth="user",
)
NAME_MAX = 200
DESCRIPTION_MAX = 10_000


def parse_changes(
    fields: dict[str, Any], errors: FieldErrors, *, creating: bool
) -> q.CollectionChanges:
    """Validate the writable fields of a collection (``name`` is required on create)."""
    return q.CollectionChanges(
        name=errors.text(fields, "name", required=True, max_length=NAME_MAX)
        if creating or "name" in fields
        else None,
        description=errors.text(fields, "description", max_length=DESCRIPTION_MAX),
        private=errors.flag(fields, "private"),
        default=errors.flag(fields, "default"),
    )


class Collections(Resource):
    """A user's collections (``private=true`` adds the owner's private ones)."""

    auth = ROUTE.auth

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List a user's collections."""
        caller = caller_of(req)
        required_ids(query_fields(req), "user_id")
        filters = parse_filters(req.params, ROUTE.filters)
        user_id, private = filters["user_id"], bool(filters.get("private"))
        page = self.page_params(req)
        urls = self.urls(req)
        with self.stores.reads() as session:
            if page.sample:
                one = q.sample_collection(session, user_id, caller, private=private)
                if one is None:
                    raise NotFound("Collection")
                redirect(resp, urls.api(f"/collections/{one.id}"))
                return
            result = q.list_collections(session, user_id, caller, page, private=private)
        items = [collection(c, urls) for c in result.rows]
        resp.media = render_page(
            req, urls, "collections", "/collections", filters, page, result, items
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Create a collection of the caller's (201)."""
        caller = caller_of(req)
        fields = request_fields(req)
        errors = FieldErrors()
        user_id = errors.ident(fields, "user_id", required=True)
        changes = parse_changes(fields, errors, creating=True)
        errors.raise_if_any()
        assert user_id is not None
        created = q.create_collection(self.stores.sessions, caller, user_id, changes)
        resp.status = falcon.HTTP_201
        resp.media = collection(created, self.urls(req))


class CollectionResource(Resource):
    """One collection: anyone's public one, or the caller's own private one."""

    auth = ROUTE.item_auth

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show a collection (404 for another user's private one)."""
        caller = caller_of(req)
        scope = optional_ids(query_fields(req), "user_id")
        found = None
        if is_id(id):
            with self.stores.reads() as session:
                found = q.find_collection(session, id, caller, scope.get("user_id"))
        if found is None:
            raise NotFound("Collection")
        resp.media = collection(found, self.urls(req))

    def on_put(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Change the name, description or privacy of a collection of the caller's."""
        caller = caller_of(req)
        fields = request_fields(req)
        errors = FieldErrors()
        user_id = errors.ident(fields, "user_id")
        changes = parse_changes(fields, errors, creating=False)
        errors.raise_if_any()
        if not is_id(id):
            raise NotFound("Collection")
        updated = q.update_collection(self.stores.sessions, id, caller, changes, user_id)
        resp.media = collection(updated, self.urls(req))
