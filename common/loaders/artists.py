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
   name key *and* the birth year, never the name alone (there are many John Smiths, and a few
   born in the same year; there are few with the same name born in the same year who also
   died in different years). Death years must agree too where both sources give one (within a
   year, as sources round differently); if they do not, the record stays on its own.
3. **Identity.** A reconciled artist's id is ``stable_id("artist", name key, birth year)``: it
   depends on the person, not on which museum came first, so any import order gives the same
   artists. A record without a birth year (or whose death year contradicts the artist of its
   key) keeps its source's own id, ``stable_id(source, "artist", source id)``, as before.
4. **Fields.** Every source's identifier is kept (``artist_sources``). Where sources disagree
   on a field, the highest-ranked source that gives a value wins (``SOURCE_RANK``: Tate, then
   CMoA, then MoMA); an empty value never erases one. Only the slug stays as first allocated,
   because links to it must keep working: of two artists with one name (not reconciled), the
   first imported gets the bare slug and the other a suffixed one.

Initials are not expanded (``J. M. W. Turner`` is not ``Joseph Mallord William Turner``):
that would match on surname and dates alone.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Connection, Table, select

from common.ids import stable_id
from common.loaders.bulk import IN_CHUNK, Row, chunks
from common.models.catalog import Artist, ArtistSource

ARTIST_SOURCES = cast(Table, ArtistSource.__table__)
_ARTISTS = cast(Table, Artist.__table__)

# Lower rank wins a disagreement; identifiers-only sources (Wikidata, ULAN) describe nothing.
SOURCE_RANK = {"tate": 0, "cmoa": 1, "moma": 2}
# Artist columns a source describes (merged by rank); the rest belong to the catalog.
DESCRIBED = (
    "name",
    "sortable_name",
    "gender",
    "biography",
    "birthday",
    "deathday",
    "hometown",
    "location",
    "nationality",
    "birth_year",
)
TITLES = frozenset(
    {"sir", "dame", "bt", "bart", "ra", "pra", "hon", "the", "rev", "revd", "prof", "dr"}
    | {"obe", "cbe", "mbe", "kbe", "dbe", "om", "ch", "rws", "ara"}
)
DEATH_TOLERANCE = 1  # years
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


@dataclass
class Known:
    """What a load needs to know of an artist already stored."""

    death_year: int | None
    sources: set[str]


class ArtistResolver:
    """Decide the catalog artist of each source record, for one load of one source.

    Reads once, at the start, the stored artists' death years and every source identifier,
    so deciding costs no query; ``merge`` reads the stored rows of one batch.
    """

    def __init__(self, conn: Connection, source: str) -> None:
        self.source = source
        self.known: dict[str, Known] = {
            row.id: Known(year_of(row.deathday), set())
            for row in conn.execute(select(_ARTISTS.c.id, _ARTISTS.c.deathday))
        }
        # This source's identifiers -> artist id, as stored.
        self.stored: dict[str, str] = {}
        for src, src_id, artist_id in conn.execute(select(ARTIST_SOURCES)):
            if artist_id in self.known:
                self.known[artist_id].sources.add(src)
            if src == source:
                self.stored[src_id] = artist_id
        # Identifiers resolved in this run -> artist id; and those not yet written.
        self.resolved: dict[str, str] = {}
        self.pending: dict[str, str] = {}

    def artist_id(
        self, source_id: Any, name: str | None, birth_year: int | None, death_year: int | None
    ) -> str:
        """Return the artist id of a source record, recording the decision for this run."""
        key = str(source_id)
        found = self.resolved.get(key)
        if found is not None:
            return found
        artist_id = reconciled_id(name, birth_year)
        known = self.known.get(artist_id) if artist_id else None
        if artist_id is None or (
            known is not None and not compatible_deaths(known.death_year, death_year)
        ):
            artist_id = stable_id(self.source, "artist", key)
        entry = self.known.setdefault(artist_id, Known(death_year, set()))
        if entry.death_year is None:
            entry.death_year = death_year
        self.resolved[key] = self.pending[key] = artist_id
        return artist_id

    def lookup(self, source_id: Any) -> str | None:
        """Return the artist of an identifier resolved in this run or stored, if any."""
        key = str(source_id)
        return self.resolved.get(key) or self.stored.get(key)

    def take_source_rows(self, existing: set[str]) -> list[Row]:
        """Return (once) the ``artist_sources`` rows resolved since, of artists in ``existing``.

        A record that failed after its artist was resolved leaves an identifier whose artist
        was never written: it waits until that artist is.
        """
        ready = {k: v for k, v in self.pending.items() if v in existing}
        for key in ready:
            del self.pending[key]
        return [
            {"source": self.source, "source_id": source_id, "artist_id": artist_id}
            for source_id, artist_id in ready.items()
        ]

    def outranks(self, artist_id: str) -> bool:
        """Tell whether this source's values win over the stored ones of ``artist_id``."""
        rank = SOURCE_RANK.get(self.source, len(SOURCE_RANK))
        others = (self.known.get(artist_id) or Known(None, set())).sources - {self.source}
        return all(rank <= SOURCE_RANK.get(s, len(SOURCE_RANK)) for s in others)

    def merge(self, conn: Connection, rows: list[Row], stored: set[str]) -> None:
        """Merge each row with the stored artist of its id, in place (rule 4)."""
        ids = [row["id"] for row in rows if row["id"] in stored]
        existing: dict[str, Row] = {}
        columns = [_ARTISTS.c.id, *(_ARTISTS.c[c] for c in DESCRIBED)]
        for part in chunks(ids, IN_CHUNK):
            for found in conn.execute(select(*columns).where(_ARTISTS.c.id.in_(part))).mappings():
                existing[found["id"]] = dict(found)
        for row in rows:
            old = existing.get(row["id"])
            if old is None:
                continue
            wins = self.outranks(row["id"])
            for column in DESCRIBED:
                if _empty(row[column]) or (not wins and not _empty(old[column])):
                    row[column] = old[column]

    def saw(self, artist_ids: set[str]) -> None:
        """Note that this source now describes ``artist_ids`` (after they are written)."""
        for artist_id in artist_ids:
            self.known.setdefault(artist_id, Known(None, set())).sources.add(self.source)
