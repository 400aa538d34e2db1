"""The catalog (resource) server: a Falcon WSGI app built by ``create_app``."""

from __future__ import annotations

from typing import Any, NamedTuple

import falcon
import orjson
from falcon import media

from common.hardening import PRIVATE, Hardening
from common.observability import ROUTE_KEY, Observer
from common.settings import ResourceSettings
from common.stores import Stores
from resource_server import errors
from resource_server.gate import GateMiddleware, RequestGate
from resource_server.negotiation import (
    HAL,
    NegotiationMiddleware,
    UnsupportedContentType,
    handle_unsupported,
    vendor_types,
)
from resource_server.openapi.resource import OpenAPI
from resource_server.ratelimit import (
    RateLimited,
    RateLimiter,
    handle_rate_limited,
)
from resource_server.representations.values import document_bytes
from resource_server.resources import (
    artists,
    artworks,
    bidders,
    collection_items,
    collections,
    editions,
    fairs,
    genes,
    images,
    partners,
    profiles,
    sale_artworks,
    sales,
    shows,
    users,
)
from resource_server.resources.base import Resource
from resource_server.resources.root import Healthz, Readyz, Root, Status
from resource_server.routes import APPLICATIONS, CollectionRoute, PlainRoute
from resource_server.search import resource as search
from resource_server.web import add_pages
from resource_server.web.limit import PageLimiter, PageLimitMiddleware

CORS_HEADERS = ("X-Xapp-Token", "X-Access-Token", "X-Auth-Token", "Authorization", "Content-Type")


def _dumps(obj: Any) -> str:
    return document_bytes(obj).decode()


class RouteLabel:
    """Hand the matched route template to the observability middleware (through the environ)."""

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        """Label the request with its route template (None when no route matched)."""
        req.env[ROUTE_KEY] = req.uri_template


class PrivateResponses:
    """Keep a user's data out of shared caches: ``Cache-Control: private, no-store``.

    Set on every response of a user-scoped route (whatever its status) and on every response
    to a request made with a user token. Catalog responses to an XAPP token are left as they are.
    """

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        """Mark the response private when it belongs to a user."""
        token = getattr(req.context, "token", None)
        if getattr(resource, "auth", None) == "user" or (token is not None and token.is_user):
            resp.set_header("Cache-Control", PRIVATE)


class ObservedApp(falcon.App):
    """The catalog app, served through the hardening, request id, access log and metrics."""

    def __init__(self, settings: ResourceSettings, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        observed = Observer(
            super().__call__,
            service="resource",
            access_log=settings.access_log,
            expose_metrics=settings.metrics_enabled,
            metrics_from=settings.metrics_networks,
        )
        self._observed = Hardening(observed, settings)

    def __call__(self, env: dict[str, Any], start_response: Any) -> Any:
        """Serve one request."""
        return self._observed(env, start_response)


class Mount(NamedTuple):
    """A route and the resources serving it: its collection (or only path) and its items, and
    the tag the OpenAPI document lists its operations under."""

    route: CollectionRoute | PlainRoute
    collection: type[Resource] | None = None
    item: type[Resource] | None = None
    tag: str = "catalog"


# Every route the root links to (and the OpenAPI document describes), in the root's order,
# with the resources this server answers it with (none for a route of the auth server).
ROUTE_TABLE: list[Mount] = [
    Mount(artists.ROUTE, artists.Artists, artists.ArtistItem),
    Mount(artworks.ROUTE, artworks.Artworks, artworks.ArtworkItem),
    Mount(editions.ROUTE, editions.Editions, editions.EditionItem),
    Mount(genes.ROUTE, genes.Genes, genes.GeneItem),
    Mount(shows.ROUTE, shows.Shows, shows.ShowItem),
    Mount(partners.ROUTE, partners.Partners, partners.PartnerItem),
    Mount(sales.ROUTE, sales.Sales, sales.SaleItem, "auctions"),
    Mount(
        sale_artworks.ROUTE,
        sale_artworks.SaleArtworks,
        sale_artworks.SaleArtworkItem,
        "auctions",
    ),
    Mount(fairs.ROUTE, fairs.Fairs, fairs.FairItem),
    Mount(profiles.ROUTE, profiles.Profiles, profiles.ProfileItem),
    Mount(images.ROUTE, images.Images, images.ImageItem),
    Mount(PlainRoute("status", "/status"), Status, tag="service"),
    Mount(users.ROUTE, users.Users, users.UserItem, "accounts"),
    Mount(users.CURRENT_USER, users.CurrentUser, tag="accounts"),
    Mount(users.USER_DETAIL, item=users.UserDetailItem, tag="accounts"),
    Mount(collections.ROUTE, collections.Collections, collections.CollectionResource, "accounts"),
    Mount(
        collection_items.ROUTE,
        collection_items.CollectionItems,
        collection_items.CollectionItemResource,
        "accounts",
    ),
    Mount(bidders.ROUTE, bidders.Bidders, bidders.BidderItem, "auctions"),
    Mount(search.ROUTE, search.Search, tag="search"),
    # Served (and described) by the auth server.
    Mount(APPLICATIONS, tag="accounts"),
]
ROOT_ROUTES: list[CollectionRoute | PlainRoute] = [mount.route for mount in ROUTE_TABLE]


def create_app(settings: ResourceSettings, stores: Stores | None = None) -> falcon.App:
    """Build the catalog app with every route registered."""
    stores = stores or Stores.connect(settings)
    limiter = RateLimiter(
        stores.redis,
        stores.reads,
        rate=settings.rate_limit,
        burst=settings.rate_limit_burst,
        prefix=settings.redis_prefix,
    )
    gate = RequestGate(stores.redis, stores.tokens, limiter, prefix=settings.redis_prefix)
    pages = PageLimiter(
        gate,
        rate=settings.page_rate_limit,
        burst=settings.page_rate_limit_burst,
        prefix=settings.redis_prefix,
    )
    middleware: list[Any] = [
        RouteLabel(),
        PrivateResponses(),
        falcon.CORSMiddleware(
            allow_origins="*", expose_headers=["Location", "Retry-After", "X-Request-Id"]
        ),
        NegotiationMiddleware(settings.vendor),
        GateMiddleware(gate),
        PageLimitMiddleware(pages),
    ]
    app = ObservedApp(settings, media_type="application/json", middleware=middleware)
    json_handler = media.JSONHandler(dumps=_dumps, loads=orjson.loads)
    app.req_options.media_handlers.update({falcon.MEDIA_JSON: json_handler})
    for media_type in (falcon.MEDIA_JSON, HAL, *vendor_types(settings.vendor)):
        app.resp_options.media_handlers[media_type] = json_handler
    app.req_options.strip_url_path_trailing_slash = True
    errors.register(app)
    app.add_error_handler(UnsupportedContentType, handle_unsupported)
    app.add_error_handler(RateLimited, handle_rate_limited)

    args = (stores, settings)
    app.add_route("/api", Root(*args, routes=ROOT_ROUTES))
    app.add_route("/api/openapi.json", OpenAPI(*args, table=ROUTE_TABLE))
    app.add_route("/healthz", Healthz(*args))
    app.add_route("/readyz", Readyz(*args))
    for route, collection, item, _tag in ROUTE_TABLE:
        if collection is not None:
            app.add_route(f"/api{route.path}", collection(*args))
        if item is not None:
            app.add_route(f"/api{route.path}/{{id}}", item(*args))
    add_pages(app, stores, settings, ROOT_ROUTES)
    return app
