"""What every ``artcat`` command group shares."""

from __future__ import annotations

import importlib
import json
from typing import Any, TypeVar

import click

from common.settings import Settings, SettingsError

S = TypeVar("S", bound=Settings)


def load_settings(cls: type[S]) -> S:
    """Return settings from the environment; a bad value is a plain error, not a traceback."""
    try:
        return cls.from_env()
    except SettingsError as ex:
        raise click.ClickException(str(ex)) from None


def instance_settings() -> Settings:
    """Return the instance's common settings (see ``load_settings``)."""
    return load_settings(Settings)


def emit(as_json: bool, data: dict[str, Any]) -> None:
    """Print ``data`` as one JSON object, or as ``key: value`` lines."""
    if as_json:
        click.echo(json.dumps(data))
    else:
        for key, value in data.items():
            click.echo(f"{key}: {value}")


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when one of them is asked for.

    Each command group module imports what it needs at its top; the root group imports a group
    module only when that group runs (or its own help is shown), so ``artcat db upgrade`` does
    not pay for the loaders, the staging copier or the services (seconds of imports), and
    ``artcat --help`` lists the groups from their one-line help without importing any.
    """

    def __init__(
        self, *args: Any, lazy_subcommands: dict[str, tuple[str, str]], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        # command name -> ("module:attribute", one-line help)
        self.lazy_subcommands = lazy_subcommands

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Return the eager and the lazy command names, sorted."""
        return sorted({*super().list_commands(ctx), *self.lazy_subcommands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Return a command, importing its module first if it is a lazy one."""
        lazy = self.lazy_subcommands.get(cmd_name)
        if lazy is None:
            return super().get_command(ctx, cmd_name)
        target = lazy[0]
        module, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands with their one-line help, importing none of the lazy ones."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(map(len, names))
        rows = []
        for name in names:
            lazy = self.lazy_subcommands.get(name)
            if lazy is not None:
                # A stand-in command shortens the line exactly as click would the real one's.
                rows.append((name, click.Command(name, help=lazy[1]).get_short_help_str(limit)))
                continue
            command = super().get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)
