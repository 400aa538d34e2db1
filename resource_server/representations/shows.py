"""The show representation; ``status`` comes from the dates at the request's time."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from common.hal import Urls, image_links, link
from resource_server.representations.values import fields, imaged, schedule

_HEAD = ("name", "sortable_name", "description", "press_release")
_KINDS = ("is_reference", "is_solo_show", "is_group_show", "is_institutional_show", "is_fair_booth")


def show(s: Any, urls: Urls, now: datetime, web_url: str = "") -> dict[str, Any]:
    """Render a show with every documented field and link."""
    links = image_links(s.image_url, s.image_versions or [], ("medium", "square"), urls.base)
    # Our own show page unless WEB_URL names another website.
    links["permalink"] = link(f"{web_url or urls.base}/show/{s.slug}")
    links.update(
        self={"href": f"{urls.root}/shows/{s.id}"},
        partner={"href": f"{urls.root}/partners/{s.partner_id}"},
        artworks={"href": f"{urls.root}/artworks?show_id={s.id}"},
        images={"href": f"{urls.root}/images?show_id={s.id}"},
    )
    if s.fair_id:
        links["fair"] = {"href": f"{urls.root}/fairs/{s.fair_id}"}
    return imaged(s, links, fields(s, _HEAD), schedule(s, now), fields(s, _KINDS))
