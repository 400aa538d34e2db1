"""The engine registry: which search engine serves a database.

Kept apart from ``plan`` (the interface) so that the engines import the interface and the
registry imports the engines, and no module imports its own importer.
"""

from __future__ import annotations

from sqlalchemy import Connection

from common.search.plan import SearchEngine
from common.search.postgres_fts import PostgresEngine
from common.search.sqlite_fts import SqliteEngine


def engine_for(conn: Connection) -> SearchEngine:
    """Return the engine of the connection's database (FTS5 on SQLite, tsvector on PostgreSQL)."""
    name = conn.dialect.name
    if name == "sqlite":
        return SqliteEngine()
    if name == "postgresql":
        return PostgresEngine()
    raise NotImplementedError(f"search needs SQLite or PostgreSQL, not {name}")
