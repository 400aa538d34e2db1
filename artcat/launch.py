"""Start-up of ``artcat serve``: migrate, load the demo on first start, build the WSGI app.

A process imports what its service needs only: the other service's app and the demo loader
are imported where they are used (a service process starts faster without them).
"""

from __future__ import annotations

import click

from common.catalog_version import announce_catalog_change
from common.db import make_engine, upgrade
from common.serve import PathDispatcher, WSGIApp
from common.settings import PRODUCTION, AuthSettings, ResourceSettings
from common.stores import Stores


def wants_demo(service: str, settings: AuthSettings, *, no_demo: bool) -> bool:
    """Tell whether ``serve`` loads the demo data: ``serve all`` only, and never in production.

    The demo makes a user and an application whose credentials the banner prints: on a
    production instance that would be an account anyone reading the console could use.
    """
    return service == "all" and not no_demo and settings.environment != PRODUCTION


def first_start(settings: AuthSettings, *, load_demo_data: bool) -> object | None:
    """Migrate the database and, when asked, load the demo data if it is not there yet.

    Once, in the ``artcat serve`` process, before granian forks its workers: neither server
    has a hook that runs once for all of them, and every worker expects the schema in place.
    """
    upgrade(settings)
    if not load_demo_data:
        return None
    from artcat.loaders.demo import ALREADY_LOADED, REMOVED, demo_credentials, load_demo

    engine = make_engine(settings)
    try:
        report = load_demo(engine, settings, unless_removed=True)
        if report.reason and report.reason != ALREADY_LOADED:  # one line saying why
            click.echo(report.summary())
        if report.reason == REMOVED:
            return None  # no demo account to show
        if not report.skipped:
            announce_catalog_change(settings)
    finally:
        engine.dispose()  # no pooled connection may outlive start-up into forked workers
    return demo_credentials(settings)


def build_wsgi(
    service: str, auth_settings: AuthSettings, resource_settings: ResourceSettings
) -> WSGIApp:
    """Build the WSGI app of one service, or of both behind the path dispatcher.

    Under granian each worker calls it as it loads, so each opens its own connections to the
    stores after the fork (none is shared across it).
    """
    stores = Stores.connect(resource_settings)
    if service == "auth":
        return _auth_app(auth_settings, stores)
    if service == "resource":
        return _resource_app(resource_settings, stores)
    return PathDispatcher(
        _auth_app(auth_settings, stores), _resource_app(resource_settings, stores)
    )


def _auth_app(settings: AuthSettings, stores: Stores) -> WSGIApp:
    from auth_server.app import create_app

    return create_app(settings, stores)


def _resource_app(settings: ResourceSettings, stores: Stores) -> WSGIApp:
    from resource_server.app import create_app

    return create_app(settings, stores)


def print_banner(service: str, url: str, demo: object | None) -> None:
    """Print where the service listens and, with the demo data, ready-to-use credentials."""
    click.echo(f"artcat {service} listening on {url}")
    click.echo(f"point a browser at {url}/ (the API root is {url}/api)")
    if demo is None:
        return
    client_id = getattr(demo, "client_id", "")
    client_secret = getattr(demo, "client_secret", "")
    click.echo(
        f"demo user (sign in at {url}/account/sign_in): "
        f"{getattr(demo, 'user_email', '')} / {getattr(demo, 'user_password', '')}"
    )
    click.echo(f"demo application client_id:     {client_id}")
    click.echo(f"demo application client_secret: {client_secret}")
    click.echo("get an application token and list artists:")
    click.echo(
        f"  TOKEN=$(curl -s -X POST '{url}/api/tokens/xapp_token' "
        f"-d client_id={client_id} -d client_secret={client_secret} "
        "| python3 -c 'import sys,json;print(json.load(sys.stdin)[\"token\"])')"
    )
    click.echo(f"  curl -s -H \"X-Xapp-Token: $TOKEN\" '{url}/api/artists'")
    click.echo(
        "again later: artcat demo credentials; applications: artcat apps list; "
        f"sign-in landing page (the demo's redirect URI): {url}/oauth2/callback"
    )
