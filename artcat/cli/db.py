"""The ``artcat db`` commands: the database schema."""

from __future__ import annotations

import click
from alembic import command

from artcat.cli.support import instance_settings
from common.db import alembic_config, upgrade


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
