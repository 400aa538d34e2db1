"""What the catalog's list and item responders share: HAL pages, sets and required filters."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import falcon
from sqlalchemy.orm import Session

from common.api.errors import NotFound, ParamError
from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.api.params import single
from common.hal import Page, Urls, link
from common.ids import utcnow
from resource_server.params import parse_filters
from resource_server.resources.base import Resource, redirect
from resource_server.routes import CollectionRoute


def require(filters: Mapping[str, Any], name: str) -> Any:
    """Return a filter that the route cannot do without, or raise a 400 naming it."""
    if name not in filters:
        label = name.replace("_", " ").capitalize()
        raise ParamError(f"{label} can't be blank.", {name: ["can't be blank"]})
    return filters[name]


def render_page(
    req: falcon.Request,
    resp: falcon.Response,
    urls: Urls,
    *,
    path: str,
    plural: str,
    filters: Mapping[str, Any],
    page: PageParams,
    result: PageResult,
    items: list[dict[str, Any]],
) -> None:
    """Answer one page: ``self`` echoes the request, ``next`` keeps the filters plus a cursor."""
    query: dict[str, Any] = {**filters, **page.echo()}
    if page.cursor is not None:
        query["cursor"] = single(req.params, "cursor")
    if page.offset:
        query["offset"] = page.offset
    next_href = None
    if result.next_cursor:
        next_href = urls.api(path, {**filters, **page.echo(), "cursor": result.next_cursor})
    resp.media = Page(plural, items, urls.api(path, query), next_href, result.total_count).render()


def render_set(
    resp: falcon.Response,
    urls: Urls,
    *,
    path: str,
    plural: str,
    filters: Mapping[str, Any],
    items: list[dict[str, Any]],
) -> None:
    """Answer a non-paginated set (similar artists or artworks): ``_links.self`` and items."""
    resp.media = {"_links": {"self": link(urls.api(path, filters))}, "_embedded": {plural: items}}


class CatalogList(Resource, ABC):
    """A paginated list of one catalog type; subclasses say how to query and render it."""

    route: CollectionRoute
    model: str  # the type's name in "<Model> Not Found"

    @abstractmethod
    def query(
        self, session: Session, filters: dict[str, Any], page: PageParams, now: datetime
    ) -> PageResult:
        """Return one page of rows."""

    @abstractmethod
    def sample(self, session: Session, filters: dict[str, Any], now: datetime) -> Any:
        """Return one random row of the filtered set, or None."""

    @abstractmethod
    def render(self, row: Any, urls: Urls, now: datetime) -> dict[str, Any]:
        """Render one row."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List the rows matching the filters (or redirect to a sample)."""
        filters = parse_filters(req.params, self.route.filters)
        page = self.page_params(req)
        urls, now = self.urls(req), utcnow()
        with self.stores.reads() as session:
            if page.sample:
                one = self.sample(session, filters, now)
                if one is None:
                    raise NotFound(self.model)
                redirect(resp, urls.api(f"{self.route.path}/{one.id}"))
                return
            result = self.query(session, filters, page, now)
        render_page(
            req,
            resp,
            urls,
            path=self.route.path,
            plural=self.route.rel,
            filters=filters,
            page=page,
            result=result,
            items=[self.render(row, urls, now) for row in result.rows],
        )


class CatalogItem(Resource, ABC):
    """One row of a catalog type by id, or by slug/handle redirecting to the id URL."""

    route: CollectionRoute
    model: str

    @abstractmethod
    def find(self, session: Session, key: str) -> tuple[Any, bool]:
        """Return the row (or None) and whether ``key`` was a slug or handle."""

    @abstractmethod
    def render(self, row: Any, urls: Urls, now: datetime) -> dict[str, Any]:
        """Render the row."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show the row."""
        with self.stores.reads() as session:
            found, by_name = self.find(session, id)
        if found is None:
            raise NotFound(self.model)
        urls = self.urls(req)
        if by_name:
            redirect(resp, urls.api(f"{self.route.path}/{found.id}"))
            return
        resp.media = self.render(found, urls, utcnow())
