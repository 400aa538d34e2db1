"""What the ``artcat apps`` and ``artcat users`` commands share: the stores and change reports."""

from __future__ import annotations

import click

from artcat.cli.support import instance_settings
from auth_server.disabling import Change
from common.db import upgrade
from common.stores import Stores


def connect_stores() -> Stores:
    """Connect to the instance's database (migrated) and Redis."""
    settings = instance_settings()
    upgrade(settings)
    return Stores.connect(settings)


def report_change(kind: str, change: Change) -> None:
    """Print what enabling or disabling an account changed."""
    state = "enabled" if change.enabled else "disabled"
    already = " (it already was)" if change.enabled == change.was_enabled else ""
    click.echo(f"{kind} {change.name} {state}{already}")
    if not change.enabled:
        ended = "every browser session, " if kind == "user" else ""
        click.echo(f"ended {ended}{change.tokens_expired} live token(s) and every pending code")
