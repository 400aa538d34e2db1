"""What the catalog's list and item responders share: HAL pages, sets and required filters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import falcon

from common.hal import Page, Urls, link
from resource_server.errors import ParamError
from resource_server.pagination import PageParams, PageResult
from resource_server.params import single


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
