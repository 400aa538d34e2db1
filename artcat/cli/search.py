"""The ``artcat search`` commands: the search index."""

from __future__ import annotations

import click

from artcat.cli.support import instance_settings
from common.catalog_version import announce_catalog_change
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
    done = reindex(engine)
    announce_catalog_change(settings, ("search",))  # cached search pages are read afresh
    click.echo(done.summary())
    click.echo(", ".join(f"{n:,} {kind}" for kind, n in sorted(stats(engine).items())))
