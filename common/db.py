"""Engine and session factories, and schema migration through Alembic."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import (
    Connection,
    Engine,
    ExceptionContext,
    Insert,
    Table,
    bindparam,
    create_engine,
    event,
    text,
)
from sqlalchemy.exc import InvalidatePoolError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry, NullPool, QueuePool

from common.client_versions import Announce, announce, watch
from common.redis_store import connect_redis, embedded_redis_running
from common.settings import Settings, prepare_instance_dir, tighten

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def _sqlite_pragmas(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def prepare_sqlite(settings: Settings) -> None:
    """Create the instance folder (0700) and the default SQLite file for its owner only (0600).

    SQLite would create the file with the umask's mode (0644, usually); created empty here
    first, it keeps 0600, and SQLite gives its -wal and -shm files the database's own mode.
    Existing files are tightened.
    """
    prepare_instance_dir(settings.instance_dir)
    if settings.database_url:
        return  # a database file of the operator's choosing keeps the mode they gave it
    path = settings.default_sqlite_path
    # O_EXCL: never open a database that exists. Closing any descriptor of the file drops every
    # POSIX lock this process's SQLite connections hold on it, and concurrent writers then
    # corrupt it (sqlite.org/howtocorrupt.html, 2.2).
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
        tighten(path.with_name(name))


def make_engine(settings: Settings, **kwargs: Any) -> Engine:
    """Create the engine for the configured database (SQLite in WAL mode by default)."""
    url = settings.sqlalchemy_url
    if url.startswith("sqlite"):
        prepare_sqlite(settings)
        engine = create_engine(
            url,
            echo=settings.sql_echo,
            connect_args={"check_same_thread": False, "timeout": 10},
            json_deserializer=orjson.loads,  # 3x the json module's speed (list pages)
            **kwargs,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return watched(engine, Announcer(settings))
    _fast_json_columns()
    engine = ping_when_idle(create_engine(url, echo=settings.sql_echo, **{**POOL, **kwargs}))
    return watched(engine, Announcer(settings))


class Announcer:
    """Tell every process that an application changed through the Redis of the engine's
    settings (``common.client_versions``), a client made on the first change: what a change
    made outside the ``Stores``' sessions goes through (theirs go through their own Redis).
    Nothing to tell when the settings' embedded Redis does not run (no server is up: no process
    keeps an application)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.redis: Any = None

    def __call__(self, *, pending: bool) -> None:
        """Move the applications' version (see ``common.client_versions.announce``)."""
        redis = self.redis
        if redis is None:
            if self.settings.embedded_redis and not embedded_redis_running(self.settings):
                return
            redis = self.redis = connect_redis(self.settings)
        announce(redis, self.settings.redis_prefix, pending=pending)


# What each watched engine calls when an application changed outside the stores' sessions (read
# engines share their primary's).
_announcers: weakref.WeakKeyDictionary[Engine, Announce] = weakref.WeakKeyDictionary()


def watched(engine: Engine, on_change: Announce) -> Engine:
    """Watch the engine's writes to the applications (``common.client_versions.watch``)."""
    watch(engine, on_change)
    _announcers[engine] = on_change
    return engine


def announcer_of(engine: Engine) -> Announce | None:
    """Return what the engine calls when an application changed (None: not watched)."""
    return _announcers.get(engine)


# PostgreSQL pools (each engine's; the read engine has one of its own): connections kept, extra
# ones allowed under a burst, and the age after which one is replaced.
POOL: dict[str, Any] = {"pool_size": 10, "max_overflow": 10, "pool_recycle": 1800}


# A connection back in the pool for longer than this is pinged before it is handed out.
IDLE_PING_AFTER = 1.0

# When a connection of this process last turned out dead (any engine: they share a server).
_last_disconnect = [0.0]


def ping_when_idle(engine: Engine) -> Engine:
    """Ping a pooled connection before use when it sat idle for ``IDLE_PING_AFTER`` s, or when
    it was checked in before a connection of this process was found dead.

    ``pool_pre_ping`` pings on every checkout: a round trip that costs a fifth of a catalog
    read. Under load, connections come back to the pool within milliseconds and are not
    pinged. One that waited (an idle pool after PostgreSQL restarted, say) is, and so is every
    pooled connection, of every engine of the process, once one was found dead: a dead one is
    replaced before any request uses it, and a failed ping discards the rest of its pool. A
    connection that dies while in use fails its statement (that request answers 503), and
    SQLAlchemy then discards every connection of the pool older than the failure.
    """
    dialect = engine.dialect

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi: Any, record: ConnectionPoolEntry) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi: Any, record: ConnectionPoolEntry, _proxy: Any) -> None:
        since = record.info.pop("idle_since", None)
        if since is None:  # a new connection
            return
        if time.monotonic() - since < IDLE_PING_AFTER and since > _last_disconnect[0]:
            return
        try:
            dialect.do_ping(dbapi)
        except Exception as exc:  # any failure: the pool drops it and connects anew
            _last_disconnect[0] = time.monotonic()
            raise InvalidatePoolError("stale pooled connection") from exc

    @event.listens_for(engine, "handle_error")
    def _failed(context: ExceptionContext) -> None:
        if context.is_disconnect:
            note_disconnect()

    return engine


def note_disconnect() -> None:
    """Record that a connection of this process was found dead: every pooled connection
    checked in before now is pinged on its next checkout (see ``ping_when_idle``)."""
    _last_disconnect[0] = time.monotonic()


def describe_failure(ex: BaseException) -> str:
    """Name a store failure for a log line: its class and, for a database error, the driver's
    class and SQLSTATE. Never the message, which may quote the statement's parameters."""
    orig = getattr(ex, "orig", None)
    if orig is None:
        return type(ex).__name__
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    detail = type(orig).__name__ + (f" {code}" if code else "")
    return f"{type(ex).__name__} ({detail})"


def _fast_json_columns() -> None:
    """Parse json/jsonb values with orjson (psycopg's default, the json module, is 3x slower:
    a list page reads two JSON columns of each artwork)."""
    from psycopg.types.json import set_json_loads

    set_json_loads(orjson.loads)


def read_engine(engine: Engine) -> Engine:
    """Return an engine for reads only: on PostgreSQL, its own pool of autocommit connections.

    Each statement then runs on its own (no BEGIN and ROLLBACK round trips). A separate pool is
    cheaper than switching a shared connection's isolation level on every checkout. On SQLite,
    whose reads never open a transaction, it is the engine itself.
    """
    if engine.dialect.name != "postgresql":
        return engine
    size = engine.pool.size() if isinstance(engine.pool, QueuePool) else POOL["pool_size"]
    options = {**POOL, "pool_size": size}
    reads = ping_when_idle(
        create_engine(engine.url, echo=engine.echo, isolation_level="AUTOCOMMIT", **options)
    )
    on_change = announcer_of(engine)
    return watched(reads, on_change) if on_change is not None else reads


def insert_rows(db: Session | Connection, *rows: tuple[Table, Mapping[str, Any]]) -> None:
    """Insert one row into each table, in the caller's transaction, in the order given.

    On PostgreSQL in one statement (each row but the last an INSERT in a WITH clause: one round
    trip, one statement's CPU). Its foreign keys are checked at the end of the statement, so a
    row may refer to one inserted beside it. Elsewhere one INSERT each, in order.
    """
    dialect = db.get_bind().dialect if isinstance(db, Session) else db.dialect
    if dialect.name != "postgresql":
        for table, values in rows:
            db.execute(table.insert(), dict(values))
        return
    shape = tuple((table, tuple(values)) for table, values in rows)
    params = {f"r{i}_{name}": value for i, (_t, v) in enumerate(rows) for name, value in v.items()}
    db.execute(_insert_all(shape), params)


@functools.lru_cache(maxsize=64)
def _insert_all(shape: tuple[tuple[Table, tuple[str, ...]], ...]) -> Insert:
    """Build (once per shape: tables and columns) the one statement of ``insert_rows``."""

    def insert(i: int, table: Table, names: tuple[str, ...]) -> Insert:
        binds = {name: bindparam(f"r{i}_{name}", type_=table.c[name].type) for name in names}
        return table.insert().values(binds)

    for table, names in shape:  # a column left out would need its default computed here
        missing = [c.name for c in table.c if c.default is not None and c.name not in names]
        if missing:
            raise ValueError(f"insert_rows: give {table.name}.{', '.join(missing)}")
    *first, (table, names) = shape
    statement = insert(len(first), table, names)
    ctes = [insert(i, t, n).cte(f"insert_{i}") for i, (t, n) in enumerate(first)]
    return statement.add_cte(*ctes) if ctes else statement


def make_sessionmaker(engine: Engine, *, reads: bool = False) -> sessionmaker[Session]:
    """Return a session factory bound to the engine (of ``ReadSession`` for ``reads``)."""
    return sessionmaker(engine, expire_on_commit=False, class_=ReadSession if reads else Session)


class ReadSession(Session):
    """A Session for requests that only read.

    The catalog reads with Core statements on the session's connection (``keyset.fetch``).
    Through a plain Session, each request pays the ORM's transaction bookkeeping around that
    connection (a SessionTransaction begun and closed, the identity map expunged): 20 us of
    CPU, a tenth of an uncached artwork. Here ``connection()`` outside an ORM transaction is a
    connection of the engine's pool, checked out on first use and returned at ``close``. An
    ORM query (the user-data reads) still runs in the Session's own transaction, on its own
    connection. Neither holds a transaction a read depends on: on PostgreSQL the read pool
    runs each statement on its own (autocommit), and SQLite's reads open none.
    """

    _plain: Connection | None = None

    def connection(
        self,
        bind_arguments: dict[str, Any] | None = None,
        execution_options: Mapping[str, Any] | None = None,
    ) -> Connection:
        """Return the request's plain connection (the transaction's, inside one)."""
        if bind_arguments or execution_options or self.in_transaction():
            return super().connection(bind_arguments, execution_options)
        plain = self._plain
        if plain is None:
            bind = self.get_bind()
            if isinstance(bind, Connection):  # a Session on a caller's connection
                return super().connection()
            plain = self._plain = bind.connect()
        return plain

    def close(self) -> None:
        """Return the plain connection, and close the ORM's side when it was used."""
        plain, self._plain = self._plain, None
        try:
            if self.in_transaction() or len(self.identity_map):
                super().close()
        finally:
            if plain is not None:
                plain.close()


def alembic_config(settings: Settings) -> Any:
    """Return an Alembic configuration pointing at the project's migrations and database."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", settings.sqlalchemy_url.replace("%", "%%"))
    return cfg


_REVISION_LINE = re.compile(r"""^(down_revision|revision)\b[^=]*=\s*['"]?(\w+)?""", re.MULTILINE)


def newest_revision() -> str | None:
    """Return the one head of the migrations' history, read from the scripts' text; None if
    it is not a single one (then Alembic works it out).

    What Alembic reads by importing every script (hundreds of milliseconds with its own
    imports, at every start of a server); a test holds the two to the same answer.
    """
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in (MIGRATIONS_DIR / "versions").glob("*.py"):
        for name, value in _REVISION_LINE.findall(script.read_text(encoding="utf-8")):
            if value and value != "None":
                (revisions if name == "revision" else parents).add(value)
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def at_revision(settings: Settings) -> str | None:
    """Return the database's schema revision (None when it has none yet, or cannot be read)."""
    engine = create_engine(settings.sqlalchemy_url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except SQLAlchemyError:
        return None
    finally:
        engine.dispose()


def upgrade(settings: Settings, revision: str = "head") -> None:
    """Bring the database schema up to ``revision`` (creating it on a fresh database).

    A database already at the newest revision is left as it is without loading Alembic (what
    most starts of a server find).
    """
    if settings.sqlalchemy_url.startswith("sqlite"):
        prepare_sqlite(settings)
    if revision == "head":
        newest = newest_revision()
        if newest is not None and at_revision(settings) == newest:
            return
    # Alembic logs every step at INFO (its plugins as it loads them, then "Running upgrade
    # 0001 -> 0002"): a screen of lines at each start. Its warnings and errors still show.
    quiet = logging.getLogger("alembic")
    level = quiet.level
    quiet.setLevel(max(logging.WARNING, level))
    try:
        from alembic import command

        command.upgrade(alembic_config(settings), revision)
    finally:
        quiet.setLevel(level)
