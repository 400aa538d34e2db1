"""What every ``artcat`` command group shares."""

from __future__ import annotations

from typing import TypeVar

import click

from common.settings import Settings, SettingsError

S = TypeVar("S", bound=Settings)


def load_settings(cls: type[S]) -> S:
    """Return settings from the environment; a bad value is a plain error, not a traceback."""
    try:
        return cls.from_env()
    except SettingsError as ex:
        raise click.ClickException(str(ex)) from None
