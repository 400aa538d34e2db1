"""The ``artcat demo`` commands: take the invented demo catalog out of an instance."""

from __future__ import annotations

import click
from sqlalchemy import select

from artcat.cli.support import emit, instance_settings
from artcat.loaders.demo import demo_credentials
from artcat.loaders.demo_removal import DemoSize, holds_demo, remove_demo
from common.catalog_version import announce_catalog_change
from common.db import make_engine, make_sessionmaker, upgrade
from common.models import Application, User
from common.settings import Settings
from common.stores import Stores
from common.tokens import digests_match

KEEP_HELP = "Keep the demo user and application (their credentials keep working)."


@click.group()
def demo() -> None:
    """Manage the demo catalog."""


@demo.command("credentials")
@click.option("--json", "as_json", is_flag=True)
def credentials(as_json: bool) -> None:
    """Print the demo application's client id and secret and the demo user's sign-in again.

    They are derived from the secret key, so they can be shown again without being stored;
    a secret rotated since (``artcat apps rotate-secret``) is said to be so.
    """
    settings = instance_settings()
    creds = demo_credentials(settings)
    with make_sessionmaker(make_engine(settings))() as session:
        app = session.scalar(select(Application).where(Application.client_id == creds.client_id))
        if app is None:
            raise click.ClickException("this instance has no demo application")
        current = digests_match(creds.client_secret, app.client_secret_digest)
        user = session.scalar(select(User.id).where(User.email == creds.user_email))
    data: dict[str, object] = {
        "client_id": creds.client_id,
        "client_secret": creds.client_secret if current else None,
    }
    if user is not None:
        data |= {"user_email": creds.user_email, "user_password": creds.user_password}
    emit(as_json, data)
    if not current and not as_json:
        click.echo("the demo secret was rotated since: artcat apps rotate-secret gives a new one")


@demo.command("remove")
@click.option("--keep-demo-account", is_flag=True, help=KEEP_HELP)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="The seed of a demo loaded before this instance recorded it (with --artworks); "
    "by default the recorded one, or serve's (seed 1, 200 artworks).",
)
@click.option("--artworks", type=int, default=None, help="With --seed: its number of artworks.")
def remove(keep_demo_account: bool, seed: int | None, artworks: int | None) -> None:
    """Remove the demo catalog: its artists, artworks, partners, shows, fairs, sales, genes,
    images, search entries and cached documents, and its users and application (unless
    --keep-demo-account), in one transaction."""
    if (seed is None) != (artworks is None):
        raise click.UsageError("give --seed and --artworks together")
    settings = instance_settings()
    upgrade(settings)
    sizes = [DemoSize(seed, artworks)] if seed is not None and artworks is not None else None
    click.echo(remove_from(settings, keep_account=keep_demo_account, sizes=sizes))


def remove_from(
    settings: Settings, *, keep_account: bool, sizes: list[DemoSize] | None = None
) -> str:
    """Remove the demo from the configured instance; return the one-line summary."""
    stores = Stores.connect(settings)
    try:
        report = remove_demo(stores, settings, keep_account=keep_account, sizes=sizes)
    finally:
        stores.engine.dispose()
    if report.counts:
        announce_catalog_change(settings)  # every process drops its cached demo documents
    return report.summary()


def remove_before_import(settings: Settings, museum: str, *, keep_account: bool) -> None:
    """Say that the instance holds the demo catalog, and remove it before a museum's data."""
    stores = Stores.connect(settings)
    try:
        present = holds_demo(stores.engine)
    finally:
        stores.engine.dispose()
    if not present:
        return
    accounts = (
        "the demo user and application are kept"
        if keep_account
        else "its user and application too (--keep-demo-account keeps them)"
    )
    click.echo(
        f"this instance holds the invented demo catalog: removing it before importing {museum}, "
        f"so that real and invented artists do not mix; {accounts}"
    )
    click.echo(remove_from(settings, keep_account=keep_account))
