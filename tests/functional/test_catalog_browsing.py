"""Browsing the museums' catalog as a person does: sorted, counted lists paged both ways, an
artist's page that opens on the works worth seeing, search results with thumbnails.

On the Tate and Carnegie slices in ``tests/data``, imported with the real loaders, on SQLite and
on PostgreSQL. The API's own order (id) and parameters are checked unchanged beside them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from html import unescape
from typing import Any

import pytest
import requests
from sqlalchemy import Engine, func, select, text

from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.tate import load_tate
from common.catalog_version import bump_catalog_version
from common.models import Artist, Artwork, ArtworkArtist, Partner
from common.settings import Settings
from common.stores import Stores
from resource_server.queries import artists as artist_q
from resource_server.web import browse, data
from resource_server.web.browse import is_blank_title
from tests.constants import SAMPLE_DATA
from tests.db_state import truncate_all
from tests.functional.catalog_support import counting
from tests.functional.user_api_support import xapp_headers
from tests.servers import LiveServer

pytestmark = [pytest.mark.functional, pytest.mark.data]

TURNER = "joseph-mallord-william-turner"


@pytest.fixture(scope="module")
def museum(
    engine: Engine, stores: Stores, base_settings: Settings, resource_server: LiveServer
) -> Iterator[str]:
    """The Tate and Carnegie slices, loaded once for the module; the server's URL."""
    truncate_all(engine)
    load_tate(engine, SAMPLE_DATA / "tate", progress=False)
    load_cmoa(engine, SAMPLE_DATA / "cmoa", progress=False)
    bump_catalog_version(stores.redis, base_settings.redis_prefix, None)
    yield resource_server.url
    truncate_all(engine)


def get(url: str, path: str, **params: Any) -> requests.Response:
    """GET a page as a browser does, without following redirects."""
    return requests.get(
        url + path, params=params or None, headers={"Accept": "text/html"},
        allow_redirects=False, timeout=30,
    )  # fmt: skip


def ok(url: str, path: str, **params: Any) -> str:
    """GET a page, assert a 200 and return its text, unescaped."""
    r = get(url, path, **params)
    assert r.status_code == 200, (path, params, r.status_code, r.text[:300])
    return unescape(r.text)


def links(html: str, rel: str) -> list[str]:
    """Return the targets of the links of one ``rel``."""
    return re.findall(rf'<a rel="{rel}" href="([^"]+)"', html)


def item_slugs(html: str, kind: str) -> list[str]:
    """Return the slugs of the item links in the page's list (or grid), in order."""
    main = html.split('<main id="main"', 1)[1]
    return re.findall(rf'href="/{kind}/([^"?]+)"', main)


def walk(
    url: str, path: str, *, rel: str = "next", kind: str = "", **params: Any
) -> list[list[str]]:
    """Follow ``rel`` links from a page to the end; return each page's item (``kind``) slugs."""
    kind = kind or path.strip("/")[:-1]
    html = ok(url, path, **params)
    pages = [item_slugs(html, kind)]
    while found := links(html, rel):
        html = ok(url, found[0])
        pages.append(item_slugs(html, kind))
        assert len(pages) < 200
    return pages


def scalars(stores: Stores, stmt: Any) -> list[Any]:
    """Return the first column of a select."""
    with stores.sessions() as s:
        return list(s.scalars(stmt))


def test_the_artists_list_counts_sorts_and_pages_both_ways(museum: str, stores: Stores) -> None:
    total = scalars(stores, select(func.count()).select_from(Artist))[0]
    html = ok(museum, "/artists", size=20)
    assert f"<strong>{total:,}</strong> artists" in html
    pages_count = -(-total // 20)
    assert f"Page 1 of {pages_count}" in html
    # A-Z by sortable name (surname first), the default.
    expected = scalars(
        stores, select(Artist.slug).order_by(func.lower(Artist.sortable_name), Artist.id)
    )
    forward = walk(museum, "/artists", size=20)
    assert [s for page in forward for s in page] == expected
    assert len(forward) == pages_count and all(len(p) == 20 for p in forward[:-1])
    # The last page, then back to the first with "Previous": the same pages, reversed.
    backward = walk(museum, "/artists", rel="prev", size=20, last=1)
    assert backward == list(reversed(forward))
    last = ok(museum, "/artists", size=20, last=1)
    assert f"Page {pages_count} of {pages_count}" in last and not links(last, "next")
    # Birth year (the undated last), and recently added (newest first).
    by_year = [s for page in walk(museum, "/artists", size=50, sort="date") for s in page]
    years = dict(_pairs(stores, Artist.slug, Artist.birth_year))
    dated = [years[s] for s in by_year if years[s] is not None]
    assert dated == sorted(dated) and all(years[s] is None for s in by_year[len(dated) :])
    recent = [s for page in walk(museum, "/artists", size=50, sort="recent") for s in page]
    expected_recent = scalars(
        stores, select(Artist.slug).order_by(Artist.created_at.desc(), Artist.id.desc())
    )
    assert recent == expected_recent
    # The sort is kept by the pager's links, and marked.
    html = ok(museum, "/artists", size=20, sort="date")
    assert all("sort=date" in h for h in links(html, "next") + links(html, "last"))
    assert 'aria-current="true" href="/artists?size=20&sort=date"' in html


def _pairs(stores: Stores, *cols: Any) -> list[tuple[Any, ...]]:
    with stores.sessions() as s:
        return [tuple(r) for r in s.execute(select(*cols))]


def test_the_artworks_list_sorts_by_date_title_and_recency(museum: str, stores: Stores) -> None:
    public = select(Artwork.slug).where(Artwork.published.is_(True))
    total = len(scalars(stores, public))
    html = ok(museum, "/artworks", size=100)
    assert f"<strong>{total:,}</strong> artworks" in html
    years = dict(_pairs(stores, Artwork.slug, Artwork.year_start))
    by_date = [s for page in walk(museum, "/artworks", size=100) for s in page]
    assert sorted(by_date) == sorted(scalars(stores, public)) and len(set(by_date)) == total
    dated = [years[s] for s in by_date if years[s] is not None]
    assert dated == sorted(dated)
    assert all(years[s] is None for s in by_date[len(dated) :])
    titles = dict(_pairs(stores, Artwork.slug, Artwork.title))
    by_title = [s for page in walk(museum, "/artworks", size=100, sort="name") for s in page]
    assert [titles[s][:200].lower() for s in by_title] == sorted(
        titles[s][:200].lower() for s in by_title
    )
    recent = [s for page in walk(museum, "/artworks", size=100, sort="recent") for s in page]
    assert len(recent) == total


def test_bad_sort_and_paging_parameters_are_html_400s(museum: str) -> None:
    for params in (
        {"sort": "price"},
        {"after": "<script>"},
        {"before": "bm90IGEgY3Vyc29y"},
        {"after": "WzEsMiwzXQ"},  # [1,2,3]: a list of the wrong length and types
        {"after": "WyJhIiwiYiJd", "sort": "date"},  # ["a","b"]: the date key is a number
        {"after": "WyJhIiwiYiJd", "last": "1"},
        {"page": "0"},
        {"page": "x"},
    ):
        r = get(museum, "/artists", **params)
        assert r.status_code == 400, (params, r.status_code)
        assert r.headers["Content-Type"].startswith("text/html") and "<script>" not in r.text
    # A forged page number only changes the number shown, clamped to the page count.
    assert "Page 1 of" in ok(museum, "/artists", page="999")


def test_the_api_keeps_its_id_order_and_parameters(museum: str, stores: Stores) -> None:
    headers = xapp_headers(stores.sessions, stores)
    body = requests.get(
        museum + "/api/artists", params={"size": 10, "total_count": 1}, headers=headers, timeout=30
    ).json()
    ids = [a["id"] for a in body["_embedded"]["artists"]]
    assert ids == sorted(ids) and "cursor=" in body["_links"]["next"]["href"]
    assert body["total_count"] == scalars(stores, select(func.count()).select_from(Artist))[0]


def test_an_artist_page_counts_dates_and_opens_on_the_works_worth_seeing(
    museum: str, stores: Stores
) -> None:
    with stores.sessions() as s:
        turner = s.execute(select(Artist).where(Artist.slug == TURNER)).scalar_one()
        works = (
            s.execute(
                select(Artwork)
                .join(ArtworkArtist, ArtworkArtist.artwork_id == Artwork.id)
                .where(ArtworkArtist.artist_id == turner.id, Artwork.published.is_(True))
            )
            .scalars()
            .all()
        )
        s.expunge_all()
    blanks = [w for w in works if is_blank_title(w.title)]
    assert blanks and len(blanks) < len(works)  # the slice holds "[blank]" and "Blank"
    html = ok(museum, f"/artist/{TURNER}", size=10)
    assert f"<strong>{len(works)}</strong> works in the catalog" in html
    assert f"{turner.birthday}\u2013{turner.deathday}" in html
    # Every page, in the page's order: titled before blank, with an image before without,
    # paintings and sculpture before the rest, then by date.
    order = [s for page in walk(museum, f"/artist/{TURNER}", kind="artwork", size=10) for s in page]
    by_slug = {w.slug: w for w in works}
    order = [s for s in order if s in by_slug]
    assert sorted(order) == sorted(by_slug) and len(order) == len(works)
    rank = [
        (is_blank_title(by_slug[s].title), not by_slug[s].image_url,
         by_slug[s].category not in ("Painting", "Sculpture"))
        for s in order
    ]  # fmt: skip
    assert rank == sorted(rank)
    first = by_slug[order[0]]
    assert not is_blank_title(first.title) and first.image_url
    # Blank titles are shown as "Untitled", never "[blank]" or "Blank".
    last_page = ok(museum, f"/artist/{TURNER}", size=10, last=1)
    assert "Untitled" in last_page
    assert ">[blank]<" not in last_page and ">Blank<" not in last_page
    # The artist's works can be sorted too; a forged cursor is a 400.
    assert get(museum, f"/artist/{TURNER}", sort="name").status_code == 200
    assert get(museum, f"/artist/{TURNER}", after="WzFd").status_code == 400


def test_search_results_show_thumbnails_where_there_are_images(museum: str, stores: Stores) -> None:
    with stores.sessions() as s:
        with_image = s.execute(
            select(Artwork.title, Artwork.slug, Artwork.id)
            .where(
                Artwork.published.is_(True),
                Artwork.image_url.is_not(None),
                Artwork.title.like("%Bridge%"),
            )
            .order_by(Artwork.id)
        ).first()
    assert with_image is not None
    html = ok(museum, "/search", q=with_image.title)
    results = html.split('<ol class="results"', 1)[1].split("</ol>", 1)[0]
    items = re.findall(r"<li[^>]*>.*?</li>", results, re.S)
    assert any(f'/artwork/{with_image.id}"' in li and "<img " in li for li in items)
    # No img element without an image: every img has a web src.
    assert all(re.search(r'src="https?://', img) for img in re.findall(r"<img [^>]+>", results))
    for li in items:
        if "<img " not in li:
            assert "noimage" not in li


def test_sorted_pages_take_a_bounded_number_of_queries(museum: str, engine: Engine) -> None:
    for path, limit in (("/artists", 2), ("/artworks", 3), ("/genes", 2), ("/partners", 2),
                        (f"/artist/{TURNER}", 5)):  # fmt: skip
        counts = []
        for size in ("2", "50"):
            ok(museum, path, size=size)
            with counting(engine) as statements:
                ok(museum, path, size=size, sort="recent")
            counts.append(len(statements))
        assert counts[0] == counts[1] <= limit, (path, counts)


def test_a_list_count_is_kept_until_the_catalog_changes(
    museum: str, engine: Engine, stores: Stores, base_settings: Settings
) -> None:
    def counts(**params: Any) -> int:
        with counting(engine) as statements:
            ok(museum, "/artists", **params)
        return sum("count(" in s.lower() for s in statements)

    counts()
    assert counts(sort="date") == 0 and counts(last="1") == 0  # every order, every page
    # An import (any catalog writer) bumps the versions: the next page counts afresh.
    bump_catalog_version(stores.redis, base_settings.redis_prefix, ("artists",))
    assert counts() == 1 and counts() == 0
    bump_catalog_version(stores.redis, base_settings.redis_prefix, ("genes",))
    assert counts() == 0  # another type's write leaves the artists' count
    bump_catalog_version(stores.redis, base_settings.redis_prefix, None)
    assert counts() == 1


def test_deep_pages_seek_by_index(museum: str, engine: Engine) -> None:
    """Each order's page after a cursor is an index seek (0014), not a scan or a sort."""
    with engine.connect() as conn:
        partner = conn.execute(select(Partner.id).order_by(Partner.id)).scalars().first()
    by_date = browse.Sorting(browse.ARTWORK_SORTING.orders[:1])  # a partner's page, by default
    cases = (
        (artist_q.ARTISTS.filtered({}), browse.ARTIST_SORTING, "ix_artists_page_"),
        (data.public_artworks({}), browse.ARTWORK_SORTING, "ix_artworks_page_"),
        (data.public_artworks({"partner_id": partner}), by_date, "ix_artworks_page_partner_"),
    )
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("SET enable_seqscan = off"))  # a small table: show the plan's shape
        for stmt, sorting, index in cases:
            for order in sorting.orders:
                cursor = [1800 if k.kind is int else "m" for k in order.keys[:-1]]
                if order.name == "recent":
                    cursor = [datetime(2000, 1, 1)]
                page = (
                    stmt.add_columns(*browse.sort_columns(order))
                    .where(browse.beyond(order, [*cursor, "0"], backwards=False))
                    .order_by(*browse.ordered(order))
                    .limit(25)
                )
                compiled = page.compile(engine)
                raw = conn.connection.driver_connection.cursor()
                if engine.dialect.name == "postgresql":
                    raw.execute("EXPLAIN " + str(compiled), compiled.params)
                    plan = "\n".join(r[0] for r in raw.fetchall())
                    # PostgreSQL weighs the two indexes of a partner's dated works by their
                    # statistics (tiny here): either serves the page without a sort.
                    wanted = "ix_artworks_page_" if "partner" in index else index
                    assert re.search(rf"Index Scan (Backward )?using {wanted}\w*{order.name}", plan)
                    assert "Sort" not in plan and "Index Cond" in plan, plan
                else:
                    values = tuple(compiled.params[k] for k in compiled.positiontup or ())
                    raw.execute("EXPLAIN QUERY PLAN " + str(compiled), values)
                    plan = "\n".join(str(r[-1]) for r in raw.fetchall())
                    assert f"SEARCH artworks USING INDEX {index}{order.name}" in plan or (
                        f"SEARCH artists USING INDEX {index}{order.name}" in plan
                    ), plan
                    assert "TEMP B-TREE" not in plan, plan
