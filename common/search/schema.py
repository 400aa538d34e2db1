"""Names of the engine-specific index objects, which the SQLAlchemy models do not describe.

Migration 0002 creates them; Alembic's model comparison (``artcat db check``) must skip them, or
it would propose dropping them: the FTS5 virtual tables and their shadow tables on SQLite, the
generated ``tsvector`` columns and the GIN indexes on PostgreSQL.
"""

from __future__ import annotations

from typing import Any

# The index's plain tables must be in the models' metadata wherever migrations are compared.
import common.search.models  # noqa: F401

# SQLite: the FTS5 index of the documents, its vocabulary view, the trigram index of the words.
FTS_TABLE = "search_fts"
VOCAB_TABLE = "search_fts_vocab"
TRIGRAM_TABLE = "search_words_trigram"
# FTS5 keeps its data in shadow tables named after the virtual table.
FTS5_SHADOWS = ("_data", "_idx", "_content", "_docsize", "_config")
SQLITE_TABLES = frozenset(
    [VOCAB_TABLE]
    + [base + suffix for base in (FTS_TABLE, TRIGRAM_TABLE) for suffix in ("", *FTS5_SHADOWS)]
)
# PostgreSQL: generated tsvector columns of the documents and the GIN indexes.
TS_CONFIG = "artcat_search"
PG_COLUMNS = frozenset({("search_documents", "title_tsv"), ("search_documents", "tsv")})
PG_INDEXES = frozenset(
    {"ix_search_documents_title_tsv", "ix_search_documents_tsv", "ix_search_words_word_trgm"}
)


def include_object(
    obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any
) -> bool:
    """Tell Alembic whether to compare an object: no for the engine-specific index objects."""
    if type_ == "table":
        return name not in SQLITE_TABLES
    if type_ == "column" and reflected and compare_to is None:
        return (getattr(obj.table, "name", None), name) not in PG_COLUMNS
    if type_ == "index":
        return name not in PG_INDEXES
    return True
