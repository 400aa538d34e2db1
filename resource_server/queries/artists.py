"""Artist queries: bounded, indexed, one statement per page."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, Select, select
from sqlalchemy.orm import Session

from common.api.keyset import fetch
from common.models import Artist, ArtistGene, Artwork, ArtworkArtist, Sale, SaleArtwork
from common.visibility import visible_artwork, visible_artwork_ids
from resource_server.queries.listing import Listing
from resource_server.queries.lookup import lookup_statement, plausible_slug
from resource_server.queries.rows import select_rows
from resource_server.queries.similarity import similar_artists


def filtered(filters: dict[str, Any], *, admin: bool = False) -> Select[Any]:
    """Return the select of artists matching the list filters.

    ``sale_id`` selects the artists of a sale's lots; an unpublished sale counts only for Admins.
    """
    stmt = select_rows(Artist)
    # Link-table filters are ``id IN (indexed subquery)``: their cost follows the matching set,
    # not the size of the artists table.
    if "artwork_id" in filters:
        # A hidden artwork's artists are not listed: it answers as a missing one does.
        of_artwork = select(ArtworkArtist.artist_id).where(
            ArtworkArtist.artwork_id == filters["artwork_id"],
            ArtworkArtist.artwork_id.in_(visible_artwork_ids()),
        )
        stmt = stmt.where(Artist.id.in_(of_artwork))
    if "gene_id" in filters:
        with_gene = select(ArtistGene.artist_id).where(ArtistGene.gene_id == filters["gene_id"])
        stmt = stmt.where(Artist.id.in_(with_gene))
    if "partner_id" in filters:
        at_partner = (
            select(ArtworkArtist.artist_id)
            .join(Artwork, Artwork.id == ArtworkArtist.artwork_id)
            .where(Artwork.partner_id == filters["partner_id"], visible_artwork())
        )
        stmt = stmt.where(Artist.id.in_(at_partner))
    if "sale_id" in filters:
        in_sale = (
            select(ArtworkArtist.artist_id)
            .join(SaleArtwork, SaleArtwork.artwork_id == ArtworkArtist.artwork_id)
            .where(
                SaleArtwork.sale_id == filters["sale_id"],
                SaleArtwork.artwork_id.in_(visible_artwork_ids()),
            )
        )
        if not admin:
            in_sale = in_sale.join(Sale, Sale.id == SaleArtwork.sale_id).where(
                Sale.published.is_(True)
            )
        stmt = stmt.where(Artist.id.in_(in_sale))
    if filters.get("artworks") is True:
        stmt = stmt.where(Artist.artworks_count > 0)
    if filters.get("published_artworks") is True:
        stmt = stmt.where(Artist.published_artworks_count > 0)
    return stmt


ARTISTS = Listing(Artist, filtered, slug=Artist.slug)


def similar(session: Session, filters: dict[str, Any], *, admin: bool = False) -> list[Row[Any]]:
    """Return the non-paginated set of artists similar to ``similar_to_artist_id``."""
    return similar_artists(
        session,
        filtered(filters, admin=admin),
        filters["similar_to_artist_id"],
        contemporary=filters.get("similarity_type") == "contemporary",
    )


def find_artist(session: Session, id_or_slug: str, *, by_slug: bool) -> Row[Any] | None:
    """Return an artist by id or by slug."""
    if by_slug and not plausible_slug(id_or_slug):
        return None
    column = Artist.slug if by_slug else Artist.id
    found = fetch(session, lookup_statement(Artist, column), {"key": id_or_slug})
    return found[0] if found else None
