"""The ``artcat`` command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from artcat.cli.accounts import apps, users
from artcat.cli.support import load_settings
from common.catalog_version import announce_catalog_change
from common.settings import AuthSettings, ResourceSettings, Settings, SettingsError


def _settings() -> Settings:
    return load_settings(Settings)


@click.group()
def main() -> None:
    """Run and manage the art catalog service."""


# -- database ----------------------------------------------------------------------------------


@main.group()
def db() -> None:
    """Manage the database schema."""


@db.command("upgrade")
@click.option("--revision", default="head", show_default=True)
def db_upgrade(revision: str) -> None:
    """Apply migrations up to a revision."""
    from common.db import upgrade

    upgrade(_settings(), revision)
    click.echo("database upgraded")


@db.command("check")
def db_check() -> None:
    """Fail when the models and the migrations have drifted apart."""
    from alembic import command

    from common.db import alembic_config, upgrade

    settings = _settings()
    upgrade(settings)
    command.check(alembic_config(settings))


# -- data --------------------------------------------------------------------------------------


@main.group()
def load() -> None:
    """Load catalog data."""


@load.command("demo")
@click.option("--seed", default=1, show_default=True, help="Random seed (same seed, same data).")
@click.option("--artworks", default=200, show_default=True, help="Number of artworks.")
def load_demo_cmd(seed: int, artworks: int) -> None:
    """Load a deterministic synthetic catalog with a demo application and user."""
    from artcat.loaders.demo import demo_credentials, load_demo
    from common.db import make_engine, upgrade

    settings = _settings()
    upgrade(settings)
    report = load_demo(make_engine(settings), settings, seed=seed, artworks=artworks)
    announce_catalog_change(settings)
    click.echo(report.summary())
    creds = demo_credentials(settings)
    click.echo(f"demo client id: {creds.client_id}\ndemo client secret: {creds.client_secret}")


def _download_options(func: Any) -> Any:
    """Add ``--download`` and ``--sha256`` to a load command."""
    func = click.option(
        "--sha256",
        metavar="HEX",
        help="With --download: the file's expected SHA-256; a mismatch loads nothing.",
    )(func)
    return click.option(
        "--download",
        is_flag=True,
        help="Fetch the museum's published data from its configured URL (resuming a "
        "partial download), unpack it into the instance folder and load it; no PATH.",
    )(func)


@load.command("tate")
@click.argument("path", required=False, type=click.Path(exists=True, path_type=Path))
@click.option("--no-progress", is_flag=True)
@_download_options
def load_tate_cmd(path: Path | None, no_progress: bool, download: bool, sha256: str | None) -> None:
    """Import the Tate collection from PATH.

    \b
    PATH is any of (detected from what it holds; the richest form found is read):
    - a clone of https://github.com/tategallery/collection: its artists/ and
      artworks/ folders of per-record JSON, else its artist_data.csv and
      artwork_data.csv (fewer fields: no movements, subjects or classification);
    - a folder with the bundles artists.jsonl[.gz] and artworks.jsonl[.gz];
    - one of those files or folders alone.

    With --download instead of PATH: the repository's archive from TATE_ARCHIVE_URL.

    An unreadable file stops the import before anything is written; a bad record is
    reported with its file and line and skipped (exit status 1).
    """
    _import_museum("tate", path, no_progress, download, sha256)


@load.command("cmoa")
@click.argument("path", required=False, type=click.Path(exists=True, path_type=Path))
@click.option("--no-progress", is_flag=True)
@_download_options
def load_cmoa_cmd(path: Path | None, no_progress: bool, download: bool, sha256: str | None) -> None:
    """Import the Carnegie Museum of Art collection (and Teenie Harris Archive) from PATH.

    \b
    PATH is any of (detected from what it holds), for cmoa and teenie each:
    - a clone of https://github.com/cmoa/collection: its cmoa/ and teenie/
      folders of per-object JSON, else cmoa.json/teenie.json, else
      cmoa.csv/teenie.csv (the museum's bulk files hold the same data);
    - a folder with the bundles cmoa.jsonl[.gz] and teenie.jsonl[.gz];
    - one of those files or folders alone.

    With --download instead of PATH: the repository's archive from CMOA_ARCHIVE_URL.

    An unreadable file stops the import before anything is written; a bad record is
    reported with its file and line and skipped (exit status 1).
    """
    _import_museum("cmoa", path, no_progress, download, sha256)


@load.command("moma-artists")
@click.argument("path", required=False, type=click.Path(exists=True, path_type=Path))
@click.option("--no-progress", is_flag=True)
@_download_options
def load_moma_artists_cmd(
    path: Path | None, no_progress: bool, download: bool, sha256: str | None
) -> None:
    """Add MoMA's artist details to the artists already in the catalog, from PATH.

    
    PATH is MoMA's CC0 Artists.csv[.gz] (https://github.com/MuseumofModernArt/collection),
    or a clone of that repository. Each row is matched to a catalog artist by name AND
    life dates (never by name alone), which gains MoMA's nationality, dates and gender
    where the museums give none, and its MoMA, Wikidata and ULAN identifiers.

    It never creates artists: MoMA's works are not in the catalog, and an artist without
    works would lead nowhere. Load the museums (tate, cmoa) first; run it again after
    loading another museum (a re-run changes nothing else).

    With --download instead of PATH: the CSV from MOMA_ARTISTS_URL.
    """
    _import_museum("moma-artists", path, no_progress, download, sha256)


def _import_museum(
    museum: str, path: Path | None, no_progress: bool, download: bool, sha256: str | None
) -> None:
    """Run one museum importer; an unreadable input is an error that changed nothing."""
    from artcat.loaders.cmoa import load_cmoa
    from artcat.loaders.download import DownloadError
    from artcat.loaders.download import download as fetch_data
    from artcat.loaders.moma import load_moma_artists
    from artcat.loaders.source import LoadError
    from artcat.loaders.tate import load_tate
    from common.db import make_engine, upgrade

    if download == (path is not None):
        raise click.UsageError("give either PATH or --download")
    if sha256 and not download:
        raise click.UsageError("--sha256 checks a download: use it with --download")
    settings = _settings()
    upgrade(settings)
    loader = {"tate": load_tate, "cmoa": load_cmoa, "moma-artists": load_moma_artists}[museum]
    try:
        if path is None:
            path = fetch_data(settings, museum, sha256=sha256, progress=not no_progress)
            click.echo(f"downloaded and unpacked into {path}")
        report = loader(make_engine(settings), path, progress=not no_progress)
    except (LoadError, FileNotFoundError, DownloadError) as exc:
        raise click.ClickException(str(exc)) from exc
    announce_catalog_change(settings)
    click.echo(report.summary())
    if not report.ok:
        sys.exit(1)


# -- search ------------------------------------------------------------------------------------


@main.group()
def search() -> None:
    """Manage the search index."""


@search.command("reindex")
def search_reindex() -> None:
    """Rebuild the search index from the catalog (writes only documents that changed)."""
    from common.db import make_engine, upgrade
    from common.search.indexer import reindex, stats

    settings = _settings()
    upgrade(settings)
    engine = make_engine(settings)
    click.echo(reindex(engine).summary())
    click.echo(", ".join(f"{n:,} {kind}" for kind, n in sorted(stats(engine).items())))


# -- staging -----------------------------------------------------------------------------------


@main.group()
def staging() -> None:
    """Manage a staging instance."""


@staging.command("rebuild")
@click.option(
    "--from",
    "source_url",
    required=True,
    envvar="PRODUCTION_DATABASE_URL",
    show_envvar=True,
    help="Production's database URL (read only, in one snapshot).",
)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (for a nightly job).")
@click.option("--batch-size", default=2000, show_default=True, type=click.IntRange(1, 100_000))
def staging_rebuild(source_url: str, yes: bool, batch_size: int) -> None:
    """Replace EVERYTHING in this (staging) database with production's public catalog.

    The target is this instance's DATABASE_URL, which must have ENVIRONMENT=staging. Users,
    credentials, private collections and bids are not copied (see common/staging_policy.py).
    """
    from redis.exceptions import RedisError
    from sqlalchemy.exc import OperationalError

    from artcat.staging import StagingError, check_target, describe, rebuild

    settings = _settings()
    try:
        check_target(settings)
        if not yes:
            click.confirm(
                f"This deletes everything in {describe(settings.sqlalchemy_url)} (applications, "
                "users and tokens included) and replaces it with production's public catalog. "
                "Continue?",
                abort=True,
            )
        report = rebuild(source_url, settings, batch_size=batch_size)
    except StagingError as ex:
        raise click.ClickException(str(ex)) from None
    except (OperationalError, RedisError) as ex:  # nothing was committed
        cause = getattr(ex, "orig", None) or ex
        message = f"staging left unchanged: {type(cause).__name__}: {cause}"
        raise click.ClickException(message) from None
    for line in report.lines():
        click.echo(line)


# -- accounts (common/cli_accounts.py) ---------------------------------------------------------

main.add_command(apps)
main.add_command(users)


# -- serving -----------------------------------------------------------------------------------


@main.command()
@click.argument("service", type=click.Choice(["all", "auth", "resource"]), default="all")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--threads", default=4, show_default=True, type=int)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Processes sharing the port, each pinned to one core (one per core is the rule). "
    "One process is pinned too: its threads on several cores would convoy on the GIL.",
)
@click.option(
    "--no-demo",
    is_flag=True,
    help="Do not load the demo data on first start (it is never loaded in production).",
)
def serve(service: str, host: str, port: int, threads: int, workers: int, no_demo: bool) -> None:
    """Serve both services on one port (all), or one of them.

    SIGTERM (or Ctrl-C) stops gracefully: new connections are refused, the requests in flight
    are answered (for at most SHUTDOWN_GRACE seconds), then the process exits.
    """
    from artcat.launch import build_wsgi, first_start, print_banner, wants_demo
    from common.observability import configure_logging
    from common.serve import proxy_options, run_waitress

    try:
        auth_settings = AuthSettings.from_env()
        resource_settings = ResourceSettings.from_env()
    except SettingsError as ex:  # said plainly, without a traceback
        raise click.ClickException(str(ex)) from None
    configure_logging(resource_settings.log_level, access=resource_settings.access_log)
    demo = first_start(
        auth_settings, load_demo_data=wants_demo(service, auth_settings, no_demo=no_demo)
    )
    url = resource_settings.public_url or f"http://{host}:{port}"
    grace = resource_settings.shutdown_grace
    from common.workers import pin_to_one_core, serve_workers

    if workers == 1:
        app = build_wsgi(service, auth_settings, resource_settings)  # an embedded Redis: unpinned
        print_banner(service, url, demo)
        pin_to_one_core()  # before waitress starts its threads, which inherit the affinity
        run_waitress(
            app, host, port, threads=threads, grace=grace, **proxy_options(resource_settings)
        )
        return
    from common.redis_store import connect_redis

    if resource_settings.embedded_redis:
        connect_redis(resource_settings)  # the parent owns the embedded server; workers reuse it
    print_banner(f"{service} ({workers} workers)", url, demo)
    serve_workers(
        lambda: build_wsgi(service, auth_settings, resource_settings),
        host,
        port,
        workers=workers,
        threads=threads,
        grace=grace,
        metrics_dir=resource_settings.metrics_dir,
        options=proxy_options(resource_settings),
    )


if __name__ == "__main__":
    main()
