"""The authorization server: a Flask WSGI app built by ``create_app``."""

from __future__ import annotations

from pathlib import Path

from authlib.oauth2.rfc6749.errors import InvalidRequestError
from flask import Flask, request
from jinja2 import FileSystemLoader
from werkzeug.wrappers import Response

from auth_server import endpoints, errors, grants, oauth, server
from auth_server import web as pages
from auth_server.accounts import password_hasher
from auth_server.cleanup import Background
from auth_server.context import AuthServices, services
from auth_server.flask_app import AuthFlask
from auth_server.grants.device_code import DeviceEndpoint
from auth_server.logout import EndSession
from auth_server.params import EXCHANGE_PATH, refused_in_query
from auth_server.registration import Configuration, Registration
from auth_server.token_path import TokenPath
from auth_server.views import (
    account,
    applications,
    authorize,
    callback,
    device,
    discovery,
    health,
    logout,
    openid,
    password,
    registration,
    session,
    tokens,
    verify,
)
from auth_server.views import oauth as oauth_endpoints
from auth_server.views.described import AUTH_SCHEMAS, Described
from common.api.errors import ParamError
from common.hardening import PRIVATE, Hardening
from common.observability import ROUTE_KEY, Observer
from common.openapi import Part
from common.openapi import describe as describe_part
from common.settings import AuthSettings
from common.site import TEMPLATES
from common.stores import Stores

# One blueprint per view module: its routes, each with the OpenAPI operations it answers.
BLUEPRINTS: tuple[Described, ...] = (
    tokens.bp,
    health.bp,
    oauth_endpoints.bp,
    discovery.bp,
    openid.bp,
    applications.bp,
    authorize.bp,
    account.bp,
    session.bp,
    password.bp,
    verify.bp,
    device.bp,
    registration.bp,
    logout.bp,
    callback.bp,
)


def describe() -> Part:
    """Return this server's part of the API's OpenAPI document, from its blueprints."""
    return describe_part(
        (operation for blueprint in BLUEPRINTS for operation in blueprint.operations),
        AUTH_SCHEMAS,
    )


def _label_route() -> None:
    """Hand the matched URL rule to the observability middleware (through the environ)."""
    if request.url_rule is not None:
        request.environ[ROUTE_KEY] = request.url_rule.rule


def _refuse_secrets_in_query() -> Response | None:
    """Refuse the secrets a POST (or any token request) may not carry in its query string,
    before any other work: URLs end up in access logs, proxies and browser history.

    A password is refused everywhere. With URL_CREDENTIALS=accept (the default) the reference
    API's routes take every other parameter from the URL, as the reference documents; with
    ``refuse`` no secret is taken from a URL (see ``auth_server.params``).
    """
    if request.method != "POST" and request.path != EXCHANGE_PATH:
        return None
    found = refused_in_query(request, services().settings.url_credentials_accepted)
    if not found:
        return None
    names = ", ".join(found)
    message = f"Send {names} in the request body, never in the URL."
    if pages.is_page_path(request.path):
        return pages.error_page(400, "This request was refused", message)
    if request.path.startswith("/oauth2/"):
        raise InvalidRequestError(description=message)
    raise ParamError(message, {name: ["must be sent in the request body"] for name in found})


def create_app(settings: AuthSettings, stores: Stores | None = None) -> Flask:
    """Build the auth server app with every route registered."""
    app = AuthFlask(__name__)
    # The site header's template is shared with the catalog's pages.
    app.jinja_loader = FileSystemLoader([Path(app.root_path, "templates"), TEMPLATES])
    app.config.update(
        SECRET_KEY=settings.secret_key,
        MAX_CONTENT_LENGTH=1024 * 1024,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.cookie_secure,
        JSON_SORT_KEYS=False,
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["artcat"] = AuthServices(
        settings=settings,
        stores=stores or Stores.connect(settings),
        hasher=password_hasher(settings),
    )
    errors.register(app)
    server.install(
        app,
        grants.registered(),
        (
            endpoints.Revocation,
            endpoints.Introspection,
            DeviceEndpoint,
            Registration,
            Configuration,
            EndSession,
        ),
    )
    oauth.register(app)
    pages.register(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    app.extensions["artcat.openapi"] = describe()
    # Expired rows leave in the background, from the first request of each process on.
    cleaner = app.extensions["artcat.cleanup"] = Background(
        settings, app.extensions["artcat"].stores
    )
    app.before_request(cleaner.ensure_started)
    # Request ids, access log and metrics (and GET /metrics); first of the before_request hooks,
    # so that a request another hook refuses is still labelled with its route.
    app.before_request_funcs.setdefault(None, []).insert(0, _refuse_secrets_in_query)
    app.before_request_funcs[None].insert(0, _label_route)
    # Refresh grants are answered before Flask dispatches them (inside the middlewares below).
    app.wsgi_app = TokenPath(app, app.wsgi_app)  # type: ignore[method-assign]
    app.wsgi_app = Observer(  # type: ignore[method-assign]
        app.wsgi_app,
        service="auth",
        access_log=settings.access_log,
        expose_metrics=settings.metrics_enabled,
        metrics_from=settings.metrics_networks,
    )
    app.wsgi_app = Hardening(  # type: ignore[method-assign]
        app.wsgi_app, settings, default_cache_control=PRIVATE
    )
    return app
