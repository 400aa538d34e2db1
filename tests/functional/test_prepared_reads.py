"""Prepared selects on the suite's database (SQLite or PostgreSQL): the rows SQLAlchemy gives.

``common.api.prepared`` runs the catalog's kept statements on the driver's cursor with the
columns' own conversions: every catalog table read both ways must give equal rows, value for
value and type for type (timestamps aware, JSON parsed, booleans as booleans).
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import bindparam, select

from common.api.prepared import Prepared
from common.models import (
    Artist,
    Artwork,
    Edition,
    Fair,
    Gene,
    Image,
    Partner,
    Profile,
    Sale,
    SaleArtwork,
    Show,
)
from common.stores import Stores
from common.visibility import visible_artwork
from resource_server.queries import artworks as artwork_queries
from resource_server.queries.rows import select_rows
from tests.functional.catalog_support import Catalog, catalog

__all__ = ["catalog"]

pytestmark = pytest.mark.functional

MODELS = (Artist, Artwork, Edition, Fair, Gene, Image, Partner, Profile, Sale, SaleArtwork, Show)


def typed(rows: list[Any]) -> list[list[tuple[type, Any]]]:
    return [[(type(value), value) for value in row] for row in rows]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_catalog_table_reads_as_sqlalchemy_reads_it(
    catalog: Catalog, stores: Stores, model: Any
) -> None:
    stmt = select_rows(model).order_by(model.id)
    with stores.reads() as session:
        conn = session.connection()
        expected = conn.execute(stmt).all()
        got = Prepared(stmt).rows(conn)
        assert expected, f"the demo catalog has no {model.__name__}"
        assert typed(got) == typed(expected)
        # And one row by a bound value, as the item lookups read it.
        one = Prepared(stmt.where(model.id == bindparam("key")).limit(1))
        assert typed(one.rows(conn, {"key": expected[-1].id})) == typed(expected[-1:])


def test_an_artwork_with_its_editions_reads_as_the_separate_reads(
    catalog: Catalog, stores: Stores
) -> None:
    with stores.reads() as session:
        conn = session.connection()
        with_editions = (
            select(Edition.artwork_id)
            .join(Artwork, Artwork.id == Edition.artwork_id)
            .where(visible_artwork())
            .distinct()
            .limit(3)
        )
        ids = [row[0] for row in conn.execute(with_editions)]
        assert ids
        for artwork_id in ids:
            found, editions, by_slug = artwork_queries.find_artwork_with_editions(
                session, artwork_id
            )
            assert found is not None and not by_slug
            alone = conn.execute(select_rows(Artwork).where(Artwork.id == artwork_id)).one()
            assert typed([found[: len(alone)]]) == typed([alone])
            separate = conn.execute(
                select_rows(Edition).where(Edition.artwork_id == artwork_id).order_by(Edition.id)
            ).all()
            assert editions and typed(editions) == typed(separate)
