"""The profile representation."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from common.hal import Urls, link
from resource_server.representations.values import fields, image_and_self, imaged

# The item route of a profile's owner, by owner type. Users' profiles get no ``owner`` link until
# the users route is served: a link is rendered only when its route answers.
OWNER_ROUTES = {"partner": "/partners", "fair": "/fairs", "user": "/users"}


def profile(p: Any, urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render a profile with its owner and cover image links."""
    links = image_and_self(p, urls, "/profiles", ("square",))
    # The website's page of the handle, else our own profile page.
    handle = quote(p.handle or p.id, safe="")
    links["permalink"] = link(f"{web_url}/{handle}" if web_url else f"{urls.base}/profile/{handle}")
    if p.website:
        links["website"] = link(p.website)
    if p.cover_image_id:
        links["cover_image"] = {"href": f"{urls.root}/images/{p.cover_image_id}"}
    owner_route = OWNER_ROUTES.get(p.owner_type)
    if owner_route:
        links["owner"] = {"href": f"{urls.root}{owner_route}/{p.owner_id}"}
    return imaged(p, links, fields(p, ("handle", "location", "description")))
