"""``/api/images?show_id=`` (a show's installation shots) and ``/api/images/{id}``."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from common.api.keyset import PageResult
from common.api.paging import PageParams
from resource_server.params import Param
from resource_server.queries import images as q
from resource_server.representations.images import image
from resource_server.resources.catalog_pages import Call, CatalogItem, CatalogList
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="images", path="/images", item_rel="image", filters=(Param("show_id", required=True),)
)


class Images(CatalogList):
    """The paginated installation shots of a show (``show_id`` is required)."""

    route, model = ROUTE, "Image"

    def query(self, session: Session, call: Call, page: PageParams) -> PageResult:
        """Return one page."""
        return q.list_images(session, call.filters, page)

    def sample(self, session: Session, call: Call) -> Any:
        """Return a random element."""
        return q.sample_image(session, call.filters)

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render one."""
        return image(row, call.urls)


class ImageItem(CatalogItem):
    """One image, by id."""

    route, model = ROUTE, "Image"

    def find(self, session: Session, key: str, call: Call) -> tuple[Any, bool]:
        """Find by id."""
        return q.find_image(session, key), False

    def render(self, row: Any, call: Call) -> dict[str, Any]:
        """Render it."""
        return image(row, call.urls)
