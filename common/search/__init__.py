"""Full-text search over the catalog: the index, its builders and the two engines.

``indexer.reindex`` rebuilds the index from the catalog; ``registry.engine_for`` picks the
engine that follows the database: FTS5 on SQLite (``sqlite_fts``), tsvector with GIN and
pg_trgm on PostgreSQL (``postgres_fts``). ``plan`` holds the ranking tiers and the interface
both engines implement. The resource server's ``search.service`` answers queries with it; the
loaders, staging and migrations write to it.
"""
