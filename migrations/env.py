"""Alembic environment: run migrations against the configured database."""

from __future__ import annotations

import warnings

from alembic import context
from sqlalchemy import create_engine, pool
from sqlalchemy.exc import SAWarning

from common.models import Base
from common.search.schema import include_object  # also registers the search tables

config = context.config
# SQLite cannot reflect the pages' expression indexes (``lower(name)``...): SQLAlchemy and
# Alembic warn and leave them out of the comparison on that engine (PostgreSQL compares them).
warnings.filterwarnings(
    "ignore", message="Skipped unsupported reflection of expression-based index", category=SAWarning
)
warnings.filterwarnings(
    "ignore", message="autogenerate skipping metadata-specified expression-based index"
)
target_metadata = Base.metadata


def run_migrations_offline() -> None:
    """Emit SQL for the configured URL without connecting."""
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
        compare_type=True,
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Connect and migrate."""
    url = config.get_main_option("sqlalchemy.url")
    assert url
    connectable = config.attributes.get("connection") or create_engine(url, poolclass=pool.NullPool)
    if hasattr(connectable, "connect"):
        with connectable.connect() as connection:
            _run(connection)
    else:
        _run(connectable)


def _run(connection: object) -> None:
    context.configure(
        connection=connection,  # type: ignore[arg-type]
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
