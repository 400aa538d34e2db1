"""What the pages read: the API's query functions, plus batched look-ups for the cards.

Every function here runs a fixed number of statements, whatever the number of rows: cards
get their artists' and partners' names in one ``IN`` query per page, never one per card.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from common.api.keyset import PageResult
from common.api.paging import PageParams
from common.hal import image_links
from common.models import Artist, Artwork, ArtworkArtist, Partner
from resource_server.queries import artists as artist_q
from resource_server.queries import artworks as artwork_q
from resource_server.queries import genes as gene_q
from resource_server.queries import shows as show_q
from resource_server.web import browse

# The public rule: only published artworks are shown to people, as in the reference API.
PUBLIC_ARTWORKS = {"published": True}
SIDE_LIST = PageParams(size=50)


@dataclass(frozen=True)
class Named:
    """A link target on a page: its page path and its label."""

    path: str
    label: str


def thumbnail(row: Any, preferred: Sequence[str]) -> str | None:
    """Return the URL of a row's image in the first available preferred version."""
    found = image_links(row.image_url, list(row.image_versions or []), preferred).get("thumbnail")
    href = str(found["href"]) if found else ""
    # Only web URLs and the instance's own images become an img src (the data is imported
    # from files anyone could edit).
    return href if href.lower().startswith(("https://", "http://", "/images/")) else None


def web_url(value: str | None) -> str | None:
    """Return a URL a page may link to: a web URL (the data is imported from files anyone
    could edit), else None."""
    href = (value or "").strip()
    return href if href.lower().startswith(("https://", "http://")) else None


def artists_of(session: Session, artwork_ids: Sequence[str]) -> dict[str, list[Named]]:
    """Return each artwork's artists (in credit order), in one query."""
    out: dict[str, list[Named]] = defaultdict(list)
    if not artwork_ids:
        return out
    stmt = (
        select(ArtworkArtist.artwork_id, Artist.slug, Artist.name)
        .join(Artist, Artist.id == ArtworkArtist.artist_id)
        .where(ArtworkArtist.artwork_id.in_(list(artwork_ids)))
        .order_by(ArtworkArtist.artwork_id, ArtworkArtist.position)
    )
    for artwork_id, slug, name in session.execute(stmt):
        out[artwork_id].append(Named(f"/artist/{slug}", name))
    return out


def partners_by_id(session: Session, partner_ids: Sequence[str | None]) -> dict[str, Named]:
    """Return the partners of several rows, in one query."""
    ids = sorted({p for p in partner_ids if p})
    if not ids:
        return {}
    stmt = select(Partner.id, Partner.slug, Partner.name).where(Partner.id.in_(ids))
    return {pid: Named(f"/partner/{slug}", name) for pid, slug, name in session.execute(stmt)}


def artwork_cards(session: Session, filters: dict[str, Any], page: PageParams) -> PageResult:
    """Return one page of public artworks (the API's artwork query) with their artists."""
    result = artwork_q.list_artworks(session, {**filters, **PUBLIC_ARTWORKS}, page)
    by_artwork = artists_of(session, [a.id for a in result.rows])
    rows = [ArtworkCard(a, by_artwork.get(a.id, [])) for a in result.rows]
    return PageResult(rows, result.next_cursor, result.total_count)


def public_artworks(filters: dict[str, Any]) -> Any:
    """Return the select of the public artworks matching an API filter (plain rows)."""
    return artwork_q.filtered({**filters, **PUBLIC_ARTWORKS})


def cards(session: Session, rows: list[Any]) -> list[Any]:
    """Return artwork rows as cards, with their artists (one query for the page)."""
    by_artwork = artists_of(session, [a.id for a in rows])
    return [ArtworkCard(a, by_artwork.get(a.id, [])) for a in rows]


def artwork_window(
    session: Session,
    filters: dict[str, Any],
    sorting: browse.Sorting,
    order: browse.Order,
    position: browse.Position,
    size: int,
    *,
    total: int | None = None,
) -> browse.Window:
    """Return a sorted, counted page of public artworks as cards (``total``: their number,
    when known)."""
    stmt = public_artworks(filters)
    win = browse.window(session, stmt, sorting, order, position, size, total=total)
    win.rows = cards(session, win.rows)
    return win


def public_artwork_images(session: Session, ids: Sequence[str]) -> dict[str, str | None]:
    """Return the published ones of these artworks with their thumbnail URLs (None when they
    have no image), in one query."""
    if not ids:
        return {}
    stmt = select(Artwork.id, Artwork.image_url, Artwork.image_versions).where(
        Artwork.id.in_(list(ids)), Artwork.published.is_(True)
    )
    return {row.id: thumbnail(row, ("small", "medium", "large")) for row in session.execute(stmt)}


def public_artwork_ids(session: Session, ids: Sequence[str]) -> set[str]:
    """Return which of these artwork ids are published, in one query."""
    if not ids:
        return set()
    stmt = select(Artwork.id).where(Artwork.id.in_(list(ids)), Artwork.published.is_(True))
    return set(session.scalars(stmt))


def side_artists(session: Session, filters: dict[str, Any]) -> list[Artist]:
    """Return the first artists matching an API filter (an artwork's, a gene's)."""
    rows: list[Artist] = artist_q.ARTISTS.page(session, filters, SIDE_LIST).rows
    return rows


def side_genes(session: Session, filters: dict[str, Any]) -> list[Any]:
    """Return the first genes matching an API filter (an artist's, an artwork's)."""
    return list(gene_q.GENES.page(session, filters, SIDE_LIST).rows)


def side_shows(session: Session, filters: dict[str, Any], now: Any) -> list[Any]:
    """Return the first shows matching an API filter (a partner's)."""
    return list(show_q.SHOWS.page(session, filters, SIDE_LIST, now=now).rows)


@dataclass(frozen=True)
class ArtworkCard:
    """An artwork as a card shows it: the row and its artists."""

    artwork: Artwork
    artists: list[Named]

    @property
    def path(self) -> str:
        """Return the artwork's page path."""
        return f"/artwork/{self.artwork.slug}"

    @property
    def image(self) -> str | None:
        """Return the card's image URL."""
        return thumbnail(self.artwork, ("medium", "small", "large"))

    @property
    def title(self) -> str:
        """Return the title a card shows: "Untitled" for the blank ones ("[blank]", "Blank")."""
        title = (self.artwork.title or "").strip()
        return "Untitled" if browse.is_blank_title(title) else title  # as ``work_title``
