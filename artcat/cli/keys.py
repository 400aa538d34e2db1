"""The ``artcat keys`` commands: the keys that sign OpenID Connect ID tokens."""

from __future__ import annotations

import json

import click

from artcat.cli.support import load_settings
from auth_server.keys import KeyRing
from common.db import upgrade
from common.ids import format_ts
from common.settings import AuthSettings
from common.stores import Stores


def _keyring() -> KeyRing:
    settings = load_settings(AuthSettings)
    upgrade(settings)
    return KeyRing(settings, Stores.connect(settings))


@click.group()
def keys() -> None:
    """Manage the keys that sign ID tokens."""


@keys.command("list")
@click.option("--json", "as_json", is_flag=True)
def keys_list(as_json: bool) -> None:
    """List every key: kid, algorithm, state and dates (never a private half).

    Makes the keys that are due first (the first keys, or the next ones), as the server would.
    """
    rows = [
        {
            "kid": k.kid,
            "alg": k.alg,
            "state": k.state,
            "published_at": format_ts(k.created_at),
            "signs_from": format_ts(k.activates_at),
            "signs_until": format_ts(k.retires_at) if k.retires_at else None,
            "unpublished_at": format_ts(k.unpublished_at) if k.unpublished_at else None,
        }
        for k in _keyring().key_states()
    ]
    if as_json:
        click.echo(json.dumps(rows))
        return
    for row in rows:
        click.echo(
            f"{row['kid']}  {row['alg']}  {row['state']:<8}  published {row['published_at']}  "
            f"signs {row['signs_from']} .. {row['signs_until'] or '(until the next key)'}"
        )


@keys.command("rotate")
@click.option(
    "--now",
    "at_once",
    is_flag=True,
    help="The new keys sign at once (a key that must stop signing now): relying parties that "
    "cached the JWKS may refuse new ID tokens until their cache expires (an hour at most).",
)
def keys_rotate(at_once: bool) -> None:
    """Make a new key of every algorithm, published now, signing after the JWKS cache time."""
    ring = _keyring()
    made = ring.rotate(at_once=at_once)
    states = {k.kid: k for k in ring.key_states()}
    for kid in made:
        k = states[kid]
        click.echo(f"{kid}  {k.alg}  {k.state}  signs from {format_ts(k.activates_at)}")
