"""One visibility rule for unpublished artworks, on every path: not listed (by any filter, as a
sample or as a similar work), not readable by id or slug, not addable to a collection, not
found by search, and their editions not served either. Published ones are served on each path."""

from __future__ import annotations

import pytest
import requests
from sqlalchemy import select

from common.models import Artwork, ArtworkArtist, Collection, Edition
from tests.functional.catalog_support import Catalog, walk_pages

pytestmark = pytest.mark.functional


def pick(catalog: Catalog, published: bool) -> Artwork:
    """Return an artwork with an artist and editions, published or not."""
    with catalog.sessions() as s:
        stmt = (
            select(Artwork)
            .where(
                Artwork.published.is_(published),
                Artwork.id.in_(select(ArtworkArtist.artwork_id)),
                Artwork.id.in_(select(Edition.artwork_id)),
            )
            .order_by(Artwork.id)
            .limit(1)
        )
        found = s.scalar(stmt)
        assert found is not None
        return found


def test_an_unpublished_artwork_is_shown_nowhere(catalog: Catalog) -> None:
    hidden, shown = pick(catalog, False), pick(catalog, True)
    for who in (catalog.xapp, catalog.user, catalog.admin):
        listed = {a["id"] for a in walk_pages(catalog, "/artworks", who, size=100)}
        assert shown.id in listed and hidden.id not in listed
        assert catalog.get(f"/artworks/{hidden.id}", who).status_code == 404
        assert catalog.get(f"/artworks/{hidden.slug}", who).status_code == 404
        assert catalog.get(f"/artworks/{shown.id}", who).status_code == 200
    with catalog.sessions() as s:
        artist = s.scalar(
            select(ArtworkArtist.artist_id).where(ArtworkArtist.artwork_id == hidden.id)
        )
        edition = s.scalar(select(Edition.id).where(Edition.artwork_id == hidden.id))
    by_artist = {a["id"] for a in walk_pages(catalog, "/artworks", artist_id=artist, size=100)}
    assert hidden.id not in by_artist
    assert walk_pages(catalog, "/artworks", published="false", size=100) == []
    similar = catalog.ok("/artworks", similar_to_artwork_id=shown.id)["_embedded"]["artworks"]
    assert hidden.id not in {a["id"] for a in similar}
    assert catalog.get("/editions", artwork_id=hidden.id).json()["_embedded"]["editions"] == []
    assert catalog.get(f"/editions/{edition}", artwork_id=hidden.id).status_code == 404


def test_search_finds_only_published_artworks(catalog: Catalog) -> None:
    hidden, shown = pick(catalog, False), pick(catalog, True)
    for work, found in ((hidden, False), (shown, True)):
        body = catalog.ok("/search", q=work.title, type="artwork", size=10)
        ids = {r["_links"]["self"]["href"].rsplit("/", 1)[1] for r in body["_embedded"]["results"]}
        assert (work.id in ids) is found, work.title


def test_an_unpublished_artwork_cannot_be_collected(catalog: Catalog) -> None:
    hidden, shown = pick(catalog, False), pick(catalog, True)
    with catalog.sessions() as s:
        collection = s.scalar(
            select(Collection.id).where(Collection.user_id == catalog.user_id).limit(1)
        )
    for work, status in ((hidden, 404), (shown, 201)):
        r = requests.post(
            catalog.api("/collection_items"),
            json={"collection_id": collection, "user_id": catalog.user_id, "artwork_id": work.id},
            headers=catalog.user,
            timeout=10,
        )
        assert r.status_code == status, r.text
