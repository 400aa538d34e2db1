"""Batched idempotent writes with SQLAlchemy Core: upserts that skip unchanged rows, child syncs.

Every statement is executed once per chunk with a list of parameter sets (``executemany``), so
the database does the per-row work; nothing here builds ORM objects or queries row by row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import Connection, String, Table, and_, bindparam, delete, or_, select
from sqlalchemy.dialects import postgresql, sqlite

Row = dict[str, Any]

# Parameter sets per executemany call, and ids per IN (...) list (well under SQLite's limits).
CHUNK = 2000
IN_CHUNK = 900
# Columns that an upsert writes on insert only: an import must not reset them.
INSERT_ONLY = frozenset({"created_at", "artworks_count", "published_artworks_count"})
# Columns whose change alone does not make a row "changed".
NOT_COMPARED = frozenset({"updated_at"})

_clip_cache: dict[str, list[tuple[str, int]]] = {}


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    """Yield consecutive slices of at most ``size`` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _insert(conn: Connection) -> Callable[[Table], Any]:
    """Return the dialect's ``insert`` (the generic one has no ON CONFLICT clause)."""
    if conn.dialect.name == "postgresql":
        return postgresql.insert
    if conn.dialect.name == "sqlite":
        return sqlite.insert
    raise NotImplementedError(f"bulk upserts need SQLite or PostgreSQL, not {conn.dialect.name}")


def _string_limits(table: Table) -> list[tuple[str, int]]:
    limits = _clip_cache.get(table.name)
    if limits is None:
        limits = [
            (col.name, col.type.length)
            for col in table.columns
            if isinstance(col.type, String) and col.type.length and not col.foreign_keys
            if not col.primary_key
        ]
        _clip_cache[table.name] = limits
    return limits


def clip(table: Table, rows: Iterable[Row]) -> None:
    """Cut over-long strings to their column's length, in place.

    PostgreSQL rejects a too-long VARCHAR and would fail the whole batch; a title or place name
    that long is an outlier, and a cut one is better than a lost batch.
    """
    limits = _string_limits(table)
    for row in rows:
        for name, length in limits:
            value = row.get(name)
            if isinstance(value, str) and len(value) > length:
                row[name] = value[:length]


def _dedupe(rows: Iterable[Row], key: Sequence[str]) -> list[Row]:
    """Keep the last row per key: ON CONFLICT may not touch one row twice in a statement."""
    return list({tuple(row[k] for k in key): row for row in rows}.values())


def upsert(
    conn: Connection,
    table: Table,
    rows: Iterable[Row],
    *,
    key: Sequence[str] = ("id",),
    insert_only: frozenset[str] = INSERT_ONLY,
) -> int:
    """Insert rows, or update them where their key exists and a value differs; return changes.

    The WHERE on the update leaves unchanged rows alone, so a re-run of the same data writes
    nothing (no dead tuples on PostgreSQL, no ``updated_at`` churn). All rows must have the
    same keys.
    """
    batch = _dedupe(rows, key)
    if not batch:
        return 0
    clip(table, batch)
    stmt = _insert(conn)(table)
    updated = [c for c in batch[0] if c not in key and c not in insert_only]
    compared = [c for c in updated if c not in NOT_COMPARED]
    if compared:
        stmt = stmt.on_conflict_do_update(
            index_elements=list(key),
            set_={c: stmt.excluded[c] for c in updated},
            where=or_(*(table.c[c].is_distinct_from(stmt.excluded[c]) for c in compared)),
        )
    else:
        stmt = stmt.on_conflict_do_nothing(index_elements=list(key))
    return _run(conn, stmt, batch)


def insert_missing(
    conn: Connection, table: Table, rows: Iterable[Row], *, key: Sequence[str] = ("id",)
) -> int:
    """Insert rows whose key is not there yet, leaving existing rows untouched; return inserts."""
    batch = _dedupe(rows, key)
    if not batch:
        return 0
    clip(table, batch)
    stmt = _insert(conn)(table).on_conflict_do_nothing(index_elements=list(key))
    return _run(conn, stmt, batch)


def _run(conn: Connection, stmt: Any, rows: list[Row]) -> int:
    """Execute ``stmt`` once per chunk with many parameter sets; return the rows it wrote.

    The rowcount of an INSERT .. ON CONFLICT counts only rows inserted or updated. psycopg's
    cursor is reset before SQLAlchemy reads it unless asked to keep it (``preserve_rowcount``);
    RETURNING would count too but makes SQLAlchemy build multi-row VALUES, slower on PostgreSQL
    than psycopg's pipelined executemany.
    """
    conn = conn.execution_options(preserve_rowcount=True)
    return sum(max(conn.execute(stmt, list(part)).rowcount, 0) for part in chunks(rows))


def sync_children(
    conn: Connection,
    table: Table,
    parent: str,
    parent_ids: Iterable[str],
    rows: Iterable[Row],
    *,
    key: Sequence[str],
) -> int:
    """Make ``rows`` the children (by the ``parent`` column) of the parents they name.

    ``parent_ids`` are the parents that may already have rows (the others are new): their rows
    are read once per chunk; only new or different rows are written and only rows no longer in
    the input are deleted, so a re-run of the same data writes nothing. Returns the number of
    rows inserted, updated or deleted.
    """
    wanted = {tuple(row[k] for k in key): row for row in rows}
    clip(table, wanted.values())  # compare what would be stored, not the raw input
    ids = list(dict.fromkeys(parent_ids))
    columns = list(next(iter(wanted.values()), {c: None for c in key}))
    compared = [c for c in columns if c not in NOT_COMPARED and c not in INSERT_ONLY]
    existing: dict[tuple[Any, ...], Row] = {}
    for part in chunks(ids, IN_CHUNK):
        query = select(*(table.c[c] for c in compared)).where(table.c[parent].in_(part))
        for found in conn.execute(query).mappings():
            existing[tuple(found[k] for k in key)] = dict(found)
    stale = [k for k in existing if k not in wanted]
    if stale:
        where = and_(*(table.c[k] == bindparam(f"k_{k}") for k in key))
        params = [{f"k_{k}": v for k, v in zip(key, values, strict=True)} for values in stale]
        for part in chunks(params):
            conn.execute(delete(table).where(where), list(part))
    write = [row for k, row in wanted.items() if existing.get(k) != {c: row[c] for c in compared}]
    return len(stale) + upsert(conn, table, write, key=key)
