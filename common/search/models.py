"""The search index's plain tables: one document per searchable resource, and its vocabulary.

The engine-specific index lives beside them (migration 0002): on SQLite an FTS5 table over the
documents' folded text, kept in step by triggers, and an FTS5 trigram table over the words; on
PostgreSQL a generated ``tsvector`` column with a GIN index, and a trigram GIN index on the words.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from common.models.base import Base

# Longest prefix of a folded title kept in the indexed exact-match key (a B-tree entry is bounded).
TITLE_KEY_CHARS = 200


class SearchDocument(Base):
    """A searchable resource as the index sees it: what it is, what it says, how popular it is.

    ``id`` orders documents by popularity (see ``common.search.indexer.doc_id``), so
    the engines can return the most popular matches first without sorting every match.
    """

    __tablename__ = "search_documents"
    # INTEGER on SQLite, so that the id is the rowid the FTS5 index refers to.
    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=False
    )
    kind: Mapped[str] = mapped_column(String(20))
    resource_id: Mapped[str] = mapped_column(String(24))
    title: Mapped[str] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    thumbnail: Mapped[str | None] = mapped_column(String(500))
    permalink: Mapped[str | None] = mapped_column(String(500))
    popularity: Mapped[float] = mapped_column(Float, default=0.0)
    # Folded text (``common.search.text.fold``): what the engines index and match.
    title_terms: Mapped[str] = mapped_column(Text)
    body_terms: Mapped[str] = mapped_column(Text)
    title_key: Mapped[str] = mapped_column(String(TITLE_KEY_CHARS))
    __table_args__ = (
        Index(None, "kind", "resource_id", unique=True),
        Index(None, "title_key", "id"),
    )


class SearchWord(Base):
    """A word of the index's vocabulary and the number of documents using it (for spelling)."""

    __tablename__ = "search_words"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    word: Mapped[str] = mapped_column(String(100), unique=True)
    documents: Mapped[int] = mapped_column(Integer, default=0)


class SearchName(Base):
    """A way a query may name an artist ("gainsborough", "teenie"): the artist then comes first.

    Keys are the sorted folded words of a part of the artist's name (``people.name_keys``),
    always words of the artist document's title, so a person found here is also a match of the
    query's other tiers. Rebuilt with the documents.
    """

    __tablename__ = "search_names"
    key: Mapped[str] = mapped_column(String(TITLE_KEY_CHARS), primary_key=True)
    resource_id: Mapped[str] = mapped_column(String(24), primary_key=True)
