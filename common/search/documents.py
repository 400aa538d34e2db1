"""What the index holds for each kind of resource: title, description, extra text, popularity.

Popularity is on one scale for every kind (0 to about 1), so that a popular artist comes before
an obscure one's namesake artwork: artists by their number of works, artworks by iconicity, genes
by the works they describe; museums, fairs, shows and sales get a fixed middle value.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, func, select

from common.hal import image_links
from common.models import (
    Artist,
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    Fair,
    Gene,
    Partner,
    Profile,
    Sale,
    Show,
)
from common.visibility import visible_artwork

DESCRIPTION_CHARS = 300
# The highest artwork iconicity the loaders give (10 * log10(1 + 40,000 works) + 5 is about 51).
MAX_ICONICITY = 55.0
# Markdown in biographies and descriptions: links keep their text, emphasis marks go.
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_MARK = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|`|^#+\s*", re.MULTILINE)


@dataclass(frozen=True)
class Doc:
    """One resource as the index sees it (raw text; folded when written)."""

    kind: str
    resource_id: str
    title: str
    description: str | None
    body: str
    popularity: float
    thumbnail: str | None = None
    permalink: str | None = None


def _log_scale(count: int, full: float) -> float:
    """Return 0..1: log10(1 + count) relative to log10 of a count that counts as "full"."""
    return min(1.0, math.log10(1 + max(count, 0)) / math.log10(full))


def _clip(text: str | None) -> str | None:
    """Return a description as plain text cut on a word boundary (None when empty)."""
    text = _MD_MARK.sub("", _MD_LINK.sub(r"\1", text or ""))
    text = " ".join(text.split())
    if len(text) <= DESCRIPTION_CHARS:
        return text or None
    return text[:DESCRIPTION_CHARS].rsplit(" ", 1)[0] + "…"


def _thumb(url: str | None, versions: Sequence[str] | None, preferred: Sequence[str]) -> str | None:
    """Return the thumbnail the resource's own representation links to."""
    found = image_links(url, list(versions or []), preferred).get("thumbnail")
    return str(found["href"]) if found else None


def _joined(*parts: str | None, sep: str = ", ") -> str:
    return sep.join(p for p in parts if p)


def artists(conn: Connection) -> Iterator[Doc]:
    """Yield the artists: found by name, described by nationality and dates."""
    cols = (Artist.id, Artist.slug, Artist.name, Artist.sortable_name, Artist.nationality,
            Artist.birthday, Artist.deathday, Artist.biography, Artist.artworks_count,
            Artist.image_url, Artist.image_versions)  # fmt: skip
    for r in conn.execute(select(*cols)):
        dates = (
            f"{r.birthday}\u2013{r.deathday}"
            if r.deathday
            else (r.birthday and f"born {r.birthday}")
        )
        yield Doc(
            "artist",
            r.id,
            r.name,
            _clip(r.biography) or _joined(r.nationality, dates) or None,
            _joined(r.sortable_name, r.nationality, sep=" "),
            0.4 + 0.6 * _log_scale(r.artworks_count, 10_000),
            _thumb(r.image_url, r.image_versions, ("four_thirds", "square")),
            f"/artist/{r.slug}",
        )


def artworks(conn: Connection) -> Iterator[Doc]:
    """Yield the artworks: found by title, and by their artists' names, date and medium."""
    names = dict(conn.execute(select(Artist.id, Artist.name)).all())
    by_artwork: dict[str, list[str]] = defaultdict(list)
    links = select(ArtworkArtist.artwork_id, ArtworkArtist.artist_id).order_by(
        ArtworkArtist.artwork_id, ArtworkArtist.position
    )
    for artwork_id, artist_id in conn.execute(links):
        if artist_id in names:
            by_artwork[artwork_id].append(names[artist_id])
    cols = (Artwork.id, Artwork.slug, Artwork.title, Artwork.date, Artwork.medium,
            Artwork.category, Artwork.series, Artwork.iconicity, Artwork.image_url,
            Artwork.image_versions)  # fmt: skip
    for r in conn.execute(select(*cols).where(visible_artwork())):
        makers = ", ".join(by_artwork.get(r.id, ()))
        yield Doc(
            "artwork",
            r.id,
            r.title or "Untitled",
            _clip(_joined(_joined(makers, r.date), r.medium, sep=". ")),
            _joined(makers, r.date, r.medium, r.category, r.series, sep=" "),
            0.8 * min(1.0, max(r.iconicity or 0.0, 0.0) / MAX_ICONICITY),
            _thumb(r.image_url, r.image_versions, ("medium",)),
            f"/artwork/{r.slug}",
        )


def genes(conn: Connection) -> Iterator[Doc]:
    """Yield the genes, more popular the more artworks they describe."""
    by_gene = select(ArtworkGene.gene_id, func.count()).group_by(ArtworkGene.gene_id)
    counts: dict[str, int] = dict(conn.execute(by_gene).all())
    cols = (Gene.id, Gene.slug, Gene.name, Gene.display_name, Gene.description, Gene.family,
            Gene.image_url, Gene.image_versions)  # fmt: skip
    for r in conn.execute(select(*cols)):
        yield Doc(
            "gene",
            r.id,
            r.display_name or r.name,
            _clip(r.description),
            _joined(r.name, r.family, r.description, sep=" "),
            0.3 + 0.6 * _log_scale(counts.get(r.id, 0), 100_000),
            _thumb(r.image_url, r.image_versions, ()),
            f"/gene/{r.slug}",
        )


def _owner_names(conn: Connection) -> dict[str, str]:
    names: dict[str, str] = {}
    for model in (Partner, Fair):
        names.update((str(i), str(n)) for i, n in conn.execute(select(model.id, model.name)))
    return names


def profiles(conn: Connection) -> Iterator[Doc]:
    """Yield the profiles, titled with their owner's name (partners, fairs) or their handle."""
    owners = _owner_names(conn)
    cols = (Profile.id, Profile.handle, Profile.owner_type, Profile.owner_id, Profile.location,
            Profile.description, Profile.image_url, Profile.image_versions)  # fmt: skip
    for r in conn.execute(select(*cols)):
        if r.owner_type == "user" and not (r.description or r.location):
            continue  # the bare profile every user gets: nothing in it to find
        owner = owners.get(r.owner_id) if r.owner_type != "user" else None
        yield Doc(
            "profile",
            r.id,
            owner or r.handle,
            _clip(r.description) or r.location or None,
            _joined(r.handle, r.location, r.description, sep=" "),
            0.5,
            _thumb(r.image_url, r.image_versions, ("square",)),
            f"/{r.handle}",
        )


def partners(conn: Connection) -> Iterator[Doc]:
    """Yield the partners (galleries, institutions)."""
    owned = select(Profile.owner_id, Profile.handle).where(Profile.owner_type == "partner")
    handles: dict[str, str] = dict(conn.execute(owned).all())
    for r in conn.execute(select(Partner.id, Partner.slug, Partner.name, Partner.type,
                                 Partner.region)):  # fmt: skip
        handle = handles.get(r.id)
        yield Doc(
            "partner",
            r.id,
            r.name,
            _joined(r.type, r.region) or None,
            _joined(r.type, r.region, sep=" "),
            0.45,
            None,
            f"/{handle}" if handle else f"/partner/{r.slug}",
        )


def shows(conn: Connection) -> Iterator[Doc]:
    """Yield the shows, also found by their partner's name."""
    owners = _owner_names(conn)
    cols = (Show.id, Show.slug, Show.name, Show.description, Show.partner_id, Show.image_url,
            Show.image_versions)  # fmt: skip
    for r in conn.execute(select(*cols)):
        yield Doc(
            "show",
            r.id,
            r.name,
            _clip(r.description),
            _joined(owners.get(r.partner_id), r.description, sep=" "),
            0.4,
            _thumb(r.image_url, r.image_versions, ("medium", "square")),
            f"/show/{r.slug}",
        )


def fairs(conn: Connection) -> Iterator[Doc]:
    """Yield the fairs."""
    for r in conn.execute(select(Fair.id, Fair.slug, Fair.name, Fair.tagline, Fair.about,
                                 Fair.city, Fair.image_url, Fair.image_versions)):  # fmt: skip
        yield Doc(
            "fair",
            r.id,
            r.name,
            _clip(r.tagline or r.about),
            _joined(r.city, r.tagline, r.about, sep=" "),
            0.4,
            _thumb(r.image_url, r.image_versions, ("square", "wide")),
            f"/fair/{r.slug}",
        )


def sales(conn: Connection) -> Iterator[Doc]:
    """Yield the published sales (unpublished ones are shown to Admins only)."""
    cols = (Sale.id, Sale.slug, Sale.name, Sale.description, Sale.is_auction, Sale.image_url,
            Sale.image_versions)  # fmt: skip
    for r in conn.execute(select(*cols).where(Sale.published.is_(True))):
        yield Doc(
            "sale",
            r.id,
            r.name,
            _clip(r.description),
            r.description or "",
            0.4,
            _thumb(r.image_url, r.image_versions, ("large_rectangle", "wide")),
            f"/{'auction' if r.is_auction else 'sale'}/{r.slug}",
        )


BUILDERS: dict[str, Callable[[Connection], Iterator[Doc]]] = {
    "artist": artists,
    "artwork": artworks,
    "gene": genes,
    "profile": profiles,
    "show": shows,
    "fair": fairs,
    "partner": partners,
    "sale": sales,
}
KINDS = tuple(BUILDERS)
