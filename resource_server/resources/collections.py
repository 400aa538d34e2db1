"""``/api/collections`` (list, create) and ``/api/collections/{id}`` (show, update)."""

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
from resource_server.queries import collections as q
from resource_server.representations.collections import collection
from resource_server.resources.catalog_pages import ApiLinked, Call, CatalogItem, CatalogList
from resource_server.resources.listing import caller_of
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


class CollectionDocument(ApiLinked):
    """A collection's document."""

    route, model, document = ROUTE, "Collection", collection


class Collections(CollectionDocument, CatalogList):
    """A user's collections (``private=true`` adds the owner's private ones)."""

    auth = ROUTE.auth

    def read(self, req: falcon.Request, call: Call) -> None:
        """Read the filters (``user_id`` required)."""
        query_ids(req, "user_id", required=True)
        call.filters = parse_filters(req.params, ROUTE.filters)

    def query(self, session: Session, call: Call, page: PageParams) -> PageResult:
        """Return one page of a user's collections."""
        user_id, private = call.filters["user_id"], bool(call.filters.get("private"))
        return q.list_collections(session, user_id, call.user, page, private=private)

    def sample(self, session: Session, call: Call) -> Any:
        """Return a random element."""
        user_id, private = call.filters["user_id"], bool(call.filters.get("private"))
        return q.sample_collection(session, user_id, call.user, private=private)

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


class CollectionResource(CollectionDocument, CatalogItem):
    """One collection: anyone's public one, or the caller's own private one."""

    auth = ROUTE.item_auth

    def read(self, req: falcon.Request, call: Call) -> None:
        """Read the optional ``user_id``."""
        call.scope = query_ids(req, "user_id")

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id (404 for another user's private one)."""
        if not is_id(key):
            return None, False
        return q.find_collection(session, key, call.user, call.scope.get("user_id")), False

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
