"""The catalog (resource) server: a Falcon WSGI app built by ``create_app``."""

from __future__ import annotations

from typing import Any

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
from resource_server.resources.root import Healthz, Readyz, Root, Status
from resource_server.routes import APPLICATIONS, CollectionRoute, PlainRoute
from resource_server.search import resource as search
from resource_server.web import add_pages

CORS_HEADERS = ("X-Xapp-Token", "X-Access-Token", "X-Auth-Token", "Authorization", "Content-Type")


def _dumps(obj: Any) -> str:
    return orjson.dumps(obj).decode()


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
        )
        self._observed = Hardening(observed, settings)

    def __call__(self, env: dict[str, Any], start_response: Any) -> Any:
        """Serve one request."""
        return self._observed(env, start_response)


# Every route the root links to (and the OpenAPI document describes), in the root's order.
ROOT_ROUTES: list[CollectionRoute | PlainRoute] = [
    artists.ROUTE,
    artworks.ROUTE,
    editions.ROUTE,
    genes.ROUTE,
    shows.ROUTE,
    partners.ROUTE,
    sales.ROUTE,
    sale_artworks.ROUTE,
    fairs.ROUTE,
    profiles.ROUTE,
    images.ROUTE,
    PlainRoute("status", "/status"),
    users.ROUTE,
    users.CURRENT_USER,
    users.USER_DETAIL,
    collections.ROUTE,
    collection_items.ROUTE,
    bidders.ROUTE,
    search.ROUTE,
    APPLICATIONS,
]


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
    middleware: list[Any] = [
        RouteLabel(),
        PrivateResponses(),
        falcon.CORSMiddleware(
            allow_origins="*", expose_headers=["Location", "Retry-After", "X-Request-Id"]
        ),
        NegotiationMiddleware(settings.vendor),
        GateMiddleware(
            RequestGate(stores.redis, stores.tokens, limiter, prefix=settings.redis_prefix)
        ),
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
    app.add_route("/api/openapi.json", OpenAPI(*args, routes=ROOT_ROUTES))
    app.add_route("/api/status", Status(*args))
    app.add_route("/healthz", Healthz(*args))
    app.add_route("/readyz", Readyz(*args))
    app.add_route("/api/artists", artists.Artists(*args))
    app.add_route("/api/artists/{id}", artists.ArtistItem(*args))
    app.add_route("/api/artworks", artworks.Artworks(*args))
    app.add_route("/api/artworks/{id}", artworks.ArtworkItem(*args))
    app.add_route("/api/editions", editions.Editions(*args))
    app.add_route("/api/editions/{id}", editions.EditionItem(*args))
    app.add_route("/api/genes", genes.Genes(*args))
    app.add_route("/api/genes/{id}", genes.GeneItem(*args))
    app.add_route("/api/shows", shows.Shows(*args))
    app.add_route("/api/shows/{id}", shows.ShowItem(*args))
    app.add_route("/api/partners", partners.Partners(*args))
    app.add_route("/api/partners/{id}", partners.PartnerItem(*args))
    app.add_route("/api/sales", sales.Sales(*args))
    app.add_route("/api/sales/{id}", sales.SaleItem(*args))
    app.add_route("/api/sale_artworks", sale_artworks.SaleArtworks(*args))
    app.add_route("/api/sale_artworks/{id}", sale_artworks.SaleArtworkItem(*args))
    app.add_route("/api/fairs", fairs.Fairs(*args))
    app.add_route("/api/fairs/{id}", fairs.FairItem(*args))
    app.add_route("/api/profiles", profiles.Profiles(*args))
    app.add_route("/api/profiles/{id}", profiles.ProfileItem(*args))
    app.add_route("/api/images", images.Images(*args))
    app.add_route("/api/images/{id}", images.ImageItem(*args))
    app.add_route("/api/users", users.Users(*args))
    app.add_route("/api/users/{id}", users.UserItem(*args))
    app.add_route("/api/current_user", users.CurrentUser(*args))
    app.add_route("/api/user_details/{id}", users.UserDetailItem(*args))
    app.add_route("/api/collections", collections.Collections(*args))
    app.add_route("/api/collections/{id}", collections.CollectionResource(*args))
    app.add_route("/api/collection_items", collection_items.CollectionItems(*args))
    app.add_route("/api/collection_items/{id}", collection_items.CollectionItemResource(*args))
    app.add_route("/api/bidders", bidders.Bidders(*args))
    app.add_route("/api/bidders/{id}", bidders.BidderItem(*args))
    app.add_route("/api/search", search.Search(*args))
    add_pages(app, stores, settings, ROOT_ROUTES)
    return app
