"""Add what MoMA's CC0 artist list knows to the artists the catalog already holds.

``Artists.csv`` (github.com/MuseumofModernArt/collection) gives each person MoMA holds a
nationality, life dates, a gender and, for many, their Wikidata and ULAN identifiers. A row is
matched to a catalog artist by the rule of ``artcat.loaders.artists`` (name key and birth year,
death years agreeing): never by name alone, and never creating an artist. MoMA's works are not
in the catalog, and an artist with no work would be a search hit that leads nowhere; a row
that matches nobody is counted and left out. Run it after the museum imports (again after a
new one: it is idempotent).

A match keeps MoMA's identifiers (``moma``, ``wikidata``, ``ulan`` rows of
``artist_sources``) and MoMA's record, which fills what the museums leave empty (MoMA ranks
last, so it never overrides them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, bindparam, select, update

from artcat.loaders.artists import ARTIST_SOURCES, DESCRIBED, ArtistResolver, name_key
from artcat.loaders.batch import analyze
from artcat.loaders.catalog import ARTISTS, as_text, year_text
from artcat.loaders.formats import CsvRow, csv_stream
from artcat.loaders.shell import run_load
from artcat.loaders.source import Record, Stream, find_file
from common.bulk import IN_CHUNK, Row, chunks, upsert
from common.ids import utcnow
from common.load_report import LoadReport

REQUIRED_COLUMNS = ("ConstituentID", "DisplayName", "BeginDate", "EndDate")
# "Nationality unknown" and the like say nothing.
NO_NATIONALITY = frozenset({"", "nationality unknown", "unknown", "various"})
IDENTIFIERS = (("wikidata", "Wiki QID"), ("ulan", "ULAN"))


def moma_stream(path: Path) -> Stream:
    """Return the stream of ``Artists.csv[.gz]``: the file itself, or in a clone's folder."""
    path = Path(path)
    if path.is_dir():
        found = find_file(path, "Artists", (".csv", ".csv.gz"))
        if found is None:
            raise FileNotFoundError(
                f"{path}: no Artists.csv found; expected MoMA's Artists.csv (or a clone of "
                "github.com/MuseumofModernArt/collection)"
            )
        return csv_stream("artists", found, path, required=REQUIRED_COLUMNS, convert=dict)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file or folder")
    return csv_stream("artists", path, path, required=REQUIRED_COLUMNS, convert=dict)


def _year(value: Any) -> int | None:
    """Return a MoMA year (``0`` means unknown)."""
    text = (value or "").strip() if isinstance(value, str) else ""
    return int(text) if text.lstrip("-").isdigit() and int(text) != 0 else None


def moma_fields(row: CsvRow) -> Row:
    """Return what a MoMA row says of a person, as artist columns."""
    nationality = as_text(row.get("Nationality"))
    gender = as_text(row.get("Gender"))
    birth, death = _year(row.get("BeginDate")), _year(row.get("EndDate"))
    return {
        "name": as_text(row.get("DisplayName")),
        "gender": gender.lower() if gender else None,
        "birthday": year_text(birth),
        "deathday": year_text(death),
        "nationality": None if (nationality or "").casefold() in NO_NATIONALITY else nationality,
        "birth_year": birth,
    }


def load_moma_artists(engine: Engine, path: Path, *, progress: bool = True) -> LoadReport:
    """Match MoMA's artists to catalog artists and add their details and identifiers."""
    stream = moma_stream(path)

    def write(report: LoadReport) -> None:
        _write(engine, stream, report, progress)
        analyze(engine)

    return run_load(engine, f"moma-artists {path}", [stream], write, progress=progress)


def _write(engine: Engine, stream: Stream, report: LoadReport, progress: bool) -> None:
    """Match every row and write the matched artists' details and identifiers."""
    now = utcnow()
    with engine.begin() as conn:
        resolver = ArtistResolver(conn, "moma")
        identifiers: list[Row] = []
        matched: dict[str, Row] = {}
        for file, line, record in stream.read(report.error, progress):
            artist_id = _match(resolver, record, report, file, line)
            if artist_id is None:
                continue
            matched[artist_id] = {"id": artist_id}
            identifiers += [
                {"source": source, "source_id": value, "artist_id": artist_id, "fields": {}}
                for source, column in IDENTIFIERS
                if (value := (record.get(column) or "").strip())
            ]
        rows = list(matched.values())
        for row in rows:
            row.update(dict.fromkeys(DESCRIBED))
        resolver.merge(conn, rows, set(matched))
        sources = resolver.take_source_rows(set(matched))
        report.add("artist_sources", len(sources), _upsert_sources(conn, sources))
        report.add("artist_sources", len(identifiers), _upsert_sources(conn, identifiers))
        report.add("artists", len(rows), _update_artists(conn, rows, now))


def _match(
    resolver: ArtistResolver, record: Record, report: LoadReport, file: str, line: int
) -> str | None:
    """Return the catalog artist of a MoMA row, remembering MoMA's record of them."""
    moma_id = (record.get("ConstituentID") or "").strip()
    if not moma_id:
        report.error(file, line, "missing ConstituentID")
        return None
    fields = moma_fields(record)
    if not name_key(fields["name"]):
        report.error(file, line, "missing DisplayName")
        return None
    artist_id = resolver.match(
        moma_id, fields["name"], fields["birth_year"], _year(record.get("EndDate"))
    )
    if artist_id is None:
        report.add("moma artists not in the catalog")
        return None
    # MoMA's name form ("Claude Cahun (Lucy Schwob)") is kept in its record, never shown.
    resolver.describe(moma_id, fields)
    return artist_id


def _upsert_sources(conn: Any, rows: list[Row]) -> int:
    return upsert(conn, ARTIST_SOURCES, rows, key=("source", "source_id"))


def _update_artists(conn: Any, rows: list[Row], now: Any) -> int:
    """Write the merged columns of the artists whose values moved; return how many."""
    current: dict[str, Row] = {}
    columns = [ARTISTS.c.id, *(ARTISTS.c[c] for c in DESCRIBED)]
    for part in chunks([r["id"] for r in rows], IN_CHUNK):
        for found in conn.execute(select(*columns).where(ARTISTS.c.id.in_(part))).mappings():
            current[found["id"]] = dict(found)
    # Bound as "v_<column>": a parameter may not share a name with the column it sets.
    changed = [
        {"b_id": row["id"], "v_updated_at": now, **{f"v_{c}": row[c] for c in DESCRIBED}}
        for row in rows
        if any(current[row["id"]][c] != row[c] for c in DESCRIBED)
    ]
    if changed:
        stmt = (
            update(ARTISTS)
            .where(ARTISTS.c.id == bindparam("b_id"))
            .values({c: bindparam(f"v_{c}") for c in (*DESCRIBED, "updated_at")})
        )
        for part in chunks(changed):
            conn.execute(stmt, list(part))
    return len(changed)
