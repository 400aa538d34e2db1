"""``/api/images?show_id=`` (a show's installation shots) and ``/api/images/{id}``."""

from __future__ import annotations

from typing import Any

from resource_server.params import Param
from resource_server.queries import images as q
from resource_server.representations.images import image
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="images", path="/images", item_rel="image", filters=(Param("show_id", required=True),)
)


class ImageDocument(Responder):
    """What the images list and item share: the type and its rendering."""

    route, model, listing = ROUTE, "Image", q.IMAGES

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one."""
        return image(row, call.urls)


class Images(ImageDocument, CatalogList):
    """The paginated installation shots of a show (``show_id`` is required)."""


class ImageItem(ImageDocument, CatalogItem):
    """One image, by id."""
