"""Demo events: fairs, shows (with booths and installation shots) and sales with their lots.

Their dates are placed around the day of the load, so that every status filter (upcoming,
running, closed) has something to return whenever the demo is loaded.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from artcat.loaders import demo_words as words
from artcat.loaders.demo_context import (
    DemoContext,
    Row,
    image_fields,
    no_image,
    stamps,
    unique_slug,
)
from artcat.loaders.demo_partners import add_profile
from common.models import (
    Artist,
    Artwork,
    ArtworkArtist,
    Fair,
    Image,
    Partner,
    Sale,
    SaleArtwork,
    Show,
    ShowArtwork,
)

FAIR_IMAGE_VERSIONS = ["large_rectangle", "square", "wide"]
SHOW_IMAGE_VERSIONS = ["featured", "general", "large", "larger", "medium", "square", "tall"]
INSTALLATION_IMAGE_VERSIONS = ["large", "medium250x165", "square", "wide"]
SALE_IMAGE_VERSIONS = ["wide", "large_rectangle", "square", "source"]
STATUSES = ("closed", "running", "upcoming")


def window(ctx: DemoContext, rng: random.Random, status: str) -> tuple[datetime, datetime]:
    """Return start and end times that give an event the status on the day of the load."""
    if status == "closed":
        end = ctx.at(-rng.randint(2, 120))
        return end - timedelta(days=rng.randint(14, 60)), end
    if status == "running":
        return ctx.at(-rng.randint(1, 30)), ctx.at(rng.randint(3, 45))
    start = ctx.at(rng.randint(3, 60))
    return start, start + timedelta(days=rng.randint(14, 60))


def build_fairs(ctx: DemoContext) -> None:
    """Queue a closed, a running and an upcoming fair, each with a profile."""
    rng = ctx.rng("fairs")
    for n, (name, status) in enumerate(zip(words.FAIR_NAMES, STATUSES, strict=True)):
        start, end = window(ctx, rng, status)
        if status == "running":  # fairs are short
            start, end = ctx.at(-1), ctx.at(3)
        city = rng.choice(words.CITIES)
        slug = unique_slug(name, ctx.slugs)
        fair = ctx.add(
            Fair,
            {
                "id": ctx.id("fair", n),
                "slug": slug,
                "name": name,
                "about": f"**{name}** brings galleries together in {city}.\n\n"
                f"[Visit the fair](https://{slug}.example.org).",
                "tagline": f"{rng.choice(words.ADJECTIVES)} art, {city.split(',')[0]}",
                "city": city,
                "start_at": start,
                "end_at": end,
                **image_fields(rng, FAIR_IMAGE_VERSIONS),
                **stamps(rng),
            },
        )
        add_profile(
            ctx,
            rng,
            owner_type="fair",
            owner_id=fair["id"],
            handle=unique_slug(slug, ctx.handles),
            description=f"{name}, {city}.",
            website=f"https://{slug}.example.org",
            location=city,
        )


class Pools:
    """The published artworks a show can hang: by partner, by artist, or any."""

    def __init__(self, ctx: DemoContext) -> None:
        published = {a["id"]: a for a in ctx.of(Artwork) if a["published"]}
        self.by_partner: dict[str, list[str]] = {}
        for artwork in published.values():
            if artwork["partner_id"]:
                self.by_partner.setdefault(artwork["partner_id"], []).append(artwork["id"])
        self.by_artist: dict[str, list[str]] = {}
        for link in ctx.of(ArtworkArtist):
            if link["artwork_id"] in published:
                self.by_artist.setdefault(link["artist_id"], []).append(link["artwork_id"])
        self.everything = sorted(published)

    def pick(self, partner: Row, artist: Row | None) -> list[str]:
        """Return the artworks of a show: the artist's if solo, else the partner's, else any."""
        if artist is not None and self.by_artist.get(artist["id"]):
            return self.by_artist[artist["id"]]
        return self.by_partner.get(partner["id"]) or self.everything


def _add_show(
    ctx: DemoContext,
    rng: random.Random,
    n: int,
    partner: Row,
    status: str,
    fair: Row | None,
    pools: Pools,
) -> None:
    """Queue a show of a partner with its artworks and, once opened, installation shots."""
    solo_artist = rng.choice(ctx.of(Artist)) if fair is None and rng.random() < 0.4 else None
    institutional = partner["type"] == "Institution"
    if fair is not None:
        name, start, end = f"{partner['name']} at {fair['name']}", fair["start_at"], fair["end_at"]
    else:
        theme = rng.choice(words.THEMES)
        name = f"{solo_artist['name']}: {theme}" if solo_artist else theme
        if institutional and not solo_artist:
            name = f"{theme}: Works from the Collection"
        start, end = window(ctx, rng, status)
    show_id = ctx.id("show", n)
    shots = 0 if status == "upcoming" else rng.randint(1, 3)
    ctx.add(
        Show,
        {
            "id": show_id,
            "slug": unique_slug(f"{partner['slug']} {name}", ctx.slugs, 150),
            "name": name,
            "sortable_name": name.lower(),
            "description": f"*{name}* at {partner['name']}.",
            "press_release": rng.choice(("", None, f"## {name}\n\nOpening reception on view.")),
            "start_at": start,
            "end_at": end,
            "is_reference": status == "closed" and rng.random() < 0.2,
            "is_solo_show": solo_artist is not None,
            "is_group_show": solo_artist is None and fair is None,
            "is_institutional_show": institutional,
            "is_fair_booth": fair is not None,
            "partner_id": partner["id"],
            "fair_id": fair["id"] if fair else None,
            **(image_fields(rng, SHOW_IMAGE_VERSIONS) if shots else no_image()),
            **stamps(rng),
        },
    )
    pool = pools.pick(partner, solo_artist)
    chosen = rng.sample(pool, min(len(pool), rng.randint(3, 10)))
    for position, artwork_id in enumerate(chosen, start=1):
        ctx.add(ShowArtwork, {"show_id": show_id, "artwork_id": artwork_id, "position": position})
    for k in range(shots):
        ctx.add(
            Image,
            {
                "id": ctx.id("installation-shot", f"{show_id}:{k}"),
                "position": k + 1,
                "default": k == 0,
                "aspect_ratio": 1.5 if k % 2 == 0 else None,
                "original_height": 2000 if k % 2 == 0 else None,
                "original_width": 3000 if k % 2 == 0 else None,
                "caption": f"Installation view, {name}" if k == 0 else None,
                "show_id": show_id,
                "artwork_id": None,
                **image_fields(rng, INSTALLATION_IMAGE_VERSIONS),
                **stamps(rng),
            },
        )


def build_shows(ctx: DemoContext) -> None:
    """Queue two or three shows per partner (every status) and gallery booths at every fair."""
    rng = ctx.rng("shows")
    pools = Pools(ctx)
    partners = ctx.of(Partner)
    n = 0
    for p, partner in enumerate(partners):
        for k in range(rng.randint(2, 3)):
            _add_show(ctx, rng, n, partner, STATUSES[(p + k) % len(STATUSES)], None, pools)
            n += 1
    galleries = [p for p in partners if p["type"] == "Gallery"]
    for f, fair in enumerate(ctx.of(Fair)):
        status = STATUSES[f % len(STATUSES)]
        for partner in rng.sample(galleries, min(len(galleries), 4)):
            _add_show(ctx, rng, n, partner, status, fair, pools)
            n += 1


# (status, is_auction, live integration, published, currency)
SALE_SPECS = (
    ("running", True, True, True, "USD"),
    ("running", True, False, True, "GBP"),
    ("closed", True, False, True, "USD"),
    ("upcoming", True, False, True, "EUR"),
    ("running", False, False, True, "USD"),
    ("upcoming", True, False, False, "USD"),
)
AUCTION_STATES = {"closed": "closed", "running": "open", "upcoming": "preview"}


def build_sales(ctx: DemoContext) -> None:
    """Queue sales (live, timed, closed, upcoming, fixed-price, unpublished) and their lots."""
    rng = ctx.rng("sales")
    published = sorted(a["id"] for a in ctx.of(Artwork) if a["published"])
    galleries = [p for p in ctx.of(Partner) if p["type"] == "Gallery"]
    for n, (status, auction, live, public, currency) in enumerate(SALE_SPECS):
        start, end = window(ctx, rng, status)
        name = words.SALE_NAMES[n % len(words.SALE_NAMES)]
        live_start = ctx.at(1, 18) if live else None
        if live:  # online bidding opened before the live auction, which ends it
            start, end = ctx.at(-3), ctx.at(1, 22)
        sale_id = ctx.id("sale", n)
        ctx.add(
            Sale,
            {
                "id": sale_id,
                "slug": unique_slug(name, ctx.slugs),
                "name": name,
                "description": f"**{name}**. Lots on view by appointment.",
                "auction_state": AUCTION_STATES[status] if auction else None,
                "is_preliminary": status == "upcoming" and auction,
                "is_auction": auction,
                "is_live_integration": live,
                "start_at": start,
                "end_at": end,
                "time_zone": rng.choice(("Etc/UTC", "America/New_York", "Europe/London")),
                "live_start_at": live_start,
                "registration_ends_at": (live_start or end) - timedelta(hours=2)
                if auction
                else None,
                "published": public,
                "has_buyers_premium": auction,
                "bidding_engine_enabled": auction and status != "closed",
                "sync_to_causality": live,
                "collect_payments": auction,
                "partner_id": None if auction else rng.choice(galleries)["id"],
                **(image_fields(rng, SALE_IMAGE_VERSIONS) if n != 5 else no_image()),
                **stamps(rng),
            },
        )
        lots = rng.sample(published, min(len(published), rng.randint(6, 15)))
        for position, artwork_id in enumerate(lots, start=1):
            ctx.add(SaleArtwork, _lot(ctx, rng, sale_id, artwork_id, position, status, auction))
        if currency != "USD":
            for row in ctx.of(SaleArtwork)[-len(lots) :]:
                row["currency"] = currency


def _lot(
    ctx: DemoContext,
    rng: random.Random,
    sale_id: str,
    artwork_id: str,
    position: int,
    status: str,
    auction: bool,
) -> Row:
    """Return a sale artwork row: lot number, estimates in cents and bidding state."""
    low = rng.choice((5, 8, 10, 15, 20, 30, 50, 80, 120)) * 100_000 if auction else None
    bids = rng.randint(0, 12) if auction and status != "upcoming" else 0
    return {
        "id": ctx.id("sale-artwork", f"{sale_id}:{artwork_id}"),
        "sale_id": sale_id,
        "artwork_id": artwork_id,
        "position": position,
        "lot_number": str(position) if auction else None,
        "currency": "USD",
        "opening_bid_cents": low * 6 // 10 if low else None,
        "low_estimate_cents": low,
        "high_estimate_cents": low * 3 // 2 if low else None,
        "highest_bid_amount_cents": low + bids * 50_000 if low and bids else None,
        "bidder_positions_count": bids,
        **stamps(rng),
    }
