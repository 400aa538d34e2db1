"""What every museum import does, whatever the museum: the shell a museum loader plugs into.

``run_load`` is one import from start to end: read every input once before anything is
written (``check``), let the museum write its rows, rebuild the search index, time it all.
``MuseumRun`` is the state one museum run writes through: its partner, the slug and gene
registries, the artist resolver and the batch being gathered; ``load_records`` reads a stream
into it, record by record, reporting a bad record with its file and line and skipping it.
A museum module is left with what only it knows: where its files are and what its records say.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import Engine

from artcat.loaders.artists import ArtistResolver, retire_non_persons
from artcat.loaders.batch import BATCH_SIZE, Batch, analyze
from artcat.loaders.catalog import (
    ARTISTS,
    ARTWORKS,
    GeneRegistry,
    PartnerInfo,
    artist_row,
    artwork_row,
    as_text,
    ensure_partner,
    recount_artists,
)
from artcat.loaders.slugs import SlugRegistry
from artcat.loaders.source import Record, Stream, check
from common.bulk import Row
from common.dimensions import Dimensions
from common.ids import slugify, utcnow
from common.load_report import LoadReport
from common.search.indexer import reindex_after_load

# Exceptions a malformed record raises while its rows are built (wrong types, missing keys).
RECORD_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError)

# Adds one record's rows to the run: (record, file, line).
AddRecord = Callable[[Record, str, int], None]


def run_load(
    engine: Engine,
    source: str,
    streams: Sequence[Stream],
    write: Callable[[LoadReport], None],
    *,
    progress: bool = True,
    visit: Callable[[Stream, Record], None] | None = None,
    prepare: Callable[[], None] | None = None,
) -> LoadReport:
    """Check every stream, let ``write`` load them, then reindex; return the timed report.

    ``visit`` sees each record during the check (a first pass: loaders count works per
    artist there). An unreadable input raises ``LoadError`` before ``write`` is called, and
    before ``prepare``, which runs once the input is known to be readable (the command line
    removes the demo catalog there).
    """
    started = time.perf_counter()
    report = LoadReport(source=source)
    check(report.source, streams, visit=visit, progress=progress)
    if prepare is not None:
        prepare()
    write(report)
    reindex_after_load(engine, report)
    report.elapsed = time.perf_counter() - started
    return report


class MuseumRun:
    """One museum's run: the partner, the slug and gene registries, and the batch being gathered."""

    def __init__(
        self, engine: Engine, report: LoadReport, progress: bool, partner: PartnerInfo
    ) -> None:
        self.engine = engine
        self.report = report
        self.progress = progress
        self.now = utcnow()
        with engine.begin() as conn:
            self.partner_id = ensure_partner(conn, partner, self.now)
            self.artist_slugs = SlugRegistry(conn, ARTISTS)
            self.artwork_slugs = SlugRegistry(conn, ARTWORKS)
            self.genes = GeneRegistry(conn, self.now)
            self.resolver = ArtistResolver(conn, partner.handle)
        # Taken before this run allocates any slug: the rows already in the database.
        self.batch = Batch(
            stored=set(self.artist_slugs.by_id) | set(self.artwork_slugs.by_id),
            resolver=self.resolver,
        )
        self.resolver.slugs = self.artist_slugs

    @staticmethod
    def has_id(record: Record) -> bool:
        """Tell whether a record carries the id its rows are keyed by."""
        return record.get("id") is not None

    def load_records(self, stream: Stream, add: AddRecord, noun: str) -> None:
        """Read every record of a stream into the batch, writing it as it fills."""
        for file, line, record in stream.read(self.report.error, self.progress):
            if not self.has_id(record):
                self.report.error(file, line, "missing id")
                continue
            try:
                add(record, file, line)
            except RECORD_ERRORS as exc:
                self.report.error(file, line, f"bad {noun} record: {exc!r}")
                continue
            if len(self.batch) >= BATCH_SIZE:
                self.flush()
        self.flush()

    def artist_slug(self, artist_id: str, name: str) -> str:
        """Return the slug of an artist (allocated from the name the first time)."""
        return self.artist_slugs.slug_for(artist_id, slugify(name))

    def artist(self, artist_id: str, slug: str, name: str, **fields: Any) -> Row:
        """Return an artists row of this run, stamped now."""
        return artist_row(artist_id=artist_id, slug=slug, name=name, now=self.now, **fields)

    def artwork(
        self,
        artwork_id: str,
        slug: str,
        dimensions: Dimensions,
        *,
        image: tuple[str, list[str]] | None,
        notes: Sequence[tuple[str, Any]],
        **fields: Any,
    ) -> Row:
        """Return an artworks row of this museum: its main image, its notes as text lines.

        ``slug`` is allocated already (``artwork_slugs.slug_for``), before the fields are
        read from the record: a record that fails while they are read still took its slug.
        """
        return artwork_row(
            artwork_id=artwork_id,
            slug=slug,
            dimensions=dimensions,
            now=self.now,
            partner_id=self.partner_id,
            image_url=image[0] if image else None,
            image_versions=image[1] if image else [],
            additional_information="\n".join(f"{k}: {v}" for k, v in notes if v),
            **fields,
        )

    @staticmethod
    def link(links: dict[str, Row], artwork_id: str, artist_id: str, role: Any) -> None:
        """Add an artwork's link to an artist, in credit order, the first credit of each."""
        links.setdefault(
            artist_id,
            {
                "artwork_id": artwork_id,
                "artist_id": artist_id,
                "position": len(links),
                "role": as_text(role),
            },
        )

    def queue_artwork(
        self, row: Row, links: Iterable[Row], gene_ids: Iterable[str], images: Iterable[Row]
    ) -> None:
        """Add an artwork's rows to the batch: itself, its artist links, genes and images."""
        self.batch.artworks.append(row)
        self.batch.artwork_artists.extend(links)
        self.batch.artwork_genes.extend({"artwork_id": row["id"], "gene_id": g} for g in gene_ids)
        self.batch.images.extend(images)

    def flush(self) -> None:
        """Write the gathered batch."""
        self.batch.flush(self.engine, self.genes, self.report)

    def finish(self) -> None:
        """Write what is left and recompute the artists' artwork counts."""
        self.flush()
        with self.engine.begin() as conn:
            retired = self.resolver.retire_superseded(conn)
            if retired:
                self.report.add("artists merged away", retired, retired)
            nobody = retire_non_persons(conn)
            if nobody:
                self.report.add("artists that name no one removed", nobody, nobody)
            recount_artists(conn, self.now)
        analyze(self.engine)
