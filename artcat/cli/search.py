"""The ``artcat search`` commands: the search index."""

from __future__ import annotations

import click

from artcat.cli.support import instance_settings
from common.db import make_engine, upgrade
from common.search.indexer import reindex, stats


@click.group()
def search() -> None:
    """Manage the search index."""


@search.command("reindex")
def search_reindex() -> None:
    """Rebuild the search index from the catalog (writes only documents that changed)."""
    settings = instance_settings()
    upgrade(settings)
    engine = make_engine(settings)
    click.echo(reindex(engine).summary())
    click.echo(", ".join(f"{n:,} {kind}" for kind, n in sorted(stats(engine).items())))
