"""Similar artists and similar artworks: a deterministic, explainable score in one query.

Similar artists of a subject artist S (``/api/artists?similar_to_artist_id=S``):

- +3 for every gene S and the candidate share (``artist_genes``, through its ``gene_id`` index);
- +2 for every partner that holds works of both (``artworks.partner_id`` index, distinct
  artist/partner pairs);
- +1 when both have the same nationality.

``similarity_type=contemporary`` keeps only candidates born within 20 years of S (a subject
without a birth year has no contemporaries) and adds +2 when born within 5 years of S, +1 within
10 years.

Similar artworks of a subject artwork W (``/api/artworks?similar_to_artwork_id=W``):

- +4 for every artist W and the candidate share (``artwork_artists.artist_id`` index);
- +3 for every gene they share (``artwork_genes.gene_id`` index);
- then, for candidates found that way: +2 for the same partner, +1 for the same category, +1
  when their start years are at most 10 years apart.

Candidates come only from the shared genes, partners (artists) or artists (artworks), so the cost
follows the fan-out of the subject's links through indexes, never a table scan. Ties are broken by
the number of published artworks (artists) or iconicity (artworks), then by id, so the same data
always gives the same order. A hidden (unpublished) subject artwork has no similar works, as a
missing one has none. The subject itself is never a candidate, the other filters of the
request still apply, and at most ``LIMIT`` results are returned.
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import (
    BindParameter,
    Row,
    Select,
    String,
    and_,
    bindparam,
    case,
    func,
    literal_column,
    select,
    union_all,
)
from sqlalchemy.orm import Session, aliased

from common.models import Artist, ArtistGene, Artwork, ArtworkArtist, ArtworkGene
from common.visibility import visible_artwork

LIMIT = 20
# The subject's id, given when the statement runs: the scores' subqueries are built once (their
# aliases and joins cost more CPU than running them on a small catalog) and the compiled
# statement is cached by SQLAlchemy whatever the subject.
SUBJECT: BindParameter[str] = bindparam("similar_subject_id", type_=String)
_ARTIST = aliased(Artist, name="subject_artist")
_ARTWORK = aliased(Artwork, name="subject_artwork")


def _weight(n: int) -> Any:
    # Inline constants: bound parameters inside UNION ALL confuse PostgreSQL's type inference.
    return literal_column(str(n)).label("weight")


def _sharing(link: Any, own: str, shared: str, weight: int) -> Select[Any]:
    """Return the candidates (``own`` ids) found through rows of ``link`` that share their
    ``shared`` id with the subject's, ``weight`` for each share."""
    mine, theirs = aliased(link), aliased(link)
    return (
        select(getattr(theirs, own).label("candidate"), _weight(weight))
        .join(mine, getattr(mine, shared) == getattr(theirs, shared))
        .where(getattr(mine, own) == SUBJECT)
    )


def _base_scores(*found: Select[Any]) -> Any:
    """Return the subquery (candidate, base score): the weights of every way a candidate was
    found, summed, the subject left out."""
    pool = union_all(*found).subquery()
    return (
        select(pool.c.candidate, func.sum(pool.c.weight).label("base"))
        .where(pool.c.candidate != SUBJECT)
        .group_by(pool.c.candidate)
        .subquery()
    )


@functools.cache
def _artist_scores() -> Any:
    """Return the subquery (artist_id, base score) of the candidates similar to an artist."""
    by_gene = _sharing(ArtistGene, "artist_id", "gene_id", 3)
    my_link, my_work = aliased(ArtworkArtist), aliased(Artwork)
    partners = (
        select(my_work.partner_id)
        .join(my_link, my_link.artwork_id == my_work.id)
        .where(my_link.artist_id == SUBJECT, my_work.partner_id.is_not(None))
    )
    their_link, their_work = aliased(ArtworkArtist), aliased(Artwork)
    pairs = (
        select(their_link.artist_id.label("candidate"), their_work.partner_id)
        .join(their_work, their_work.id == their_link.artwork_id)
        .where(their_work.partner_id.in_(partners))
        .distinct()
        .subquery()
    )
    by_partner = select(pairs.c.candidate, _weight(2))
    return _base_scores(by_gene, by_partner)


def similar_artists(
    session: Session, base: Select[Any], subject_id: str, *, contemporary: bool
) -> list[Row[Any]]:
    """Return up to LIMIT artists of ``base`` most similar to the subject, best first.

    ``base`` selects the artists' columns (``queries.rows``): the rows carry them and ``score``.
    """
    scores = _artist_scores()
    subject = _ARTIST
    score = scores.c.base + case((Artist.nationality == subject.nationality, 1), else_=0)
    stmt = base.join(scores, scores.c.candidate == Artist.id).join(subject, subject.id == SUBJECT)
    if contemporary:
        stmt = stmt.where(
            Artist.birth_year.between(subject.birth_year - 20, subject.birth_year + 20)
        )
        gap = func.abs(Artist.birth_year - subject.birth_year)
        score = score + case((gap <= 5, 2), (gap <= 10, 1), else_=0)
    stmt = (
        stmt.add_columns(score.label("score"))
        .order_by(score.desc(), Artist.published_artworks_count.desc(), Artist.id)
        .limit(LIMIT)
    )
    return list(session.connection().execute(stmt, {SUBJECT.key: subject_id}).all())


@functools.cache
def _artwork_scores() -> Any:
    """Return the subquery (artwork_id, base score) of the candidates similar to an artwork."""
    by_artist = _sharing(ArtworkArtist, "artwork_id", "artist_id", 4)
    by_gene = _sharing(ArtworkGene, "artwork_id", "gene_id", 3)
    return _base_scores(by_artist, by_gene)


def similar_artworks(session: Session, base: Select[Any], subject_id: str) -> list[Row[Any]]:
    """Return up to LIMIT artworks of ``base`` most similar to the subject, best first (rows)."""
    scores = _artwork_scores()
    subject = _ARTWORK
    score = (
        scores.c.base
        + case((Artwork.partner_id == subject.partner_id, 2), else_=0)
        + case((Artwork.category == subject.category, 1), else_=0)
        + case((func.abs(Artwork.year_start - subject.year_start) <= 10, 1), else_=0)
    )
    stmt = (
        base.join(scores, scores.c.candidate == Artwork.id)
        # A hidden subject has no similar works: it answers as a missing one does.
        .join(subject, and_(subject.id == SUBJECT, visible_artwork(subject)))
        .add_columns(score.label("score"))
        .order_by(score.desc(), Artwork.iconicity.desc(), Artwork.id)
        .limit(LIMIT)
    )
    return list(session.connection().execute(stmt, {SUBJECT.key: subject_id}).all())
