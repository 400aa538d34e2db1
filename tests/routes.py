"""The routes of both apps, from their own route tables: what the edge must route, and where."""

from __future__ import annotations

import re

import falcon.inspect
from redis import Redis

from auth_server.app import create_app as create_auth_app
from common.settings import AuthSettings, ResourceSettings
from common.stores import Stores
from resource_server.app import create_app as create_resource_app


def concrete(rule: str) -> str:
    """Fill a route's variables (``<id>``, ``<path:x>``, ``{id}``) with a sample value."""
    return re.sub(r"<[^>]+>|\{[^}]+\}", "x0", rule)


def auth_routes() -> set[str]:
    """Return the paths of the auth server's routes (its static files aside)."""
    stores = Stores(engine=None, sessions=None, redis=None, tokens=None)  # type: ignore[arg-type]
    app = create_auth_app(AuthSettings(secret_key="x"), stores)
    return {r.rule for r in app.url_map.iter_rules() if r.endpoint != "static"}


def resource_routes() -> set[str]:
    """Return the paths of the catalog's routes (building the app connects to nothing)."""
    stores = Stores(engine=None, sessions=None, redis=Redis(), tokens=None)  # type: ignore[arg-type]
    app = create_resource_app(ResourceSettings(secret_key="x"), stores)
    return {r.path for r in falcon.inspect.inspect_routes(app)}
