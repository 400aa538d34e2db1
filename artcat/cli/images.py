"""The ``artcat images`` commands: the instance's own copies of the museums' images."""

from __future__ import annotations

import click

from artcat.cli.support import emit, instance_settings
from artcat.image_download import FetchOptions
from artcat.image_fetch import fetch_images, mirror_counts
from common.catalog_version import announce_catalog_change
from common.db import make_engine, upgrade
from common.images.store import ImageStoreError, open_store
from common.search.indexer import reindex


@click.group()
def images() -> None:
    """Manage the instance's copies of the artworks' images."""


@images.command("fetch")
@click.option("--workers", type=click.IntRange(1, 64), help="Parallel downloads "
              "(default IMAGE_FETCH_WORKERS).")  # fmt: skip
@click.option("--limit", type=click.IntRange(1), help="Fetch at most this many images.")
@click.option("--retry-failed", is_flag=True, help="Try the images that failed before again.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def images_fetch(
    workers: int | None, limit: int | None, retry_failed: bool, no_progress: bool
) -> None:
    """Mirror each artwork's published image into the image store (resumable, idempotent)."""
    settings = instance_settings()
    try:
        options = FetchOptions.from_settings(
            settings, workers=workers, limit=limit, retry_failed=retry_failed,
            progress=not no_progress,
        )  # fmt: skip
        store = open_store(settings)
    except (ValueError, ImageStoreError) as error:
        raise click.ClickException(str(error)) from None
    upgrade(settings)
    engine = make_engine(settings)
    changed: tuple[str, ...] = ("artworks",)
    try:
        report = fetch_images(engine, store, options)
        if report.to_do:
            # Search results show the artworks' thumbnails: they follow the new image URLs.
            reindex(engine)
            changed = ("artworks", "search")
    finally:
        engine.dispose()
        # Whatever was recorded before an interruption is published too.
        announce_catalog_change(settings, changed)
    click.echo(report.summary())


@images.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def images_status(as_json: bool) -> None:
    """Count the images pending, mirrored and failed (by reason)."""
    settings = instance_settings()
    upgrade(settings)
    engine = make_engine(settings)
    try:
        emit(as_json, dict(mirror_counts(engine)))
    finally:
        engine.dispose()
