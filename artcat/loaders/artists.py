"""One artist, one record: which catalog artist a source's artist record describes.

The rule, the same for every source (Tate, CMoA, MoMA's ``Artists.csv``):

1. **Name key.** The name is folded: accents dropped (NFKD), case folded, a nickname in
   quotes and an alias in brackets dropped (``Charles "Teenie" Harris`` -> ``charles harris``,
   ``Jean Arp (Hans Arp)`` -> ``jean arp``), titles and honours dropped (``Sir``, ``Dame``,
   ``Bt``, ``RA``, ``OBE``, ``The Hon.``), apostrophes removed and other punctuation made a
   space (``J.M.W.`` -> ``j m w``, ``Burne-Jones`` -> ``burne jones``), and the words sorted,
   so that "Surname, Forename" is "Forename Surname" (``Turner, Joseph Mallord William``,
   ``Ai, Weiwei``). Tate's key is taken from its "Surname, Forename" name (``mda``), the one
   both its JSON and its CSV give; CMoA's from ``full_name``; MoMA's from ``DisplayName``.
2. **Life dates.** A record is reconciled only when it has a birth year: the person is the
   name key *and* the birth year, never the name alone (there are many John Smiths). Death
   years must agree too where both sources give one (within a year, as sources round
   differently); if they do not, the record stays on its own, under its source's id. Which
   of the two keeps the reconciled id does not depend on the order either: the record of the
   better-ranked source (rule 4). When it comes second, the artist already there moves to its
   own source's id, with its works and identifiers.
3. **Identity.** A reconciled artist's id is ``stable_id("artist", name key, birth year)``: it
   depends on the person, not on which museum came first, so any import order gives the same
   artists. A record without a birth year (or whose death year contradicts the artist of its
   key) keeps its source's own id, ``stable_id(source, "artist", source id)``, as before.
4. **Fields.** Every source's identifier is kept (``artist_sources``), with what that source
   says of the artist (its ``fields``). The artist's name, dates, places and nationality are
   merged from these records each time one is written: for each column, the value of the
   best-ranked source that gives one (``SOURCE_RANK``: Tate, then CMoA, then MoMA); an empty
   value never erases one. The result depends on the records, not on their order. Only the
   slug stays as first allocated, because links to it must keep working: of two artists with
   one name (not reconciled), the first imported gets the bare slug, the other a suffixed one.

Initials are not expanded (``J. M. W. Turner`` is not ``Joseph Mallord William Turner``):
that would match on surname and dates alone.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, cast

from sqlalchemy import Connection, Table, delete, exists, insert, select, update

from artcat.loaders.slugs import SlugRegistry
from common.bulk import IN_CHUNK, Row, chunks
from common.ids import stable_id
from common.models import ARTIST_DESCRIPTION
from common.models.catalog import Artist, ArtistGene, ArtistSource, ArtworkArtist

ARTIST_SOURCES = cast(Table, ArtistSource.__table__)
_ARTISTS = cast(Table, Artist.__table__)
_LINKS = cast(Table, ArtworkArtist.__table__)
_GENES = cast(Table, ArtistGene.__table__)

# Lower rank wins a disagreement; identifiers-only sources (Wikidata, ULAN) describe nothing.
SOURCE_RANK = {"tate": 0, "cmoa": 1, "moma": 2}
# Artist columns a source describes (merged by rank); the rest belong to the catalog.
DESCRIBED = (*ARTIST_DESCRIPTION, "birth_year")
TITLES = frozenset(
    {"sir", "dame", "bt", "bart", "ra", "pra", "hon", "the", "rev", "revd", "prof", "dr"}
    | {"obe", "cbe", "mbe", "kbe", "dbe", "om", "ch", "rws", "ara"}
)
DEATH_TOLERANCE = 1  # years
# Described columns stored as "" rather than NULL when unknown.
NOT_NULL_TEXT = frozenset({"sortable_name", "birthday", "deathday"})
_ASIDE = re.compile(r"[\"\u201c\u201d][^\"\u201c\u201d]*[\"\u201c\u201d]|`[^`']*'|\([^)]*\)?")
_APOSTROPHES = re.compile(r"['\u2019`]")
_NOT_WORD = re.compile(r"[^\w]+")


def _tokens(text: str) -> list[str]:
    text = _APOSTROPHES.sub("", text)
    return [t for t in _NOT_WORD.sub(" ", text).split() if t not in TITLES and t != "_"]


def name_key(name: str | None) -> str:
    """Return the folded form of a name that reconciliation compares (rule 1)."""
    if not name:
        return ""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join(sorted(_tokens(_ASIDE.sub(" ", text))))


def year_of(text: Any) -> int | None:
    """Return the year of a birthday/deathday text ("1851", "349 BCE"), or ``None``."""
    if not isinstance(text, str) or not text.strip():
        return None
    head, _, era = text.strip().partition(" ")
    if not head.lstrip("-").isdigit():
        return None
    return -int(head) if era == "BCE" else int(head)


def compatible_deaths(one: int | None, other: int | None) -> bool:
    """Tell whether two death years can be the same person's (rule 2)."""
    return one is None or other is None or abs(one - other) <= DEATH_TOLERANCE


def reconciled_id(name: str | None, birth_year: int | None) -> str | None:
    """Return the id of the person ``name`` born in ``birth_year``, or ``None`` (rule 3)."""
    key = name_key(name)
    if not key or birth_year is None:
        return None
    return stable_id("artist", key, birth_year)


def _empty(value: Any) -> bool:
    return value is None or value == ""


def rank(source: str) -> int:
    """Return a source's rank: lower wins where sources disagree."""
    return SOURCE_RANK.get(source, len(SOURCE_RANK))


def merge_fields(records: list[tuple[int, Row]]) -> Row:
    """Return each described column's first non-empty value, best rank first (rule 4)."""
    ordered = [fields for _, fields in sorted(records, key=lambda r: r[0])]
    merged: Row = {}
    for column in DESCRIBED:
        values = (f.get(column) for f in ordered)
        merged[column] = next((v for v in values if not _empty(v)), None)
    return merged


class ArtistResolver:
    """Decide the catalog artist of each source record, for one load of one source.

    Reads once, at the start, the stored artists' death years and this source's identifiers,
    so deciding costs no query; ``merge`` reads the other sources' records of one batch.
    """

    def __init__(self, conn: Connection, source: str) -> None:
        self.source = source
        # Stored and resolved artists -> death year, to tell namesakes apart.
        self.deaths: dict[str, int | None] = {
            row.id: year_of(row.deathday)
            for row in conn.execute(select(_ARTISTS.c.id, _ARTISTS.c.deathday))
        }
        # This source's identifiers -> artist id, as stored.
        query = select(ARTIST_SOURCES.c.source_id, ARTIST_SOURCES.c.artist_id).where(
            ARTIST_SOURCES.c.source == source
        )
        self.stored: dict[str, str] = {row.source_id: row.artist_id for row in conn.execute(query)}
        # Every stored identifier by artist, and the artists to move off a reconciled id
        # (reconciled id -> the id they move to), for a better-ranked namesake (rule 2).
        self.holders: dict[str, set[tuple[str, str]]] = {}
        for row in conn.execute(select(ARTIST_SOURCES.c.source, ARTIST_SOURCES.c.source_id,
                                       ARTIST_SOURCES.c.artist_id)):  # fmt: skip
            self.holders.setdefault(row.artist_id, set()).add((row.source, row.source_id))
        self.evictions: dict[str, str] = {}
        # Set by the loader: slugs for the artists that move.
        self.slugs: SlugRegistry | None = None
        # Artists stored under this source's own id (a catalog loaded before reconciliation)
        # whose record now resolves to another artist: retired once their works have moved.
        self.existing = frozenset(self.deaths)
        self.superseded: set[str] = set()
        # Identifiers resolved in this run -> artist id; those not yet written; what this
        # source says of each (its record); and the identifier behind each artist row.
        self.resolved: dict[str, str] = {}
        self.pending: dict[str, str] = {}
        self.records: dict[str, Row] = {}
        self.row_keys: dict[str, str] = {}

    def artist_id(
        self, source_id: Any, name: str | None, birth_year: int | None, death_year: int | None
    ) -> str:
        """Return the artist id of a source record, recording the decision for this run."""
        key = str(source_id)
        found = self.resolved.get(key)
        if found is not None:
            return found
        artist_id = reconciled_id(name, birth_year)
        if artist_id is None or (
            artist_id in self.deaths
            and not compatible_deaths(self.deaths[artist_id], death_year)
            and not self._evict(artist_id, death_year)
        ):
            artist_id = stable_id(self.source, "artist", key)
        own_id = stable_id(self.source, "artist", key)
        if own_id != artist_id and own_id in self.existing:
            self.superseded.add(own_id)
        if self.deaths.get(artist_id) is None:
            self.deaths[artist_id] = death_year
        self.resolved[key] = self.pending[key] = artist_id
        return artist_id

    def _evict(self, artist_id: str, death_year: int | None) -> bool:
        """Plan to move a namesake stored at ``artist_id`` away, if this source outranks it."""
        holders = self.holders.get(artist_id, set())
        museums = sorted((rank(s), s, i) for s, i in holders if s in SOURCE_RANK)
        if not museums or any(rank(self.source) >= r for r, _, _ in museums):
            return False
        _, source, source_id = museums[0]
        target = stable_id(source, "artist", source_id)
        self.evictions[artist_id] = target
        self.holders[target] = self.holders.pop(artist_id)
        self.deaths[target], self.deaths[artist_id] = self.deaths[artist_id], death_year
        return True

    def move_evicted(self, conn: Connection) -> set[str]:
        """Move the planned namesakes to their own ids, works and identifiers included.

        Returns the ids they now have (rows that exist, for the batch's bookkeeping).
        """
        moved: set[str] = set()
        for old, new in self.evictions.items():
            row = conn.execute(select(_ARTISTS).where(_ARTISTS.c.id == old)).mappings().first()
            if row is None:
                continue
            copy = dict(row) | {"id": new}
            if self.slugs is not None:
                copy["slug"] = self.slugs.slug_for(new, f"{row['slug']}-{new[:6]}")
            conn.execute(insert(_ARTISTS), [copy])
            for table in (_LINKS, _GENES, ARTIST_SOURCES):
                stmt = update(table).where(table.c.artist_id == old).values(artist_id=new)
                conn.execute(stmt)
            moved.add(new)
        self.evictions.clear()
        return moved

    def match(
        self, source_id: Any, name: str | None, birth_year: int | None, death_year: int | None
    ) -> str | None:
        """Return the stored artist a record describes by the rule, or ``None``; never create."""
        artist_id = reconciled_id(name, birth_year)
        if artist_id is None or artist_id not in self.deaths:
            return None
        if not compatible_deaths(self.deaths[artist_id], death_year):
            return None
        self.resolved[str(source_id)] = self.pending[str(source_id)] = artist_id
        return artist_id

    def retire_superseded(self, conn: Connection) -> int:
        """Delete the superseded artists that no work and no source names any more."""
        retired = 0
        for part in chunks(sorted(self.superseded), IN_CHUNK):
            linked = exists().where(_LINKS.c.artist_id == _ARTISTS.c.id)
            named = exists().where(ARTIST_SOURCES.c.artist_id == _ARTISTS.c.id)
            stmt = delete(_ARTISTS).where(_ARTISTS.c.id.in_(part), ~linked, ~named)
            retired += max(conn.execute(stmt).rowcount, 0)
        return retired

    def lookup(self, source_id: Any) -> str | None:
        """Return the artist of an identifier resolved in this run or stored, if any."""
        key = str(source_id)
        return self.resolved.get(key) or self.stored.get(key)

    def describe(self, source_id: Any, row: Row, *, stub: bool = False) -> None:
        """Remember what this source says of an artist (the described columns of its row).

        A ``stub`` (an artist known only from a link) never replaces this source's stored
        record of the same identifier, which is fuller.
        """
        key = str(source_id)
        if stub and key in self.stored:
            self.pending.pop(key, None)
            return
        self.records[key] = {c: row[c] for c in DESCRIBED if c in row and not _empty(row[c])}
        self.row_keys[self.resolved[key]] = key

    def held_by_others(self, artist_id: str) -> bool:
        """Tell whether a stored artist is described by other sources only (not this one)."""
        sources = {source for source, _ in self.holders.get(artist_id, set())}
        return bool(sources) and self.source not in sources

    def take_source_rows(self, existing: set[str]) -> list[Row]:
        """Return (once) the ``artist_sources`` rows resolved since, of artists in ``existing``.

        A record that failed after its artist was resolved leaves an identifier whose artist
        was never written: it waits until that artist is.
        """
        ready = {k: v for k, v in self.pending.items() if v in existing}
        for key in ready:
            del self.pending[key]
        return [
            {
                "source": self.source,
                "source_id": source_id,
                "artist_id": artist_id,
                "fields": self.records.get(source_id, {}),
            }
            for source_id, artist_id in ready.items()
        ]

    def merge(
        self,
        conn: Connection,
        rows: list[Row],
        stored: set[str],
        gaps: frozenset[str] = frozenset(),
    ) -> None:
        """Set each row's described columns from every source's record, in place (rule 4).

        ``gaps`` are columns this run's format does not carry (Tate's CSV has no display
        name): this source's stored record keeps its values for them.
        """
        ids = [row["id"] for row in rows if row["id"] in stored]
        others: dict[str, list[tuple[int, Row]]] = {}
        own: dict[str, Row] = {}
        table = ARTIST_SOURCES
        for part in chunks(ids, IN_CHUNK):
            query = select(table.c.artist_id, table.c.source, table.c.source_id, table.c.fields)
            for found in conn.execute(query.where(table.c.artist_id.in_(part))):
                if found.source == self.source and found.source_id == self.row_keys.get(
                    found.artist_id
                ):
                    own[found.artist_id] = found.fields or {}
                else:
                    records = others.setdefault(found.artist_id, [])
                    records.append((rank(found.source), found.fields or {}))
        for row in rows:
            key = self.row_keys.get(row["id"])
            record = self.records.get(key, {}) if key is not None else {}
            kept = own.get(row["id"], {})
            for column in gaps & set(DESCRIBED):
                if not _empty(kept.get(column)):
                    record[column] = kept[column]
            if key is not None:  # in column order: SQLite compares JSON as text
                self.records[key] = {c: record[c] for c in DESCRIBED if c in record}
            # This source first among equals: its record is the one being loaded.
            merged = merge_fields([(rank(self.source), record), *others.get(row["id"], [])])
            for column in DESCRIBED:
                default = "" if column in NOT_NULL_TEXT else None
                row[column] = merged[column] if merged[column] is not None else default
