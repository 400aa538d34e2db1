"""Gene queries."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, Select, select
from sqlalchemy.orm import Session

from common.api.keyset import PageResult, sample_one
from common.api.paging import PageParams
from common.models import ArtistGene, ArtworkGene, Gene
from resource_server.queries.lookup import find
from resource_server.queries.paging import page_by_id
from resource_server.queries.rows import select_rows


def filtered(filters: dict[str, Any]) -> Select[Any]:
    """Return the select of genes matching the list filters."""
    stmt = select_rows(Gene)
    if "artist_id" in filters:
        of_artist = select(ArtistGene.gene_id).where(ArtistGene.artist_id == filters["artist_id"])
        stmt = stmt.where(Gene.id.in_(of_artist))
    if "artwork_id" in filters:
        of_artwork = select(ArtworkGene.gene_id).where(
            ArtworkGene.artwork_id == filters["artwork_id"]
        )
        stmt = stmt.where(Gene.id.in_(of_artwork))
    return stmt


def list_genes(session: Session, filters: dict[str, Any], page: PageParams) -> PageResult:
    """Return one page of genes, ordered by id."""
    return page_by_id(session, filtered(filters), Gene.id, page)


def sample_gene(session: Session, filters: dict[str, Any]) -> Row[Any] | None:
    """Return a random gene of the filtered set."""
    result: Row[Any] | None = sample_one(session, filtered(filters), Gene.id)
    return result


def find_gene(session: Session, id_or_slug: str) -> tuple[Row[Any] | None, bool]:
    """Return a gene by id or slug, and whether it was found by slug."""
    return find(session, Gene, id_or_slug, slug=Gene.slug)
