"""The ``artcat db`` commands: the database schema."""

from __future__ import annotations

import click
from alembic import command

from artcat.cli.support import emit, instance_settings, load_settings
from auth_server.cleanup import Cleaner, timed_run
from common.db import alembic_config, upgrade
from common.settings import AuthSettings
from common.stores import Stores


@click.group()
def db() -> None:
    """Manage the database schema."""


@db.command("upgrade")
@click.option("--revision", default="head", show_default=True)
def db_upgrade(revision: str) -> None:
    """Apply migrations up to a revision."""
    upgrade(instance_settings(), revision)
    click.echo("database upgraded")


@db.command("check")
def db_check() -> None:
    """Fail when the models and the migrations have drifted apart."""
    settings = instance_settings()
    upgrade(settings)
    command.check(alembic_config(settings))


@db.command("clean")
@click.option(
    "--batch-size",
    type=click.IntRange(1, 100_000),
    default=None,
    help="Rows deleted per transaction (default: CLEANUP_BATCH_SIZE).",
)
@click.option("--json", "as_json", is_flag=True)
def db_clean(batch_size: int | None, as_json: bool) -> None:
    """Delete expired and revoked rows (tokens, codes...) kept longer than CLEANUP_RETENTION.

    In small batches, one short transaction each, under the lock the servers' background
    cleaner takes: when another process is cleaning, nothing is done (and the exit status is
    still 0). For cron, with CLEANUP_INTERVAL=0 on the servers.
    """
    settings = load_settings(AuthSettings)
    stores = Stores.connect(settings)
    try:
        removed, seconds = timed_run(Cleaner(settings, stores, batch_size=batch_size))
    finally:
        stores.engine.dispose()
    if removed is None:
        emit(as_json, {"skipped": "another process is cleaning"})
        return
    emit(
        as_json,
        {
            **{f"removed.{name}": count for name, count in removed.items()},
            "seconds": round(seconds, 3),
        },
    )
