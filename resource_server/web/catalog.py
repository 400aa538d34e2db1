"""The catalog's pages: a list and an item page per kind, and the search results page."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import falcon
from sqlalchemy.orm import Session

from common.api.errors import ParamError
from common.api.keyset import PageResult
from common.api.paging import PageParams, parse_page_params
from common.catalog_version import keys_for
from common.ids import utcnow
from resource_server.doccache import DocumentCache
from resource_server.queries import artists as artist_q
from resource_server.queries import artworks as artwork_q
from resource_server.queries import genes as gene_q
from resource_server.queries import partners as partner_q
from resource_server.queries import profiles as profile_q
from resource_server.queries import shows as show_q
from resource_server.queries.listing import Listing
from resource_server.resources.base import Resource
from resource_server.search.resource import parse_request
from resource_server.search.service import search
from resource_server.web import browse, data
from resource_server.web.render import error_page, render

PAGE_SIZE = 24
MAX_PAGE_SIZE = 100
# Each sorted list's count, kept for the catalog versions it was counted at (every catalog
# writer bumps them) and a minute at most (a change made without a bump): counting a list of
# 100,000 rows costs tens of milliseconds, its page one index seek.
COUNT_AGE = 60.0
Lister = Callable[[Session, PageParams, datetime], PageResult]
Finder = Callable[[Session, str], Any]
Detailer = Callable[[Session, Any, "Ask"], dict[str, Any]]
Decorator = Callable[[Session, list[Any]], list[Any]]


@dataclass(frozen=True)
class Ask:
    """What a page was asked: its paging, its query parameters and the clock."""

    page: PageParams
    params: dict[str, Any]
    now: datetime


@dataclass(frozen=True)
class Kind:
    """One kind of catalog page: its paths, its API queries and its templates."""

    name: str  # singular, as in the item path and the template name
    title: str  # plural, for the list page heading
    list_rows: Lister
    find: Finder
    detail: Detailer
    # A list page in the orders of ``sorting`` (with a count and page numbers) selects
    # ``statement`` and makes its rows into what the template shows with ``decorate``.
    sorting: browse.Sorting | None = None
    statement: Callable[[], Any] | None = None
    decorate: Decorator | None = None

    @property
    def list_path(self) -> str:
        """Return the list page path."""
        return f"/{self.name}s"

    @property
    def item_path(self) -> str:
        """Return the item page path template (an id or a slug)."""
        return f"/{self.name}/{{key}}"


def _found(pair: tuple[Any, bool]) -> Any:
    return pair[0]


def _artwork(session: Session, key: str) -> Any:
    found = _found(artwork_q.find_artwork(session, key))
    # The public rule: an unpublished artwork has no page (as if it did not exist).
    return found if found is not None and found.published else None


def _works(
    session: Session,
    filters: dict[str, Any],
    ask: Ask,
    sorting: browse.Sorting,
    total: int | None = None,
) -> browse.Window:
    """Return a page of the public artworks matching ``filters`` in the order asked for
    (``total``: their number, when known; else they are counted)."""
    order = sorting.pick(ask.params)
    position = browse.read_position(ask.params, order)
    return data.artwork_window(
        session, filters, sorting, order, position, ask.page.size, total=total
    )


def _artist_detail(session: Session, row: Any, ask: Ask) -> dict[str, Any]:
    # The artist's number of published works is kept on the row by the loaders and writers:
    # counting Turner's 37,000 would cost more than the page. None (counted) when it says 0,
    # which costs nothing to check and covers a row written without its count.
    total = row.published_artworks_count or None
    return {
        "works": _works(session, {"artist_id": row.id}, ask, browse.WORKS_SORTING, total),
        "genes": data.side_genes(session, {"artist_id": row.id}),
    }


def _artwork_detail(session: Session, row: Any, ask: Ask) -> dict[str, Any]:
    partners = data.partners_by_id(session, [row.partner_id])
    return {
        "artists": data.side_artists(session, {"artwork_id": row.id}),
        "genes": data.side_genes(session, {"artwork_id": row.id}),
        "partner": partners.get(row.partner_id or ""),
        "editions": artwork_q.editions_for(session, [row.id]).get(row.id, []),
        "image": data.thumbnail(row, ("larger", "large", "medium", "small")),
    }


def _gene_detail(session: Session, row: Any, ask: Ask) -> dict[str, Any]:
    return {
        "works": _works(session, {"gene_id": row.id}, ask, browse.ARTWORK_SORTING),
        "artists": data.side_artists(session, {"gene_id": row.id}),
    }


def _partner_detail(session: Session, row: Any, ask: Ask) -> dict[str, Any]:
    return {
        "works": _works(session, {"partner_id": row.id}, ask, browse.ARTWORK_SORTING),
        "shows": data.side_shows(session, {"partner_id": row.id}, ask.now),
    }


def _show_detail(session: Session, row: Any, ask: Ask) -> dict[str, Any]:
    return {
        "works": _works(session, {"show_id": row.id}, ask, browse.ARTWORK_SORTING),
        "partner": data.partners_by_id(session, [row.partner_id]).get(row.partner_id),
    }


def _profile_detail(session: Session, row: Any, ask: Ask) -> dict[str, Any]:
    owner = None
    if row.owner_type == "partner":
        owner = data.partners_by_id(session, [row.owner_id]).get(row.owner_id)
    return {"owner": owner, "website": data.web_url(row.website)}


def _shows(session: Session, page: PageParams, now: datetime) -> PageResult:
    result = show_q.SHOWS.page(session, {}, page, now=now)
    partners = data.partners_by_id(session, [s.partner_id for s in result.rows])
    rows = [(s, partners.get(s.partner_id)) for s in result.rows]
    return PageResult(rows, result.next_cursor, result.total_count)


def _with_partners(session: Session, rows: list[Any]) -> list[Any]:
    """Return shows paired with their partners (one query for the page)."""
    partners = data.partners_by_id(session, [s.partner_id for s in rows])
    return [(s, partners.get(s.partner_id)) for s in rows]


def _listed(
    name: str, title: str, listing: Listing, detail: Detailer, sorting: browse.Sorting | None = None
) -> Kind:
    """Return a kind whose list page and item lookup are its API listing's (in the orders of
    ``sorting``, when given, rather than the API's id order)."""
    return Kind(
        name,
        title,
        lambda s, p, now: listing.page(s, {}, p),
        lambda s, key: _found(listing.find(s, key)),
        detail,
        sorting,
        (lambda: listing.filtered({})) if sorting is not None else None,
    )


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        _listed("artist", "Artists", artist_q.ARTISTS, _artist_detail, browse.ARTIST_SORTING),
        Kind(
            "artwork",
            "Artworks",
            lambda s, p, now: data.artwork_cards(s, {}, p),
            _artwork,
            _artwork_detail,
            browse.ARTWORK_SORTING,
            lambda: data.public_artworks({}),
            data.cards,
        ),
        _listed("gene", "Genes", gene_q.GENES, _gene_detail, browse.GENE_SORTING),
        _listed("partner", "Partners", partner_q.PARTNERS, _partner_detail, browse.PARTNER_SORTING),
        _listed("profile", "Profiles", profile_q.PROFILES, _profile_detail),
        Kind(
            "show",
            "Shows",
            _shows,
            lambda s, key: _found(show_q.SHOWS.find(s, key)),
            _show_detail,
            browse.SHOW_SORTING,
            lambda: show_q.SHOWS.filtered({}, now=utcnow()),
            _with_partners,
        ),
    )
}


TOTALS: dict[str, DocumentCache] = {
    name: DocumentCache(max_entries=8, max_age=COUNT_AGE, kinds=(f"{name}s",))
    for name, kind in KINDS.items()
    if kind.sorting is not None
}


class PageResource(Resource):
    """A catalog page: public, no token, limited per client address (``web.limit``), its
    paging parsed the API's way."""

    auth = "none"
    per_address = True

    def paging(self, req: falcon.Request) -> PageParams:
        """Parse ``size`` and ``cursor`` (the API's keyset cursors)."""
        return parse_page_params(req.params, default_size=PAGE_SIZE, max_size=MAX_PAGE_SIZE)


def bad_request(resp: falcon.Response, ex: ParamError) -> None:
    """Answer an HTML 400 naming what could not be read."""
    error_page(resp, falcon.HTTP_400, "This address could not be read", ex.message)


class KindPage(PageResource, ABC):
    """A page of one kind: its template gets the kind, the paging and what ``context`` read.

    Subclasses say what to read (``context``, in one read session); a parameter that cannot be
    read is an HTML 400, and ``context`` returns None for an HTML 404.
    """

    template = "{}.html"

    def __init__(self, *args: Any, kind: Kind) -> None:
        super().__init__(*args)
        self.kind = kind

    @abstractmethod
    def context(self, session: Session, ask: Ask, key: str) -> dict[str, Any] | None:
        """Return what the template shows, or None when there is no such public row."""

    def answer(self, req: falcon.Request, resp: falcon.Response, key: str = "") -> None:
        """Read the paging and the context, then render the kind's template."""
        try:
            page = self.paging(req)
            ask = Ask(page, dict(req.params), utcnow())
            context = self.stores.catalog_read(lambda session: self.context(session, ask, key))
        except ParamError as ex:
            bad_request(resp, ex)
            return
        if context is None:
            message = f"There is no such {self.kind.name} in the catalog."
            error_page(resp, falcon.HTTP_404, "Not found", message)
            return
        template = self.template.format(self.kind.name)
        render(resp, template, kind=self.kind, paging=page, **context)


class ListPage(KindPage):
    """``/<kind>s``: one page of a kind, with a link to the next."""

    template = "{}_list.html"

    def context(self, session: Session, ask: Ask, key: str) -> dict[str, Any] | None:
        """Return the page of rows: in the order asked for, counted, when the kind is sorted."""
        kind = self.kind
        if kind.sorting is None or kind.statement is None:
            return {"result": kind.list_rows(session, ask.page, ask.now)}
        order = kind.sorting.pick(ask.params)
        position = browse.read_position(ask.params, order)
        versions = self.versions()
        totals = TOTALS[kind.name]
        kept = totals.get(versions[0], kind.name, versions[1:])
        total = int(kept) if kept is not None else None
        win = browse.window(
            session, kind.statement(), kind.sorting, order, position, ask.page.size, total=total
        )
        if kept is None:
            totals.put(versions[0], kind.name, str(win.total).encode(), versions[1:])
        if kind.decorate is not None:
            win.rows = kind.decorate(session, win.rows)
        return {"result": win}

    def versions(self) -> list[bytes | None]:
        """Return the catalog's versions (the whole catalog's, then each type's), which the
        list's kept count is valid for."""
        keys = keys_for(self.stores.redis, self.settings.redis_prefix)
        found: list[bytes | None] = self.stores.redis.mget(keys)  # type: ignore[assignment]
        return found

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Answer one page of the list."""
        self.answer(req, resp)


class ItemPage(KindPage):
    """``/<kind>/<id or slug>``: one row, its links, and a page of its artworks."""

    def context(self, session: Session, ask: Ask, key: str) -> dict[str, Any] | None:
        """Return the row and what its page shows of its links and artworks."""
        row = self.kind.find(session, key)
        if row is None:
            return None
        return {"row": row, "key": key, **self.kind.detail(session, row, ask)}

    def on_get(self, req: falcon.Request, resp: falcon.Response, key: str) -> None:
        """Answer the item page (an HTML 404 when there is no such public row)."""
        self.answer(req, resp, key)


# Which search kinds have a page here, and its path prefix.
SEARCH_PAGES = {"artist": "/artist/", "artwork": "/artwork/", "gene": "/gene/", "show": "/show/",
                "partner": "/partner/", "profile": "/profile/"}  # fmt: skip


class SearchPage(PageResource):
    """``/search?q=``: the API's search, as a page of results (no JavaScript needed)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Answer the search box, or one page of results."""
        q = req.get_param("q") or ""
        if not q.strip():
            render(resp, "search.html", q="", hits=[], total=0, offset=0, thumbs={})
            return
        try:
            request, _echo = parse_request(req.params)
            # "Search instead for" the words as typed: no correction offered.
            request = replace(request, correct=req.get_param("spelling") != "off")

            def fetch(session: Session) -> tuple[Any, Any, Any, str | None]:
                asked, typed = request, None
                found = search(session.connection(), asked)
                if found.correction is not None:
                    typed = asked.q
                    asked = replace(asked, q=found.correction, offset=0)
                    found = search(session.connection(), asked)
                ids = [h.resource_id for h in found.hits if h.kind == "artwork"]
                return asked, found, data.public_artwork_images(session, ids), typed

            request, found, public, original = self.stores.catalog_read(fetch)
        except ParamError as ex:
            bad_request(resp, ex)
            return
        hits = [
            (h, SEARCH_PAGES[h.kind] + h.resource_id if h.kind in SEARCH_PAGES else None)
            for h in found.hits
            if h.kind != "artwork" or h.resource_id in public
        ]
        more = request.offset + request.size < found.total_count
        render(resp, "search.html", q=request.q, hits=hits, total=found.total_count,
               offset=request.offset, size=request.size, more=more, original=original,
               capped=found.capped, thumbs=public)  # fmt: skip
