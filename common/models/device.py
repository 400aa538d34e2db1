"""The device authorization grant (RFC 8628): one row per device code, from request to token."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from common.models.base import FK, Base, IdColumn

# A row's life: pending -> approved | denied (the user's decision at /activate) -> used (the
# device redeemed it for a token, once) -> revoked (the user withdrew it from their account).
PENDING = "pending"
APPROVED = "approved"
DENIED = "denied"
USED = "used"
REVOKED = "revoked"


class DeviceAuthorization(Base):
    """A device code and its user code, known only by their digests, bound to one client."""

    __tablename__ = "device_authorizations"
    id: Mapped[str] = IdColumn()
    # SHA-256 of the device code (256 random bits); a keyed HMAC of the normalised user code,
    # whose 8 characters a plain digest could not keep from a brute force of a database dump.
    device_code_digest: Mapped[str] = mapped_column(String(64), unique=True)
    user_code_digest: Mapped[str] = mapped_column(String(64))
    application_id: Mapped[str] = FK("applications.id")
    scope: Mapped[str] = mapped_column(String(200), default="")
    user_id: Mapped[str | None] = FK("users.id", nullable=True)
    status: Mapped[str] = mapped_column(String(10), default=PENDING)
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column(index=True)
    # The device's polling: when it last asked, and the seconds it must wait between asks
    # (raised by 5 at each ``slow_down``).
    last_polled_at: Mapped[datetime | None] = mapped_column()
    interval: Mapped[int] = mapped_column(Integer)
    decided_at: Mapped[datetime | None] = mapped_column()
    # When the approving user signed in (the ID token's auth_time).
    auth_time: Mapped[datetime | None] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column()
    # The access token the device code bought (expired with the grant when the user revokes it).
    token_id: Mapped[str | None] = FK("tokens.id", nullable=True, ondelete="SET NULL")
    __table_args__ = (Index(None, "user_code_digest", "status"),)
