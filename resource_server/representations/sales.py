"""The sale representation."""

from __future__ import annotations

from typing import Any

from common.hal import Urls, link, query_template, templated
from common.ids import format_ts_ms
from resource_server.representations.values import image_and_self, stamp


def sale(s: Any, urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render a sale: schedule fields in the ``.000Z`` form, the rest in ``+00:00``."""
    links = image_and_self(s, urls, "/sales", ("large_rectangle", "wide"))
    if web_url:
        links["permalink"] = link(f"{web_url}/{'auction' if s.is_auction else 'sale'}/{s.slug}")
    lots = f"{urls.root}/sale_artworks?sale_id={s.id}"
    links["sale_artworks"] = templated(query_template(lots, ["published"], continuation=True))
    links["artists"] = {"href": f"{urls.root}/artists?sale_id={s.id}"}
    # The caller's registrations to bid in this sale (a user-token route).
    links["bidders"] = {"href": f"{urls.root}/bidders?sale_id={s.id}"}
    if s.partner_id:
        links["partner"] = {"href": f"{urls.root}/partners/{s.partner_id}"}
    return {
        "id": s.id,
        "slug": s.slug,
        "auction_state": s.auction_state,
        "name": s.name,
        "is_preliminary": s.is_preliminary,
        "is_auction": s.is_auction,
        "is_live_integration": s.is_live_integration,
        "start_at": format_ts_ms(s.start_at),
        "end_at": format_ts_ms(s.end_at),
        "time_zone": s.time_zone,
        "live_start_at": format_ts_ms(s.live_start_at),
        "registration_ends_at": format_ts_ms(s.registration_ends_at),
        "published": s.published,
        "has_buyers_premium": s.has_buyers_premium,
        "bidding_engine_enabled": s.bidding_engine_enabled,
        "sync_to_causality": s.sync_to_causality,
        "collect_payments": s.collect_payments,
        "created_at": stamp(s.created_at),
        "updated_at": stamp(s.updated_at),
        "image_versions": list(s.image_versions or []),
        "_links": links,
    }
