"""Artwork queries: filtered pages with their editions batch-loaded, and items."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import BindParameter, Row, Select, bindparam, select
from sqlalchemy.orm import Session

from common.api.keyset import PLAIN_ROWS, PageResult, fetch, sample_one
from common.api.paging import PageParams
from common.api.prepared import Prepared
from common.ids import is_id
from common.models import Artwork, ArtworkArtist, ArtworkGene, Edition, ShowArtwork
from common.visibility import visible_artwork
from resource_server.queries.lookup import find, plausible_slug
from resource_server.queries.paging import page_by_id
from resource_server.queries.rows import columns, grouped, select_rows
from resource_server.queries.similarity import similar_artworks

# The visible artworks: built once, run with parameters.
VISIBLE = select_rows(Artwork).where(visible_artwork())


@lru_cache(maxsize=16)
def editions_of(slots: int) -> Prepared:
    """Return the select of the editions of up to ``slots`` artworks, one bound parameter
    each: built and compiled once per number of slots, where an expanding IN would be
    rendered anew on every execution (a third of the query's own cost)."""
    ids: list[BindParameter[Any]] = [bindparam(f"a{n}") for n in range(slots)]
    return Prepared(
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


# An edition's columns as an artwork joined to its editions names them (``edition_<name>``),
# and the plain row an edition is read back into from the joined row.
_EDITION_NAMES = tuple(c.key for c in columns(Edition))
EditionRow = namedtuple("EditionRow", _EDITION_NAMES)  # type: ignore[misc]


@lru_cache(maxsize=2)
def _with_editions(by_slug: bool) -> Prepared:
    """Return the select of one visible artwork (by id, or by slug) joined to its editions:
    a row per edition (one with NULL editions when it has none), built once."""
    column = Artwork.slug if by_slug else Artwork.id
    one = VISIBLE.where(column == bindparam("key")).limit(1).subquery("artwork")
    labelled = [c.label(f"edition_{c.key}") for c in columns(Edition)]
    return Prepared(
        select(*one.c, *labelled)
        .select_from(one.outerjoin(Edition, Edition.artwork_id == one.c.id))
        .order_by(Edition.id)
        .execution_options(**{PLAIN_ROWS: True})
    )


def find_artwork_with_editions(
    session: Session, id_or_slug: str
) -> tuple[Row[Any] | None, list[Any], bool]:
    """Return an artwork by id or slug with its editions, in one statement, and whether it
    was found by slug (a round trip less than :func:`find_artwork` then :func:`editions_for`:
    on PostgreSQL, a third of an uncached artwork's time)."""
    by_slug = not is_id(id_or_slug)
    if by_slug and not plausible_slug(id_or_slug):
        return None, [], by_slug
    rows = fetch(session, _with_editions(by_slug), {"key": id_or_slug})
    if not rows:
        return None, [], by_slug
    width, at = len(_EDITION_NAMES), len(_EDITION_NAMES) - _EDITION_NAMES.index("id")
    editions = [EditionRow._make(row[-width:]) for row in rows if row[-at] is not None]
    return rows[0], editions, by_slug


def editions_for(session: Session, artwork_ids: Sequence[str]) -> dict[str, list[Row[Any]]]:
    """Return the editions of several artworks in one indexed query, by artwork id."""
    if not artwork_ids:
        return {}
    slots = 1 << (len(artwork_ids) - 1).bit_length()  # 1, 2, 4 ... 128: a few statements
    values: dict[str, str | None] = {f"a{n}": None for n in range(slots)}  # NULL matches none
    values.update((f"a{n}", i) for n, i in enumerate(artwork_ids))
    rows = fetch(session, editions_of(slots), values)
    return grouped(rows, "artwork_id")
