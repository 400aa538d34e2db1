"""Artworks (with embedded editions), editions and genes over real HTTP on the demo catalog."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from common.models import (
    ArtistGene,
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    Edition,
    Gene,
    ShowArtwork,
)
from tests.functional.catalog_support import ZERO_ID, Catalog, walk_pages

pytestmark = pytest.mark.functional

ARTWORK_FIELDS = [
    "id", "slug", "created_at", "updated_at", "title", "category", "medium", "date", "dimensions",
    "published", "website", "signature", "series", "provenance", "literature",
    "exhibition_history", "collecting_institution", "additional_information", "image_rights",
    "blurb", "unique", "cultural_maker", "iconicity", "can_inquire", "can_acquire", "can_share",
    "sale_message", "sold", "credit_line", "image_versions", "_links", "_embedded",
]  # fmt: skip
EDITION_FIELDS = [
    "id", "created_at", "updated_at", "dimensions", "editions", "size", "available_editions",
    "artist_proofs", "prototypes", "can_acquire", "sale_message", "sold", "_links",
]  # fmt: skip
DIMENSION_KEYS = {"text", "height", "width", "depth", "diameter"}


def ids_of(items: list[dict[str, object]]) -> list[object]:
    """Return the ids of embedded items."""
    return [i["id"] for i in items]


def test_artwork_item_has_every_field_link_and_its_editions(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        work = s.scalars(
            select(Artwork)
            .where(Artwork.partner_id.is_not(None), Artwork.id.in_(select(Edition.artwork_id)))
            .order_by(Artwork.id)
        ).first()
        assert work is not None
        editions = sorted(s.scalars(select(Edition.id).where(Edition.artwork_id == work.id)))
    body = catalog.ok(f"/artworks/{work.id}")
    assert list(body) == ARTWORK_FIELDS
    assert body["id"] == work.id and body["slug"] == work.slug
    assert body["created_at"].endswith("+00:00") and len(body["created_at"]) == 25
    assert set(body["dimensions"]) == {"in", "cm"}
    assert set(body["dimensions"]["in"]) == DIMENSION_KEYS
    links = body["_links"]
    api = catalog.api("")
    assert links["self"]["href"] == f"{api}/artworks/{work.id}"
    assert links["partner"]["href"] == f"{api}/partners/{work.partner_id}"
    assert links["genes"]["href"] == f"{api}/genes?artwork_id={work.id}"
    assert links["artists"]["href"] == f"{api}/artists?artwork_id={work.id}"
    assert links["similar_artworks"]["href"] == f"{api}/artworks?similar_to_artwork_id={work.id}"
    assert links["sale_artworks"]["href"] == f"{api}/sale_artworks?artwork_id={work.id}"
    assert links["thumbnail"]["href"].endswith("/medium.jpg")
    assert links["image"]["templated"] is True
    # No WEB_URL in the test settings: the permalink is this server's own page.
    assert links["permalink"]["href"] == f"{catalog.url}/artwork/{body['slug']}"
    assert links["collection_users"]["href"] == f"{api}/users?collected_artwork_id={work.id}"
    embedded = body["_embedded"]["editions"]
    assert sorted(ids_of(embedded)) == editions
    edition = embedded[0]
    assert list(edition) == EDITION_FIELDS
    assert edition["_links"] == {
        "self": {"href": f"{api}/editions/{edition['id']}?artwork_id={work.id}"},
        "artwork": {"href": f"{api}/artworks/{work.id}"},
    }


def test_every_artwork_in_a_list_embeds_its_editions(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        visible = select(Artwork.id).where(Artwork.published.is_(True))
        expected: dict[str, list[str]] = {a: [] for a in s.scalars(visible)}
        for e_id, a_id in s.execute(select(Edition.id, Edition.artwork_id)):
            if a_id in expected:
                expected[a_id].append(e_id)
    items = walk_pages(catalog, "/artworks", size=100)
    assert sorted(ids_of(items)) == sorted(expected)
    for item in items:
        assert sorted(ids_of(item["_embedded"]["editions"])) == sorted(expected[item["id"]])
    assert any(item["_embedded"]["editions"] for item in items)


def test_artwork_filters_match_the_database(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        link = s.execute(select(ArtworkArtist.artist_id)).first()
        partner = s.scalar(select(Artwork.partner_id).where(Artwork.partner_id.is_not(None)))
        show = s.scalar(select(ShowArtwork.show_id))
        gene = s.scalar(select(ArtworkGene.gene_id))
        assert link and partner and show and gene
        shown = select(Artwork.id).where(Artwork.published.is_(True))  # the public's only
        cases = {
            ("artist_id", link[0]): shown.where(
                Artwork.id.in_(
                    select(ArtworkArtist.artwork_id).where(ArtworkArtist.artist_id == link[0])
                )
            ),
            ("partner_id", partner): shown.where(Artwork.partner_id == partner),
            ("show_id", show): shown.where(
                Artwork.id.in_(select(ShowArtwork.artwork_id).where(ShowArtwork.show_id == show))
            ),
            ("gene_id", gene): shown.where(
                Artwork.id.in_(select(ArtworkGene.artwork_id).where(ArtworkGene.gene_id == gene))
            ),
            ("published", "true"): shown,
        }
        expected = {key: sorted(s.scalars(stmt)) for key, stmt in cases.items()}
    assert walk_pages(catalog, "/artworks", size=50, published="false") == []
    for (name, value), ids in expected.items():
        got = walk_pages(catalog, "/artworks", size=50, **{name: value})
        assert sorted(ids_of(got)) == ids, name
    both = walk_pages(catalog, "/artworks", partner_id=partner, published="true", size=100)
    assert all(a["published"] for a in both)
    assert {a["_links"]["partner"]["href"].rsplit("/", 1)[1] for a in both} <= {partner}


def test_artwork_slug_redirects_and_unknown_is_404(catalog: Catalog) -> None:
    work = catalog.scalars(select(Artwork).order_by(Artwork.slug))[0]
    r = catalog.get(f"/artworks/{work.slug}")
    assert r.status_code == 302
    assert r.headers["Location"] == catalog.api(f"/artworks/{work.id}")
    for missing in (ZERO_ID, "no-such-artwork"):
        r = catalog.get(f"/artworks/{missing}")
        assert r.status_code == 404
        assert r.json() == {"type": "other_error", "message": "Artwork Not Found"}


@pytest.mark.parametrize(
    "query",
    ["artist_id=abc", "partner_id=ZZZZZZZZZZZZZZZZZZZZZZZZ", "show_id=1", "gene_id=x",
     "published=maybe", "similar_to_artwork_id=nope"],
)  # fmt: skip
def test_malformed_artwork_filters_are_400(catalog: Catalog, query: str) -> None:
    r = catalog.get(f"/artworks?{query}")
    assert r.status_code == 400
    body = r.json()
    assert body["type"] == "param_error"
    assert list(body["detail"]) == [query.split("=")[0]]


def test_editions_need_their_artwork(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        edition = s.scalars(select(Edition).order_by(Edition.id)).first()
        assert edition is not None
        siblings = sorted(
            s.scalars(select(Edition.id).where(Edition.artwork_id == edition.artwork_id))
        )
    blank = {
        "type": "param_error",
        "message": "Artwork id can't be blank.",
        "detail": {"artwork_id": ["can't be blank"]},
    }
    for path in ("/editions", f"/editions/{edition.id}"):
        r = catalog.get(path)
        assert r.status_code == 400 and r.json() == blank
    body = catalog.ok(f"/editions/{edition.id}", artwork_id=edition.artwork_id)
    assert list(body) == EDITION_FIELDS
    assert body["_links"]["self"]["href"] == catalog.api(
        f"/editions/{edition.id}?artwork_id={edition.artwork_id}"
    )
    listed = walk_pages(catalog, "/editions", artwork_id=edition.artwork_id, size=1)
    assert ids_of(listed) == siblings
    for path, params in (
        (f"/editions/{edition.id}", {"artwork_id": ZERO_ID}),
        (f"/editions/{ZERO_ID}", {"artwork_id": edition.artwork_id}),
        ("/editions/not-an-id", {"artwork_id": edition.artwork_id}),
    ):
        r = catalog.get(path, **params)
        assert r.status_code == 404
        assert r.json() == {"type": "other_error", "message": "Edition Not Found"}
    sample = catalog.get("/editions", artwork_id=edition.artwork_id, sample=1)
    assert sample.status_code == 302
    assert sample.headers["Location"].split("/editions/")[1].split("?")[0] in siblings
    assert sample.headers["Location"].endswith(f"?artwork_id={edition.artwork_id}")


def test_gene_item_list_filters_slug_and_404(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        gene = s.scalars(select(Gene).order_by(Gene.id)).first()
        assert gene is not None
        artist_id = s.scalar(select(ArtistGene.artist_id).order_by(ArtistGene.artist_id))
        artwork_id = s.scalar(select(ArtworkGene.artwork_id).order_by(ArtworkGene.artwork_id))
        by_artist = sorted(
            s.scalars(select(ArtistGene.gene_id).where(ArtistGene.artist_id == artist_id))
        )
        by_artwork = sorted(
            s.scalars(select(ArtworkGene.gene_id).where(ArtworkGene.artwork_id == artwork_id))
        )
        every = sorted(s.scalars(select(Gene.id)))
    body = catalog.ok(f"/genes/{gene.id}")
    assert list(body) == [
        "id", "created_at", "updated_at", "name", "display_name", "description",
        "image_versions", "_links",
    ]  # fmt: skip
    api = catalog.api("")
    assert body["_links"]["artworks"]["href"] == f"{api}/artworks?gene_id={gene.id}"
    assert body["_links"]["published_artworks"]["href"] == (
        f"{api}/artworks?gene_id={gene.id}&published=true"
    )
    assert body["_links"]["artists"]["href"] == f"{api}/artists?gene_id={gene.id}"
    assert body["_links"]["thumbnail"]["href"].endswith(f"/{gene.image_versions[0]}.jpg")
    assert sorted(ids_of(walk_pages(catalog, "/genes", size=3))) == every
    assert sorted(ids_of(walk_pages(catalog, "/genes", artist_id=artist_id))) == by_artist
    assert sorted(ids_of(walk_pages(catalog, "/genes", artwork_id=artwork_id))) == by_artwork
    r = catalog.get(f"/genes/{gene.slug}")
    assert r.status_code == 302 and r.headers["Location"] == catalog.api(f"/genes/{gene.id}")
    r = catalog.get(f"/genes/{ZERO_ID}")
    assert r.status_code == 404 and r.json() == {"type": "other_error", "message": "Gene Not Found"}
    assert catalog.get("/genes", artist_id="bad").status_code == 400
