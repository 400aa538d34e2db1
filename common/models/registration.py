"""Dynamic client registration (RFC 7591 and RFC 7592): initial access tokens, and what each
registered client holds beside its application row. Tokens are known only by their digests."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from common.models.base import FK, Base, IdColumn, JSONType


class InitialAccessToken(Base):
    """A token the operator issued (``artcat apps registration-token``) that lets a client
    register itself: for a number of registrations, until it expires."""

    __tablename__ = "initial_access_tokens"
    id: Mapped[str] = IdColumn()
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    uses_left: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column(index=True)


class ClientRegistration(Base):
    """A client that registered itself: its registration access token (by digest, RFC 7592)
    and the metadata it registered that the application row does not hold."""

    __tablename__ = "client_registrations"
    application_id: Mapped[str] = FK(
        "applications.id", primary_key=True, index=False, ondelete="CASCADE"
    )
    access_token_digest: Mapped[str] = mapped_column(String(64), unique=True)
    # contacts, logo_uri, client_uri, policy_uri, tos_uri, grant_types, response_types,
    # token_endpoint_auth_method, as registered.
    client_metadata: Mapped[dict[str, Any]] = mapped_column(JSONType)
    initial_token_id: Mapped[str | None] = FK(
        "initial_access_tokens.id", nullable=True, index=False, ondelete="SET NULL"
    )
    created_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()
