"""Build the search documents from the catalog and write only those that changed.

The importers and the demo loader call ``reindex`` when they finish; ``artcat search reindex``
runs it by hand. Every document is rebuilt from the catalog in Python (the same folding on both
engines), then upserted by (kind, resource id) with a "changed" test, so a run over an unchanged
catalog writes nothing; documents of resources that are gone are deleted. The index is as fresh
as the last run: it may lag the catalog between loads.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Connection, Engine, Table, bindparam, delete, func, select

from common.bulk import Row, chunks, upsert
from common.load_report import LoadReport
from common.search.documents import BUILDERS, Doc
from common.search.models import TITLE_KEY_CHARS, SearchDocument
from common.search.people import write_names
from common.search.registry import engine_for
from common.search.text import fold

DOCUMENTS = cast(Table, SearchDocument.__table__)
# Popularity (0..1) is quantised to a millionth; the rest of an id is a hash of the resource.
POPULARITY_STEPS = 1_000_000
HASH_BITS = 40
# A run that rewrites more than this share of the documents compacts the index afterwards.
COMPACT_SHARE = 0.1


@dataclass(frozen=True)
class IndexReport:
    """What a run did: documents built, written (new or changed) and removed, and its time."""

    documents: int
    written: int
    removed: int
    seconds: float

    def summary(self) -> str:
        """Return a one-line account for the command line."""
        return (
            f"search index: {self.documents:,} documents, {self.written:,} written, "
            f"{self.removed:,} removed in {self.seconds:.1f}s"
        )


def doc_id(kind: str, resource_id: str, popularity: float) -> int:
    """Return a document id that sorts by popularity, most popular first.

    The high bits are the quantised "unpopularity", the low 40 bits a hash of the resource, so
    an id stays the same while the resource's popularity does, and equally popular documents
    come in a fixed, arbitrary order.
    """
    steps = round((1.0 - min(max(popularity, 0.0), 1.0)) * POPULARITY_STEPS)
    digest = hashlib.sha1(f"{kind}:{resource_id}".encode(), usedforsecurity=False).digest()
    return (steps << HASH_BITS) | int.from_bytes(digest[: HASH_BITS // 8], "big")


def document_row(doc: Doc) -> Row:
    """Return the documents-table row of a document (its id is set by ``assign_ids``)."""
    title_terms = fold(doc.title)
    return {
        "id": doc_id(doc.kind, doc.resource_id, doc.popularity),
        "kind": doc.kind,
        "resource_id": doc.resource_id,
        "title": doc.title,
        "description": doc.description,
        "thumbnail": doc.thumbnail,
        "permalink": doc.permalink,
        "popularity": round(doc.popularity, 6),
        "title_terms": title_terms,
        "body_terms": fold(doc.body),
        "title_key": title_terms[:TITLE_KEY_CHARS],
    }


def assign_ids(rows: list[Row]) -> list[Row]:
    """Make ids unique (on a rare hash collision the later resource takes the next free id).

    Rows come back in id order: written in that order, PostgreSQL stores the popular documents
    together, so a query reads fewer table pages.
    """
    rows.sort(key=lambda r: (r["kind"], r["resource_id"]))
    used: set[int] = set()
    for row in rows:
        while row["id"] in used:
            row["id"] += 1
        used.add(row["id"])
    rows.sort(key=lambda r: int(r["id"]))
    return rows


def build_documents(conn: Connection, kinds: Iterable[str] = BUILDERS) -> Iterator[Doc]:
    """Yield the documents of every resource of the given kinds, read from the catalog."""
    for kind in kinds:
        yield from BUILDERS[kind](conn)


def _remove_stale(conn: Connection, keep: set[tuple[str, str]]) -> int:
    """Delete the documents of resources no longer in the catalog; return how many."""
    stored = conn.execute(select(DOCUMENTS.c.kind, DOCUMENTS.c.resource_id)).all()
    stale = [{"k": k, "r": r} for k, r in stored if (k, r) not in keep]
    where = (DOCUMENTS.c.kind == bindparam("k")) & (DOCUMENTS.c.resource_id == bindparam("r"))
    for part in chunks(stale):
        conn.execute(delete(DOCUMENTS).where(where), list(part))
    return len(stale)


def write_documents(conn: Connection, rows: list[Row]) -> tuple[int, int]:
    """Upsert the rows, delete stale documents, sync the engine and the artists' name keys;
    return (written, removed) documents."""
    # Writing first takes SQLite's write lock before anything else is read in the transaction.
    written = upsert(conn, DOCUMENTS, rows, key=("kind", "resource_id"), insert_only=frozenset())
    removed = _remove_stale(conn, {(r["kind"], r["resource_id"]) for r in rows})
    names = write_names(conn, rows)
    if written or removed or names:
        engine_for(conn).sync(conn)
    return written, removed


def reindex(engine: Engine) -> IndexReport:
    """Rebuild the search index from the catalog, writing only what changed."""
    started = time.perf_counter()
    with engine.connect() as conn:
        rows = assign_ids([document_row(doc) for doc in build_documents(conn)])
    with engine.begin() as conn:
        written, removed = write_documents(conn, rows)
        search_engine = engine_for(conn)
    if written + removed > COMPACT_SHARE * max(len(rows), 1):
        search_engine.compact(engine)
    return IndexReport(len(rows), written, removed, time.perf_counter() - started)


def stats(engine: Engine) -> dict[str, int]:
    """Return the number of documents of each kind (for the command line)."""
    stmt = select(DOCUMENTS.c.kind, func.count()).group_by(DOCUMENTS.c.kind)
    with engine.connect() as conn:
        return {str(kind): int(n) for kind, n in conn.execute(stmt)}


def reindex_after_load(engine: Engine, report: LoadReport) -> None:
    """Rebuild the index at the end of an import and count its documents in the load report."""
    done = reindex(engine)
    report.add("search_documents", done.documents, done.written + done.removed)
