"""The ``artcat serve`` command: both services, or one, on one port.

granian runs the processes (its workers, their respawn, the graceful stop); what it cannot do
is done here before it forks them: migrate and load the demo once (``first_start``), and start
the embedded Redis the workers share. waitress, in development, serves in this process.
"""

from __future__ import annotations

from dataclasses import replace

import click

from artcat.launch import build_wsgi, first_start, print_banner, wants_demo
from common import startup
from common.granian_serve import run_granian
from common.logs import configure_logging
from common.redis_store import connect_redis
from common.serve import pin_to_one_core, port_problem, proxy_options, run_waitress
from common.settings import AuthSettings, ResourceSettings, SettingsError, settings_names


@click.command()
@click.argument("service", type=click.Choice(["all", "auth", "resource"]), default="all")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--threads", default=4, show_default=True, type=click.IntRange(1, 64))
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="granian's worker processes sharing the port, each pinned to one core (one per core "
    "is the rule). More than one needs granian, which WSGI_SERVER=auto then picks.",
)
@click.option(
    "--server",
    type=click.Choice(["auto", "granian", "waitress"]),
    default=None,
    help="The HTTP server (default: WSGI_SERVER, whose default is waitress in development, "
    "granian on staging and in production).",
)
@click.option(
    "--no-demo",
    is_flag=True,
    help="Do not load the demo data on first start (it is never loaded in production).",
)
def serve(
    service: str,
    host: str,
    port: int,
    threads: int,
    workers: int,
    server: str | None,
    no_demo: bool,
) -> None:
    """Serve both services on one port (all), or one of them.

    SIGTERM (or Ctrl-C) stops gracefully: new connections are refused, the requests in flight
    are answered (for at most SHUTDOWN_GRACE seconds), then the process exits.
    """
    try:
        auth_settings = AuthSettings.from_env()
        resource_settings = ResourceSettings.from_env()
        if server is not None:
            resource_settings = replace(resource_settings, wsgi_server=server)
    except SettingsError as ex:  # said plainly, without a traceback
        raise click.ClickException(str(ex)) from None
    chosen = resource_settings.server
    if chosen == "waitress" and workers > 1:
        if resource_settings.wsgi_server == "waitress":
            raise click.ClickException(
                "waitress serves one process: --workers needs granian (--server granian)"
            )
        chosen = "granian"  # auto: waitress only for one process in development
    # Before the banner and the demo credentials: a port that cannot be had is one line.
    problem = port_problem(host, port)
    if problem is not None:
        raise click.ClickException(f"{problem}: stop it, or choose another port with --port N")
    configure_logging(resource_settings.log_level, access=resource_settings.access_log)
    demo = first_start(
        auth_settings, load_demo_data=wants_demo(service, auth_settings, no_demo=no_demo)
    )
    url = resource_settings.public_url or f"http://{host}:{port}"
    grace = resource_settings.shutdown_grace
    proxy = proxy_options(resource_settings)
    if chosen == "waitress":
        app = build_wsgi(service, auth_settings, resource_settings)  # an embedded Redis: unpinned
        startup.settle()
        print_banner(service, url, demo)
        pin_to_one_core()  # before waitress starts its threads, which inherit the affinity
        run_waitress(app, host, port, threads=threads, grace=grace, **proxy)
        return
    if resource_settings.embedded_redis:
        connect_redis(resource_settings)  # the parent owns the embedded server; workers reuse it
    print_banner(f"{service} (granian, {workers} worker{'s' if workers > 1 else ''})", url, demo)
    startup.settle()  # before the fork: the workers inherit what start-up made, frozen
    run_granian(
        lambda: build_wsgi(service, auth_settings, resource_settings),  # in each worker
        host,
        port,
        workers=workers,
        threads=threads,
        grace=grace,
        metrics_dir=resource_settings.metrics_dir,
        proxy=proxy,
        settings_names=settings_names(),
    )
