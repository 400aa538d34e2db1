"""Partners (with user access), profiles (id or handle) and images over real HTTP."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from common.models import Artwork, Image, Partner, PartnerUser, Profile, Show
from tests.functional.catalog_support import ZERO_ID, Catalog, walk_pages

pytestmark = pytest.mark.functional

PARTNER_FIELDS = [
    "id", "slug", "created_at", "updated_at", "type", "name", "email", "region",
    "enforce_on_platform_transactions", "_links",
]  # fmt: skip
PROFILE_FIELDS = [
    "id", "created_at", "updated_at", "handle", "location", "description", "image_versions",
    "_links",
]  # fmt: skip
IMAGE_FIELDS = [
    "id", "created_at", "updated_at", "position", "default", "aspect_ratio", "original_height",
    "original_width", "image_versions", "_links",
]  # fmt: skip


def ids_of(items: list[dict[str, object]]) -> list[object]:
    """Return the ids of embedded items."""
    return [i["id"] for i in items]


def test_partner_item_links_follow_its_profile_and_website(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        partner = s.scalars(select(Partner).order_by(Partner.id)).first()
        assert partner is not None
        handle = s.scalar(
            select(Profile.handle).where(
                Profile.owner_type == "partner", Profile.owner_id == partner.id
            )
        )
    body = catalog.ok(f"/partners/{partner.id}")
    assert list(body) == PARTNER_FIELDS
    api = catalog.api("")
    assert body["_links"] == {
        "self": {"href": f"{api}/partners/{partner.id}"},
        # No WEB_URL in the test settings: this server's own partner page.
        "permalink": {"href": f"{catalog.url}/partner/{partner.slug}"},
        "profile": {"href": f"{api}/profiles/{handle}"},
        "artworks": {"href": f"{api}/artworks?partner_id={partner.id}"},
        "artists": {"href": f"{api}/artists?partner_id={partner.id}"},
        "published_artworks": {"href": f"{api}/artworks?partner_id={partner.id}&published=true"},
        "shows": {"href": f"{api}/shows?partner_id={partner.id}"},
        "website": {"href": partner.website},
    }
    with catalog.sessions() as s, s.begin():
        s.execute(update(Partner).where(Partner.id == partner.id).values(website=None))
    assert "website" not in catalog.ok(f"/partners/{partner.id}")["_links"]
    r = catalog.get(f"/partners/{partner.slug}")
    assert r.status_code == 302 and r.headers["Location"] == f"{api}/partners/{partner.id}"
    r = catalog.get(f"/partners/{ZERO_ID}")
    assert r.status_code == 404
    assert r.json() == {"type": "other_error", "message": "Partner Not Found"}


def test_partners_a_user_can_access(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        mine = sorted(
            s.scalars(select(PartnerUser.partner_id).where(PartnerUser.user_id == catalog.user_id))
        )
        other_partner = s.scalar(select(Partner.id).where(Partner.id.not_in(mine)))
        analytics = sorted(
            s.scalars(select(Partner.id).where(Partner.eligible_for_partner_analytics.is_(True)))
        )
    assert mine and other_partner
    for headers in (catalog.user, catalog.admin):
        got = walk_pages(catalog, "/partners", headers, user_id=catalog.user_id)
        assert ids_of(got) == mine
    # Anyone else learns nothing about the user's partners: an empty page, not an error.
    for headers in (catalog.xapp, catalog.other):
        body = catalog.ok("/partners", headers, user_id=catalog.user_id)
        assert body["_embedded"]["partners"] == [] and "next" not in body["_links"]
    check = catalog.ok("/partners", catalog.user, user_id=catalog.user_id, partner_id=mine[0])
    assert ids_of(check["_embedded"]["partners"]) == [mine[0]]
    denied = catalog.ok(
        "/partners", catalog.user, user_id=catalog.user_id, partner_id=other_partner
    )
    assert denied["_embedded"]["partners"] == []
    alone = catalog.ok("/partners", partner_id=other_partner)
    assert ids_of(alone["_embedded"]["partners"]) == [other_partner]
    eligible = walk_pages(catalog, "/partners", eligible_for_partner_analytics="true")
    assert sorted(ids_of(eligible)) == analytics


def test_profiles_by_id_or_handle_with_owner_and_cover(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        profiles = {p.owner_type: p for p in s.scalars(select(Profile).order_by(Profile.id))}
        every = sorted(s.scalars(select(Profile.id)))
    assert set(profiles) == {"partner", "fair", "user"}
    api = catalog.api("")
    for kind, route in (("partner", "partners"), ("fair", "fairs")):
        p = profiles[kind]
        body = catalog.ok(f"/profiles/{p.id}")
        assert list(body) == PROFILE_FIELDS
        assert body["_links"]["owner"]["href"] == f"{api}/{route}/{p.owner_id}"
        assert body["_links"]["cover_image"]["href"] == f"{api}/images/{p.cover_image_id}"
        assert body["_links"]["thumbnail"]["href"].endswith("/square.jpg")
        assert catalog.ok(body["_links"]["owner"]["href"])["id"] == p.owner_id
        assert catalog.ok(body["_links"]["cover_image"]["href"])["id"] == p.cover_image_id
    user_profile = catalog.ok(f"/profiles/{profiles['user'].id}")
    owner = profiles["user"].owner_id
    assert user_profile["_links"]["owner"]["href"] == f"{api}/users/{owner}"
    assert "website" not in user_profile["_links"]  # no website: no link
    handle = catalog.get(f"/profiles/{profiles['partner'].handle}")
    assert handle.status_code == 302
    assert handle.headers["Location"] == f"{api}/profiles/{profiles['partner'].id}"
    for missing in (ZERO_ID, "nobody-here"):
        r = catalog.get(f"/profiles/{missing}")
        assert r.status_code == 404
        assert r.json() == {"type": "other_error", "message": "Profile Not Found"}
    assert sorted(ids_of(walk_pages(catalog, "/profiles", size=4))) == every


def test_images_of_a_show_and_by_id(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        show_id = s.scalar(select(Image.show_id).where(Image.show_id.is_not(None)))
        shots = sorted(s.scalars(select(Image.id).where(Image.show_id == show_id)))
        bare = s.scalar(
            select(Show.id).where(
                Show.id.not_in(select(Image.show_id).where(Image.show_id.is_not(None)))
            )
        )
        artwork_image = s.scalar(  # of a published artwork: the others' are not shown
            select(Image.id)
            .join(Artwork, Artwork.id == Image.artwork_id)
            .where(Artwork.published.is_(True))
        )
    # Without an owner the error names both parameters that could have been sent.
    r = catalog.get("/images")
    assert r.status_code == 400
    assert r.json() == {
        "type": "param_error",
        "message": "Show id or artwork id is required.",
        "detail": {
            "show_id": ["is required without artwork_id"],
            "artwork_id": ["is required without show_id"],
        },
    }
    bad = catalog.get("/images", show_id="123")
    assert bad.status_code == 400 and bad.json()["detail"] == {"show_id": ["is invalid"]}
    listed = walk_pages(catalog, "/images", show_id=show_id, size=1)
    assert ids_of(listed) == shots
    assert list(listed[0]) == IMAGE_FIELDS
    empty = catalog.ok("/images", show_id=bare)
    assert empty["_embedded"] == {"images": []} and empty["total_count"] is None
    body = catalog.ok(f"/images/{artwork_image}")
    assert body["_links"]["self"]["href"] == catalog.api(f"/images/{artwork_image}")
    assert body["_links"]["thumbnail"]["href"].endswith("/medium.jpg")
    for missing in (ZERO_ID, "not-an-id"):
        r = catalog.get(f"/images/{missing}")
        assert r.status_code == 404
        assert r.json() == {"type": "other_error", "message": "Image Not Found"}
    sample = catalog.get("/images", show_id=show_id, sample="true")
    assert sample.status_code == 302 and sample.headers["Location"].rsplit("/", 1)[1] in shots


def test_images_of_an_artwork(catalog: Catalog) -> None:
    """``artwork_id`` lists an artwork's additional views; its errors name ``artwork_id``."""
    with catalog.sessions() as s:
        artwork_id = s.scalar(
            select(Image.artwork_id)
            .join(Artwork, Artwork.id == Image.artwork_id)
            .where(Artwork.published.is_(True))
            .limit(1)
        )
        views = sorted(s.scalars(select(Image.id).where(Image.artwork_id == artwork_id)))
    assert artwork_id is not None and views
    listed = walk_pages(catalog, "/images", artwork_id=artwork_id, size=1)
    assert ids_of(listed) == views
    assert list(listed[0]) == IMAGE_FIELDS
    r = catalog.get("/images", artwork_id="nope")
    assert r.status_code == 400
    assert r.json() == {
        "type": "param_error",
        "message": "Artwork id is invalid.",
        "detail": {"artwork_id": ["is invalid"]},
    }
    assert catalog.ok("/images", artwork_id=ZERO_ID)["_embedded"] == {"images": []}
