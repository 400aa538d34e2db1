"""Rows shared by the museum loaders: partners and profiles, genes, artists, artworks, images."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, Table, case, func, or_, select, update

from artcat.loaders.slugs import SlugRegistry
from common.bulk import Row, upsert
from common.dimensions import Dimensions
from common.ids import slugify, stable_id
from common.load_report import LoadReport
from common.models import (
    Artist,
    ArtistGene,
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    Gene,
    Image,
    Partner,
    Profile,
)

# The models' tables, typed as tables (``__table__`` is declared as a mere FromClause).
ARTISTS = cast(Table, Artist.__table__)
ARTWORKS = cast(Table, Artwork.__table__)
ARTIST_GENES = cast(Table, ArtistGene.__table__)
ARTWORK_ARTISTS = cast(Table, ArtworkArtist.__table__)
ARTWORK_GENES = cast(Table, ArtworkGene.__table__)
GENES = cast(Table, Gene.__table__)
IMAGES = cast(Table, Image.__table__)
PARTNERS = cast(Table, Partner.__table__)
PROFILES = cast(Table, Profile.__table__)

# Weight of a category in the iconicity score: paintings and sculpture are what visitors seek
# out; studies, prints and negatives exist in the thousands per artist.
CATEGORY_WEIGHT = {
    "Painting": 1.0,
    "Sculpture": 0.9,
    "Installation": 0.8,
    "Video/Film": 0.8,
    "Photography": 0.6,
    "Print": 0.6,
    "Design/Decorative Arts": 0.6,
    "Architecture": 0.6,
    "Drawing, Collage or other Work on Paper": 0.5,
}
DEFAULT_WEIGHT = 0.5
IMAGE_BONUS = 5.0
# Artwork columns filled from source text, and those of them that are NOT NULL.
ARTWORK_TEXTS = (
    "title",
    "medium",
    "date",
    "website",
    "signature",
    "series",
    "provenance",
    "credit_line",
    "collecting_institution",
    "additional_information",
    "image_rights",
    "cultural_maker",
)
ARTWORK_REQUIRED_TEXTS = frozenset(ARTWORK_TEXTS) - {
    "medium",
    "date",
    "image_rights",
    "cultural_maker",
}


@dataclass(frozen=True)
class PartnerInfo:
    """A museum as a partner with its profile."""

    handle: str
    name: str
    region: str
    website: str
    location: str
    description: str


def ensure_partner(conn: Connection, info: PartnerInfo, now: datetime) -> str:
    """Upsert the museum's partner (an institution) and its profile; return the partner id."""
    partner_id = stable_id("partner", info.handle)
    upsert(
        conn,
        PARTNERS,
        [
            {
                "id": partner_id,
                "slug": slugify(info.name),
                "type": "Institution",
                "name": info.name,
                "email": "",
                "region": info.region,
                "website": info.website,
                "enforce_on_platform_transactions": None,
                "eligible_for_partner_analytics": False,
                "created_at": now,
                "updated_at": now,
            }
        ],
    )
    upsert(
        conn,
        PROFILES,
        [
            {
                "id": stable_id("profile", info.handle),
                "handle": info.handle,
                "location": info.location,
                "description": info.description,
                "website": info.website,
                "owner_type": "partner",
                "owner_id": partner_id,
                "cover_image_id": None,
                "image_url": None,
                "image_versions": [],
                "created_at": now,
                "updated_at": now,
            }
        ],
    )
    return partner_id


class GeneRegistry:
    """Gene ids by family and name; new genes wait in ``pending`` until the batch is written.

    Ids depend on family and name only (not on the museum), so a gene is one concept however
    many sources name it.
    """

    def __init__(self, conn: Connection, now: datetime) -> None:
        self.now = now
        self.slugs = SlugRegistry(conn, GENES)
        self.ids: dict[tuple[str, str], str] = {}
        self.seen: set[str] = set()
        self.pending: list[Row] = []

    def gene_id(self, family: str, name: Any) -> str | None:
        """Return the id of the gene ``name`` of ``family``, queueing it when first seen."""
        if not isinstance(name, str) or not name.strip():
            return None
        known = self.ids.get((family, name))
        if known is not None:
            return known
        # Tate subjects and CMoA classifications are lower case ("people", "prints"); genes are
        # shown as names, so capitalise the first letter and merge names differing by case.
        display = name.strip()
        display = display[0].upper() + display[1:]
        gene_id = stable_id("gene", family, display.casefold())
        if gene_id not in self.seen:
            self.seen.add(gene_id)
            self.pending.append(
                {
                    "id": gene_id,
                    "slug": self.slugs.slug_for(gene_id, slugify(display)),
                    "name": display,
                    "display_name": None,
                    "description": "",
                    "family": family,
                    "image_url": None,
                    "image_versions": [],
                    "created_at": self.now,
                    "updated_at": self.now,
                }
            )
        self.ids[(family, name)] = gene_id
        return gene_id

    def flush(self, conn: Connection, report: LoadReport) -> None:
        """Write the genes queued since the last flush."""
        if self.pending:
            report.add("genes", len(self.pending), upsert(conn, GENES, self.pending))
            self.pending = []


def as_text(value: Any) -> str | None:
    """Return a source value as text, or ``None`` when empty or not a string or number.

    Ends are stripped and Tate's ``\\r\\n`` line breaks become ``\\n``. A number where text is
    expected is written out; anything else (a list, an object) would fail the whole batch in
    the database, so it is dropped here.
    """
    if isinstance(value, str):
        value = value.strip()
        if "\r" in value:
            value = value.replace("\r\n", "\n")
        return value or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def as_int(value: Any) -> int | None:
    """Return a source value as an integer, or ``None`` when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def parse_year(value: Any) -> int | None:
    """Return the year of an int or an ISO-like date string ("1812-01-01", "-0349-01-01")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    sign = -1 if text.startswith("-") else 1
    head = text.lstrip("-").split("-", 1)[0]
    return sign * int(head) if head.isdigit() else None


def year_text(year: int | None) -> str:
    """Return a birthday/deathday text: ``"1812"``, ``"349 BCE"``, or ``""`` when unknown."""
    if year is None:
        return ""
    return f"{-year} BCE" if year < 0 else str(year)


def artist_row(
    *,
    artist_id: str,
    slug: str,
    name: str,
    now: datetime,
    sortable_name: Any = None,
    gender: Any = None,
    birth_year: int | None = None,
    death_year: int | None = None,
    hometown: Any = None,
    location: Any = None,
    nationality: Any = None,
    biography: Any = None,
) -> Row:
    """Return a full artists row (counts start at zero and are recomputed after the load)."""
    sex = as_text(gender)
    return {
        "id": artist_id,
        "slug": slug,
        "name": name,
        "sortable_name": as_text(sortable_name) or "",
        "gender": sex.lower() if sex else None,
        "biography": as_text(biography),
        "birthday": year_text(birth_year),
        "deathday": year_text(death_year),
        "hometown": as_text(hometown),
        "location": as_text(location),
        "nationality": as_text(nationality),
        "target_supply": False,
        "artworks_count": 0,
        "published_artworks_count": 0,
        "birth_year": birth_year,
        "image_url": None,
        "image_versions": [],
        "created_at": now,
        "updated_at": now,
    }


def artwork_row(
    *, artwork_id: str, slug: str, dimensions: Dimensions, now: datetime, **fields: Any
) -> Row:
    """Return a full artworks row: the given fields over the catalog's defaults."""
    row: Row = {
        "id": artwork_id,
        "slug": slug,
        "title": "",
        "category": None,
        "medium": None,
        "date": None,
        "year_start": None,
        "year_end": None,
        "dimensions": dimensions,
        "published": True,
        "website": "",
        "signature": "",
        "series": "",
        "provenance": "",
        "credit_line": "",
        "literature": "",
        "exhibition_history": "",
        "collecting_institution": "",
        "additional_information": "",
        "image_rights": None,
        "blurb": "",
        "unique": False,
        "cultural_maker": None,
        "iconicity": 0.0,
        "can_inquire": False,
        "can_acquire": False,
        "can_share": True,
        "sale_message": None,
        "sold": False,
        "partner_id": None,
        "image_url": None,
        "image_versions": [],
        "created_at": now,
        "updated_at": now,
    }
    unknown = fields.keys() - row.keys()
    if unknown:
        raise TypeError(f"not artwork columns: {sorted(unknown)}")
    row.update(fields)
    for name in ARTWORK_TEXTS:
        row[name] = as_text(row[name]) or ("" if name in ARTWORK_REQUIRED_TEXTS else None)
    return row


def image_row(
    *,
    image_id: str,
    artwork_id: str,
    position: int,
    image_url: str,
    image_versions: list[str],
    now: datetime,
    caption: str | None = None,
    width: Any = None,
    height: Any = None,
) -> Row:
    """Return an images row for an additional view of an artwork."""
    width, height = as_int(width), as_int(height)
    return {
        "id": image_id,
        "artwork_id": artwork_id,
        "show_id": None,
        "position": position,
        "default": False,
        "aspect_ratio": round(width / height, 4) if width and height else None,
        "original_height": as_int(height),
        "original_width": as_int(width),
        "caption": as_text(caption),
        "image_url": image_url,
        "image_versions": image_versions,
        "created_at": now,
        "updated_at": now,
    }


def iconicity(artist_works: int, category: str | None, has_image: bool) -> float:
    """Return a deterministic popularity score for an artwork.

    A museum holds many works by the artists that matter to it, so the first artist's number of
    works in the collection is the signal; the logarithm keeps Turner's 37,000 sketches from
    swamping everything, the category weight favours paintings over studies, and a work with
    an image gets a bonus because a work nobody can see is rarely popular.
    """
    weight = CATEGORY_WEIGHT.get(category or "", DEFAULT_WEIGHT)
    score = 10 * math.log10(1 + max(artist_works, 0)) * weight
    return round(score + (IMAGE_BONUS if has_image else 0.0), 4)


def recount_artists(conn: Connection, now: datetime) -> int:
    """Recompute every artist's artwork counts in one UPDATE; return the artists changed."""
    links = ARTWORK_ARTISTS
    total = select(func.count()).where(links.c.artist_id == ARTISTS.c.id).scalar_subquery()
    # The published test sits inside the aggregate, not in WHERE: given "published = 1", SQLite
    # walks the published index over every artwork for each artist instead of the artist's links.
    published = (
        select(func.count(case((ARTWORKS.c.published.is_(True), 1))))
        .select_from(links.join(ARTWORKS, ARTWORKS.c.id == links.c.artwork_id))
        .where(links.c.artist_id == ARTISTS.c.id)
        .scalar_subquery()
    )
    stmt = (
        update(ARTISTS)
        .values(artworks_count=total, published_artworks_count=published, updated_at=now)
        # Only rows whose counts moved, so a re-run leaves artists (and updated_at) alone.
        .where(
            or_(ARTISTS.c.artworks_count != total, ARTISTS.c.published_artworks_count != published)
        )
    )
    return max(conn.execute(stmt).rowcount, 0)
