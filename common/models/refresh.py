"""Refresh tokens: families of single-use tokens, each known only by its SHA-256 digest.

A family starts when a user grants an application (registered for refresh tokens) the
``offline_access`` scope. Each refresh rotates the family: the token used is marked rotated and a
new one joins the family, with the access token issued beside it. A token used again after its
rotation (beyond a short grace period) ends the whole family (``auth_server.refresh``).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from common.models.base import FK, Base, IdColumn


class RefreshFamily(Base):
    """One grant of offline access: what every refresh token of the family carries."""

    __tablename__ = "refresh_families"
    id: Mapped[str] = IdColumn()
    application_id: Mapped[str] = FK("applications.id")
    user_id: Mapped[str] = FK("users.id")
    scope: Mapped[str] = mapped_column(String(200), default="")
    # OpenID Connect: when the user signed in (a refreshed ID token repeats it).
    auth_time: Mapped[datetime | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column()
    # The last rotation: every rotation and every revocation update this row first, so the two
    # are serialised by its lock.
    used_at: Mapped[datetime] = mapped_column(index=True)
    revoked_at: Mapped[datetime | None] = mapped_column()


class RefreshToken(Base):
    """A refresh token of a family, with the access token issued beside it."""

    __tablename__ = "refresh_tokens"
    id: Mapped[str] = IdColumn()
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    family_id: Mapped[str] = FK("refresh_families.id")
    # The family's application, repeated: the rotation's conditional UPDATE names it.
    application_id: Mapped[str] = FK("applications.id", index=False)
    access_token_id: Mapped[str | None] = FK("tokens.id", nullable=True, ondelete="SET NULL")
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column(index=True)
    rotated_at: Mapped[datetime | None] = mapped_column()
    revoked_at: Mapped[datetime | None] = mapped_column()
