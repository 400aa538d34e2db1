"""What the ``artcat apps`` and ``artcat users`` commands share: the stores and change reports."""

from __future__ import annotations

from collections.abc import Callable

import click

from artcat.cli.support import instance_settings
from auth_server.disabling import Change, NotFound
from common.db import upgrade
from common.stores import Stores


def connect_stores() -> Stores:
    """Connect to the instance's database (migrated) and Redis."""
    settings = instance_settings()
    upgrade(settings)
    return Stores.connect(settings)


def add_enable_commands(
    group: click.Group,
    kind: str,
    setter: Callable[..., Change],
    argument: str,
    *,
    disable_help: str,
    enable_help: str,
) -> None:
    """Add the ``disable`` and ``enable`` commands of one kind of account to its group."""
    for name, enabled, help_text in (
        ("disable", False, disable_help),
        ("enable", True, enable_help),
    ):

        @click.argument(argument)
        def command(enabled: bool = enabled, **params: str) -> None:
            set_enabled(kind, setter, params[argument], enabled=enabled)

        group.command(name, help=help_text)(command)


def set_enabled(kind: str, setter: Callable[..., Change], key: str, *, enabled: bool) -> None:
    """Enable or disable an account (``setter`` finds it by ``key``) and say what changed."""
    try:
        change = setter(connect_stores(), key, enabled=enabled)
    except NotFound as ex:
        raise click.ClickException(str(ex)) from None
    report_change(kind, change)


def report_change(kind: str, change: Change) -> None:
    """Print what enabling or disabling an account changed."""
    state = "enabled" if change.enabled else "disabled"
    already = " (it already was)" if change.enabled == change.was_enabled else ""
    click.echo(f"{kind} {change.name} {state}{already}")
    if not change.enabled:
        ended = "every browser session, " if kind == "user" else ""
        click.echo(f"ended {ended}{change.tokens_expired} live token(s) and every pending code")
