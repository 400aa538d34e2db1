"""``/api/profiles`` and ``/api/profiles/{id}`` (id or handle)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.hal import Urls
from resource_server.queries import profiles as q
from resource_server.representations.profiles import profile
from resource_server.resources.catalog_pages import CatalogItem, CatalogList
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(rel="profiles", path="/profiles", item_rel="profile")


class Profiles(CatalogList):
    """The paginated list of profiles."""

    route, model = ROUTE, "Profile"

    def query(
        self, session: Session, filters: dict[str, Any], page: PageParams, now: datetime
    ) -> PageResult:
        """Return one page."""
        return q.list_profiles(session, filters, page)

    def sample(self, session: Session, filters: dict[str, Any], now: datetime) -> Any:
        """Return a random element."""
        return q.sample_profile(session, filters)

    def render(self, row: Any, urls: Urls, now: datetime) -> dict[str, Any]:
        """Render one."""
        return profile(row, urls, self.settings.web_url)


class ProfileItem(CatalogItem):
    """One profile, by id (or by handle, redirecting to the id URL)."""

    route, model = ROUTE, "Profile"

    def find(self, session: Session, key: str) -> tuple[Any, bool]:
        """Find by id or handle."""
        return q.find_profile(session, key)

    def render(self, row: Any, urls: Urls, now: datetime) -> dict[str, Any]:
        """Render it."""
        return profile(row, urls, self.settings.web_url)
