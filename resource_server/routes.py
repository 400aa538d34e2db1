"""Route declarations: each collection's path and accepted parameters, rendered into the root."""

from __future__ import annotations

from dataclasses import dataclass, field

from common.hal import PAGING_PARAMS, Link, Urls, link, query_template, templated
from resource_server.params import Param


@dataclass(frozen=True)
class CollectionRoute:
    """A collection route and its item route, with the filters the collection accepts.

    ``auth`` and ``item_auth`` say which token each route needs (``app``: any token, ``user``:
    a user's), as its resource's ``auth`` does; the OpenAPI document's security follows them.
    """

    rel: str
    path: str
    filters: tuple[Param, ...] = ()
    item_rel: str | None = None
    paged: bool = True
    item_params: tuple[str, ...] = field(default=())
    item_required: tuple[str, ...] = field(default=())
    auth: str = "app"
    item_auth: str = "app"

    @property
    def item_path(self) -> str:
        """Return the item route's path template."""
        return f"{self.path}/{{id}}"

    def param_names(self) -> list[str]:
        """Return every accepted query parameter, filters first, then paging."""
        names = [p.name for p in self.filters]
        return names + list(PAGING_PARAMS) if self.paged else names

    def links(self, urls: Urls) -> dict[str, Link]:
        """Return the root's templated links for the collection and its items."""
        out = {self.rel: templated(query_template(urls.api(self.path), self.param_names()))}
        if self.item_rel:
            out[self.item_rel] = templated(
                query_template(urls.api(self.item_path), list(self.item_params))
            )
        return out


@dataclass(frozen=True)
class PlainRoute:
    """A route linked from the root without a template."""

    rel: str
    path: str

    def links(self, urls: Urls) -> dict[str, Link]:
        """Return the root's plain link."""
        return {self.rel: link(urls.api(self.path))}


@dataclass(frozen=True)
class ServedByAuthRoute(PlainRoute):
    """A collection the authorization server serves (under the same ``/api``), linked from the
    root as the reference API's root links it: a templated list and a templated item link.

    Its operations are declared with the authorization server's in the OpenAPI document.
    """

    item_rel: str = ""
    params: tuple[str, ...] = ()

    def links(self, urls: Urls) -> dict[str, Link]:
        """Return the root's templated links for the collection and its items."""
        return {
            self.rel: templated(query_template(urls.api(self.path), list(self.params))),
            self.item_rel: templated(urls.api(f"{self.path}/{{id}}")),
        }


# The user's applications (a user token): ``/api/applications`` lives on the auth server.
APPLICATIONS = ServedByAuthRoute(
    "applications",
    "/applications",
    item_rel="application",
    params=("user_id", "total_count", "size", "cursor"),
)
