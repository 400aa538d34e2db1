"""Every catalog list: keyset pages to the end, offsets, samples, empty pages, errors, SQL count."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from common.ids import new_id
from common.models import (
    Artist,
    Artwork,
    Edition,
    Fair,
    Gene,
    Image,
    Partner,
    Profile,
    Sale,
    SaleArtwork,
    Show,
)
from tests.functional.catalog_support import ZERO_ID, Catalog, counting, walk_pages

pytestmark = pytest.mark.functional

MAX_QUERIES = 3


@dataclass(frozen=True)
class ListRoute:
    """A list route, the token it needs, a filter that empties it, and what it should list."""

    path: str
    model: Any
    who: str = "xapp"
    empty_filter: str | None = "artist_id"
    required: str | None = None  # a filter the route cannot do without

    def params(self, catalog: Catalog) -> dict[str, str]:
        """Return the required filter, naming the parent with the most children."""
        if self.required == "artwork_id":  # a published artwork: the others are not shown
            column = Edition.artwork_id
            most = (
                select(column)
                .join(Artwork, Artwork.id == column)
                .where(Artwork.published.is_(True))
                .group_by(column)
                .order_by(func.count().desc(), column)
                .limit(1)
            )
            return {self.required: catalog.scalars(most)[0]}
        elif self.required == "show_id":
            column = Image.show_id
        else:
            return {}
        most = (
            select(column)
            .where(column.is_not(None))
            .group_by(column)
            .order_by(func.count().desc(), column)
            .limit(1)
        )
        return {self.required: catalog.scalars(most)[0]}

    def expected(self, catalog: Catalog, params: dict[str, str]) -> list[str]:
        """Return the ids the route lists for a non-Admin caller, from the database."""
        stmt = select(self.model.id)
        if self.model is Artwork:  # unpublished artworks are shown to nobody
            stmt = stmt.where(Artwork.published.is_(True))
        if self.model is Sale:
            stmt = stmt.where(Sale.published.is_(True))
        if self.model is SaleArtwork:
            stmt = stmt.join(Sale, Sale.id == SaleArtwork.sale_id).where(Sale.published.is_(True))
            # The lots of unpublished artworks are shown to nobody either.
            stmt = stmt.join(Artwork, Artwork.id == SaleArtwork.artwork_id).where(
                Artwork.published.is_(True)
            )
        if "artwork_id" in params:
            stmt = stmt.where(Edition.artwork_id == params["artwork_id"])
        if "show_id" in params:
            stmt = stmt.where(Image.show_id == params["show_id"])
        return sorted(catalog.scalars(stmt))


ROUTES = [
    ListRoute("/artists", Artist, empty_filter="artwork_id"),
    ListRoute("/artworks", Artwork),
    ListRoute("/editions", Edition, required="artwork_id", empty_filter=None),
    ListRoute("/genes", Gene),
    ListRoute("/shows", Show, empty_filter="partner_id"),
    ListRoute("/partners", Partner, empty_filter="partner_id"),
    ListRoute("/sales", Sale, who="user", empty_filter=None),
    ListRoute("/sale_artworks", SaleArtwork, empty_filter="sale_id"),
    ListRoute("/fairs", Fair, empty_filter=None),
    ListRoute("/profiles", Profile, empty_filter=None),
    ListRoute("/images", Image, required="show_id", empty_filter=None),
]
IDS = [r.path.strip("/") for r in ROUTES]


def headers_for(catalog: Catalog, route: ListRoute) -> dict[str, str]:
    """Return the headers of the caller a route needs."""
    return catalog.user if route.who == "user" else catalog.xapp


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_next_links_reach_every_item_exactly_once(catalog: Catalog, route: ListRoute) -> None:
    params = route.params(catalog)
    expected = route.expected(catalog, params)
    assert expected
    h = headers_for(catalog, route)
    first = catalog.ok(route.path, h, size=2, total_count=1, **params)
    assert first["total_count"] == len(expected)
    assert first["_links"]["self"]["href"].startswith(catalog.api(route.path))
    pages, seen, body = 1, [], first
    (plural,) = body["_embedded"]
    while True:
        seen += [item["id"] for item in body["_embedded"][plural]]
        assert len(body["_embedded"][plural]) <= 2
        if "next" not in body["_links"]:
            break
        nxt = body["_links"]["next"]["href"]
        assert "cursor=" in nxt and "total_count=1" in nxt and "size=2" in nxt
        assert all(f"{k}={v}" in nxt for k, v in params.items())
        body = catalog.ok(nxt, h)
        assert body["total_count"] == len(expected)
        pages += 1
    assert len(seen) == len(set(seen)) and sorted(seen) == expected
    assert pages == max(1, -(-len(expected) // 2))
    default = catalog.ok(route.path, h, **params)
    assert default["total_count"] is None and len(default["_embedded"][plural]) == min(
        5, len(expected)
    )


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_offset_then_cursor_sample_and_errors(catalog: Catalog, route: ListRoute) -> None:
    params = route.params(catalog)
    expected = route.expected(catalog, params)
    h = headers_for(catalog, route)
    rest = walk_pages(catalog, route.path, h, offset=1, size=1, **params)
    assert [i["id"] for i in rest] == expected[1:]
    sample = catalog.get(route.path, h, sample=1, **params)
    assert sample.status_code == 302
    target = catalog.get(sample.headers["Location"], h)
    assert target.status_code == 200 and target.json()["id"] in expected
    first = catalog.ok(route.path, h, size=1, **params)
    cursor = first["_links"]["next"]["href"].split("cursor=")[1].split("&")[0]
    for bad in (
        {"cursor": cursor, "offset": "1"},
        {"size": "0"},
        {"size": "101"},
        {"size": "many"},
        {"offset": "-3"},
        {"cursor": "not-a-cursor"},
        {"total_count": "perhaps"},
        {"sample": "2x"},
    ):
        r = catalog.get(route.path, h, **params, **bad)
        assert r.status_code == 400, (bad, r.text)
        assert r.json()["type"] == "param_error"
    if route.empty_filter:
        empty = catalog.get(route.path, h, **{route.empty_filter: ZERO_ID})
        assert empty.status_code == 200
        query = f"?{route.empty_filter}={ZERO_ID}"
        assert empty.json() == {
            "total_count": None,
            "_links": {"self": {"href": catalog.api(route.path + query)}},
            "_embedded": {route.path.strip("/"): []},
        }
        nothing = catalog.get(route.path, h, sample=1, **{route.empty_filter: ZERO_ID})
        assert nothing.status_code == 404 and nothing.json()["type"] == "other_error"


def statements_of(engine: Engine, catalog: Catalog, url: str, h: dict[str, str]) -> list[str]:
    """Return the SQL statements a request runs (after a warm-up of the token caches), read
    afresh (the bump makes cached pages out of date)."""
    catalog.ok(url, h)
    catalog.bump()
    with counting(engine) as statements:
        catalog.ok(url, h)
    return statements


def test_list_pages_of_100_take_at_most_three_queries(catalog: Catalog, engine: Engine) -> None:
    artist = catalog.scalars(select(Artist.id).order_by(Artist.id).limit(1))[0]
    artwork = catalog.scalars(select(Artwork.id).order_by(Artwork.id).limit(1))[0]
    hidden_sale = catalog.scalars(select(Sale.id).where(Sale.published.is_(False)))[0]
    urls: list[tuple[str, dict[str, str]]] = []
    for route in ROUTES:
        query = "&".join(f"{k}={v}" for k, v in route.params(catalog).items())
        base = f"{route.path}?size=100&total_count=1" + (f"&{query}" if query else "")
        urls.append((base, headers_for(catalog, route)))
        if route.who == "user" or route.path in ("/sale_artworks",):
            urls.append((base, catalog.admin))
    urls += [
        (f"/artists?similar_to_artist_id={artist}", catalog.xapp),
        (f"/artists?similar_to_artist_id={artist}&similarity_type=contemporary", catalog.xapp),
        (f"/artworks?similar_to_artwork_id={artwork}", catalog.xapp),
        (f"/artists?sale_id={hidden_sale}&size=100&total_count=1", catalog.admin),
        (f"/partners?user_id={catalog.user_id}&size=100&total_count=1", catalog.admin),
        (f"/partners?user_id={catalog.user_id}&size=100&total_count=1", catalog.user),
        ("/shows?status=current&size=100&total_count=1", catalog.xapp),
        ("/sales?live=true&size=100&total_count=1", catalog.admin),
    ]
    counts = {}
    for url, h in urls:
        statements = statements_of(engine, catalog, catalog.api(url), h)
        counts[url] = len(statements)
        assert len(statements) <= MAX_QUERIES, (url, statements)
    # A page of 100 artworks embeds every edition: exactly page + editions + count.
    assert counts["/artworks?size=100&total_count=1"] == 3


def test_items_found_exactly_once_under_concurrent_inserts(
    catalog: Catalog, engine: Engine
) -> None:
    before = sorted(catalog.scalars(select(Artwork.id).where(Artwork.published.is_(True))))
    template = catalog.scalars(select(Artwork).limit(1))[0]
    seen: list[str] = []
    body = catalog.ok("/artworks", size=7)
    added = 0
    while True:
        seen += [a["id"] for a in body["_embedded"]["artworks"]]
        with catalog.sessions() as s, s.begin():
            for _ in range(3):
                fresh = new_id()
                s.add(
                    Artwork(
                        id=fresh,
                        slug=f"inserted-{fresh}",
                        title="New",
                        partner_id=template.partner_id,
                    )
                )
                added += 1
        if "next" not in body["_links"]:
            break
        body = catalog.ok(body["_links"]["next"]["href"])
    assert len(seen) == len(set(seen))
    assert set(before) <= set(seen)
    assert added > 0
