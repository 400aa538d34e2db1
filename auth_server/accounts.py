"""Create and check credentials: users (argon2id passwords) and applications (digested secrets)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Connection, func, select, update
from sqlalchemy.orm import Session

from common.ids import new_id
from common.models import Application, Collection, User, UserDetail
from common.models.catalog import user_profile
from common.settings import Settings
from common.tokens import digest, digests_match, generate_secret

# Domains that can never receive mail (RFC 2606 and RFC 6761), the placeholder domain of social
# sign-ins without an email (users.invalid) among them.
RESERVED_EMAIL_SUFFIXES = (".invalid", ".test", ".example", ".localhost")
DEFAULT_COLLECTION_NAME = "Saved Artwork"
DEFAULT_COLLECTION_DESCRIPTION = "Default collection, favorites."


class AccountError(ValueError):
    """A request to create or change an account that cannot be honoured (bad or duplicate data)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field.capitalize()} {reason}")
        self.field = field
        self.reason = reason


def password_hasher(settings: Settings) -> PasswordHasher:
    """Return an argon2id hasher with the configured cost parameters."""
    return PasswordHasher(
        time_cost=settings.argon2_time_cost,
        memory_cost=settings.argon2_memory_cost,
        parallelism=settings.argon2_parallelism,
    )


def verify_password(hasher: PasswordHasher, stored_hash: str | None, password: str) -> bool:
    """Check a password against a stored argon2 hash (False for a missing or broken hash)."""
    if not stored_hash:
        return False
    try:
        return hasher.verify(stored_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def normalise_email(email: str) -> str:
    """Return the canonical (trimmed, lower-cased) form of an email address."""
    return email.strip().lower()


def undeliverable(email: str) -> bool:
    """Tell whether an address is in a reserved domain, which no mail can reach."""
    domain = "." + normalise_email(email).rpartition("@")[2].rstrip(".")
    return domain.endswith(RESERVED_EMAIL_SUFFIXES)


def find_user_by_email(session: Session, email: str) -> User | None:
    """Return the user with this email, if any."""
    return session.scalar(select(User).where(User.email == normalise_email(email)))


def end_sessions(session: Session, user: User) -> None:
    """Move the user's session generation on: every browser session of theirs ends (caller commits).

    Incremented in SQL, so two sign-outs at once both count and neither undoes the other.
    ``updated_at`` is kept: signing out is no edit of the account (the API shows that date).
    """
    session.execute(
        update(User)
        .where(User.id == user.id)
        .values(session_generation=User.session_generation + 1, updated_at=User.updated_at)
        .execution_options(synchronize_session=False)
    )
    session.refresh(user, ["session_generation"])


def create_user(
    session: Session,
    hasher: PasswordHasher,
    *,
    email: str,
    name: str,
    password: str | None,
    user_id: str | None = None,
) -> User:
    """Create a user with its details, its profile and its default (private) collection."""
    email = normalise_email(email)
    if not email or "@" not in email or len(email) > 320:
        raise AccountError("email", "is invalid")
    if not name.strip():
        raise AccountError("name", "can't be blank")
    if session.scalar(select(func.count()).select_from(User).where(User.email == email)):
        raise AccountError("email", "has already been taken")
    user = User(
        id=user_id or new_id(),
        email=email,
        name=name.strip(),
        password_hash=hasher.hash(password) if password else None,
    )
    session.add(user)
    session.flush()
    session.add(UserDetail(id=user.id))
    session.add(user_profile(user.id, new_id()))
    session.add(
        Collection(
            user_id=user.id,
            name=DEFAULT_COLLECTION_NAME,
            description=DEFAULT_COLLECTION_DESCRIPTION,
            default=True,
            private=True,
        )
    )
    session.flush()
    return user


@dataclass(frozen=True)
class NewApplication:
    """A newly created application with its clear secret (shown once, never stored)."""

    application: Application
    client_secret: str


def create_application(
    session: Session,
    *,
    name: str,
    owner: User | None,
    redirect_uris: list[str] | None = None,
    standard_token_response: bool = True,
    client_id: str | None = None,
    client_secret: str | None = None,
) -> NewApplication:
    """Create an application; the secret is returned once and stored only as a digest."""
    if not name.strip():
        raise AccountError("name", "can't be blank")
    secret = client_secret or generate_secret()
    app = Application(
        id=new_id(),
        name=name.strip(),
        user_id=owner.id if owner else None,
        client_id=client_id or new_client_id(),
        client_secret_digest=digest(secret),
        redirect_uris=list(redirect_uris or []),
        standard_token_response=standard_token_response,
    )
    session.add(app)
    session.flush()
    return NewApplication(app, secret)


def new_client_id() -> str:
    """Return a new random client id (128 bits, letters and digits only)."""
    return generate_secret(16).replace("-", "a").replace("_", "b")


def rotate_secret(session: Session, app: Application) -> str:
    """Give an application a new secret; the old one stops working at once."""
    secret = generate_secret()
    app.client_secret_digest = digest(secret)
    session.flush()
    return secret


def authenticate_client_id(conn: Connection, client_id: str, client_secret: str) -> str | None:
    """Return the id of the enabled application with these credentials (a Core read).

    The hot path of XAPP issuance: one indexed select of three columns, no ORM identity map;
    the comparison is the same constant-time one as :func:`authenticate_client`.
    """
    apps = Application.__table__
    row = conn.execute(
        select(apps.c.id, apps.c.client_secret_digest, apps.c.enabled).where(
            apps.c.client_id == client_id
        )
    ).first()
    matches = _client_matches(row, client_secret)  # compared even for an unknown client
    return str(row.id) if matches and row is not None else None


def authenticate_client(session: Session, client_id: str, client_secret: str) -> Application | None:
    """Return the enabled application with these credentials, comparing in constant time."""
    app = session.scalar(select(Application).where(Application.client_id == client_id))
    return app if _client_matches(app, client_secret) else None


def _client_matches(app: Any, client_secret: str) -> bool:
    """Tell whether ``app`` (a row or None) is enabled and has this secret.

    An unknown client is compared against a dummy digest, so timing does not tell it apart.
    """
    stored = app.client_secret_digest if app is not None else digest("unknown-client")
    ok = digests_match(client_secret, stored)
    return app is not None and ok and bool(app.enabled)
