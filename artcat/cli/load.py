"""The ``artcat load`` commands: the demo catalog and the museums' published collections."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import click

from artcat.cli.demo import remove_before_import
from artcat.cli.support import instance_settings
from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.demo import demo_credentials, load_demo
from artcat.loaders.download import DownloadError
from artcat.loaders.download import download as fetch_data
from artcat.loaders.moma import load_moma_artists
from artcat.loaders.source import LoadError
from artcat.loaders.tate import load_tate
from common.catalog_version import announce_catalog_change
from common.db import make_engine, upgrade
from common.load_report import LoadReport

Loader = Callable[..., LoadReport]


@click.group()
def load() -> None:
    """Load catalog data."""


@load.command("demo")
@click.option("--seed", default=1, show_default=True, help="Random seed (same seed, same data).")
@click.option("--artworks", default=200, show_default=True, help="Number of artworks.")
def load_demo_cmd(seed: int, artworks: int) -> None:
    """Load a deterministic synthetic catalog with a demo application and user."""
    settings = instance_settings()
    upgrade(settings)
    report = load_demo(make_engine(settings), settings, seed=seed, artworks=artworks)
    announce_catalog_change(settings)
    click.echo(report.summary())
    creds = demo_credentials(settings)
    click.echo(f"demo client id: {creds.client_id}\ndemo client secret: {creds.client_secret}")


TATE_HELP = """Import the Tate collection from PATH.

    \b
    PATH is any of (detected from what it holds; the richest form found is read):
    - a clone of https://github.com/tategallery/collection: its artists/ and
      artworks/ folders of per-record JSON, else its artist_data.csv and
      artwork_data.csv (fewer fields: no movements, subjects or classification);
    - a folder with the bundles artists.jsonl[.gz] and artworks.jsonl[.gz];
    - one of those files or folders alone.

    With --download instead of PATH: the repository's archive from TATE_ARCHIVE_URL.

    An unreadable file stops the import before anything is written; a bad record is
    reported with its file and line and skipped (exit status 1).
    """

CMOA_HELP = """Import the Carnegie Museum of Art collection (and Teenie Harris Archive) from PATH.

    \b
    PATH is any of (detected from what it holds), for cmoa and teenie each:
    - a clone of https://github.com/cmoa/collection: its cmoa/ and teenie/
      folders of per-object JSON, else cmoa.json/teenie.json, else
      cmoa.csv/teenie.csv (the museum's bulk files hold the same data);
    - a folder with the bundles cmoa.jsonl[.gz] and teenie.jsonl[.gz];
    - one of those files or folders alone.

    With --download instead of PATH: the repository's archive from CMOA_ARCHIVE_URL.

    An unreadable file stops the import before anything is written; a bad record is
    reported with its file and line and skipped (exit status 1).
    """

MOMA_ARTISTS_HELP = """Add MoMA's artist details to the artists already in the catalog, from PATH.

    \b
    PATH is MoMA's CC0 Artists.csv[.gz] (https://github.com/MuseumofModernArt/collection),
    or a clone of that repository. Each row is matched to a catalog artist by name AND
    life dates (never by name alone), which gains MoMA's nationality, dates and gender
    where the museums give none, and its MoMA, Wikidata and ULAN identifiers.

    It never creates artists: MoMA's works are not in the catalog, and an artist without
    works would lead nowhere. Load the museums (tate, cmoa) first; run it again after
    loading another museum (a re-run changes nothing else).

    With --download instead of PATH: the CSV from MOMA_ARTISTS_URL.
    """

# Command name (also the museum's name for ``download``) -> (loader, help).
MUSEUMS: dict[str, tuple[Loader, str]] = {
    "tate": (load_tate, TATE_HELP),
    "cmoa": (load_cmoa, CMOA_HELP),
    "moma-artists": (load_moma_artists, MOMA_ARTISTS_HELP),
}
# The imports that replace the demo catalog (MoMA's list only adds to the artists there).
REPLACES_DEMO = frozenset({"tate", "cmoa"})
# The resource types a museum's import writes (None: every type). MoMA's list adds to artists
# only (and, as every import does, reindexes search: an artist's document shows its details),
# so the documents of every other type stay cached through it.
WRITES: dict[str, tuple[str, ...] | None] = {
    "tate": None,
    "cmoa": None,
    "moma-artists": ("artists", "search"),
}


def _museum_command(museum: str, loader: Loader, help_text: str) -> click.Command:
    """Return the ``load MUSEUM`` command: PATH or ``--download``, then ``import_museum``."""

    @click.argument("path", required=False, type=click.Path(exists=True, path_type=Path))
    @click.option("--no-progress", is_flag=True)
    @click.option(
        "--keep-demo-account",
        is_flag=True,
        hidden=museum not in REPLACES_DEMO,
        help="Where the demo catalog is removed first: keep the demo user and application.",
    )
    @click.option(
        "--download",
        is_flag=True,
        help="Fetch the museum's published data from its configured URL (resuming a "
        "partial download), unpack it into the instance folder and load it; no PATH.",
    )
    @click.option(
        "--sha256",
        metavar="HEX",
        help="With --download: the file's expected SHA-256; a mismatch loads nothing.",
    )
    def command(
        path: Path | None,
        no_progress: bool,
        keep_demo_account: bool,
        download: bool,
        sha256: str | None,
    ) -> None:
        import_museum(museum, loader, path, no_progress, download, sha256, keep_demo_account)

    return load.command(museum, help=help_text)(command)


def import_museum(
    museum: str,
    loader: Loader,
    path: Path | None,
    no_progress: bool,
    download: bool,
    sha256: str | None,
    keep_demo_account: bool = False,
) -> None:
    """Run one museum importer; an unreadable input is an error that changed nothing.

    A museum's collection replaces the demo catalog: once the input is known to be readable,
    the demo is removed (``artcat demo remove``), its accounts too unless kept.
    """
    if download == (path is not None):
        raise click.UsageError("give either PATH or --download")
    if sha256 and not download:
        raise click.UsageError("--sha256 checks a download: use it with --download")
    settings = instance_settings()
    upgrade(settings)
    try:
        if path is None:
            path = fetch_data(settings, museum, sha256=sha256, progress=not no_progress)
            click.echo(f"downloaded and unpacked into {path}")
        kwargs: dict[str, Any] = {}
        if museum in REPLACES_DEMO:
            kwargs["prepare"] = partial(
                remove_before_import, settings, museum, keep_account=keep_demo_account
            )
        report = loader(make_engine(settings), path, progress=not no_progress, **kwargs)
    except (LoadError, FileNotFoundError, DownloadError) as exc:
        raise click.ClickException(str(exc)) from exc
    announce_catalog_change(settings, WRITES[museum])
    click.echo(report.summary())
    if not report.ok:
        sys.exit(1)


for _name, (_loader, _help) in MUSEUMS.items():
    _museum_command(_name, _loader, _help)
