"""JSON Schemas (OpenAPI 3.1 components) of every representation the catalog renders."""

from __future__ import annotations

from typing import Any

from common.openapi.parts import (
    BOOL,
    ID,
    INT,
    STR,
    STRINGS,
    TS,
    Schema,
    links_with,
    null,
    obj,
    ref,
)

TS_MS: Schema = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"}
NUM: Schema = {"type": "number"}


def resource(fields: dict[str, Schema], links: list[str], embedded: Schema | None = None) -> Schema:
    """A HAL resource: its fields and a ``_links`` object requiring the named relations."""
    required = {**fields, "_links": links_with(links)}
    if embedded is not None:
        required["_embedded"] = embedded
    return obj(required)


STAMPS = {"id": ID, "created_at": TS, "updated_at": TS}
MEASURE = obj(
    {
        "text": null(STR),
        "height": null(NUM),
        "width": null(NUM),
        "depth": null(NUM),
        "diameter": null(NUM),
    }
)
DIMENSIONS = obj({"in": MEASURE, "cm": MEASURE})
STATUS = {"type": "string", "enum": ["upcoming", "running", "closed"]}

CATALOG: dict[str, Schema] = {
    "Artist": resource(
        {
            **STAMPS,
            "slug": STR,
            "name": STR,
            "sortable_name": STR,
            "gender": null(STR),
            "biography": null(STR),
            "birthday": STR,
            "deathday": STR,
            "hometown": null(STR),
            "location": null(STR),
            "nationality": null(STR),
            "target_supply": BOOL,
            "image_versions": STRINGS,
        },
        ["self", "permalink", "artworks", "published_artworks", "similar_artists", "genes"],
    ),
    "Artwork": resource(
        {
            **STAMPS,
            "slug": STR,
            "title": STR,
            "category": null(STR),
            "medium": null(STR),
            "date": null(STR),
            "dimensions": DIMENSIONS,
            "published": BOOL,
            "website": STR,
            "signature": STR,
            "series": STR,
            "provenance": STR,
            "credit_line": STR,
            "literature": STR,
            "exhibition_history": STR,
            "collecting_institution": STR,
            "additional_information": STR,
            "image_rights": null(STR),
            "blurb": STR,
            "unique": BOOL,
            "cultural_maker": null(STR),
            "iconicity": NUM,
            "can_inquire": BOOL,
            "can_acquire": BOOL,
            "can_share": BOOL,
            "sale_message": null(STR),
            "sold": BOOL,
            "image_versions": STRINGS,
        },
        ["self", "permalink", "genes", "artists", "similar_artworks"],
        obj({"editions": {"type": "array", "items": ref("Edition")}}),
    ),
    "Edition": resource(
        {
            **STAMPS,
            "dimensions": DIMENSIONS,
            "editions": STR,
            "size": null(STR),
            "available_editions": null({"type": "array"}),
            "artist_proofs": null(STR),
            "prototypes": null(STR),
            "can_acquire": BOOL,
            "sale_message": null(STR),
            "sold": BOOL,
        },
        ["self", "artwork"],
    ),
    "Gene": resource(
        {
            "id": ID,
            "created_at": null(TS),
            "updated_at": TS,
            "name": STR,
            "display_name": null(STR),
            "description": STR,
            "image_versions": STRINGS,
        },
        ["self", "permalink", "artworks", "published_artworks", "artists"],
    ),
    "Partner": resource(
        {
            **STAMPS,
            "slug": STR,
            "type": STR,
            "name": STR,
            "email": STR,
            "region": null(STR),
            "enforce_on_platform_transactions": null(BOOL),
        },
        ["self", "permalink", "artworks", "artists", "published_artworks", "shows"],
    ),
    "Profile": resource(
        {
            **STAMPS,
            "handle": STR,
            "location": STR,
            "description": STR,
            "image_versions": STRINGS,
        },
        ["self", "permalink"],
    ),
    "Image": resource(
        {
            **STAMPS,
            "position": INT,
            "default": BOOL,
            "aspect_ratio": null(NUM),
            "original_height": null(INT),
            "original_width": null(INT),
            "image_versions": STRINGS,
        },
        ["self"],
    ),
    "Show": resource(
        {
            **STAMPS,
            "name": STR,
            "sortable_name": STR,
            "description": STR,
            "press_release": null(STR),
            "start_at": null(TS),
            "end_at": null(TS),
            "status": STATUS,
            "is_reference": BOOL,
            "is_solo_show": BOOL,
            "is_group_show": BOOL,
            "is_institutional_show": BOOL,
            "is_fair_booth": BOOL,
            "image_versions": STRINGS,
        },
        ["self", "permalink", "partner", "artworks", "images"],
    ),
    "Fair": resource(
        {
            **STAMPS,
            "name": STR,
            "about": STR,
            "tagline": STR,
            "city": null(STR),
            "start_at": null(TS),
            "end_at": null(TS),
            "status": STATUS,
            "image_versions": STRINGS,
        },
        ["self", "shows"],
    ),
    "Sale": resource(
        {
            **STAMPS,
            "slug": STR,
            "auction_state": null(STR),
            "name": STR,
            "is_preliminary": BOOL,
            "is_auction": BOOL,
            "is_live_integration": BOOL,
            "start_at": null(TS_MS),
            "end_at": null(TS_MS),
            "time_zone": STR,
            "live_start_at": null(TS_MS),
            "registration_ends_at": null(TS_MS),
            "published": BOOL,
            "has_buyers_premium": BOOL,
            "bidding_engine_enabled": BOOL,
            "sync_to_causality": BOOL,
            "collect_payments": BOOL,
            "image_versions": STRINGS,
        },
        ["self", "sale_artworks"],
    ),
    "SaleArtwork": resource(
        {
            **STAMPS,
            "position": INT,
            "lot_number": null(STR),
            "currency": STR,
            "opening_bid_cents": null(INT),
            "low_estimate_cents": null(INT),
            "high_estimate_cents": null(INT),
            "highest_bid_amount_cents": null(INT),
            "bidder_positions_count": INT,
        },
        ["self", "sale", "artwork"],
    ),
}

ACCOUNTS: dict[str, Schema] = {
    # The caller's own user also shows its address, whether that is verified, and its dates.
    "User": {
        **obj(
            {"id": ID, "name": STR, "_links": links_with(["self", "collections"])},
            {"email": STR, "email_verified": BOOL, "created_at": TS, "updated_at": TS},
        ),
        "dependentRequired": {"email": ["email_verified"]},
    },
    "UserDetail": resource(
        {
            **STAMPS,
            "type": STR,
            "email": STR,
            # True only when the owner proved the address (a link sent there, or a provider
            # that verified it): never take an unverified address as the user's.
            "email_verified": BOOL,
            "birthday": null(STR),
            "phone": null(STR),
            "gender": null(STR),
        },
        ["self", "user", "partners", "collections"],
    ),
    "Collection": resource(
        {
            **STAMPS,
            "name": STR,
            "description": STR,
            "default": BOOL,
            "private": BOOL,
        },
        ["self", "user", "artworks", "collection_items"],
    ),
    "CollectionItem": resource(
        {**STAMPS, "position": {"type": "integer", "minimum": 1}},
        ["self", "user", "collection", "artwork"],
    ),
    "Bidder": resource(
        {**STAMPS, "qualified_for_bidding": BOOL},
        ["self", "sale", "user"],
    ),
}

# The catalog's own shared schemas (the common ones are ``common.openapi.parts.COMMON``).
CATALOG_COMMON: dict[str, Schema] = {
    "PageLinks": links_with(["self"]),
    "Root": obj({"_links": links_with(["self"])}),
    "Status": obj(
        {"status": {"type": "string", "enum": ["good", "minor", "major"]}, "updated_at": TS},
        {"_links": links_with(["self"])},
    ),
}


def schema_name(route: Any) -> str:
    """Return the component name of a collection route's items (``sale_artwork`` → SaleArtwork)."""
    singular = route.item_rel or route.rel.rstrip("s")
    return "".join(part.capitalize() for part in singular.split("_"))
