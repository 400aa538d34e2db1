"""The bidder representation (never its pin)."""

from __future__ import annotations

from typing import Any

from common.hal import Link, Urls, link
from common.ids import format_ts
from common.models import Bidder


def bidder(b: Bidder, urls: Urls, caller: str) -> dict[str, Any]:
    """Render a registration to bid; the user details link only for the bidder itself."""
    links: dict[str, Link] = {
        "self": link(urls.api(f"/bidders/{b.id}")),
        "sale": link(urls.api(f"/sales/{b.sale_id}")),
        "user": link(urls.api(f"/users/{b.user_id}")),
    }
    if b.user_id == caller:
        links["user_detail"] = link(urls.api(f"/user_details/{b.user_id}"))
    return {
        "id": b.id,
        "created_at": format_ts(b.created_at),
        "updated_at": format_ts(b.updated_at),
        "qualified_for_bidding": b.qualified_for_bidding,
        "_links": links,
    }
