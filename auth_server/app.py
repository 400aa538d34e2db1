"""The authorization server: a Flask WSGI app built by ``create_app``."""

from __future__ import annotations

from flask import Flask

from auth_server import errors
from auth_server.accounts import password_hasher
from auth_server.context import AuthServices
from auth_server.views import health, tokens
from common.settings import AuthSettings
from common.stores import Stores


def create_app(settings: AuthSettings, stores: Stores | None = None) -> Flask:
    """Build the auth server app with every route registered."""
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=settings.secret_key,
        MAX_CONTENT_LENGTH=1024 * 1024,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.session_cookie_secure,
        JSON_SORT_KEYS=False,
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["artcat"] = AuthServices(
        settings=settings,
        stores=stores or Stores.connect(settings),
        hasher=password_hasher(settings),
    )
    errors.register(app)
    app.add_url_rule("/api/tokens/xapp_token", "xapp_token", tokens.xapp_token, methods=["POST"])
    app.add_url_rule("/healthz", "healthz", health.healthz)
    app.add_url_rule("/readyz", "readyz", health.readyz)
    return app
