"""What every catalog resource shares: its stores, settings and URL builder."""

from __future__ import annotations

from typing import Any

import falcon

from common.api.paging import PageParams, parse_page_params
from common.hal import Urls
from common.settings import ResourceSettings
from common.stores import Stores
from resource_server.doccache import DocumentCache


class Resource:
    """Base of the resource classes: ``auth`` is "none", "app" (any token) or "user"."""

    auth = "app"

    def __init__(self, stores: Stores, settings: ResourceSettings) -> None:
        self.stores = stores
        self.settings = settings

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # HEAD answers like GET without a body (falcon drops the body of HEAD responses).
        if hasattr(cls, "on_get") and "on_head" not in cls.__dict__:
            cls.on_head = cls.on_get  # type: ignore[attr-defined]

    def document_cache(self, *kinds: str, max_bytes: int | None = None) -> DocumentCache:
        """Return a cache of this resource's rendered documents, filed under the versions of
        ``kinds`` (``resource_server.doccache``), as large as the settings say."""
        return DocumentCache(
            self.settings.document_cache_size,
            kinds=kinds,
            max_bytes=max_bytes,
            settle=self.stores.replica_settle,
        )

    def urls(self, req: falcon.Request) -> Urls:
        """Return the URL builder for this request."""
        return Urls((self.settings.public_url or req.prefix).rstrip("/"))

    def page_params(self, req: falcon.Request) -> PageParams:
        """Parse the paging parameters of a list request."""
        return parse_page_params(
            req.params,
            default_size=self.settings.page_size_default,
            max_size=self.settings.page_size_max,
        )


def redirect(resp: falcon.Response, location: str) -> None:
    """Answer 302 with a JSON body that also carries the location."""
    resp.status = falcon.HTTP_302
    resp.location = location
    resp.media = {"_links": {"location": {"href": location}}}
