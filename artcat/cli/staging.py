"""The ``artcat staging`` commands: a staging instance rebuilt from production."""

from __future__ import annotations

import click
from redis.exceptions import RedisError
from sqlalchemy.exc import OperationalError

from artcat.cli.support import instance_settings
from artcat.staging import StagingError, check_target, describe, rebuild


@click.group()
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
    settings = instance_settings()
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
