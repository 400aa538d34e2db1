"""The authorization server: a Flask WSGI app built by ``create_app``."""

from __future__ import annotations

from authlib.oauth2.rfc6749.errors import InvalidRequestError
from flask import Flask, request
from werkzeug.wrappers import Response

from auth_server import endpoints, errors, grants, oauth, server
from auth_server import web as pages
from auth_server.accounts import password_hasher
from auth_server.context import AuthServices, services
from auth_server.params import EXCHANGE_PATH, refused_in_query
from auth_server.views import account, authorize, discovery, health, password, session, tokens
from auth_server.views import applications as applications_api
from auth_server.views import oauth as oauth_endpoints
from auth_server.views import verify as email_pages
from common.api.errors import ParamError
from common.hardening import PRIVATE, Hardening
from common.observability import ROUTE_KEY, Observer
from common.settings import AuthSettings
from common.stores import Stores


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
    app = Flask(__name__)
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
    server.install(app, grants.registered(), (endpoints.Revocation, endpoints.Introspection))
    app.add_url_rule("/api/tokens/xapp_token", "xapp_token", tokens.xapp_token, methods=["POST"])
    app.add_url_rule("/healthz", "healthz", health.healthz)
    app.add_url_rule("/readyz", "readyz", health.readyz)
    # OAuth: the token endpoint (every grant), revocation, introspection and discovery.
    oauth.register(app)
    app.add_url_rule(
        "/oauth2/access_token",
        "oauth2_access_token",
        oauth_endpoints.access_token,
        methods=["GET", "POST"],
    )
    app.add_url_rule("/oauth2/revoke", "oauth2_revoke", oauth_endpoints.revoke, methods=["POST"])
    app.add_url_rule(
        "/oauth2/introspect", "oauth2_introspect", oauth_endpoints.introspect, methods=["POST"]
    )
    app.add_url_rule(
        "/.well-known/oauth-authorization-server", "oauth2_metadata", discovery.metadata
    )
    app.add_url_rule(
        "/api/tokens/access_token",
        "expire_access_token",
        tokens.expire_access_token,
        methods=["DELETE"],
    )
    # The applications API (user token; owner only).
    app.add_url_rule(
        "/api/applications", view_func=applications_api.Applications.as_view("applications")
    )
    app.add_url_rule(
        "/api/applications/<app_id>",
        view_func=applications_api.ApplicationItem.as_view("application"),
    )
    # The browser pages: sign-in, consent, password reset and the account area.
    pages.register(app)
    get_post = ["GET", "POST"]
    app.add_url_rule("/oauth2/authorize", "oauth2_authorize", authorize.authorize, methods=get_post)
    app.add_url_rule("/account", "account_home", account.account_home)
    app.add_url_rule("/account/sign_in", "account_sign_in", session.sign_in, methods=get_post)
    app.add_url_rule("/account/sign_up", "account_sign_up", session.sign_up, methods=get_post)
    app.add_url_rule("/account/sign_out", "account_sign_out", session.sign_out, methods=get_post)
    app.add_url_rule(
        "/account/password/forgot",
        "account_password_forgot",
        password.forgot_password,
        methods=get_post,
    )
    app.add_url_rule(
        "/account/password/reset/<token>",
        "account_password_reset",
        password.reset_password,
        methods=get_post,
    )
    app.add_url_rule(
        "/account/password/change",
        "account_password_change",
        password.change_password,
        methods=get_post,
    )
    app.add_url_rule(
        "/account/email/verify", "account_email_verify", email_pages.verify_email, methods=get_post
    )
    app.add_url_rule(
        "/account/email/resend",
        "account_email_resend",
        email_pages.resend_verification,
        methods=["POST"],
    )
    app.add_url_rule("/account/authorizations", "account_authorizations", account.authorizations)
    app.add_url_rule(
        "/account/authorizations/<application_id>/revoke",
        "account_authorization_revoke",
        account.revoke_authorization,
        methods=["POST"],
    )
    app.add_url_rule(
        "/account/applications", "account_applications", account.applications, methods=get_post
    )
    app.add_url_rule(
        "/account/applications/<application_id>/rotate",
        "account_application_rotate",
        account.rotate_application_secret,
        methods=["POST"],
    )
    app.add_url_rule("/account/static/<path:filename>", "account_static", pages.static_file)
    # Request ids, access log and metrics (and GET /metrics); first of the before_request hooks,
    # so that a request another hook refuses is still labelled with its route.
    app.before_request_funcs.setdefault(None, []).insert(0, _refuse_secrets_in_query)
    app.before_request_funcs[None].insert(0, _label_route)
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
