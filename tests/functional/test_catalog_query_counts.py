"""Every catalog list and item: a bounded number of SQL statements whatever the page size, and
no ORM object built (the read path selects columns into plain rows)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, event, func, select

from common.catalog_version import bump_catalog_version
from common.models import (
    Artist,
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    Base,
    Collection,
    CollectionItem,
    Edition,
    Fair,
    Gene,
    Image,
    Partner,
    Profile,
    Sale,
    SaleArtwork,
    Show,
    ShowArtwork,
)
from tests.functional.catalog_support import Catalog, counting

pytestmark = pytest.mark.functional

MAX_QUERIES = 3  # the page, one query per embedded set (editions), the total count


@contextmanager
def loaded_objects() -> Iterator[list[str]]:
    """Collect the ORM objects loaded from the database in this process inside the block."""
    loaded: list[str] = []

    def record(target: Any, _context: Any) -> None:
        loaded.append(type(target).__name__)

    event.listen(Base, "load", record, propagate=True)
    try:
        yield loaded
    finally:
        event.remove(Base, "load", record)


def most(catalog: Catalog, column: Any) -> str:
    """Return the value of ``column`` with the most rows (the fullest filtered page)."""
    stmt = (
        select(column)
        .where(column.is_not(None))
        .group_by(column)
        .order_by(func.count().desc(), column)
        .limit(1)
    )
    return str(catalog.scalars(stmt)[0])


def one(catalog: Catalog, column: Any, *where: Any) -> str:
    """Return the first value of ``column`` (of the rows matching ``where``)."""
    return str(catalog.scalars(select(column).where(*where).order_by(column).limit(1))[0])


def list_urls(catalog: Catalog) -> list[tuple[str, dict[str, str]]]:
    """Return every catalog list with each of its filters, and the caller to ask as."""
    published = select(Artwork.id).where(Artwork.published.is_(True))
    artwork = str(catalog.scalars(published.order_by(Artwork.id).limit(1))[0])
    editioned = most(catalog, Edition.artwork_id)
    collection = most(catalog, CollectionItem.collection_id)
    owner = one(catalog, Collection.user_id, Collection.id == collection)
    xapp, admin = catalog.xapp, catalog.admin
    return [
        ("/artworks", xapp),
        (f"/artworks?artist_id={most(catalog, ArtworkArtist.artist_id)}", xapp),
        (f"/artworks?gene_id={most(catalog, ArtworkGene.gene_id)}", xapp),
        (f"/artworks?show_id={most(catalog, ShowArtwork.show_id)}", xapp),
        (f"/artworks?partner_id={most(catalog, Artwork.partner_id)}&published=true", xapp),
        (f"/artworks?collection_id={collection}&user_id={owner}", admin),
        (f"/artworks?similar_to_artwork_id={artwork}", xapp),
        ("/artists?artworks=true&published_artworks=true", xapp),
        (f"/artists?artwork_id={artwork}", xapp),
        (f"/artists?gene_id={one(catalog, Gene.id)}", xapp),
        (f"/artists?partner_id={most(catalog, Artwork.partner_id)}", xapp),
        (f"/artists?sale_id={one(catalog, SaleArtwork.sale_id)}", admin),
        (f"/artists?similar_to_artist_id={one(catalog, Artist.id)}", xapp),
        (f"/editions?artwork_id={editioned}", xapp),
        ("/genes", xapp),
        (f"/genes?artwork_id={artwork}", xapp),
        (f"/images?show_id={most(catalog, Image.show_id)}", xapp),
        ("/partners", xapp),
        ("/profiles", xapp),
        ("/shows?status=current", xapp),
        (f"/shows?partner_id={most(catalog, Show.partner_id)}", xapp),
        ("/fairs", xapp),
        ("/sales", catalog.user),
        ("/sales?live=true", admin),
        ("/sale_artworks", xapp),
        (f"/sale_artworks?sale_id={most(catalog, SaleArtwork.sale_id)}", admin),
    ]


def counted(catalog: Catalog, engine: Engine, url: str, h: dict[str, str]) -> tuple[Any, int]:
    """Return the body of ``url`` and the number of statements it ran (after a warm-up), read
    afresh: the bump makes every cached document and page out of date."""
    catalog.ok(url, h)
    catalog.bump()
    with counting(engine) as statements:
        body = catalog.ok(url, h)
    return body, len(statements)


def test_every_list_takes_at_most_three_queries_whatever_its_size(
    catalog: Catalog, engine: Engine
) -> None:
    for path, h in list_urls(catalog):
        glue = "&" if "?" in path else "?"
        counts = []
        for size in (1, 100):
            body, n = counted(catalog, engine, f"{path}{glue}size={size}&total_count=1", h)
            counts.append(n)
            if size == 1 and "next" in body["_links"]:  # a page after a cursor, too
                counts.append(counted(catalog, engine, body["_links"]["next"]["href"], h)[1])
        assert min(counts) >= 1 and max(counts) <= MAX_QUERIES, (path, counts)
        assert counts[0] == counts[-1], (path, counts)


def test_items_take_at_most_two_queries(catalog: Catalog, engine: Engine) -> None:
    published = select(Artwork.id).where(Artwork.published.is_(True)).order_by(Artwork.id)
    editioned = most(catalog, Edition.artwork_id)
    edition = one(catalog, Edition.id, Edition.artwork_id == editioned)
    paths = [
        f"/artworks/{catalog.scalars(published.limit(1))[0]}",
        f"/artworks/{editioned}",
        f"/editions/{edition}?artwork_id={editioned}",
        f"/artists/{one(catalog, Artist.id)}",
        f"/genes/{one(catalog, Gene.id)}",
        f"/images/{one(catalog, Image.id)}",
        f"/partners/{one(catalog, Partner.id)}",
        f"/profiles/{one(catalog, Profile.id)}",
        f"/shows/{one(catalog, Show.id)}",
        f"/fairs/{one(catalog, Fair.id)}",
        f"/sales/{one(catalog, Sale.id, Sale.published.is_(True))}",
    ]
    for path in paths:
        h = catalog.user if path.startswith("/sales") else catalog.xapp
        n = counted(catalog, engine, path, h)[1]
        # An artwork is read with its editions in one statement.
        assert n == 1 if path.startswith("/artworks/") else 1 <= n <= 2, (path, n)
    document = catalog.ok(f"/artworks/{editioned}")
    listed = catalog.ok(f"/editions?artwork_id={editioned}&size=100")["_embedded"]["editions"]
    assert document["_embedded"]["editions"] == listed and listed


def test_catalog_reads_build_no_orm_objects(catalog: Catalog) -> None:
    """Rows go straight to the representation: no object, identity map or instrumentation."""
    urls = [u for u, h in list_urls(catalog) if h is catalog.xapp]
    artwork = most(catalog, Edition.artwork_id)
    urls += [f"/artworks/{artwork}", f"/artists/{one(catalog, Artist.id)}"]
    for url in urls:
        catalog.ok(url)  # warm the token and rate-limit caches
    with loaded_objects() as loaded:
        for url in urls:
            glue = "&" if "?" in url else "?"
            catalog.ok(f"{url}{glue}size=100" if "/artworks/" not in url else url)
    assert loaded == []


def test_artwork_pages_are_kept_rendered_until_their_types_change(
    catalog: Catalog, engine: Engine
) -> None:
    """A repeated artworks page is answered from memory (no statement) until artworks or
    editions change; a collection's page, which depends on the caller, is always read."""

    def statements(url: str, h: dict[str, str]) -> int:
        with counting(engine) as ran:
            catalog.ok(url, h)
        return len(ran)

    url = f"/artworks?size=5&artist_id={most(catalog, ArtworkArtist.artist_id)}"
    catalog.ok(url)
    catalog.ok(url)
    page = catalog.ok(url)
    assert statements(url, catalog.xapp) == 0
    bump_catalog_version(catalog.redis, catalog.redis_prefix, ["artists", "genes"])
    assert statements(url, catalog.xapp) == 0
    bump_catalog_version(catalog.redis, catalog.redis_prefix, ["editions"])
    assert statements(url, catalog.xapp) >= 1
    assert catalog.ok(url) == page
    collection = most(catalog, CollectionItem.collection_id)
    owner = one(catalog, Collection.user_id, Collection.id == collection)
    mine = f"/artworks?collection_id={collection}&user_id={owner}"
    for _ in range(2):
        assert statements(mine, catalog.admin) >= 1
