"""``GET /api/search``: the route, its parameters and the HAL rendering of results."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import replace
from typing import Any

import falcon
from sqlalchemy import select
from sqlalchemy.orm import Session

from common.api.errors import ParamError
from common.api.params import parse_int, single
from common.hal import Link, Urls, link
from common.models import Artwork
from common.search.documents import KINDS
from common.search.text import MAX_QUERY_CHARS
from common.settings import ResourceSettings
from common.stores import Stores
from common.visibility import visible_artwork
from resource_server.doccache import PAGE_BYTES
from resource_server.params import Param
from resource_server.representations.values import document_bytes
from resource_server.resources.base import Resource, redirect
from resource_server.routes import CollectionRoute
from resource_server.search.service import (
    DEFAULT_SIZE,
    MAX_OFFSET,
    MAX_SIZE,
    Hit,
    SearchPage,
    SearchRequest,
    search,
)

ROUTE = CollectionRoute(
    rel="search",
    path="/search",
    filters=(
        Param("q", "str"),
        Param("size", "int"),
        Param("offset", "int"),
        Param("type", "enum", KINDS),
    ),
    paged=False,
)
# Kinds a result's ``type`` names; other indexed kinds have ``type: null`` (see ``og_type``).
RESULT_TYPES = frozenset({"artist", "artwork", "profile", "gene", "show"})
ITEM_PATHS = {
    "artist": "/artists",
    "artwork": "/artworks",
    "profile": "/profiles",
    "gene": "/genes",
    "show": "/shows",
    "fair": "/fairs",
    "partner": "/partners",
    "sale": "/sales",
}


# The kinds with a page of their own on this server (resource_server.web).
PAGE_KINDS = frozenset({"artist", "artwork", "gene", "partner", "profile", "show"})


def result(hit: Hit, urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render one search result."""
    links: dict[str, Link] = {"self": link(urls.api(f"{ITEM_PATHS[hit.kind]}/{hit.resource_id}"))}
    if web_url and hit.permalink:
        links["permalink"] = link(f"{web_url}{hit.permalink}")
    elif not web_url and hit.kind in PAGE_KINDS:  # our own page (found by id as by slug)
        links["permalink"] = link(urls.absolute(f"/{hit.kind}/{hit.resource_id}"))
    if hit.thumbnail:
        # The instance's own images are indexed site-relative (``/images/...``).
        thumbnail = hit.thumbnail
        links["thumbnail"] = link(urls.absolute(thumbnail) if thumbnail[0] == "/" else thumbnail)
    return {
        "type": hit.kind if hit.kind in RESULT_TYPES else None,
        "title": hit.title,
        "description": hit.description,
        "og_type": hit.kind,
        "_links": links,
    }


def parse_types(params: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """Return the ``type`` parameter as given and its kinds (repeated or comma-separated)."""
    raw = params.get("type")
    values = raw if isinstance(raw, list) else [] if raw is None else [raw]
    kinds = [k.strip() for v in values for k in str(v).split(",") if k.strip()]
    for kind in kinds:
        if kind not in KINDS:
            raise ParamError.invalid("type", f"must be one of {', '.join(KINDS)}")
    return ",".join(kinds), tuple(dict.fromkeys(kinds))


def parse_request(params: Mapping[str, Any]) -> tuple[SearchRequest, dict[str, Any]]:
    """Parse ``q``, ``size``, ``offset`` and ``type``; return the request and the query to echo."""
    q = single(params, "q")
    if q is None or not q.strip():
        raise ParamError("Q can't be blank.", {"q": ["can't be blank"]})
    if len(q) > MAX_QUERY_CHARS:
        raise ParamError.invalid("q", "is too long")
    echo: dict[str, Any] = {"q": q}
    size, offset = DEFAULT_SIZE, 0
    raw_size, raw_offset = single(params, "size"), single(params, "offset")
    if raw_size:
        size = echo["size"] = parse_int("size", raw_size, minimum=1, maximum=MAX_SIZE)
    if raw_offset:
        offset = parse_int("offset", raw_offset, minimum=0, maximum=MAX_OFFSET)
    type_text, types = parse_types(params)
    if types:
        echo["type"] = type_text
    return SearchRequest(q, size, offset, types), echo


def page_key(base: str, request: SearchRequest, echo: Mapping[str, Any]) -> Hashable:
    """Return what a page of results depends on: the base of its links, the request, and the
    parameters its links echo as given (``size=10`` is echoed, the default size is not)."""
    return (base, request, tuple(echo.items()))


def without_hidden_artworks(session: Session, page: SearchPage) -> SearchPage:
    """Leave out the artworks hidden since the index was built (one query, for artwork hits
    only): the index builder leaves hidden artworks out, but may lag the catalog."""
    ids = [h.resource_id for h in page.hits if h.kind == "artwork"]
    if not ids:
        return page
    stmt = select(Artwork.id).where(Artwork.id.in_(ids), visible_artwork())
    shown = set(session.connection().execute(stmt).scalars())
    hits = [h for h in page.hits if h.kind != "artwork" or h.resource_id in shown]
    return page if len(hits) == len(page.hits) else replace(page, hits=hits)


class Search(Resource):
    """Search the catalog: ranked results with kind filters, or a spelling correction.

    The index is rebuilt by the importers, the demo loader and ``artcat search reindex``; it may
    lag the catalog, so a result may describe a resource as it was, and a result whose resource
    is gone still renders: its ``self`` link then answers 404.

    Rendered pages are kept in memory for the version of the index (the ``search`` type) and
    of the artworks the request gate read, which every rebuild bumps (see
    ``resource_server.doccache``); a correction (302) is not kept. An artwork unpublished
    since the index was built is left out of the results (``without_hidden_artworks``).
    """

    def __init__(self, stores: Stores, settings: ResourceSettings) -> None:
        super().__init__(stores, settings)
        self.cache = self.document_cache("search", "artworks", max_bytes=PAGE_BYTES)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Answer one page of results, or 302 to the corrected query when nothing matches."""
        request, echo = parse_request(req.params)
        urls = self.urls(req)
        key = page_key(urls.base, request, echo)
        cached = self.cache.lookup(req.context, key)
        if cached is not None:
            resp.data = cached
            return

        def fetch(session: Session) -> SearchPage:
            return without_hidden_artworks(session, search(session.connection(), request))

        page = self.stores.catalog_read(fetch)
        if page.correction is not None:
            redirect(resp, urls.api("/search", {**echo, "q": page.correction}))
            return
        data = document_bytes(self.render(request, echo, page, urls))
        self.cache.keep(req.context, key, data)
        resp.data = data

    def render(
        self, request: SearchRequest, echo: Mapping[str, Any], page: SearchPage, urls: Urls
    ) -> dict[str, Any]:
        """Render one page of results with its ``self`` and ``next`` links."""
        self_query = {**echo, "offset": request.offset or None}
        links: dict[str, Link] = {"self": link(urls.api("/search", self_query))}
        if request.offset + request.size < page.total_count:
            links["next"] = link(
                urls.api("/search", {**echo, "offset": request.offset + request.size})
            )
        return {
            "total_count": page.total_count,
            "offset": request.offset,
            "q": request.q,
            "_links": links,
            "_embedded": {"results": [result(h, urls, self.settings.web_url) for h in page.hits]},
        }
