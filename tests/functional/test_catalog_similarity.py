"""Similar artists and artworks: the documented score, recomputed here from the database."""

from __future__ import annotations

from collections import defaultdict

import pytest
from sqlalchemy import select

from common.models import Artist, ArtistGene, Artwork, ArtworkArtist, ArtworkGene
from resource_server.queries.similarity import LIMIT
from tests.functional.catalog_support import ZERO_ID, Catalog

pytestmark = pytest.mark.functional


def expected_artists(catalog: Catalog, subject: str, *, contemporary: bool) -> list[str]:
    """Rank the artists similar to ``subject`` by the score documented in the module."""
    with catalog.sessions() as s:
        artists = {a.id: a for a in s.scalars(select(Artist))}
        genes: dict[str, set[str]] = defaultdict(set)
        for artist_id, gene_id in s.execute(select(ArtistGene.artist_id, ArtistGene.gene_id)):
            genes[artist_id].add(gene_id)
        partners: dict[str, set[str]] = defaultdict(set)
        rows = s.execute(
            select(ArtworkArtist.artist_id, Artwork.partner_id).join(
                Artwork, Artwork.id == ArtworkArtist.artwork_id
            )
        )
        for artist_id, partner_id in rows:
            if partner_id:
                partners[artist_id].add(partner_id)
    me = artists[subject]
    scored = []
    for cid, c in artists.items():
        base = 3 * len(genes[subject] & genes[cid]) + 2 * len(partners[subject] & partners[cid])
        if cid == subject or base == 0:
            continue
        score = base + (1 if c.nationality and c.nationality == me.nationality else 0)
        if contemporary:
            if me.birth_year is None or c.birth_year is None:
                continue
            gap = abs(c.birth_year - me.birth_year)
            if gap > 20:
                continue
            score += 2 if gap <= 5 else 1 if gap <= 10 else 0
        scored.append((-score, -c.published_artworks_count, cid))
    return [cid for *_, cid in sorted(scored)[:LIMIT]]


def expected_artworks(catalog: Catalog, subject: str) -> list[str]:
    """Rank the artworks similar to ``subject`` by the score documented in the module."""
    with catalog.sessions() as s:
        # Only published artworks are shown (as similar ones too).
        works = {a.id: a for a in s.scalars(select(Artwork).where(Artwork.published.is_(True)))}
        artists: dict[str, set[str]] = defaultdict(set)
        for work_id, artist_id in s.execute(
            select(ArtworkArtist.artwork_id, ArtworkArtist.artist_id)
        ):
            artists[work_id].add(artist_id)
        genes: dict[str, set[str]] = defaultdict(set)
        for work_id, gene_id in s.execute(select(ArtworkGene.artwork_id, ArtworkGene.gene_id)):
            genes[work_id].add(gene_id)
    me = works[subject]
    scored = []
    for cid, c in works.items():
        base = 4 * len(artists[subject] & artists[cid]) + 3 * len(genes[subject] & genes[cid])
        if cid == subject or base == 0:
            continue
        score = base + (2 if c.partner_id and c.partner_id == me.partner_id else 0)
        score += 1 if c.category and c.category == me.category else 0
        close = c.year_start is not None and me.year_start is not None
        score += 1 if close and abs(c.year_start - me.year_start) <= 10 else 0
        scored.append((-score, -c.iconicity, cid))
    return [cid for *_, cid in sorted(scored)[:LIMIT]]


def similar_ids(catalog: Catalog, path: str, **params: str) -> list[str]:
    """Return the ids of a similarity set, checking the set's shape."""
    body = catalog.ok(path, **params)
    assert set(body) == {"_links", "_embedded"}  # not paginated: no total_count, no next
    assert set(body["_links"]) == {"self"}
    (plural,) = body["_embedded"]
    return [item["id"] for item in body["_embedded"][plural]]


def test_similar_artists_follow_the_documented_score(catalog: Catalog) -> None:
    subjects = catalog.scalars(select(Artist.id).order_by(Artist.id))[:8]
    for subject in subjects:
        for kind in ("default", "contemporary"):
            params = {"similar_to_artist_id": subject}
            if kind == "contemporary":
                params["similarity_type"] = kind
            got = similar_ids(catalog, "/artists", **params)
            assert subject not in got
            assert got == expected_artists(catalog, subject, contemporary=kind == "contemporary")
            assert got == similar_ids(catalog, "/artists", **params)  # deterministic
    assert any(similar_ids(catalog, "/artists", similar_to_artist_id=s) for s in subjects)


def test_similar_artists_links_and_filters(catalog: Catalog) -> None:
    artist = catalog.ok("/artists")["_embedded"]["artists"][0]
    links = artist["_links"]
    for rel in ("similar_artists", "similar_contemporary_artists"):
        body = catalog.ok(links[rel]["href"])
        assert body["_links"]["self"]["href"] == links[rel]["href"]
        assert artist["id"] not in [a["id"] for a in body["_embedded"]["artists"]]
    with_works = similar_ids(
        catalog, "/artists", similar_to_artist_id=artist["id"], published_artworks="true"
    )
    assert set(with_works) <= set(
        similar_ids(catalog, "/artists", similar_to_artist_id=artist["id"])
    )
    assert similar_ids(catalog, "/artists", similar_to_artist_id=ZERO_ID) == []
    for bad in ({"similar_to_artist_id": "x"}, {"similarity_type": "modern"}):
        r = catalog.get("/artists", **bad)
        assert r.status_code == 400 and list(r.json()["detail"]) == list(bad)


def test_similar_artworks_follow_the_documented_score(catalog: Catalog) -> None:
    visible = select(Artwork.id).where(Artwork.published.is_(True))
    subjects = catalog.scalars(visible.order_by(Artwork.id))[:10]
    for subject in subjects:
        got = similar_ids(catalog, "/artworks", similar_to_artwork_id=subject)
        assert subject not in got and 0 < len(got) <= LIMIT
        assert got == expected_artworks(catalog, subject)
    published = similar_ids(
        catalog, "/artworks", similar_to_artwork_id=subjects[0], published="true"
    )
    flags = {a.id: a.published for a in catalog.scalars(select(Artwork))}
    assert published and all(flags[i] for i in published)
    body = catalog.ok("/artworks", similar_to_artwork_id=subjects[0])
    for item in body["_embedded"]["artworks"]:
        assert "editions" in item["_embedded"]
    assert similar_ids(catalog, "/artworks", similar_to_artwork_id=ZERO_ID) == []
