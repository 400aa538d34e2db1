"""``/api/images?show_id=`` (a show's installation shots), ``/api/images?artwork_id=`` (an
artwork's additional views) and ``/api/images/{id}``."""

from __future__ import annotations

from typing import Any

import falcon

from common.api.errors import ParamError
from resource_server.params import Param
from resource_server.queries import images as q
from resource_server.representations.images import image
from resource_server.resources.catalog_pages import ApiLinked, Call, CatalogItem, CatalogList
from resource_server.routes import CollectionRoute

# Which images a list shows: one of these is required (both: the images in both).
OWNERS = ("show_id", "artwork_id")
ROUTE = CollectionRoute(
    rel="images",
    path="/images",
    item_rel="image",
    filters=(
        Param(
            "show_id",
            description="A show's installation shots; `show_id` or `artwork_id` "
            "is required (a 400 naming both without either).",
        ),
        Param(
            "artwork_id",
            description="An artwork's additional views; `show_id` or "
            "`artwork_id` is required (a 400 naming both without either).",
        ),
    ),
)


def require_owner(filters: dict[str, Any]) -> None:
    """Raise a 400 naming both owner parameters when neither was given."""
    if not any(name in filters for name in OWNERS):
        raise ParamError(
            "Show id or artwork id is required.",
            {
                "show_id": ["is required without artwork_id"],
                "artwork_id": ["is required without show_id"],
            },
        )


class ImageDocument(ApiLinked):
    """What the images list and item share: the type and its rendering."""

    route, model, listing, document = ROUTE, "Image", q.IMAGES, image
    replica_reads = True


class Images(ImageDocument, CatalogList):
    """The paginated images of a show or an artwork (``show_id`` or ``artwork_id`` required)."""

    def read(self, req: falcon.Request, call: Call) -> None:
        """Read the filters; without an owner, a 400 naming both."""
        super().read(req, call)
        require_owner(call.filters)


class ImageItem(ImageDocument, CatalogItem):
    """One image, by id (404 for an image of a hidden artwork, as for a missing one)."""
