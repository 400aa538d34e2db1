"""Gene queries."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select

from common.models import ArtistGene, ArtworkGene, Gene
from common.visibility import visible_artwork_ids
from resource_server.queries.listing import Listing
from resource_server.queries.rows import select_rows


def filtered(filters: dict[str, Any]) -> Select[Any]:
    """Return the select of genes matching the list filters."""
    stmt = select_rows(Gene)
    if "artist_id" in filters:
        of_artist = select(ArtistGene.gene_id).where(ArtistGene.artist_id == filters["artist_id"])
        stmt = stmt.where(Gene.id.in_(of_artist))
    if "artwork_id" in filters:
        # A hidden artwork's genes are not listed: it answers as a missing one does.
        of_artwork = select(ArtworkGene.gene_id).where(
            ArtworkGene.artwork_id == filters["artwork_id"],
            ArtworkGene.artwork_id.in_(visible_artwork_ids()),
        )
        stmt = stmt.where(Gene.id.in_(of_artwork))
    return stmt


GENES = Listing(Gene, filtered, slug=Gene.slug)
