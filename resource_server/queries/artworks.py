"""Artwork queries: filtered pages with their editions batch-loaded, and items."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import BindParameter, Row, Select, bindparam, select
from sqlalchemy.orm import Session

from common.api.keyset import PageResult, fetch, sample_one
from common.api.paging import PageParams
from common.models import Artwork, ArtworkArtist, ArtworkGene, Edition, ShowArtwork
from common.visibility import visible_artwork
from resource_server.queries.lookup import find
from resource_server.queries.paging import page_by_id
from resource_server.queries.rows import grouped, select_rows
from resource_server.queries.similarity import similar_artworks

# The visible artworks: built once, run with parameters.
VISIBLE = select_rows(Artwork).where(visible_artwork())


@lru_cache(maxsize=16)
def editions_of(slots: int) -> Select[Any]:
    """Return the select of the editions of up to ``slots`` artworks, one bound parameter
    each: built and compiled once per number of slots, where an expanding IN would be
    rendered anew on every execution (a third of the query's own cost)."""
    ids: list[BindParameter[Any]] = [bindparam(f"a{n}") for n in range(slots)]
    return (
        select_rows(Edition)
        .where(Edition.artwork_id.in_(ids))
        .order_by(Edition.artwork_id, Edition.id)
    )


def filtered(filters: dict[str, Any]) -> Select[Any]:
    """Return the select of artworks matching the list filters.

    Link-table filters are ``id IN (indexed subquery)``: the cost follows the size of the matching
    set, never the size of the table (a correlated EXISTS scans the table for a rare match).

    Collections (``collection_id`` with ``user_id``, ordered by position) are served by their own
    pager over collection items; it reuses :func:`editions_for` to embed the editions.
    """
    stmt = VISIBLE
    if "artist_id" in filters:
        by_artist = select(ArtworkArtist.artwork_id).where(
            ArtworkArtist.artist_id == filters["artist_id"]
        )
        stmt = stmt.where(Artwork.id.in_(by_artist))
    if "partner_id" in filters:
        stmt = stmt.where(Artwork.partner_id == filters["partner_id"])
    if "show_id" in filters:
        on_show = select(ShowArtwork.artwork_id).where(ShowArtwork.show_id == filters["show_id"])
        stmt = stmt.where(Artwork.id.in_(on_show))
    if "gene_id" in filters:
        with_gene = select(ArtworkGene.artwork_id).where(ArtworkGene.gene_id == filters["gene_id"])
        stmt = stmt.where(Artwork.id.in_(with_gene))
    if "published" in filters:
        stmt = stmt.where(Artwork.published == filters["published"])
    return stmt


# The filters ``filtered`` reads (the others select another pager or are not filters of rows).
FILTERS = ("artist_id", "partner_id", "show_id", "gene_id", "published")


@lru_cache(maxsize=len(FILTERS) ** 2 * 2)
def _bound(names: frozenset[str]) -> Select[Any]:
    """Return :func:`filtered` for these filters, with a bound parameter for each value."""
    return filtered({name: bindparam(name) for name in names})


def list_artworks(session: Session, filters: dict[str, Any], page: PageParams) -> PageResult:
    """Return one page of artworks, ordered by id (the statement of its filters built once)."""
    names = frozenset(name for name in FILTERS if name in filters)
    values = {name: filters[name] for name in names}
    return page_by_id(
        session, _bound(names), Artwork.id, page, shape=("artworks", names), values=values
    )


def sample_artwork(session: Session, filters: dict[str, Any]) -> Row[Any] | None:
    """Return a random artwork of the filtered set."""
    result: Row[Any] | None = sample_one(session, filtered(filters), Artwork.id)
    return result


def similar(session: Session, filters: dict[str, Any]) -> list[Row[Any]]:
    """Return the non-paginated set of artworks similar to ``similar_to_artwork_id``."""
    return similar_artworks(session, filtered(filters), filters["similar_to_artwork_id"])


def find_artwork(session: Session, id_or_slug: str) -> tuple[Row[Any] | None, bool]:
    """Return an artwork by id or slug, and whether it was found by slug."""
    return find(session, Artwork, id_or_slug, slug=Artwork.slug, base=VISIBLE)


def editions_for(session: Session, artwork_ids: Sequence[str]) -> dict[str, list[Row[Any]]]:
    """Return the editions of several artworks in one indexed query, by artwork id."""
    if not artwork_ids:
        return {}
    slots = 1 << (len(artwork_ids) - 1).bit_length()  # 1, 2, 4 ... 128: a few statements
    values: dict[str, str | None] = {f"a{n}": None for n in range(slots)}  # NULL matches none
    values.update((f"a{n}", i) for n, i in enumerate(artwork_ids))
    rows = fetch(session, editions_of(slots), values)
    return grouped(rows, "artwork_id")
