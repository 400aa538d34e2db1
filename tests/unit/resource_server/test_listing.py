"""A listing keeps the filtered statement of a set asked for again, keyed by plain values."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select
from sqlalchemy.orm import Session, sessionmaker

from common.api.paging import PageParams
from common.models import Artist
from resource_server.queries import listing
from resource_server.queries.artists import filtered
from resource_server.queries.listing import _statement_key


def test_plain_values_make_a_key_and_equal_values_of_other_types_another() -> None:
    key = _statement_key(Artist, {"artworks": True, "gene_id": "a" * 24}, {"admin": False})
    assert key == _statement_key(Artist, {"gene_id": "a" * 24, "artworks": True}, {"admin": False})
    assert key != _statement_key(Artist, {"artworks": 1, "gene_id": "a" * 24}, {"admin": False})
    assert key != _statement_key(Artist, {"artworks": True, "gene_id": "a" * 24}, {"admin": True})


def test_a_clock_or_a_record_in_the_context_is_never_a_key() -> None:
    assert _statement_key(Artist, {}, {"now": datetime.now(UTC)}) is None
    assert _statement_key(Artist, {}, {"token": object()}) is None
    assert _statement_key(Artist, {"ids": ["a", "b"]}, {}) is None


def test_the_statement_of_a_set_is_built_once(
    monkeypatch: Any, sessions: sessionmaker[Session]
) -> None:
    """The same filters again reuse the statement; other values, or the clock, build anew."""
    built: list[dict[str, Any]] = []

    def counting(filters: dict[str, Any], **context: Any) -> Select[Any]:
        built.append(filters)
        return filtered(filters, **context)

    monkeypatch.setattr(listing, "_statements", {})
    artists = listing.Listing(Artist, counting)
    with sessions() as session:
        for _ in range(3):
            artists.page(session, {"artworks": True}, PageParams(size=5), admin=False)
        artists.page(session, {"artworks": True}, PageParams(size=5), admin=True)
        assert len(built) == 2
        artists.page(session, {}, PageParams(size=5), admin=False)
        artists.page(session, {}, PageParams(size=5), admin=False)
        assert len(built) == 3
