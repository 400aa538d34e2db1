"""The instance's copies of the museums' images: one row per artwork image mirrored or to be."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from common.ids import utcnow
from common.models.base import FK, Base

# The states of a mirror: to fetch, fetched (its versions in the image store), given up on.
PENDING = "pending"
MIRRORED = "mirrored"
FAILED = "failed"


class ImageMirror(Base):
    """The mirror of one artwork's published image: where it came from, how fetching went."""

    __tablename__ = "image_mirrors"
    artwork_id: Mapped[str] = FK("artworks.id", primary_key=True, index=False)
    # The museum's URL template (with ``{image_version}``) the copy was made from; a reload
    # that publishes another image sets the row back to pending.
    source_url: Mapped[str] = mapped_column(String(500))
    status: Mapped[str] = mapped_column(String(16), default=PENDING)
    # Why the last attempt failed: not_found, http_error, timeout, unreachable, content_type,
    # too_big, undecodable (with the detail after a colon).
    reason: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # The first 32 hex digits of the SHA-256 of the fetched bytes: the versions' folder.
    digest: Mapped[str | None] = mapped_column(String(32))
    width: Mapped[int | None] = mapped_column(Integer)
    height: Mapped[int | None] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    __table_args__ = (Index(None, "status"),)
