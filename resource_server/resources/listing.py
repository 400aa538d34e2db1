"""What the user-scoped resources share: the caller, paged HAL documents and item-only routes."""

from __future__ import annotations

from typing import Any

import falcon

from common.api.errors import AuthError
from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.hal import Link, Page, Urls, templated
from resource_server.routes import PlainRoute


def caller_of(req: falcon.Request) -> str:
    """Return the id of the user whose access token the request carries."""
    token = getattr(req.context, "token", None)
    if token is None or not token.user_id:
        raise AuthError()
    return str(token.user_id)


def render_page(
    req: falcon.Request,
    urls: Urls,
    plural: str,
    path: str,
    filters: dict[str, Any],
    page: PageParams,
    result: PageResult,
    items: list[dict[str, Any]],
) -> dict[str, Any]:
    """Return the HAL page: ``self`` echoes the filters and paging, ``next`` adds the cursor."""
    query = {**filters, **page.echo()}
    if page.cursor is not None:
        query["cursor"] = req.get_param("cursor")
    if page.offset:
        query["offset"] = page.offset
    next_href = None
    if result.next_cursor:
        next_href = urls.api(path, {**filters, **page.echo(), "cursor": result.next_cursor})
    return Page(plural, items, urls.api(path, query), next_href, result.total_count).render()


class ItemRoute(PlainRoute):
    """A route reached only by id (no collection), linked from the root as a template."""

    def links(self, urls: Urls) -> dict[str, Link]:
        """Return the root's templated item link."""
        return {self.rel: templated(urls.api(f"{self.path}/{{id}}"))}
