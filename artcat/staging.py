"""Rebuild a staging database from production's public catalog (``artcat staging rebuild``).

What crosses from production is decided table by table in ``artcat.staging_policy.POLICY``:
the public catalog, users only as public rows name them (scrubbed), no credential, private
detail, private collection or bid. The search index is rebuilt on staging from the copied rows.

The rebuild reads production in one consistent snapshot (a read-only REPEATABLE READ
transaction on PostgreSQL, one read transaction on SQLite), streams each table in batches, and
writes staging in one transaction: empty every table, copy, rebuild the index, retire staging's
tokens in Redis, commit. Until the commit, staging serves what it had; a failure leaves it as
it was.

Staging's tokens are deleted with its token table, but Redis would keep answering for them
until they expire (the resource server trusts a cached record without reading SQL). Before the
commit, every live token the table held gets a tombstone, written with SET (not DEL), so that a
read-through racing the rebuild cannot bring one back; then any other live record under the
staging prefix gets one too. After the commit the catalog version is bumped, so that resource
servers drop the documents they rendered from the old rows. Only keys under staging's
``REDIS_PREFIX`` are touched.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from alembic.script import ScriptDirectory
from redis import Redis
from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Integer,
    Table,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import ConnectionPoolEntry, NullPool

from artcat.staging_policy import POLICY, Action, copied_tables
from common.bulk import chunks, clip
from common.catalog_version import bump_catalog_version
from common.db import alembic_config, make_engine, make_sessionmaker, upgrade
from common.models import Base, Token
from common.redis_store import connect_redis
from common.search.indexer import assign_ids, build_documents, document_row
from common.search.indexer import write_documents as write_search_documents
from common.search.registry import engine_for
from common.settings import STAGING, Settings, normalise_database_url
from common.tokens import TokenRecord, TokenStore

BATCH_SIZE = 2000


class StagingError(Exception):
    """A rebuild refused or failed before anything was changed."""


# -- reports -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableReport:
    """Rows of one table: in production, on staging before the rebuild, and on staging after."""

    table: str
    action: Action
    source: int
    before: int
    after: int


@dataclass
class RebuildReport:
    """What a rebuild did."""

    tables: list[TableReport] = field(default_factory=list)
    search_documents: int = 0
    tokens_retired: int = 0
    seconds: float = 0.0

    def lines(self) -> list[str]:
        """Return the per-table report, one line per table, for the command line."""
        out = [f"{'table':<22}{'policy':<9}{'production':>12}{'staging was':>13}{'is now':>12}"]
        for t in self.tables:
            out.append(
                f"{t.table:<22}{t.action.value:<9}{t.source:>12,}{t.before:>13,}{t.after:>12,}"
            )
        out.append(
            f"{self.tokens_retired:,} staging tokens retired in Redis; "
            f"rebuilt in {self.seconds:.1f}s"
        )
        return out

    def counts(self) -> dict[str, int]:
        """Return the rows on staging after the rebuild, by table."""
        return {t.table: t.after for t in self.tables}


# -- connections -------------------------------------------------------------------------------


def _query_only(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only=ON")  # the source is never written, not even its mode
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def source_engine(url: str) -> Engine:
    """Return an engine that only reads the production database at ``url``."""
    url = normalise_database_url(url)
    if url.startswith("sqlite"):
        path = make_url(url).database
        if not path or not Path(path).is_file():
            raise StagingError(f"no SQLite database at {path or '(memory)'}")
        engine = create_engine(url, poolclass=NullPool)
        event.listen(engine, "connect", _query_only)
        return engine
    if not url.startswith("postgresql"):
        raise StagingError("the source must be a SQLite or PostgreSQL database URL")
    return create_engine(
        url, poolclass=NullPool, connect_args={"application_name": "artcat staging rebuild"}
    )


def describe(url: str | URL) -> str:
    """Return a database URL without its password (for messages)."""
    return make_url(url).render_as_string(hide_password=True)


def _identity(engine: Engine) -> tuple[Any, ...]:
    """Return what tells one database from another, whatever URL reaches it."""
    if engine.dialect.name == "sqlite":
        path = engine.url.database or ""
        stat = os.stat(path) if path and Path(path).exists() else None
        return ("sqlite", stat.st_dev, stat.st_ino) if stat else ("sqlite", path)
    with engine.connect() as conn:
        # A server started at the same instant on the same port is the same server.
        row = conn.execute(
            text(
                "SELECT current_database(), pg_postmaster_start_time(), "
                "current_setting('port'), current_setting('cluster_name')"
            )
        ).one()
    return ("postgresql", *row)


def same_database(a: Engine, b: Engine) -> bool:
    """Tell whether two engines reach the same database (URLs may differ: host, user...)."""
    return a.dialect.name == b.dialect.name and _identity(a) == _identity(b)


@contextlib.contextmanager
def snapshot(engine: Engine) -> Iterator[Connection]:
    """Yield a connection that reads one consistent state of the database, read-only."""
    if engine.dialect.name == "postgresql":
        options = {"isolation_level": "REPEATABLE READ", "postgresql_readonly": True}
        with engine.connect().execution_options(**options) as conn, conn.begin():
            yield conn
        return
    # pysqlite starts no transaction for reads: begin one by hand, so that every table is read
    # from the same WAL snapshot (taken at the first read).
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("BEGIN")
        try:
            yield conn
        finally:
            conn.exec_driver_sql("ROLLBACK")


def _revision(conn: Connection) -> str | None:
    if not inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _head(settings: Settings) -> str | None:
    return ScriptDirectory.from_config(alembic_config(settings)).get_current_head()


# -- the rebuild -------------------------------------------------------------------------------


def _count(conn: Connection, table: Table, where: ColumnElement[bool] | None = None) -> int:
    stmt = select(func.count()).select_from(table)
    return int(conn.scalar(stmt if where is None else stmt.where(where)) or 0)


def _empty(dst: Connection) -> list[tuple[str, datetime]]:
    """Delete every row of staging; return the live tokens it held (digest, expiry)."""
    tokens = cast(Table, Token.__table__)
    now = datetime.now(UTC)
    gone = dst.execute(
        delete(tokens).returning(tokens.c.digest, tokens.c.expires_at, tokens.c.expired_at)
    )
    live = [(d, exp) for d, exp, expired in gone if expired is None and exp > now]
    tables = list(reversed(Base.metadata.sorted_tables))
    if dst.dialect.name == "postgresql":
        quote = dst.dialect.identifier_preparer.quote
        dst.exec_driver_sql(
            "TRUNCATE " + ", ".join(quote(t.name) for t in tables) + " RESTART IDENTITY"
        )
    else:
        for table in tables:  # children first; the FTS5 index follows through its trigger
            dst.execute(delete(table))
    return live


def _copy_table(src: Connection, dst: Connection, table: Table, batch: int) -> int:
    """Stream a table's public rows from production into staging; return how many."""
    rule = POLICY[table.name]
    stmt = select(table).order_by(*table.primary_key.columns)
    if rule.where is not None:
        stmt = stmt.where(rule.where)
    # SQLite does not enforce VARCHAR lengths; PostgreSQL would refuse a batch for one long value.
    must_clip = src.dialect.name != dst.dialect.name and dst.dialect.name == "postgresql"
    statement = insert(table)
    copied = 0
    result = src.execute(stmt, execution_options={"yield_per": batch})
    for part in result.mappings().partitions():
        rows = [rule.apply(dict(row)) for row in part]
        if must_clip:
            clip(table, rows)
        dst.execute(statement, rows)
        copied += len(rows)
    return copied


def _reset_sequences(dst: Connection, tables: Iterable[Table]) -> None:
    """Move PostgreSQL sequences past the copied ids (the models use none today)."""
    if dst.dialect.name != "postgresql":
        return
    quote = dst.dialect.identifier_preparer.quote
    for table in tables:
        for column in table.columns:
            if not isinstance(column.type, Integer):
                continue
            sequence = dst.scalar(
                text("SELECT pg_get_serial_sequence(:t, :c)"),
                {"t": quote(table.name), "c": column.name},
            )
            if sequence:
                top = select(func.coalesce(func.max(column), 0)).scalar_subquery()
                dst.execute(select(func.setval(sequence, top + 1, False)))


def _rebuild_search(dst: Connection) -> int:
    """Index the copied catalog inside the rebuild's transaction; return the documents."""
    rows = assign_ids([document_row(doc) for doc in build_documents(dst)])
    written, removed = write_search_documents(dst, rows)
    if not (written or removed):  # an empty catalog: still clear the vocabulary
        engine_for(dst).sync(dst)
    return len(rows)


def _escape_glob(value: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in value)


def retire_tokens(store: TokenStore, live: list[tuple[str, datetime]]) -> int:
    """Tombstone staging's live tokens in Redis, and any other live record under its prefix."""
    for part in chunks(live, 1000):
        store.tombstone(Token(digest=d, expires_at=exp) for d, exp in part)
    retired = len(live)
    prefix = store.key("")
    keys = list(store.redis.scan_iter(match=_escape_glob(prefix) + "*", count=1000))
    for part in chunks(keys, 1000):
        values: list[bytes | None] = store.redis.mget(part)  # type: ignore[assignment]
        stale = []
        for key, value in zip(part, values, strict=True):
            record = TokenRecord.decode(value) if value else None
            if record is not None:  # tombstones and unknown-token markers decode to None
                name = key.decode() if isinstance(key, bytes) else str(key)
                expires = datetime.fromtimestamp(record.expires_at, UTC)
                stale.append(Token(digest=name[len(prefix) :], expires_at=expires))
        store.tombstone(stale)
        retired += len(stale)
    return retired


def check_target(target: Settings) -> None:
    """Refuse a target that is not declared a staging instance (it is about to be destroyed)."""
    if target.environment != STAGING:
        raise StagingError(
            f"{describe(target.sqlalchemy_url)} is not a staging database: the rebuild runs "
            f"only with ENVIRONMENT=staging (it is {target.environment!r})"
        )


def rebuild(
    source_url: str,
    target: Settings,
    *,
    redis: Redis | None = None,
    batch_size: int = BATCH_SIZE,
) -> RebuildReport:
    """Replace everything in the target (staging) database with production's public catalog."""
    check_target(target)
    started = time.perf_counter()
    src_engine = source_engine(source_url)
    dst_engine = make_engine(target)
    try:
        if same_database(src_engine, dst_engine):
            source = describe(src_engine.url)
            raise StagingError(f"the source {source} is the staging database itself")
        upgrade(target)
        if redis is None:
            redis = connect_redis(target)
        store = TokenStore(redis, make_sessionmaker(dst_engine), prefix=target.redis_prefix)
        report = _rebuild(src_engine, dst_engine, target, store, batch_size)
        # Committed: resource servers must drop the documents they rendered from the old rows.
        bump_catalog_version(redis, target.redis_prefix)
    finally:
        src_engine.dispose()
    _after_commit(dst_engine)
    dst_engine.dispose()
    report.seconds = time.perf_counter() - started
    return report


def _rebuild(
    src_engine: Engine, dst_engine: Engine, target: Settings, store: TokenStore, batch: int
) -> RebuildReport:
    report = RebuildReport()
    head = _head(target)
    with snapshot(src_engine) as src, dst_engine.begin() as dst:
        revision = _revision(src)
        if revision != head:
            raise StagingError(
                f"production's schema is at revision {revision}, this code's at {head}: "
                "run the same version on both (and migrate production) first"
            )
        tables = Base.metadata.tables
        before = {name: _count(dst, t) for name, t in tables.items()}
        sources = {name: _count(src, t) for name, t in tables.items()}
        live_tokens = _empty(dst)
        for table in copied_tables():
            _copy_table(src, dst, table, batch)
        _reset_sequences(dst, copied_tables())
        report.search_documents = _rebuild_search(dst)
        report.tokens_retired = retire_tokens(store, live_tokens)
        for name, rule in POLICY.items():
            after = _count(dst, tables[name])
            report.tables.append(TableReport(name, rule.action, sources[name], before[name], after))
    return report


def _after_commit(engine: Engine) -> None:
    """Refresh PostgreSQL's planner statistics of the refilled tables (outside the transaction)."""
    if engine.dialect.name != "postgresql":
        return
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        quote = conn.dialect.identifier_preparer.quote
        names = ", ".join(quote(t.name) for t in Base.metadata.sorted_tables)
        conn.exec_driver_sql(f"VACUUM (ANALYZE) {names}")
