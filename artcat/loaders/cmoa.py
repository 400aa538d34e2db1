"""Load the Carnegie Museum of Art collection into the catalog, from any accepted layout.

``cmoa_formats`` finds the objects: a clone of CMoA's repository, its bulk files, our bundles.

Artists are embedded in each object (``creator``) and deduplicated by ``artist_id``; an
artist another museum also holds is the same artist (``artcat.loaders.artists``). Other ids
are ``stable_id("cmoa", kind, cmoa id)``. Every input is read once before anything is written:
an unreadable file raises ``LoadError`` naming its file and line and changes nothing.
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
from artcat.loaders.cmoa_formats import cmoa_streams
from artcat.loaders.shell import MuseumRun, run_load
from artcat.loaders.source import Record, Stream
from common.bulk import Row
from common.dimensions import from_cmoa
from common.ids import slugify, stable_id
from common.load_report import LoadReport

CMOA = PartnerInfo(
    handle="cmoa",
    name="Carnegie Museum of Art",
    region="North America",
    website="https://carnegieart.org",
    location="Pittsburgh, PA, USA",
    description="Carnegie Museum of Art in Pittsburgh, with the Teenie Harris Archive of "
    "photographs of the city's Black community.",
)

DESIGN = "Design/Decorative Arts"
# CMoA classification (lower-cased) -> catalog category; anything else is "Other".
CATEGORIES = {
    "prints": "Print",
    "drawings and watercolors": "Drawing, Collage or other Work on Paper",
    "collages": "Drawing, Collage or other Work on Paper",
    "photographs": "Photography",
    "photographic negative": "Photography",
    "paintings": "Painting",
    "sculpture": "Sculpture",
    "casts": "Sculpture",
    "films": "Video/Film",
    "video": "Video/Film",
    "video art": "Video/Film",
    "installations": "Installation",
    "architectural models": "Architecture",
    "architectural drawings": "Architecture",
    "architectural elements": "Architecture",
    **dict.fromkeys(
        (
            "ceramics",
            "metals",
            "containers",
            "glass",
            "wood",
            "textiles",
            "textile art",
            "crèches",
            "lighting devices",
            "tools and equipment",
            "furniture",
            "costume",
            "mirrors",
            "weapons and ammunition",
            "recreational artifacts",
            "measuring devices",
            "vehicles (transportation)",
            "sound devices",
        ),
        DESIGN,
    ),
}
UNIQUE_CLASSIFICATIONS = frozenset({"paintings", "drawings and watercolors", "collages"})
# Values of ``nationality`` that say nothing.
NO_NATIONALITY = frozenset({"", "undetermined", "unknown"})
# "...CollectionImage.aspx?irn=120397&size=Medium": the size is the image version.
_SIZE_RE = re.compile(r"([?&]size=)([A-Za-z0-9]+)")


def load_cmoa(
    engine: Engine,
    path: Path,
    *,
    progress: bool = True,
    prepare: Callable[[], None] | None = None,
) -> LoadReport:
    """Load CMoA objects and their creators from any layout ``cmoa_formats`` accepts."""
    path = Path(path)
    streams = cmoa_streams(path)
    works: Counter[str] = Counter()

    def count(_stream: Stream, record: Record) -> None:
        """Count the objects per creator ``artist_id`` (for iconicity)."""
        creators = record.get("creator")
        if isinstance(creators, list):
            found = (c.get("artist_id") for c in creators if isinstance(c, dict))
            works.update({i for i in found if isinstance(i, str)})

    def write(report: LoadReport) -> None:
        run = _CmoaRun(engine, report, progress, works)
        for stream in streams:
            run.load_records(stream, run.add_artwork, "object")
        run.finish()

    return run_load(
        engine, f"cmoa {path}", streams, write, progress=progress, visit=count, prepare=prepare
    )


def _image(url: str) -> tuple[str, list[str]]:
    """Return a CMoA image URL as ``(template, versions)``; the ``size`` parameter varies."""
    match = _SIZE_RE.search(url)
    if not match:
        return url, []
    template = url[: match.start(2)] + "{image_version}" + url[match.end(2) :]
    return template, [match.group(2)]


class _CmoaRun(MuseumRun):
    """One CMoA run: the works per creator and the creators already described."""

    def __init__(
        self, engine: Engine, report: LoadReport, progress: bool, works: Counter[str]
    ) -> None:
        super().__init__(engine, report, progress, CMOA)
        self.works = works
        # Artists written by this run: the first object naming a creator describes it.
        self.artists_seen: set[str] = set()

    @staticmethod
    def has_id(record: Record) -> bool:
        """Tell whether an object has an id (an empty one is none)."""
        return bool(record.get("id"))

    def add_artwork(self, record: Record, file: str, line: int) -> None:
        """Gather the rows of one object, its creators, genes and images."""
        cmoa_id = str(record["id"])
        artwork_id = stable_id("cmoa", "artwork", cmoa_id)
        creators = [c for c in record.get("creator") or [] if isinstance(c, dict)]
        artists, links = self._creators(artwork_id, creators, file, line)
        classification = as_text(record.get("classification"))
        kind = classification.casefold() if classification else ""
        category = CATEGORIES.get(kind, "Other") if kind else None
        genes = [
            self.genes.gene_id("classification", classification),
            self.genes.gene_id("department", record.get("department")),
        ]
        urls = [i["image_url"] for i in record.get("images") or [] if i.get("image_url")]
        image = _image(urls[0]) if urls else None
        first = creators[0] if creators else {}
        first_name = as_text(first.get("full_name")) or ""
        accession = record.get("accession_number") or cmoa_id.rsplit("/", 1)[-1]
        location = as_text(record.get("physical_location"))
        extra = [
            ("Acquired", as_text(record.get("date_acquired"))),
            ("On view", location if location and location != "Not on View" else None),
        ]
        row = self.artwork(
            artwork_id,
            self.artwork_slugs.slug_for(artwork_id, f"cmoa-{slugify(str(accession))}"),
            from_cmoa(
                record.get("item_height"),
                record.get("item_width"),
                record.get("item_depth"),
                record.get("item_diameter"),
            ),
            image=image,
            notes=extra,
            title=record.get("title") or "",
            category=category,
            medium=record.get("medium"),
            date=record.get("creation_date"),
            year_start=parse_year(record.get("creation_date_earliest")),
            year_end=parse_year(record.get("creation_date_latest")),
            website=record.get("web_url") or "",
            # The owners before the museum, and the museum's credit line, each in its own field.
            provenance=record.get("provenance_text") or "",
            credit_line=record.get("credit_line") or "",
            collecting_institution=CMOA.name,
            unique=kind in UNIQUE_CLASSIFICATIONS,
            # "unknown American" names a culture rather than a maker, "Anonymous" no one: the
            # work says so here and has no artist for it.
            cultural_maker=attribution(first_name),
            iconicity=iconicity(self.works[str(first.get("artist_id"))], category, bool(image)),
        )
        images = [
            image_row(
                image_id=stable_id("cmoa", "image", cmoa_id, position),
                artwork_id=artwork_id,
                position=position,
                image_url=template,
                image_versions=versions,
                now=self.now,
            )
            for position, (template, versions) in enumerate(map(_image, urls[1:]), start=1)
        ]
        # Everything is built; only now touch the batch, so a bad record leaves no trace.
        for cmoa_artist, artist in artists:
            self.resolver.describe(cmoa_artist, artist)
            self.batch.artists[artist["id"]] = artist
            self.artists_seen.add(artist["id"])
        self.queue_artwork(row, links, filter(None, dict.fromkeys(genes)), images)

    def _creators(
        self, artwork_id: str, creators: list[dict[str, Any]], file: str, line: int
    ) -> tuple[list[tuple[str, Row]], list[Row]]:
        """Return ``(CMoA id, row)`` of creators new to this run and the object's links."""
        artists: list[tuple[str, Row]] = []
        links: dict[str, Row] = {}
        for creator in creators:
            cmoa_artist = creator.get("artist_id")
            name = as_text(creator.get("full_name")) or as_text(creator.get("cited_name"))
            if not cmoa_artist or not name:
                self.report.warn(file, line, "creator without an artist_id or name: skipped")
                continue
            if attribution(name) is not None:  # no one: the work's cultural_maker says it
                continue
            birth_year = parse_year(creator.get("birth_date"))
            death_year = parse_year(creator.get("death_date"))
            artist_id = self.resolver.artist_id(cmoa_artist, name, birth_year, death_year)
            if artist_id not in self.artists_seen and artist_id not in links:
                nationality = as_text(creator.get("nationality"))
                artists.append(
                    (
                        cmoa_artist,
                        self.artist(
                            artist_id,
                            self.artist_slug(artist_id, name),
                            name,
                            sortable_name=as_text(creator.get("cited_name")),
                            birth_year=birth_year,
                            death_year=death_year,
                            hometown=as_text(creator.get("birth_place")),
                            location=as_text(creator.get("death_place")),
                            nationality=None
                            if (nationality or "").casefold() in NO_NATIONALITY
                            else nationality,
                        ),
                    )
                )
            self.link(links, artwork_id, artist_id, creator.get("role"))
        return artists, list(links.values())
