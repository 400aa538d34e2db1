"""The catalog (resource) server: a Falcon WSGI app built by ``create_app``."""

from __future__ import annotations

from typing import Any

import falcon
import orjson
from falcon import media

from common.settings import ResourceSettings
from common.stores import Stores
from resource_server import errors
from resource_server.auth import TokenMiddleware
from resource_server.negotiation import (
    HAL,
    NegotiationMiddleware,
    UnsupportedContentType,
    handle_unsupported,
    vendor_types,
)
from resource_server.ratelimit import (
    RateLimited,
    RateLimiter,
    RateLimitMiddleware,
    handle_rate_limited,
)
from resource_server.resources import artists
from resource_server.resources.root import Healthz, Readyz, Root, Status
from resource_server.routes import CollectionRoute, PlainRoute

CORS_HEADERS = ("X-Xapp-Token", "X-Access-Token", "X-Auth-Token", "Authorization", "Content-Type")


def _dumps(obj: Any) -> str:
    return orjson.dumps(obj).decode()


def create_app(settings: ResourceSettings, stores: Stores | None = None) -> falcon.App:
    """Build the catalog app with every route registered."""
    stores = stores or Stores.connect(settings)
    limiter = RateLimiter(
        stores.redis,
        stores.sessions,
        rate=settings.rate_limit,
        burst=settings.rate_limit_burst,
        prefix=settings.redis_prefix,
    )
    middleware: list[Any] = [
        falcon.CORSMiddleware(allow_origins="*", expose_headers=["Location", "Retry-After"]),
        NegotiationMiddleware(settings.vendor),
        TokenMiddleware(stores.tokens),
        RateLimitMiddleware(limiter),
    ]
    app = falcon.App(media_type="application/json", middleware=middleware)
    json_handler = media.JSONHandler(dumps=_dumps, loads=orjson.loads)
    app.req_options.media_handlers.update({falcon.MEDIA_JSON: json_handler})
    for media_type in (falcon.MEDIA_JSON, HAL, *vendor_types(settings.vendor)):
        app.resp_options.media_handlers[media_type] = json_handler
    app.req_options.strip_url_path_trailing_slash = True
    errors.register(app)
    app.add_error_handler(UnsupportedContentType, handle_unsupported)
    app.add_error_handler(RateLimited, handle_rate_limited)

    args = (stores, settings)
    routes: list[CollectionRoute | PlainRoute] = [artists.ROUTE, PlainRoute("status", "/status")]
    app.add_route("/api", Root(*args, routes=routes))
    app.add_route("/api/status", Status(*args))
    app.add_route("/healthz", Healthz(*args))
    app.add_route("/readyz", Readyz(*args))
    app.add_route("/api/artists", artists.Artists(*args))
    app.add_route("/api/artists/{id}", artists.ArtistItem(*args))
    return app
