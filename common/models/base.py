"""Declarative base, column types and mixins shared by every model."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, MetaData, String, TypeDecorator, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from common.ids import as_utc, new_id, utcnow

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Store timestamps as naive UTC; read them back as aware UTC on every backend."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is not None:
            value = value.astimezone(UTC)
        return value.replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return as_utc(value)

    def result_processor(self, dialect: Dialect, coltype: object) -> Any:
        """Read SQLite's text with one C call a value: ``fromisoformat`` parses the format
        SQLAlchemy writes (``2024-01-31 12:00:00.000000``) with a UTC offset appended, where
        the DateTime type's own parser and this decorator's chain cost five times as much on a
        catalog page (and ``replace(tzinfo=UTC)`` alone, four times the parse)."""
        if dialect.name != "sqlite":
            return super().result_processor(dialect, coltype)
        parse = datetime.fromisoformat

        def process(value: str | None) -> datetime | None:
            if value is None:
                return None
            try:
                return parse(value + "+00:00")
            except ValueError:  # not as SQLAlchemy writes it (an offset already, say)
                return as_utc(parse(value))

        return process


JSONType = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    """Declarative base with a naming convention, so migrations name constraints stably."""

    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: dict[Any, Any] = {datetime: UTCDateTime()}


def IdColumn(sort_order: int = 0) -> Mapped[str]:  # noqa: N802 - reads as a column type
    """Return a 24-hex primary key column with a generated default."""
    return mapped_column(String(24), primary_key=True, default=new_id, sort_order=sort_order)


def FK(  # noqa: N802 - reads as a column type
    target: str,
    *,
    nullable: bool = False,
    index: bool = True,
    primary_key: bool = False,
    ondelete: str = "CASCADE",
) -> Any:
    """Return a 24-hex foreign key column."""
    return mapped_column(
        String(24),
        ForeignKey(target, ondelete=ondelete),
        nullable=nullable,
        index=index,
        primary_key=primary_key,
    )


class Timestamps:
    """``created_at`` and ``updated_at``, set by the database layer."""

    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class SlugNamed:
    """The first columns of a catalog document reached by a slug: its id, slug and name."""

    # Ordered before the class's own columns, as they were when each class declared them.
    id: Mapped[str] = IdColumn(sort_order=-1)
    slug: Mapped[str] = mapped_column(String(160), unique=True, sort_order=-1)
    name: Mapped[str] = mapped_column(String(300), sort_order=-1)


def page_orders(table: str) -> tuple[Index, Index]:
    """Return the indexes of a table's pages' orders (migration 0014): name A-Z and recently
    added, each then id."""
    return (
        Index(f"ix_{table}_page_name", text("lower(name)"), "id"),
        Index(f"ix_{table}_page_recent", "created_at", "id"),
    )


class ImageFields:
    """An image URL template (with ``{image_version}``) and the versions it can be filled with."""

    image_url: Mapped[str | None] = mapped_column(String(500))
    image_versions: Mapped[list[str]] = mapped_column(JSONType, default=list)
