"""Shows and fairs (status from the dates), sales (user tokens, Admin-only unpublished) and lots."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from common.models import Artwork, Fair, Sale, SaleArtwork, Show
from resource_server.schedule import status_of
from tests.functional.catalog_support import ZERO_ID, Catalog, walk_pages

pytestmark = pytest.mark.functional

MS_FORM = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$")
SECONDS_FORM = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")
INVALID = {"type": "auth_error", "message": "The access token is invalid or has expired."}
SALE_FIELDS = [
    "id", "slug", "auction_state", "name", "is_preliminary", "is_auction", "is_live_integration",
    "start_at", "end_at", "time_zone", "live_start_at", "registration_ends_at", "published",
    "has_buyers_premium", "bidding_engine_enabled", "sync_to_causality", "collect_payments",
    "created_at", "updated_at", "image_versions", "_links",
]  # fmt: skip
SHOW_FIELDS = [
    "id", "created_at", "updated_at", "name", "sortable_name", "description", "press_release",
    "start_at", "end_at", "status", "is_reference", "is_solo_show", "is_group_show",
    "is_institutional_show", "is_fair_booth", "image_versions", "_links",
]  # fmt: skip


def ids_of(items: list[dict[str, object]]) -> list[object]:
    """Return the ids of embedded items."""
    return [i["id"] for i in items]


def statuses(catalog: Catalog, model: type[Show] | type[Fair]) -> dict[str, str]:
    """Return the status of every show or fair now, computed from the database."""
    now = datetime.now(UTC)
    with catalog.sessions() as s:
        return {r.id: status_of(r.start_at, r.end_at, now) for r in s.scalars(select(model))}


@pytest.mark.parametrize("path,model", [("/shows", Show), ("/fairs", Fair)])
def test_status_filters_partition_the_events(
    catalog: Catalog, path: str, model: type[Show] | type[Fair]
) -> None:
    expected = statuses(catalog, model)
    assert set(expected.values()) == {"upcoming", "running", "closed"}
    plural = path.strip("/")
    everything = walk_pages(catalog, path, size=100)
    assert {i["id"]: i["status"] for i in everything} == expected
    for status in ("upcoming", "running", "closed"):
        got = walk_pages(catalog, path, status=status, size=10)
        assert sorted(ids_of(got)) == sorted(k for k, v in expected.items() if v == status)
        assert {i["status"] for i in got} == {status}
    current = walk_pages(catalog, path, status="current", size=100)
    assert sorted(ids_of(current)) == sorted(k for k, v in expected.items() if v != "closed")
    r = catalog.get(path, status="soon")
    assert r.status_code == 400 and list(r.json()["detail"]) == ["status"]
    sample = catalog.get(path, status="closed", sample=1)
    assert sample.status_code == 302
    assert expected[sample.headers["Location"].rsplit("/", 1)[1]] == "closed"
    assert plural in sample.headers["Location"]


def test_show_item_filters_slug_and_404(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        show = s.scalars(select(Show).where(Show.fair_id.is_not(None)).order_by(Show.id)).first()
        assert show is not None
        by_partner = sorted(s.scalars(select(Show.id).where(Show.partner_id == show.partner_id)))
        by_fair = sorted(s.scalars(select(Show.id).where(Show.fair_id == show.fair_id)))
    body = catalog.ok(f"/shows/{show.id}")
    assert list(body) == SHOW_FIELDS
    assert SECONDS_FORM.match(body["start_at"]) and SECONDS_FORM.match(body["end_at"])
    api = catalog.api("")
    links = body["_links"]
    assert links["partner"]["href"] == f"{api}/partners/{show.partner_id}"
    assert links["artworks"]["href"] == f"{api}/artworks?show_id={show.id}"
    assert links["images"]["href"] == f"{api}/images?show_id={show.id}"
    assert links["fair"]["href"] == f"{api}/fairs/{show.fair_id}"
    assert ids_of(walk_pages(catalog, "/shows", partner_id=show.partner_id)) == by_partner
    assert ids_of(walk_pages(catalog, "/shows", fair_id=show.fair_id)) == by_fair
    r = catalog.get(f"/shows/{show.slug}")
    assert r.status_code == 302 and r.headers["Location"] == f"{api}/shows/{show.id}"
    r = catalog.get(f"/shows/{ZERO_ID}")
    assert r.status_code == 404 and r.json() == {"type": "other_error", "message": "Show Not Found"}


def test_fair_item_and_its_shows(catalog: Catalog) -> None:
    fair = catalog.scalars(select(Fair).order_by(Fair.id))[0]
    body = catalog.ok(f"/fairs/{fair.id}")
    assert body["name"] == fair.name and body["about"] == fair.about
    assert body["_links"]["shows"]["href"] == catalog.api(f"/shows?fair_id={fair.id}")
    shows = walk_pages(catalog, body["_links"]["shows"]["href"])
    assert shows and all(s["_links"]["fair"]["href"].endswith(fair.id) for s in shows)
    r = catalog.get(f"/fairs/{fair.slug}")
    assert r.status_code == 302 and r.headers["Location"] == catalog.api(f"/fairs/{fair.id}")
    r = catalog.get(f"/fairs/{ZERO_ID}")
    assert r.status_code == 404 and r.json() == {"type": "other_error", "message": "Fair Not Found"}


def test_sales_list_needs_a_user_token_and_hides_unpublished(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        published = sorted(s.scalars(select(Sale.id).where(Sale.published.is_(True))))
        every = sorted(s.scalars(select(Sale.id)))
        auctions = sorted(
            s.scalars(select(Sale.id).where(Sale.published.is_(True), Sale.is_auction.is_(True)))
        )
    assert len(every) > len(published)
    for headers in ({}, catalog.xapp, {"X-Access-Token": "garbage"}):
        r = catalog.get("/sales", headers)
        assert r.status_code == 401 and r.json() == INVALID
    assert ids_of(walk_pages(catalog, "/sales", catalog.user, size=2)) == published
    assert ids_of(walk_pages(catalog, "/sales", catalog.admin, size=2)) == every
    hidden = catalog.ok("/sales", catalog.user, published="false")
    assert hidden["_embedded"]["sales"] == []
    admin_hidden = walk_pages(catalog, "/sales", catalog.admin, published="false")
    assert ids_of(admin_hidden) == sorted(set(every) - set(published))
    assert ids_of(walk_pages(catalog, "/sales", catalog.user, is_auction="true")) == auctions
    now = datetime.now(UTC)
    live = walk_pages(catalog, "/sales", catalog.user, live="true")
    not_live = walk_pages(catalog, "/sales", catalog.user, live="false")
    assert sorted(ids_of(live) + ids_of(not_live)) == published
    for sale in live:
        start = datetime.strptime(sale["start_at"], "%Y-%m-%dT%H:%M:%S.000Z").replace(tzinfo=UTC)
        assert start <= now
    assert live and not_live
    total = catalog.ok("/sales", catalog.user, total_count=1)
    assert total["total_count"] == len(published)


def test_sale_item_formats_links_and_visibility(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        sale = s.scalars(
            select(Sale).where(Sale.published.is_(True), Sale.is_live_integration.is_(True))
        ).first()
        hidden = s.scalars(select(Sale).where(Sale.published.is_(False))).first()
        assert sale is not None and hidden is not None
    body = catalog.ok(f"/sales/{sale.id}")  # an XAPP token is enough for one sale
    assert list(body) == SALE_FIELDS
    for key in ("start_at", "end_at", "live_start_at", "registration_ends_at"):
        assert MS_FORM.match(body[key]), key
    for key in ("created_at", "updated_at"):
        assert SECONDS_FORM.match(body[key]), key
    api = catalog.api("")
    links = body["_links"]
    assert links["self"]["href"] == f"{api}/sales/{sale.id}"
    assert links["sale_artworks"] == {
        "href": f"{api}/sale_artworks?sale_id={sale.id}{{&published}}",
        "templated": True,
    }
    assert links["artists"]["href"] == f"{api}/artists?sale_id={sale.id}"
    assert links["bidders"]["href"] == f"{api}/bidders?sale_id={sale.id}"
    r = catalog.get(f"/sales/{sale.slug}")
    assert r.status_code == 302 and r.headers["Location"] == f"{api}/sales/{sale.id}"
    for headers in (catalog.xapp, catalog.user):
        for ref in (hidden.id, hidden.slug):
            r = catalog.get(f"/sales/{ref}", headers)
            assert r.status_code == 404
            assert r.json() == {"type": "other_error", "message": "Sale Not Found"}
    assert catalog.ok(f"/sales/{hidden.id}", catalog.admin)["published"] is False


def test_sale_artworks_of_published_sales(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        sale_id = s.scalar(select(Sale.id).where(Sale.published.is_(True)).order_by(Sale.id))
        hidden_id = s.scalar(select(Sale.id).where(Sale.published.is_(False)))
        lots = sorted(s.scalars(select(SaleArtwork.id).where(SaleArtwork.sale_id == sale_id)))
        hidden_lot = s.scalar(select(SaleArtwork.id).where(SaleArtwork.sale_id == hidden_id))
        visible = sorted(
            s.scalars(
                select(SaleArtwork.id)
                .join(Sale, Sale.id == SaleArtwork.sale_id)
                .where(Sale.published.is_(True))
            )
        )
        artwork_id, artwork_lot = s.execute(
            select(SaleArtwork.artwork_id, SaleArtwork.id).where(SaleArtwork.sale_id == sale_id)
        ).first()
        of_artwork = set(
            s.scalars(select(SaleArtwork.id).where(SaleArtwork.artwork_id == artwork_id))
        )
        # Make one lot's artwork unpublished: its lots are then shown nowhere, to anyone.
        s.execute(update(Artwork).where(Artwork.id == artwork_id).values(published=False))
        s.commit()
    assert lots and hidden_lot
    shown_lots = [lot for lot in lots if lot != artwork_lot]
    got = walk_pages(catalog, "/sale_artworks", sale_id=sale_id, size=4)
    assert ids_of(got) == shown_lots
    lot = got[0]
    assert lot["_links"]["sale"]["href"] == catalog.api(f"/sales/{sale_id}")
    assert lot["_links"]["artwork"]["href"].startswith(catalog.api("/artworks/"))
    assert ids_of(walk_pages(catalog, "/sale_artworks", size=100)) == [
        lot for lot in visible if lot not in of_artwork
    ]
    published = walk_pages(catalog, "/sale_artworks", sale_id=sale_id, published="true")
    assert ids_of(published) == shown_lots
    for headers in (catalog.xapp, catalog.admin):
        assert walk_pages(catalog, "/sale_artworks", headers, published="false") == []
        assert walk_pages(catalog, "/sale_artworks", headers, artwork_id=artwork_id) == []
        assert catalog.get(f"/sale_artworks/{artwork_lot}", headers).status_code == 404
    shown_artwork = catalog.ok(f"/sale_artworks/{shown_lots[0]}")["_links"]["artwork"]["href"]
    by_artwork = walk_pages(catalog, "/sale_artworks", artwork_id=shown_artwork.rsplit("/", 1)[1])
    assert {lot["_links"]["artwork"]["href"] for lot in by_artwork} == {shown_artwork}
    assert catalog.ok("/sale_artworks", sale_id=hidden_id)["_embedded"]["sale_artworks"] == []
    assert catalog.ok("/sale_artworks", catalog.admin, sale_id=hidden_id)["_embedded"][
        "sale_artworks"
    ]
    for headers in (catalog.xapp, catalog.user):
        r = catalog.get(f"/sale_artworks/{hidden_lot}", headers)
        assert r.status_code == 404
        assert r.json() == {"type": "other_error", "message": "Sale Artwork Not Found"}
    assert catalog.ok(f"/sale_artworks/{hidden_lot}", catalog.admin)["id"] == hidden_lot
    assert catalog.ok(f"/sale_artworks/{lots[0]}")["id"] == lots[0]
    assert catalog.get(f"/sale_artworks/{ZERO_ID}").status_code == 404


def test_artists_of_a_sale(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        hidden_id = s.scalar(select(Sale.id).where(Sale.published.is_(False)))
    sale = catalog.ok("/sales", catalog.user)["_embedded"]["sales"][0]
    artists = walk_pages(catalog, sale["_links"]["artists"]["href"])
    assert artists
    assert catalog.ok("/artists", sale_id=hidden_id)["_embedded"]["artists"] == []
    assert catalog.ok("/artists", catalog.admin, sale_id=hidden_id)["_embedded"]["artists"]


def test_a_sale_ending_now_is_not_live(catalog: Catalog) -> None:
    sale_id = catalog.scalars(select(Sale.id).where(Sale.published.is_(True)))[0]
    past = datetime.now(UTC) - timedelta(minutes=1)
    with catalog.sessions() as s, s.begin():
        s.execute(
            update(Sale)
            .where(Sale.id == sale_id)
            .values(start_at=past - timedelta(days=1), end_at=past)
        )
    assert sale_id not in ids_of(walk_pages(catalog, "/sales", catalog.user, live="true"))
    assert sale_id in ids_of(walk_pages(catalog, "/sales", catalog.user, live="false"))
