"""The list and item responders every collection route shares: paged HAL lists with a ``sample``
redirect and an optional set of similar rows, items by id or slug, the caller for user routes.

Subclasses say how to query and render; hooks let a route add its own scope (required ids,
an Admin check), rows embedded for a whole page, or a document cache.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

import falcon
from sqlalchemy.orm import Session

from common.api.errors import NotFound
from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.api.params import single
from common.hal import Page, Urls, link
from common.ids import utcnow
from resource_server.doccache import DocumentCache
from resource_server.params import parse_filters, require
from resource_server.queries.listing import Listing
from resource_server.representations.values import document_bytes
from resource_server.resources.base import Resource, redirect
from resource_server.resources.listing import caller_of
from resource_server.routes import CollectionRoute, PlainRoute


def render_page(
    req: falcon.Request,
    urls: Urls,
    *,
    path: str,
    plural: str,
    filters: Mapping[str, Any],
    page: PageParams,
    result: PageResult,
    items: list[dict[str, Any]],
) -> dict[str, Any]:
    """Return one HAL page: ``self`` echoes the request, ``next`` keeps the filters and a cursor."""
    query: dict[str, Any] = {**filters, **page.echo()}
    if page.cursor is not None:
        query["cursor"] = single(req.params, "cursor")
    if page.offset:
        query["offset"] = page.offset
    next_href = None
    if result.next_cursor:
        next_href = urls.api(path, {**filters, **page.echo(), "cursor": result.next_cursor})
    return Page(plural, items, urls.api(path, query), next_href, result.total_count).render()


def render_set(
    urls: Urls, *, path: str, plural: str, filters: Mapping[str, Any], items: list[dict[str, Any]]
) -> dict[str, Any]:
    """Return a non-paginated set (similar artists or artworks): ``_links.self`` and items."""
    return {"_links": {"self": link(urls.api(path, filters))}, "_embedded": {plural: items}}


@dataclass
class Call:
    """What one request's hooks read: filters, scope, caller, clock and what the route added.

    ``scope`` holds required ids that the route echoes on a sample redirect; ``admin`` is set by
    routes whose visibility depends on it; ``related`` holds rows embedded in the rendering.
    """

    req: falcon.Request
    urls: Urls
    now: datetime
    caller: str | None = None
    filters: dict[str, Any] = field(default_factory=dict)
    scope: dict[str, Any] = field(default_factory=dict)
    admin: bool = False
    related: Mapping[Any, Any] = field(default_factory=dict)

    @property
    def user(self) -> str:
        """Return the caller of a user route."""
        assert self.caller is not None
        return self.caller


class Responder(Resource):
    """What the list and item bases share: the call, the caller and embedded rows.

    A catalog type's ``listing`` (``queries.listing``) serves the default query, sample and
    find; ``context`` says what its filters read besides the filters (clock, Admin, token).
    """

    route: CollectionRoute | PlainRoute
    model: str  # the type's name in "<Model> Not Found"
    # Whether the reads may go to a read replica (``common.replicas``): catalog types opt in;
    # user data (``auth = "user"`` routes, whose users must see their own writes) may not.
    replica_reads: ClassVar[bool] = False
    listing: Listing | None = None
    # The type's representation, called with the row, the URLs and the website's base URL
    # (``Scheduled``: the clock too); a responder without one overrides ``render``.
    document: ClassVar[Callable[..., dict[str, Any]] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.replica_reads and cls.auth == "user":
            raise TypeError(f"{cls.__name__}: a user's data is read from the primary only")

    def on_replica(self, call: Call) -> bool:
        """Tell whether the request reads catalog data only (a filter on a user's own data,
        such as a collection's artworks, reads the primary)."""
        return self.replica_reads

    def reading(self, call: Call, work: Callable[[Session], Any]) -> Any:
        """Run the request's reads: on a replica when the type opted in and the request reads
        nothing of a user's (``on_replica``), else on the primary."""
        if self.on_replica(call):
            return self.stores.catalog_read(work)
        with self.stores.reads() as session:
            return work(session)

    def context(self, call: Call) -> dict[str, Any]:
        """Return what the type's filters read besides the filters."""
        return {}

    def type_listing(self) -> Listing:
        """Return the type's listing (a responder without one overrides what would use it)."""
        assert self.listing is not None, f"{type(self).__name__} has no listing"
        return self.listing

    def call(self, req: falcon.Request) -> Call:
        """Return the request's call; a user route answers 401 first without a user's token."""
        caller = caller_of(req) if self.auth == "user" else None
        return Call(req, self.urls(req), utcnow(), caller)

    def enter(self, session: Session, call: Call) -> None:
        """Read what the whole request depends on (e.g. whether the caller is an Admin)."""

    def related(self, session: Session, rows: Sequence[Any], call: Call) -> Mapping[Any, Any]:
        """Return rows embedded in the rendering of ``rows`` (queried once for all of them)."""
        return {}

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one row with the type's ``document``."""
        return self.type_document()(row, call.urls, self.settings.web_url)

    def type_document(self) -> Callable[..., dict[str, Any]]:
        """Return the type's representation (a responder without one overrides ``render``)."""
        document = type(self).document
        assert document is not None, f"{type(self).__name__} has no document"
        return document


class ApiLinked(Responder):
    """A type whose ``document`` links to the API only: it is called with the row and the URLs."""

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one row with the type's ``document``."""
        return self.type_document()(row, call.urls)


class Scheduled(Responder):
    """A type of dated events (shows, fairs), whose status is computed at the request's clock:
    its filters read the clock, and its ``document`` is called with it."""

    def context(self, call: Call) -> dict[str, Any]:
        """Return the clock the status is computed at."""
        return {"now": call.now}

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one row at the request's clock."""
        return self.type_document()(row, call.urls, call.now, self.settings.web_url)


class CatalogList(Responder, ABC):
    """A paginated list of one catalog type; subclasses say how to query and render it.

    A subclass with a ``cache`` keeps whole rendered pages, filed like item documents under the
    versions of the types they are built from (``resource_server.doccache``), for the requests
    its ``cacheable`` accepts: those whose answer depends on the query string alone.
    """

    route: CollectionRoute
    cache: DocumentCache | None = None

    def cacheable(self, call: Call, page: PageParams) -> bool:
        """Tell whether the page's answer depends on nothing but the URL and the versions."""
        return False

    def read(self, req: falcon.Request, call: Call) -> None:
        """Read the filters (and any scope) into ``call``; a missing required filter is a 400."""
        call.filters = parse_filters(req.params, self.route.filters)
        for param in self.route.filters:
            if param.required:
                require(call.filters, param.name)

    def query(self, session: Session, call: Call, page: PageParams) -> PageResult:
        """Return one page of rows."""
        return self.type_listing().page(session, call.filters, page, **self.context(call))

    def sample(self, session: Session, call: Call) -> Any:
        """Return one random row of the filtered set, or None."""
        return self.type_listing().sample(session, call.filters, **self.context(call))

    def similar(self, session: Session, call: Call) -> list[Any] | None:
        """Return the set of similar rows a ``similar_to_`` filter asks for, else None."""
        return None

    def sample_query(self, row: Any, call: Call) -> dict[str, Any] | None:
        """Return the query a sample's URL carries (the ids its item route requires)."""
        return call.scope or None

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List the rows matching the filters (or redirect to a sample, or the similar set)."""
        call = self.call(req)
        self.read(req, call)
        page = self.page_params(req)
        path, plural = self.route.path, self.route.rel
        cache = self.cache if self.cache is not None and self.cacheable(call, page) else None
        key = (call.urls.base, req.query_string)
        if cache is not None:
            cached = cache.lookup(req.context, key)
            if cached is not None:
                resp.data = cached
                return

        def fetch(session: Session) -> tuple[Any, Sequence[Any] | None, PageResult | None]:
            self.enter(session, call)
            rows = self.similar(session, call)
            if rows is None and page.sample:
                return self.sample(session, call), None, None
            result = None
            if rows is None:
                result = self.query(session, call, page)
                rows = result.rows
            call.related = self.related(session, rows, call)
            return None, rows, result

        one, rows, result = self.reading(call, fetch)
        if rows is None:  # a sample
            if one is None:
                raise NotFound(self.model)
            redirect(resp, call.urls.api(f"{path}/{one.id}", self.sample_query(one, call)))
            return
        items = [self.render(row, call) for row in rows]
        if result is None:
            document = render_set(
                call.urls, path=path, plural=plural, filters=call.filters, items=items
            )
        else:
            document = render_page(
                req,
                call.urls,
                path=path,
                plural=plural,
                filters=call.filters,
                page=page,
                result=result,
                items=items,
            )
        resp.data = data = document_bytes(document)
        if cache is not None:
            cache.keep(req.context, key, data)


class CatalogItem(Responder, ABC):
    """One row of a catalog type by id, or by slug/handle redirecting to the id URL.

    A subclass with a ``cache`` keeps its rendered documents for the catalog version the
    request gate read (see ``resource_server.doccache``).
    """

    cache: DocumentCache | None = None

    def read(self, req: falcon.Request, call: Call) -> None:
        """Read the ids the item route requires or accepts into ``call.scope``."""

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Return the row (or None) and whether ``key`` was a slug or handle."""
        return self.type_listing().find(session, key)

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show the row."""
        call = self.call(req)
        if self.cache is not None:
            cached = self.cache.lookup(req.context, (call.urls.base, id))
            if cached is not None:
                resp.data = cached
                return
        self.read(req, call)

        def fetch(session: Session) -> tuple[Any, bool]:
            self.enter(session, call)
            found, by_name = self.find(session, id, call)
            if found is not None and not by_name:
                call.related = self.related(session, [found], call)
            return found, by_name

        found, by_name = self.reading(call, fetch)
        if found is None:
            raise NotFound(self.model)
        if by_name:
            redirect(resp, call.urls.api(f"{self.route.path}/{found.id}"))
            return
        resp.data = data = document_bytes(self.render(found, call))
        if self.cache is not None:
            self.cache.keep(req.context, (call.urls.base, id), data)
