"""The token contract shared by both services.

Tokens are opaque random strings; only their SHA-256 digest is stored, in SQL (the durable record)
and in Redis (``<prefix>:tok:<digest>`` -> a compact record, expiring with the token). The
resource server does one Redis GET per request; on a miss it reads SQL once and writes the record
back with SET NX. Unknown digests are cached negatively for a short time. Expiry marks the SQL row
and then overwrites the Redis key with a tombstone, so a concurrent read-through cannot
resurrect it; a read-through that published a record reads the row again, so that one read
before an expiry and written after its tombstone was lost (a flush, a failover) is withdrawn.
The storage cleanup (``auth_server.cleanup``) deletes a row only once it is expired or revoked:
a deleted token is then unknown, refused as an expired one is.
Disabling a user or an application expires their tokens the same way; the read-through also
refuses (and never publishes) a token whose user or application is disabled.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeGuard

from redis import Redis
from sqlalchemy import Connection, Table, select, update
from sqlalchemy.orm import Session, sessionmaker

from common.ids import new_id, utcnow
from common.metrics import counter
from common.models import Application, Token, User
from common.redis_store import pipelined

TOKENS: Table = Token.__table__  # type: ignore[assignment]
TOKEN_BYTES = 32  # 256 bits of entropy
TOMBSTONE = b"X"
UNKNOWN = b"N"
RECORD_VERSION = "1"
# A tombstone outlives any read-through that could still be in flight.
MIN_TOMBSTONE_TTL = 300

VALIDATIONS = counter(
    "artcat_token_validations",
    "Token lookups, by outcome: valid, unknown, expired (expired, revoked or of a disabled "
    "owner), malformed.",
    ("outcome",),
)
CACHE_MISSES = counter(
    "artcat_token_cache_misses",
    "Token lookups that missed Redis and read the SQL record, by outcome.",
    ("outcome",),
)


def generate_secret(nbytes: int = TOKEN_BYTES) -> str:
    """Return a URL-safe random string with ``nbytes`` bytes of entropy."""
    return secrets.token_urlsafe(nbytes)


def digest(value: str) -> str:
    """Return the hex SHA-256 digest under which a token or secret is stored."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def digests_match(value: str, stored_digest: str) -> bool:
    """Compare a presented secret with a stored digest in constant time."""
    return hmac.compare_digest(digest(value), stored_digest)


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """What a resource server needs to know about a valid token."""

    kind: str  # "xapp" or "access"
    application_id: str
    user_id: str | None
    scope: str
    expires_at: int  # Unix seconds

    def encode(self) -> bytes:
        """Return the compact Redis encoding of the record."""
        return "|".join(
            (
                RECORD_VERSION,
                self.kind,
                self.application_id,
                self.user_id or "",
                self.scope,
                str(self.expires_at),
            )
        ).encode()

    @classmethod
    def decode(cls, raw: bytes) -> TokenRecord | None:
        """Parse a Redis value; return None for tombstones, unknown markers and garbage."""
        parts = raw.decode("utf-8", "replace").split("|")
        if len(parts) != 6 or parts[0] != RECORD_VERSION:
            return None
        _, kind, app, user, scope, exp = parts
        try:
            expires_at = int(exp)
        except ValueError:
            return None
        return cls(kind, app, user or None, scope, expires_at)

    @classmethod
    def from_row(cls, row: AnyTokenRow) -> TokenRecord:
        """Build the record from the SQL row."""
        return cls(
            row.kind,
            row.application_id,
            row.user_id,
            row.scope,
            int(row.expires_at.timestamp()),
        )

    @property
    def is_user(self) -> bool:
        """Tell whether the token acts for a user (an access token)."""
        return self.kind == "access" and self.user_id is not None


@dataclass(frozen=True, slots=True)
class TokenRow:
    """A token's row as it is written (``Token``'s columns), not an ORM instance: every token
    request issues one, and building a ``Token`` cost 3% of a refresh."""

    id: str
    digest: str
    kind: str
    application_id: str
    user_id: str | None
    scope: str
    code_id: str | None
    created_at: datetime
    expires_at: datetime
    expired_at: datetime | None


# A token's row: read through the ORM, or as issued.
AnyTokenRow = Token | TokenRow


@dataclass(frozen=True)
class IssuedToken:
    """A newly issued token: the clear value (shown once), its row as written, and the row's
    column values (what an INSERT writes)."""

    value: str
    row: TokenRow
    columns: dict[str, Any]

    def values(self) -> dict[str, Any]:
        """Return a copy of the row's column values."""
        return dict(self.columns)


def issued_token(
    value: str,
    token_id: str,
    now: datetime,
    *,
    kind: str,
    application_id: str,
    user_id: str | None,
    ttl: int,
    scope: str = "",
    code_id: str | None = None,
) -> IssuedToken:
    """Return the token of ``value`` and ``token_id``, issued at ``now`` (its row's values)."""
    values: dict[str, Any] = {
        "id": token_id,
        "digest": digest(value),
        "kind": kind,
        "application_id": application_id,
        "user_id": user_id,
        "scope": scope,
        "code_id": code_id,
        "created_at": now,
        "expires_at": now + timedelta(seconds=ttl),
        "expired_at": None,
    }
    return IssuedToken(value, TokenRow(**values), values)


class TokenStore:
    """Issue, look up and expire tokens through SQL and Redis."""

    def __init__(
        self,
        redis: Redis,
        sessions: sessionmaker[Session],
        *,
        prefix: str = "artcat",
        negative_ttl: int = 30,
        reads: sessionmaker[Session] | None = None,
    ) -> None:
        self.redis = redis
        self.sessions = sessions
        self.reads = reads or sessions  # the read-through's lookup (see Stores.reads)
        self.prefix = prefix
        self.negative_ttl = negative_ttl

    def key(self, token_digest: str) -> str:
        """Return the Redis key of a token digest."""
        return f"{self.prefix}:tok:{token_digest}"

    # -- issuing (auth server) -------------------------------------------------------------

    def new(
        self,
        *,
        kind: str,
        application_id: str,
        user_id: str | None,
        ttl: int,
        scope: str = "",
        code_id: str | None = None,
    ) -> IssuedToken:
        """Return a new token, not yet written: ``issue`` writes one, and a caller that writes
        other rows with it passes ``values()`` to ``common.db.insert_rows``."""
        return issued_token(
            generate_secret(),
            new_id(),
            utcnow(),
            kind=kind,
            application_id=application_id,
            user_id=user_id,
            ttl=ttl,
            scope=scope,
            code_id=code_id,
        )

    def issue(self, session: Session | Connection, **token: Any) -> IssuedToken:
        """Insert a new token (``new``'s arguments) in the caller's transaction; publish it once
        the caller commits.

        The row is written with one Core INSERT (no unit-of-work flush: token issuance is a hot
        path); the returned ``row`` holds the values written (a ``TokenRow``). Call
        :meth:`publish` after the commit.
        """
        issued = self.new(**token)
        session.execute(TOKENS.insert(), issued.values())
        return issued

    def publish(self, row: AnyTokenRow, redis: Any = None) -> None:
        """Write a token's record to Redis, expiring with the token.

        SET NX: a tombstone written by a concurrent expiry (a code replay, say) must win over
        a late publish; a read-through that got there first wrote the same record.
        """
        record = TokenRecord.from_row(row)
        ttl = record.expires_at - int(time.time())
        if ttl > 0:
            # ``redis``: a pipeline of the caller's, to send this with its other commands.
            (redis or self.redis).set(self.key(row.digest), record.encode(), ex=ttl, nx=True)

    def publish_command(self, row: AnyTokenRow) -> tuple[Any, ...] | None:
        """Return the Redis command of ``publish`` (None: the token has expired already), to
        send with others (``common.redis_exchange``)."""
        record = TokenRecord.from_row(row)
        ttl = record.expires_at - int(time.time())
        if ttl <= 0:
            return None
        return ("SET", self.key(row.digest), record.encode(), "EX", ttl, "NX")

    # -- validating (resource server) ------------------------------------------------------

    def lookup(self, token: str) -> TokenRecord | None:
        """Return the record of a valid token, or None; one Redis GET on the hot path."""
        if not well_formed(token):
            return None
        token_digest = digest(token)
        key = self.key(token_digest)
        raw: bytes | None = self.redis.get(key)  # type: ignore[assignment]
        return self.record_from_cache(token_digest, key, raw)

    def record_from_cache(
        self, token_digest: str, key: str, raw: bytes | None
    ) -> TokenRecord | None:
        """Return the record of a valid token from its Redis value (read through SQL on a miss)."""
        if raw is not None:
            record = TokenRecord.decode(raw)
            if record is None or record.expires_at <= time.time():
                VALIDATIONS.inc("expired" if record or raw == TOMBSTONE else "unknown")
                return None
            VALIDATIONS.inc("valid")
            return record
        return self._read_through(token_digest, key)

    def _read_through(self, token_digest: str, key: str) -> TokenRecord | None:
        with self.reads() as session:
            found = session.execute(
                select(Token, Application.enabled, User.enabled)
                .join(Application, Application.id == Token.application_id)
                .outerjoin(User, User.id == Token.user_id)
                .where(Token.digest == token_digest)
            ).first()
        now = time.time()
        if found is None:
            self.redis.set(key, UNKNOWN, ex=self.negative_ttl, nx=True)
            return _counted_miss("unknown", None)
        row, app_enabled, user_enabled = found
        record = TokenRecord.from_row(row)
        if row.expired_at is not None or record.expires_at <= now:
            self.redis.set(key, TOMBSTONE, ex=MIN_TOMBSTONE_TTL, nx=True)
            return _counted_miss("expired", None)
        if not app_enabled or (row.user_id is not None and not user_enabled):
            # Disabling expires the owner's tokens; a row that escaped it (an owner disabled
            # by hand in SQL) is still refused, and never published. Briefly cached as refused.
            self.redis.set(key, TOMBSTONE, ex=self.negative_ttl, nx=True)
            return _counted_miss("expired", None)
        published = self.redis.set(
            key, record.encode(), ex=max(1, int(record.expires_at - now)), nx=True
        )
        if published and self._expired_since(token_digest):
            # Read before an expiry committed, written after its tombstone was lost (Redis
            # flushed or failed over in between): the record must not outlive the check.
            self.redis.set(key, TOMBSTONE, ex=MIN_TOMBSTONE_TTL)
            return _counted_miss("expired", None)
        return _counted_miss("valid", record)

    def _expired_since(self, token_digest: str) -> bool:
        """Tell whether the token's row is expired now (read again after publishing it); a row
        gone (the storage cleanup deletes only expired rows) counts as expired."""
        with self.reads() as session:
            found = session.execute(
                select(Token.expired_at).where(Token.digest == token_digest)
            ).first()
        return found is None or found.expired_at is not None

    # -- expiring (auth server) ------------------------------------------------------------

    def expire(self, token: str) -> Token | None:
        """Expire one token by its clear value; return its row, or None when unknown or spent."""
        with self.sessions() as session, session.begin():
            row = session.scalar(
                select(Token).where(Token.digest == digest(token), Token.expired_at.is_(None))
            )
            if row is None or row.expires_at <= datetime.now(UTC):
                return None
            row.expired_at = utcnow()
        self.tombstone([row])
        return row

    def expire_where(self, session: Session, *conditions: object) -> list[Token]:
        """Expire every live token matching ``conditions`` in ``session``; tombstone after commit.

        Returns the rows; call :meth:`tombstone` with them once the transaction has committed.
        """
        now = utcnow()
        rows = list(
            session.scalars(
                update(Token)
                .where(Token.expired_at.is_(None), Token.expires_at > now, *conditions)  # type: ignore[arg-type]
                .values(expired_at=now)
                .returning(Token)
            )
        )
        return rows

    def tombstone(self, rows: Iterable[Token]) -> None:
        """Overwrite the Redis keys of expired tokens with tombstones (never a DEL)."""
        now = time.time()
        rows = list(rows)

        def fill(pipe: Any) -> None:
            for row in rows:
                remaining = int(row.expires_at.timestamp() - now)
                pipe.set(self.key(row.digest), TOMBSTONE, ex=max(MIN_TOMBSTONE_TTL, remaining))

        pipelined(self.redis, fill)


def well_formed(token: str | None) -> TypeGuard[str]:
    """Tell whether a presented token could be one (counting a malformed one): not empty and
    at most 512 characters; anything else is refused without a lookup."""
    if token and len(token) <= 512:
        return True
    VALIDATIONS.inc("malformed")
    return False


def _counted_miss(outcome: str, record: TokenRecord | None) -> TokenRecord | None:
    """Count a lookup that SQL answered (a Redis miss), and return its result."""
    CACHE_MISSES.inc(outcome)
    VALIDATIONS.inc(outcome)
    return record
