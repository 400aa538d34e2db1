"""``/api/profiles`` and ``/api/profiles/{id}`` (id or handle)."""

from __future__ import annotations

from resource_server.queries import profiles as q
from resource_server.representations.profiles import profile
from resource_server.resources.catalog_pages import CatalogItem, CatalogList, Responder
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(rel="profiles", path="/profiles", item_rel="profile")


class ProfileDocument(Responder):
    """What the profiles list and item share: the type and its rendering."""

    route, model, listing, document = ROUTE, "Profile", q.PROFILES, profile
    replica_reads = True


class Profiles(ProfileDocument, CatalogList):
    """The paginated list of profiles."""


class ProfileItem(ProfileDocument, CatalogItem):
    """One profile, by id (or by handle, redirecting to the id URL)."""
