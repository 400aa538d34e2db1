"""Full-text search over the catalog: the query interface and the index it reads.

``search`` answers one ``SearchRequest`` with a ``SearchPage`` (ranked hits or a spelling
correction); ``reindex`` rebuilds the index from the catalog. The engine follows the database:
FTS5 on SQLite (``sqlite_fts``), tsvector with GIN and pg_trgm on PostgreSQL (``postgres_fts``).
"""

from resource_server.search.indexer import IndexReport, reindex
from resource_server.search.service import Hit, SearchPage, SearchRequest, search

__all__ = ["Hit", "IndexReport", "SearchPage", "SearchRequest", "reindex", "search"]
