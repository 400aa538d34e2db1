"""Load the Tate collection into the catalog, from any layout ``tate_formats`` accepts.

Ids are ``stable_id("tate", kind, tate id)`` (artists: see ``artcat.loaders.artists``, one
person is one artist across museums), so a re-run updates rows in place and never duplicates
them, whichever format the records come from. Every input is read once before
anything is written: an unreadable file raises ``LoadError`` naming its file and line and
leaves the database as it was.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from artcat.loaders.artists import attribution
from artcat.loaders.catalog import (
    PartnerInfo,
    as_text,
    iconicity,
    image_row,
    parse_year,
)
from artcat.loaders.countries import nationality_from_place
from artcat.loaders.shell import MuseumRun, run_load
from artcat.loaders.source import Record, Stream
from artcat.loaders.tate_formats import CSV_ARTIST_GAPS, CSV_ARTWORK_GAPS, tate_streams
from common.bulk import Row
from common.dimensions import parse_tate
from common.ids import slugify, stable_id
from common.load_report import LoadReport

TATE = PartnerInfo(
    handle="tate",
    name="Tate",
    region="Europe",
    website="https://www.tate.org.uk",
    location="London, United Kingdom",
    description="Tate holds the national collection of British art from 1500 and of "
    "international modern and contemporary art.",
)
COLLECTING_INSTITUTION = "Tate"
IMAGE_ROOT = "http://www.tate.org.uk/art/images/work/"

CATEGORIES = {
    "painting": "Painting",
    "sculpture": "Sculpture",
    "relief": "Sculpture",
    "on paper, print": "Print",
    "on paper, unique": "Drawing, Collage or other Work on Paper",
    "installation": "Installation",
    "time-based media": "Video/Film",
    "block for printing": "Other",
    "supporting material": "Other",
}
# Tate's own word for a work that exists once (no edition).
UNIQUE_CLASSIFICATIONS = frozenset({"painting", "on paper, unique"})
# Image files end in a size number: _7 small, _8 medium (the thumbnails), _9 large, _10 optimal.
_SIZED_FILE_RE = re.compile(r"^(.*)_(\d+)\.jpg$")


def load_tate(
    engine: Engine,
    path: Path,
    *,
    progress: bool = True,
    prepare: Callable[[], None] | None = None,
) -> LoadReport:
    """Load Tate artists and artworks from a clone of Tate's repository, a bundle or a file."""
    path = Path(path)
    artists, artworks = tate_streams(path)
    works: Counter[Any] = Counter()

    def count(stream: Stream, record: Record) -> None:
        """Count works per first contributor; odd values are left to the main pass."""
        contributors = record.get("contributors")
        if stream.kind == "artworks" and isinstance(contributors, list):
            people = [c for c in contributors if isinstance(c, dict)]
            if people:
                first = min(people, key=_display_order).get("id")
                if isinstance(first, int | str):
                    works[first] += 1

    def write(report: LoadReport) -> None:
        run = _TateRun(engine, report, progress, with_artists=artists is not None, works=works)
        if artists is not None:
            run.load_artists(artists)
        if artworks is not None:
            run.load_artworks(artworks)
        run.finish()

    streams = [s for s in (artists, artworks) if s is not None]
    return run_load(
        engine, f"tate {path}", streams, write, progress=progress, visit=count, prepare=prepare
    )


def _display_order(contributor: dict[str, Any]) -> float:
    """Return a contributor's place in the credits (unnumbered ones first, as Tate lists them)."""
    order = contributor.get("displayOrder")
    return order if isinstance(order, int | float) and not isinstance(order, bool) else 0


def _contributor_name(contributor: Any) -> str | None:
    """Return the name a contributor is credited under (its display name, else "mda")."""
    if not isinstance(contributor, dict):
        return None
    return as_text(contributor.get("fc")) or as_text(contributor.get("mda"))


def _name(value: Any) -> str | None:
    """Return ``value["name"]`` of a Tate place-like object, if any."""
    return value.get("name") if isinstance(value, dict) else None


def _sized_image(files: list[str]) -> tuple[str, list[str]] | None:
    """Return ``(URL template, versions)`` for files that differ only in their size number."""
    matches = [_SIZED_FILE_RE.match(f) for f in files]
    if not matches or not all(matches) or len({m.group(1) for m in matches if m}) != 1:
        return None
    stem = matches[0].group(1) if matches[0] else ""
    versions = [m.group(2) for m in matches if m]
    return f"{stem}_{{image_version}}.jpg", versions


class _TateRun(MuseumRun):
    """One Tate run: what it knows of Tate's artists besides the shared registries."""

    def __init__(
        self,
        engine: Engine,
        report: LoadReport,
        progress: bool,
        *,
        with_artists: bool,
        works: Counter[Any],
    ) -> None:
        super().__init__(engine, report, progress, TATE)
        # Tate artist id -> the artist's number of works at Tate ("totalWorks"), for iconicity.
        self.total_works: dict[Any, int] = {}
        # Works per first contributor in this run's input: the count where "totalWorks" is
        # missing (artist_data.csv has none).
        self.works_here = works
        # Tate artist ids a link may point at: those of the artists file when this run has one
        # (so a re-run reports the same missing contributors), else those already stored.
        self.known_artists: set[str] = set() if with_artists else set(self.resolver.stored)

    def _expect(self, stream: Stream) -> None:
        """Set the batch for a stream's format: a partial one fills gaps of new rows only."""
        partial = not stream.complete
        self.batch.artist_insert_only = CSV_ARTIST_GAPS if partial else frozenset()
        self.batch.artwork_insert_only = CSV_ARTWORK_GAPS if partial else frozenset()
        self.batch.keep_children = partial

    # Artists

    def load_artists(self, stream: Stream) -> None:
        """Load every artist of a stream, with their movements as genes."""
        self._expect(stream)
        self.load_records(stream, self.add_artist, "artist")

    def add_artist(self, record: Record, file: str, line: int) -> None:
        """Gather the rows of one artist record."""
        tate_id = record["id"]
        name = as_text(record.get("fc")) or as_text(record.get("mda"))
        if not name:
            raise ValueError("artist without a name")
        if attribution(name) is not None:  # "Anonymous", "British School": no one to list
            return
        birth = record.get("birth") or {}
        death = record.get("death") or {}
        active = record.get("activePlaces") or []
        birth_place = _name(birth.get("place"))
        birth_year = parse_year((birth.get("time") or {}).get("startYear"))
        if birth_year is None:
            birth_year = parse_year(record.get("birthYear"))
        death_year = parse_year((death.get("time") or {}).get("startYear"))
        row = self._person(
            record,
            name,
            birth_year,
            death_year,
            hometown=birth_place,
            location=_name(death.get("place")) or (_name(active[0]) if active else None),
            nationality=nationality_from_place(birth_place),
        )
        artist_id = row["id"]
        self.resolver.describe(tate_id, row)
        movements = [m.get("name") for m in record.get("movements") or []]
        gene_ids = {self.genes.gene_id("movement", name) for name in movements}
        if "totalWorks" in record:
            total_works = int(record.get("totalWorks") or 0)
        else:
            total_works = self.works_here[tate_id]
        self.batch.artists[artist_id] = row
        if not self.batch.keep_children:  # a CSV names no movements: keep the stored ones
            self.batch.artist_gene_owners.append(artist_id)
        self.batch.artist_genes.extend(
            {"artist_id": artist_id, "gene_id": g} for g in sorted(filter(None, gene_ids))
        )
        self.total_works[tate_id] = total_works
        self.known_artists.add(str(tate_id))

    # Artworks

    def load_artworks(self, stream: Stream) -> None:
        """Load every artwork of a stream with its artist links, genes and images."""
        self._expect(stream)
        self.load_records(stream, self.add_artwork, "artwork")

    def add_artwork(self, record: Record, file: str, line: int) -> None:
        """Gather the rows of one artwork record."""
        tate_id = record["id"]
        artwork_id = stable_id("tate", "artwork", tate_id)
        contributors = sorted(
            record.get("contributors") or [], key=lambda c: c.get("displayOrder") or 0
        )
        people = [c for c in contributors if attribution(_contributor_name(c)) is None]
        attributions = [attribution(_contributor_name(c)) for c in contributors if c not in people]
        links = self._artist_links(artwork_id, people, file, line)
        gene_ids = self._gene_ids(record)
        classification = record.get("classification")
        category = CATEGORIES.get(classification, "Other") if classification else None
        image = self._main_image(record.get("thumbnailUrl"))
        extra_images = self._extra_images(artwork_id, record)
        first_artist = contributors[0].get("id") if contributors else None
        date_range = record.get("dateRange") or {}
        group = record.get("catalogueGroup") or {}
        copyright_lines = [record.get("thumbnailCopyright")] + [
            i.get("copyright") for i in record.get("additionalImages") or []
        ]
        row = self.artwork(
            artwork_id,
            self.artwork_slugs.slug_for(
                artwork_id, f"tate-{slugify(str(record.get('acno') or tate_id))}"
            ),
            parse_tate(
                record.get("dimensions"),
                record.get("width"),
                record.get("height"),
                record.get("depth"),
            ),
            image=image,
            notes=[("Foreign title", record.get("foreignTitle"))],
            title=record.get("title") or "",
            category=category,
            medium=record.get("medium"),
            date=record.get("dateText"),
            year_start=parse_year(date_range.get("startYear")),
            year_end=parse_year(date_range.get("endYear")),
            website=record.get("url") or "",
            signature=record.get("inscription") or "",
            series=record.get("groupTitle") or group.get("shortTitle") or "",
            # Tate publishes a credit line (how the work came to Tate), no ownership history.
            credit_line=record.get("creditLine") or "",
            collecting_institution=COLLECTING_INSTITUTION,
            image_rights=next((c for c in copyright_lines if c), None),
            unique=classification in UNIQUE_CLASSIFICATIONS,
            # Who made it, where the credits name no person ("British School 18th century").
            cultural_maker=attributions[0] if attributions else None,
            iconicity=iconicity(self.total_works.get(first_artist, 0), category, bool(image)),
        )
        self.queue_artwork(row, links, gene_ids, extra_images)

    def _artist_links(
        self, artwork_id: str, contributors: list[dict[str, Any]], file: str, line: int
    ) -> list[Row]:
        links: dict[str, Row] = {}
        for contributor in contributors:
            tate_id = contributor.get("id")
            if tate_id is None:
                self.report.warn(file, line, "contributor without an id: link skipped")
                continue
            known = str(tate_id) in self.known_artists
            artist_id = self.resolver.lookup(tate_id) if known else None
            if artist_id is None:
                artist_id = self._stub_artist(contributor, file, line)
            self.link(links, artwork_id, artist_id, contributor.get("role"))
        return list(links.values())

    def _stub_artist(self, contributor: dict[str, Any], file: str, line: int) -> str:
        """Create an artist from a contributor missing from the artists file (once per run)."""
        name = (
            as_text(contributor.get("fc"))
            or as_text(contributor.get("mda"))
            or f"Tate artist {contributor['id']}"
        )
        stub = self._person(contributor, name, parse_year(contributor.get("birthYear")))
        artist_id = stub["id"]
        self.known_artists.add(str(contributor["id"]))
        self.report.warn(
            file,
            line,
            f"contributor {contributor['id']} ({name}) is not in the artists file: "
            "created a minimal artist from the contribution",
        )
        self.batch.stub_artists[artist_id] = stub
        self.resolver.describe(contributor["id"], stub, stub=True)
        return artist_id

    def _person(
        self,
        person: dict[str, Any],
        name: str,
        birth_year: int | None,
        death_year: int | None = None,
        **fields: Any,
    ) -> Row:
        """Return the artists row of a Tate person (an artist record, or a contributor missing
        from the artists file), keyed by "mda", the name both the JSON and the CSV give."""
        key_name = as_text(person.get("mda")) or name
        artist_id = self.resolver.artist_id(person["id"], key_name, birth_year, death_year)
        return self.artist(
            artist_id,
            self.artist_slug(artist_id, name),
            name,
            sortable_name=person.get("mda"),
            gender=person.get("gender"),
            birth_year=birth_year,
            death_year=death_year,
            **fields,
        )

    def _gene_ids(self, record: dict[str, Any]) -> list[str]:
        """Return the ids of the record's movements and level 0/1 subjects, in first-seen order."""
        ids: dict[str | None, None] = {}
        for movement in record.get("movements") or []:
            ids[self.genes.gene_id("movement", movement.get("name"))] = None
        for level0 in (record.get("subjects") or {}).get("children") or []:
            ids[self.genes.gene_id("subject", level0.get("name"))] = None
            for level1 in level0.get("children") or []:
                ids[self.genes.gene_id("subject", level1.get("name"))] = None
        return [gene_id for gene_id in ids if gene_id]

    @staticmethod
    def _main_image(url: Any) -> tuple[str, list[str]] | None:
        """Return the main image's URL template and versions from the thumbnail URL."""
        if not isinstance(url, str) or not url:
            return None
        sized = _sized_image([url])
        return sized if sized else (url, [])

    def _extra_images(self, artwork_id: str, record: dict[str, Any]) -> list[Row]:
        rows = []
        for position, image in enumerate(record.get("additionalImages") or [], start=1):
            sizes = [s for s in image.get("sizes") or [] if s.get("file")]
            if not sizes:
                continue
            largest = max(sizes, key=lambda s: s.get("width") or 0)
            files = [IMAGE_ROOT + s["file"] for s in sizes]
            url, versions = _sized_image(files) or (IMAGE_ROOT + largest["file"], [])
            key = image.get("filenameBase") or f"{record['id']}-{position}"
            rows.append(
                image_row(
                    image_id=stable_id("tate", "image", key),
                    artwork_id=artwork_id,
                    position=position,
                    image_url=url,
                    image_versions=versions,
                    now=self.now,
                    caption=sizes[0].get("caption"),
                    width=largest.get("width"),
                    height=largest.get("height"),
                )
            )
        return rows
