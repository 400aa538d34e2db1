"""A batch of rows from many records, written in one transaction in foreign-key order."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine, text

from artcat.loaders.artists import ARTIST_SOURCES, ArtistResolver
from artcat.loaders.catalog import (
    ARTIST_GENES,
    ARTISTS,
    ARTWORK_ARTISTS,
    ARTWORK_GENES,
    ARTWORKS,
    GENES,
    IMAGES,
    GeneRegistry,
)
from common.bulk import INSERT_ONLY, Row, insert_missing, sync_children, upsert
from common.load_report import LoadReport

# Records per transaction: big enough to amortise the statements, small enough that SQLite's
# write lock is released often and a crash loses little.
BATCH_SIZE = 2000
LOADED_TABLES = (
    ARTISTS,
    ARTIST_SOURCES,
    ARTWORKS,
    GENES,
    ARTIST_GENES,
    ARTWORK_ARTISTS,
    ARTWORK_GENES,
    IMAGES,
)


def analyze(engine: Engine) -> None:
    """Refresh the planner statistics of the tables a load filled.

    Until autovacuum catches up, PostgreSQL plans for the empty tables it last measured and
    answers "links of these 900 artworks" with sequential scans; a re-run (and the API) then
    crawls. SQLite plans from its indexes alone and needs nothing.
    """
    if engine.dialect.name != "postgresql":
        return
    with engine.begin() as conn:
        conn.execute(text("ANALYZE " + ", ".join(t.name for t in LOADED_TABLES)))


@dataclass
class Batch:
    """Rows gathered from up to ``BATCH_SIZE`` records, keyed so repeats collapse."""

    # Ids of artists and artworks already written (before or during this run): only these can
    # have links to reconcile; a new row's links are simply inserted, with no query first.
    stored: set[str] = field(default_factory=set)
    artists: dict[str, Row] = field(default_factory=dict)
    # Artists known only from a link (Tate contributors missing from the artists file): they
    # are inserted when absent and never overwrite a full record.
    stub_artists: dict[str, Row] = field(default_factory=dict)
    # Artists whose gene links this batch states in full (only they are synced).
    artist_gene_owners: list[str] = field(default_factory=list)
    artist_genes: list[Row] = field(default_factory=list)
    artworks: list[Row] = field(default_factory=list)
    artwork_artists: list[Row] = field(default_factory=list)
    artwork_genes: list[Row] = field(default_factory=list)
    images: list[Row] = field(default_factory=list)
    # Columns written for new rows only, and whether stored artworks keep child rows missing
    # from the batch: set while reading a format with fewer fields (Tate's CSVs), so that it
    # adds what it knows without erasing what a fuller format wrote.
    artist_insert_only: frozenset[str] = frozenset()
    artwork_insert_only: frozenset[str] = frozenset()
    keep_children: bool = False
    # Decides who each source artist is and merges what sources say of one artist.
    resolver: ArtistResolver | None = None

    def __len__(self) -> int:
        return len(self.artworks) + len(self.artists)

    def flush(self, engine: Engine, genes: GeneRegistry, report: LoadReport) -> None:
        """Write everything gathered, in one transaction, and start empty again."""
        if not (len(self) or self.stub_artists or genes.pending):
            return
        with engine.begin() as conn:
            genes.flush(conn, report)
            if self.resolver is not None and self.resolver.evictions:
                moved = self.resolver.move_evicted(conn)
                report.add("artists moved off a namesake's record", len(moved), len(moved))
                self.stored.update(moved)
            if self.resolver is not None and self.resolver.merges:
                moved, gone = self.resolver.move_merged(conn)
                report.add("artists merged with a near match", len(gone), len(gone))
                self.stored.difference_update(gone)
                self.stored.update(moved)
            if self.artists:
                rows = list(self.artists.values())
                if self.resolver is not None:
                    self.resolver.merge(conn, rows, self.stored, self.artist_insert_only)
                changed = upsert(
                    conn, ARTISTS, rows, insert_only=INSERT_ONLY | self.artist_insert_only
                )
                report.add("artists", len(rows), changed)
            if self.stub_artists:
                rows = list(self.stub_artists.values())
                # A stub of an artist other museums describe adds what it knows, by rank.
                held = [r for r in rows if self.resolver and self.resolver.held_by_others(r["id"])]
                if held and self.resolver is not None:
                    self.resolver.merge(conn, held, self.stored)
                    upsert(conn, ARTISTS, held)
                report.add("artists", len(rows), insert_missing(conn, ARTISTS, rows))
            if self.resolver is not None and self.resolver.pending:
                existing = self.stored | set(self.artists) | set(self.stub_artists)
                rows = self.resolver.take_source_rows(existing)
                changed = upsert(conn, ARTIST_SOURCES, rows, key=("source", "source_id"))
                report.add("artist_sources", len(rows), changed)
            if self.artist_gene_owners:
                owners = [i for i in self.artist_gene_owners if i in self.stored]
                changed = sync_children(
                    conn,
                    ARTIST_GENES,
                    "artist_id",
                    owners,
                    self.artist_genes,
                    key=("artist_id", "gene_id"),
                )
                report.add("artist_genes", len(self.artist_genes), changed)
            if self.artworks:
                changed = upsert(
                    conn,
                    ARTWORKS,
                    self.artworks,
                    insert_only=INSERT_ONLY | self.artwork_insert_only,
                )
                report.add("artworks", len(self.artworks), changed)
                # Parents whose children are synced (their stale rows deleted); with
                # keep_children none are, and the batch's rows are only added or updated.
                ids = [
                    row["id"]
                    for row in self.artworks
                    if row["id"] in self.stored and not self.keep_children
                ]
                for kind, table, rows, key in (
                    ("artwork_artists", ARTWORK_ARTISTS, self.artwork_artists,
                     ("artwork_id", "artist_id")),
                    ("artwork_genes", ARTWORK_GENES, self.artwork_genes,
                     ("artwork_id", "gene_id")),
                    ("images", IMAGES, self.images, ("id",)),
                ):  # fmt: skip
                    changed = sync_children(conn, table, "artwork_id", ids, rows, key=key)
                    report.add(kind, len(rows), changed)
        self.stored.update(self.artists)
        self.stored.update(self.stub_artists)
        self.stored.update(row["id"] for row in self.artworks)
        self.clear()

    def clear(self) -> None:
        """Forget every gathered row."""
        for rows in (self.artists, self.stub_artists):
            rows.clear()
        for items in (
            self.artist_gene_owners,
            self.artist_genes,
            self.artworks,
            self.artwork_artists,
            self.artwork_genes,
            self.images,
        ):
            items.clear()
