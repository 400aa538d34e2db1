"""Artist queries: bounded, indexed, one statement per page."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, exists, select
from sqlalchemy.orm import Session

from common.models import Artist, ArtistGene, Artwork, ArtworkArtist
from resource_server.pagination import PageParams, PageResult, paginate, sample_one


def filtered(filters: dict[str, Any]) -> Select[Any]:
    """Return the select of artists matching the list filters."""
    stmt = select(Artist)
    if "artwork_id" in filters:
        stmt = stmt.where(
            exists().where(
                ArtworkArtist.artist_id == Artist.id,
                ArtworkArtist.artwork_id == filters["artwork_id"],
            )
        )
    if "gene_id" in filters:
        stmt = stmt.where(
            exists().where(
                ArtistGene.artist_id == Artist.id, ArtistGene.gene_id == filters["gene_id"]
            )
        )
    if "partner_id" in filters:
        stmt = stmt.where(
            exists().where(
                ArtworkArtist.artist_id == Artist.id,
                ArtworkArtist.artwork_id == Artwork.id,
                Artwork.partner_id == filters["partner_id"],
            )
        )
    if filters.get("artworks") is True:
        stmt = stmt.where(Artist.artworks_count > 0)
    if filters.get("published_artworks") is True:
        stmt = stmt.where(Artist.published_artworks_count > 0)
    return stmt


def list_artists(session: Session, filters: dict[str, Any], page: PageParams) -> PageResult:
    """Return one page of artists, ordered by id."""
    return paginate(session, filtered(filters), [Artist.id], page)


def sample_artist(session: Session, filters: dict[str, Any]) -> Artist | None:
    """Return a random artist of the filtered set."""
    result: Artist | None = sample_one(session, filtered(filters), Artist.id)
    return result


def find_artist(session: Session, id_or_slug: str, *, by_slug: bool) -> Artist | None:
    """Return an artist by id or by slug."""
    column = Artist.slug if by_slug else Artist.id
    return session.scalars(select(Artist).where(column == id_or_slug)).first()
