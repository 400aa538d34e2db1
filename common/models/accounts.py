"""Users, their details and collections, applications, tokens, codes and social identities."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Index, Integer, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from common.models.base import FK, Base, IdColumn, JSONType, Timestamps


class User(Timestamps, Base):
    """A user account. The password is stored only as an argon2id hash."""

    __tablename__ = "users"
    id: Mapped[str] = IdColumn()
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(320), unique=True)  # stored lower-cased
    password_hash: Mapped[str | None] = mapped_column(String(200))
    type: Mapped[str] = mapped_column(String(20), default="User")  # User | Admin
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    # Bumped by sign-out, a password change or reset and disabling: every browser session
    # carries the generation it started in and ends when it no longer matches.
    session_generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # When the owner proved they read mail at this address (None: never).
    email_verified_at: Mapped[datetime | None] = mapped_column()


class UserDetail(Timestamps, Base):
    """Private details of a user (its id is the user's id)."""

    __tablename__ = "user_details"
    id: Mapped[str] = FK("users.id", primary_key=True, index=False)
    birthday: Mapped[str | None] = mapped_column(String(20))
    phone: Mapped[str | None] = mapped_column(String(40))
    gender: Mapped[str | None] = mapped_column(String(20))


class Collection(Timestamps, Base):
    """A user's collection of artworks; every user has a default one, "Saved Artwork"."""

    __tablename__ = "collections"
    id: Mapped[str] = IdColumn()
    user_id: Mapped[str] = FK("users.id")
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    default: Mapped[bool] = mapped_column(Boolean, default=False)
    private: Mapped[bool] = mapped_column(Boolean, default=False)


class CollectionItem(Timestamps, Base):
    """An artwork in a collection, at a position (1..n, contiguous)."""

    __tablename__ = "collection_items"
    id: Mapped[str] = IdColumn()
    collection_id: Mapped[str] = FK("collections.id", index=False)
    artwork_id: Mapped[str] = FK("artworks.id")
    position: Mapped[int] = mapped_column(Integer)
    __table_args__ = (
        Index(None, "collection_id", "artwork_id", unique=True),
        Index(None, "collection_id", "position"),
    )


class Application(Timestamps, Base):
    """A client application. Its secret is stored only as a SHA-256 digest."""

    __tablename__ = "applications"
    id: Mapped[str] = IdColumn()
    name: Mapped[str] = mapped_column(String(200))
    user_id: Mapped[str | None] = FK("users.id", nullable=True, ondelete="SET NULL")
    client_id: Mapped[str] = mapped_column(String(64), unique=True)
    client_secret_digest: Mapped[str] = mapped_column(String(64))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    redirect_uris: Mapped[list[str]] = mapped_column(JSONType, default=list)
    # RFC 6749 token responses (integer ``expires_in``) for new rows; False keeps the reference
    # API's timestamp form for the clients written against it.
    standard_token_response: Mapped[bool] = mapped_column(Boolean, default=True)
    published_artworks_access_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    roles: Mapped[list[str]] = mapped_column(JSONType, default=list)
    api_version: Mapped[int] = mapped_column(Integer, default=2)
    # Per-application override of the default rate limit, e.g. "20/second".
    rate_limit: Mapped[str | None] = mapped_column(String(40))
    # Operated by this service's owner: only its user tokens may manage applications.
    first_party: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # A public client (a native or browser app) holds no secret: it authenticates with
    # ``none`` and must use PKCE.
    public_client: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # OpenID Connect: how its ID tokens are signed (None: the server's default, ES256).
    id_token_signed_response_alg: Mapped[str | None] = mapped_column(String(10))
    # Refresh tokens (with the offline_access scope) beside one-hour access tokens, instead of
    # the reference API's long-lived access tokens (auth_server.refresh).
    refresh_tokens: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # OpenID Connect RP-Initiated Logout: where a sign-out it asks for may send the user back.
    post_logout_redirect_uris: Mapped[list[str] | None] = mapped_column(JSONType)
    # Dynamic client registration: the secret method it registered for the token endpoint,
    # the only one it may use (None: either, as for applications made by the operator).
    token_endpoint_auth_method: Mapped[str | None] = mapped_column(String(20))


class Token(Base):
    """An issued token, known only by the SHA-256 digest of its opaque value."""

    __tablename__ = "tokens"
    id: Mapped[str] = IdColumn()
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(10))  # xapp | access
    application_id: Mapped[str] = FK("applications.id")
    user_id: Mapped[str | None] = FK("users.id", nullable=True)
    scope: Mapped[str] = mapped_column(String(200), default="")
    code_id: Mapped[str | None] = FK("authorization_codes.id", nullable=True, ondelete="SET NULL")
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column(index=True)
    expired_at: Mapped[datetime | None] = mapped_column(index=True)  # revoked (storage cleanup)


class AuthorizationCode(Base):
    """A single-use authorization code, known only by its digest, bound to client and URI."""

    __tablename__ = "authorization_codes"
    id: Mapped[str] = IdColumn()
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    application_id: Mapped[str] = FK("applications.id")
    user_id: Mapped[str] = FK("users.id")
    redirect_uri: Mapped[str] = mapped_column(String(2000))
    scope: Mapped[str] = mapped_column(String(200), default="")
    code_challenge: Mapped[str | None] = mapped_column(String(128))
    code_challenge_method: Mapped[str | None] = mapped_column(String(10))
    # OpenID Connect: the client's nonce, and when the user signed in (the ID token says both).
    nonce: Mapped[str | None] = mapped_column(String(255))
    auth_time: Mapped[datetime | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column(index=True)  # storage cleanup
    used_at: Mapped[datetime | None] = mapped_column()


class SocialIdentity(Base):
    """A verified identity at a social provider, linked to exactly one user."""

    __tablename__ = "social_identities"
    id: Mapped[str] = IdColumn()
    user_id: Mapped[str] = FK("users.id")
    provider: Mapped[str] = mapped_column(String(20))
    provider_uid: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column()
    __table_args__ = (Index(None, "provider", "provider_uid", unique=True),)


class SigningKey(Base):
    """A key that signs ID tokens; its private half is stored encrypted with SECRET_KEY.

    It is published (in the JWKS) from ``created_at``, signs from ``activates_at`` until the
    next key of its algorithm activates, and stays published until every token it signed has
    expired (``auth_server.keys``).
    """

    __tablename__ = "signing_keys"
    kid: Mapped[str] = mapped_column(String(64), primary_key=True)
    alg: Mapped[str] = mapped_column(String(10))
    public_jwk: Mapped[dict[str, str]] = mapped_column(JSONType)
    private_encrypted: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column()
    activates_at: Mapped[datetime] = mapped_column(index=True)
