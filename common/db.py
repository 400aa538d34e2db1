"""Engine and session factories, and schema migration through Alembic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from common.settings import Settings

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def _sqlite_pragmas(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def make_engine(settings: Settings, **kwargs: Any) -> Engine:
    """Create the engine for the configured database (SQLite in WAL mode by default)."""
    url = settings.sqlalchemy_url
    if url.startswith("sqlite"):
        settings.instance_dir.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            echo=settings.sql_echo,
            connect_args={"check_same_thread": False, "timeout": 10},
            **kwargs,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    kwargs.setdefault("pool_size", 10)
    kwargs.setdefault("max_overflow", 10)
    return create_engine(url, echo=settings.sql_echo, **kwargs)


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Return a session factory bound to the engine."""
    return sessionmaker(engine, expire_on_commit=False)


def alembic_config(settings: Settings) -> Any:
    """Return an Alembic configuration pointing at the project's migrations and database."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", settings.sqlalchemy_url.replace("%", "%%"))
    return cfg


def upgrade(settings: Settings, revision: str = "head") -> None:
    """Bring the database schema up to ``revision`` (creating it on a fresh database)."""
    from alembic import command

    if settings.sqlalchemy_url.startswith("sqlite"):
        settings.instance_dir.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(settings), revision)
