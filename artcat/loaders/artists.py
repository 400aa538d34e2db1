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

5. **Near dates.** Museums round and disagree: Joan Mitchell was born in 1925 at Tate and
   in 1926 at CMoA, Siqueiros in 1896 and 1898, and the Guerrilla Girls have a founding year
   at CMoA and none at Tate. A record whose exact key finds no artist of another source joins
   the one artist of *another* source with the same name key whose birth year is within
   ``BIRTH_TOLERANCE`` years of its own, or where one of the two has none (not both), and
   whose death year agrees where both give one. Never when that name finds several such
   artists (which one?), nor an artist that another record of the same source already holds
   (a source's two records are two people by its own word), nor an artist no museum
   describes (the demo's). The merged artist has the id the best-ranked record would have
   alone (rule 3), so the order of the imports still does not matter: when that record
   comes second, the artist already there moves to that id with its slug, works, genes and
   identifiers. A catalog whose artists were split before is merged by the next import.
6. **Not a person.** "Anonymous", "Unknown", "unknown American", "British School 18th
   century", "School of Granada" and the like name no one (``attribution``): they never
   become artists. The work keeps no artist link for them and says the attribution in
   ``cultural_maker`` instead; such artists left by earlier imports are deleted once no work
   links to them.

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
BIRTH_TOLERANCE = 2  # years, between the birth years of a near match (rule 5)
# Names of no one (rule 6), compared folded, without "?" and "(?)".
NOBODY = frozenset(
    {"anonymous", "anon", "unknown", "unknown artist", "artist unknown", "unidentified artist"}
    | {"unidentified", "various artists", "unknown maker", "maker unknown"}
)
_DOUBT = re.compile(r"\(\?\)|\?")
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)"
_SCHOOL = re.compile(
    rf"^(?:[a-z-]+ ){{1,4}}school(?: {_ORDINAL}(?: or {_ORDINAL})? century)?$"
    r"|^school of [a-z -]+$"
)
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


def attribution(name: str | None) -> str | None:
    """Return what a creator's name says of a work when it names no person (rule 6), or None.

    "Anonymous" and "Unknown" say themselves; "unknown American" says "American" (a culture,
    as ``cultural_maker`` holds it); "British School 18th century" says itself.
    """
    if not name:
        return None
    text = " ".join(_DOUBT.sub(" ", name).split())
    folded = text.casefold()
    if folded in NOBODY:
        return text[0].upper() + text[1:]
    if folded.startswith("unknown "):
        return text[len("unknown ") :]
    if _SCHOOL.match(folded):
        return text
    return None


def year_of(text: Any) -> int | None:
    """Return the year of a birthday/deathday text ("1851", "349 BCE"), or ``None``."""
    if not isinstance(text, str) or not text.strip():
        return None
    head, _, era = text.strip().partition(" ")
    if not head.lstrip("-").isdigit():
        return None
    return -int(head) if era == "BCE" else int(head)


def near_births(one: int | None, other: int | None) -> bool:
    """Tell whether two birth years are near enough for a near match (rule 5)."""
    if one is None or other is None:
        return not (one is None and other is None)
    return abs(one - other) <= BIRTH_TOLERANCE


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
        # Name key -> the artists of that key, and each artist's birth year (rule 5).
        self.people: dict[str, set[str]] = {}
        self.births: dict[str, int | None] = {}
        sources = ARTIST_SOURCES.c
        query = select(sources.source, sources.source_id, sources.artist_id, sources.fields)
        for row in conn.execute(query):
            self.holders.setdefault(row.artist_id, set()).add((row.source, row.source_id))
            fields = row.fields if isinstance(row.fields, dict) else {}
            for said in (fields.get("name"), fields.get("sortable_name")):
                self._know(row.artist_id, said)
        for row in conn.execute(
            select(_ARTISTS.c.id, _ARTISTS.c.name, _ARTISTS.c.sortable_name, _ARTISTS.c.birth_year)
        ):
            self.births[row.id] = row.birth_year
            self._know(row.id, row.name)
            self._know(row.id, row.sortable_name)
        self.evictions: dict[str, str] = {}
        # Near matches to move to the id of their best-ranked record (old id -> new id).
        self.merges: dict[str, str] = {}
        # Artist -> this source's identifiers resolved to it in this run.
        self.run_ids: dict[str, set[str]] = {}
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
        exact = reconciled_id(name, birth_year)
        near = self._near(name_key(name), key, birth_year, death_year)
        # An exact key that names someone (rule 2: the artist, or a namesake with another
        # death year) decides; a split this record left alone earlier does not.
        taken = exact is not None and exact in self.deaths and not self._only_mine(exact, key)
        if not taken and len(near) == 1 and exact not in near:  # rule 5
            artist_id = self._join(near[0], exact or stable_id(self.source, "artist", key))
        else:
            artist_id = self._exact(exact, key, death_year)
        own_id = stable_id(self.source, "artist", key)
        if own_id != artist_id and own_id in self.existing:
            self.superseded.add(own_id)
        before = self.stored.get(key)
        if before is not None and before != artist_id and before in self.existing:
            self.superseded.add(before)  # split before: retired once its works have moved
        if self.deaths.get(artist_id) is None:
            self.deaths[artist_id] = death_year
        if self.births.get(artist_id) is None:
            self.births[artist_id] = birth_year
        self._know(artist_id, name)
        self.run_ids.setdefault(artist_id, set()).add(key)
        self.resolved[key] = self.pending[key] = artist_id
        return artist_id

    def _exact(self, artist_id: str | None, key: str, death_year: int | None) -> str:
        """Return the artist of the exact key (rules 2 and 3), else the source's own id."""
        if artist_id is None or (
            artist_id in self.deaths
            and not compatible_deaths(self.deaths[artist_id], death_year)
            and not self._evict(artist_id, death_year)
        ):
            return stable_id(self.source, "artist", key)
        return artist_id

    def _only_mine(self, artist_id: str, key: str) -> bool:
        """Tell whether an artist holds no record but this one (a split left by an earlier
        import, which a near match may merge)."""
        held = self.holders.get(artist_id, set())
        return held <= {(self.source, key)} and self.run_ids.get(artist_id, set()) <= {key}

    def _know(self, artist_id: str, name: Any) -> None:
        """File an artist under the name key of one of its names."""
        key = name_key(name) if isinstance(name, str) else ""
        if key:
            self.people.setdefault(key, set()).add(artist_id)

    def _near(
        self, name: str, key: str, birth_year: int | None, death_year: int | None
    ) -> list[str]:
        """Return the artists a record may join by rule 5, in id order."""
        found = []
        for candidate in sorted(self.people.get(name, ())) if name else ():
            held = self.holders.get(candidate, set())
            mine = {i for s, i in held if s == self.source} | self.run_ids.get(candidate, set())
            if mine - {key} or not any(s != self.source and s in SOURCE_RANK for s, _ in held):
                continue  # another record of this source, or no other museum's record
            if near_births(self.births.get(candidate), birth_year) and compatible_deaths(
                self.deaths.get(candidate), death_year
            ):
                found.append(candidate)
        return found

    def _join(self, candidate: str, own: str) -> str:
        """Return the id a record joining ``candidate`` gives the artist: ``own`` (its id
        alone) when this source outranks every museum describing the candidate, which then
        moves there (``move_merged``); else the candidate's."""
        held = self.holders.get(candidate, set())
        if any(rank(s) <= rank(self.source) for s, _ in held if s in SOURCE_RANK):
            return candidate
        self.merges[candidate] = own
        self.holders.setdefault(own, set()).update(self.holders.pop(candidate, set()))
        for ids in self.people.values():
            if candidate in ids:
                ids.discard(candidate)
                ids.add(own)
        if self.deaths.get(own) is None:
            self.deaths[own] = self.deaths.get(candidate)
        if self.births.get(own) is None:
            self.births[own] = self.births.get(candidate)
        if self.slugs is not None and own not in self.slugs and candidate in self.slugs:
            slug = self.slugs.by_id.pop(candidate)  # links to the artist's page keep working
            self.slugs.by_id[own] = slug
            self.slugs.by_slug[slug] = own
        return own

    def move_merged(self, conn: Connection) -> tuple[set[str], set[str]]:
        """Move the artists joined by a better-ranked record to its id (rule 5): the row (with
        its slug), works, genes and identifiers. Returns the ids moved to and those gone."""
        moved: set[str] = set()
        gone: set[str] = set()
        for old, new in self.merges.items():
            row = conn.execute(select(_ARTISTS).where(_ARTISTS.c.id == old)).mappings().first()
            if row is None:
                continue
            there = conn.execute(select(_ARTISTS.c.id).where(_ARTISTS.c.id == new)).first()
            if there is None:  # the slug goes with the artist: free it first
                conn.execute(update(_ARTISTS).where(_ARTISTS.c.id == old).values(slug=old))
                conn.execute(insert(_ARTISTS), [dict(row) | {"id": new}])
            for table, other in ((_LINKS, "artwork_id"), (_GENES, "gene_id")):
                both = select(table.c[other]).where(table.c.artist_id == new)
                conn.execute(
                    delete(table).where(table.c.artist_id == old, table.c[other].in_(both))
                )
                conn.execute(update(table).where(table.c.artist_id == old).values(artist_id=new))
            stmt = update(ARTIST_SOURCES).where(ARTIST_SOURCES.c.artist_id == old)
            conn.execute(stmt.values(artist_id=new))
            conn.execute(delete(_ARTISTS).where(_ARTISTS.c.id == old))
            moved.add(new)
            gone.add(old)
        self.merges.clear()
        return moved, gone

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
            artist_id = None
        elif not compatible_deaths(self.deaths[artist_id], death_year):
            return None
        if artist_id is None:
            near = self._near(name_key(name), str(source_id), birth_year, death_year)
            if len(near) != 1:
                return None
            artist_id = near[0]
        self.run_ids.setdefault(artist_id, set()).add(str(source_id))
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


def retire_non_persons(conn: Connection) -> int:
    """Delete the artists that name no one (rule 6) and that no work links to any more, with
    their identifiers and genes; return how many went."""
    rows = conn.execute(select(_ARTISTS.c.id, _ARTISTS.c.name))
    nobody = sorted(row.id for row in rows if attribution(row.name) is not None)
    retired = 0
    for part in chunks(nobody, IN_CHUNK):
        linked = select(_LINKS.c.artist_id).where(_LINKS.c.artist_id.in_(part))
        unlinked = [i for i in part if i not in set(conn.execute(linked).scalars())]
        if not unlinked:
            continue
        for table in (ARTIST_SOURCES, _GENES):
            conn.execute(delete(table).where(table.c.artist_id.in_(unlinked)))
        retired += max(
            conn.execute(delete(_ARTISTS).where(_ARTISTS.c.id.in_(unlinked))).rowcount, 0
        )
    return retired
