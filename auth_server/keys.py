"""The keys that sign ID tokens: kept in the database, rotated on a schedule, seen at once.

Each algorithm (ES256, the default, and RS256 for the applications that ask for it) has one
current key. ``SIGNING_KEY_ROTATION`` after a key started signing, the next one takes over; it
is created ``LEAD`` earlier and published in the JWKS from then on, so that a client whose
cached JWKS is as old as the JWKS response may be kept (``JWKS_MAX_AGE``) already knows it. A
key that stopped signing stays published until every ID token it signed has expired.

The private half of a key is stored encrypted (Fernet) under a key derived from SECRET_KEY
with HKDF; a key that no longer decrypts (the secret changed) never signs, and a new one is
made in its place.

Every process keeps the keys in memory, filed under a version in Redis that any change bumps
(as the catalog's versions are): a rotation is seen by every process on its next request.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from joserfc.jwk import ECKey, KeySetSerialization, RSAKey
from redis.exceptions import RedisError
from sqlalchemy import delete, select

from common.models import SigningKey
from common.redis_exchange import exchange_of
from common.settings import AuthSettings
from common.stores import Stores

log = logging.getLogger("artcat.keys")

ES256 = "ES256"
RS256 = "RS256"
# The first is the default of every application that does not ask for another.
ALGORITHMS = (ES256, RS256)
# How long a JWKS response may be cached, and so how long before it signs a key is published.
JWKS_MAX_AGE = 3600
LEAD = 2 * JWKS_MAX_AGE
# How long an ID token is valid, and the clock skew its verifiers may allow on top.
ID_TOKEN_TTL = 3600
LEEWAY = 300
NEXT, CURRENT, RETIRED, EXPIRED = "next", "current", "retired", "expired"
_HKDF_INFO = b"artcat id token signing keys"
Key = ECKey | RSAKey


@dataclass(frozen=True)
class KeyState:
    """A key, and where it stands at a moment: next, current, retired (still published) or
    expired."""

    kid: str
    alg: str
    state: str
    created_at: datetime
    activates_at: datetime
    retires_at: datetime | None  # when the next key of its algorithm takes over
    unpublished_at: datetime | None  # when it leaves the JWKS

    @property
    def published(self) -> bool:
        """Tell whether the JWKS lists this key."""
        return self.state != EXPIRED


def _now() -> datetime:
    """Return the time to the microsecond: a forced rotation in the second a key was made
    must still come after it."""
    return datetime.now(UTC)


def vault(secret_key: str) -> Fernet:
    """Return the cipher of the keys' private halves, derived from the instance's secret."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO)
    return Fernet(base64.urlsafe_b64encode(hkdf.derive(secret_key.encode())))


def generate(alg: str) -> Key:
    """Return a new private key for ``alg``."""
    if alg == ES256:
        return ECKey.generate_key("P-256", private=True)
    if alg == RS256:
        return RSAKey.generate_key(2048, private=True)
    raise ValueError(f"unsupported signing algorithm: {alg!r}")


def new_row(alg: str, secret_key: str, *, now: datetime, activates_at: datetime) -> SigningKey:
    """Return a new key of ``alg``, its private half encrypted, signing from ``activates_at``."""
    key = generate(alg)
    kid = key.thumbprint()
    public = {**key.as_dict(private=False), "kid": kid, "alg": alg, "use": "sig"}
    pem = key.as_pem(private=True)
    return SigningKey(
        kid=kid,
        alg=alg,
        public_jwk=public,
        private_encrypted=vault(secret_key).encrypt(pem).decode(),
        created_at=now,
        activates_at=activates_at,
    )


def states(rows: list[SigningKey], now: datetime) -> list[KeyState]:
    """Return where every key stands at ``now``, by algorithm, oldest first."""
    out: list[KeyState] = []
    for alg in sorted({r.alg for r in rows}):
        ordered = sorted(
            (r for r in rows if r.alg == alg), key=lambda r: (r.activates_at, r.created_at, r.kid)
        )
        for i, row in enumerate(ordered):
            later = [r.activates_at for r in ordered[i + 1 :] if r.activates_at > row.activates_at]
            retires = later[0] if later else None
            # Two keys activating at the same moment: the last one made signs.
            if i + 1 < len(ordered) and ordered[i + 1].activates_at == row.activates_at:
                retires = row.activates_at
            unpublished = retires + timedelta(seconds=ID_TOKEN_TTL + LEEWAY) if retires else None
            if row.activates_at > now:
                state = NEXT
            elif retires is None or retires > now:
                state = CURRENT
            elif unpublished is not None and unpublished > now:
                state = RETIRED
            else:
                state = EXPIRED
            out.append(
                KeyState(
                    row.kid, alg, state, row.created_at, row.activates_at, retires, unpublished
                )
            )
    return out


def version_key(prefix: str) -> str:
    """Return the Redis key of the keys' version (bumped by every change)."""
    return f"{prefix}:signing_keys:version"


class KeyRing:
    """The signing keys as this process knows them, reloaded when their version moves."""

    def __init__(self, settings: AuthSettings, stores: Stores) -> None:
        self.settings = settings
        self.stores = stores
        self._lock = threading.Lock()
        self._version: bytes | None = None
        self._loaded = False
        self._rows: list[SigningKey] = []
        self._private: dict[str, Key | None] = {}
        # The states last worked out: for these rows, until the first moment one changes.
        self._memo: tuple[list[SigningKey], datetime, list[KeyState]] | None = None

    def _current_version(self) -> bytes | None:
        try:  # every ID token asks: at a command's CPU cost (common.redis_exchange)
            key = version_key(self.settings.redis_prefix)
            value = exchange_of(self.stores.redis).run([("GET", key)])[0]
        except RedisError:
            return None  # unknown: read the keys from the database again
        return value if isinstance(value, bytes) else b"0"

    def announce(self) -> None:
        """Tell every process the keys changed (call after the commit)."""
        with contextlib.suppress(RedisError):
            self.stores.redis.incr(version_key(self.settings.redis_prefix))

    def _load(self) -> list[SigningKey]:
        version = self._current_version()
        with self._lock:
            if self._loaded and version is not None and version == self._version:
                return self._rows
        with self.stores.sessions() as db:
            rows = list(db.scalars(select(SigningKey)))
            db.expunge_all()
        with self._lock:
            self._rows, self._version, self._loaded = rows, version, True
        return rows

    def key_states(self, now: datetime | None = None) -> list[KeyState]:
        """Return every key's state, making the keys that are due first."""
        now = now or _now()
        rows = self._load()
        memo = self._memo
        if memo is not None and memo[0] is rows and now < memo[1]:
            return memo[2]  # every ID token asks: the states stand until their next moment
        if self._due(rows, now):
            self._make_due(now)
            rows = self._load()
        found = states(rows, now)
        self._memo = (rows, self._stable_until(found, now), found)
        return found

    def _stable_until(self, found: list[KeyState], now: datetime) -> datetime:
        """Return the first moment after ``now`` at which a key's state changes or a new key
        falls due (a minute from now at the latest)."""
        rotation = timedelta(seconds=self.settings.signing_key_rotation)
        moments = [now + timedelta(seconds=60)]
        for k in found:
            moments += [t for t in (k.activates_at, k.retires_at, k.unpublished_at) if t]
            if k.state == CURRENT:
                moments.append(k.activates_at + rotation - timedelta(seconds=LEAD))
        return min(t for t in moments if t > now)

    def _due(self, rows: list[SigningKey], now: datetime) -> bool:
        """Tell whether an algorithm lacks a usable current key, or its next key is due."""
        found = states(rows, now)
        by_kid = {r.kid: r for r in rows}
        rotation = timedelta(seconds=self.settings.signing_key_rotation)
        for alg in ALGORITHMS:
            mine = [k for k in found if k.alg == alg]
            current = [
                k for k in mine if k.state == CURRENT and self._decrypt(by_kid[k.kid]) is not None
            ]
            if not current:
                return True
            due = current[-1].activates_at + rotation - timedelta(seconds=LEAD)
            if now >= due and not any(k.state == NEXT for k in mine):
                return True
        return False

    def _make_due(self, now: datetime) -> None:
        """Make the keys that are due (in one transaction), then announce them."""
        rotation = timedelta(seconds=self.settings.signing_key_rotation)
        with self.stores.sessions() as db, db.begin():
            rows = list(db.scalars(select(SigningKey).with_for_update()))
            found = states(rows, now)
            by_kid = {r.kid: r for r in rows}
            expired = [k.kid for k in found if k.state == EXPIRED]
            if expired:
                db.execute(delete(SigningKey).where(SigningKey.kid.in_(expired)))
            for alg in ALGORITHMS:
                mine = [k for k in found if k.alg == alg]
                current = [
                    k
                    for k in mine
                    if k.state == CURRENT and self._decrypt(by_kid[k.kid]) is not None
                ]
                if not current:
                    # Nothing can sign: a key that signs at once (no client can know it yet).
                    db.add(new_row(alg, self.settings.secret_key, now=now, activates_at=now))
                elif not any(k.state == NEXT for k in mine):
                    starts = current[-1].activates_at + rotation
                    if now >= starts - timedelta(seconds=LEAD):
                        activates = max(starts, now + timedelta(seconds=LEAD))
                        db.add(
                            new_row(alg, self.settings.secret_key, now=now, activates_at=activates)
                        )
        self.announce()

    def rotate(self, *, at_once: bool = False, now: datetime | None = None) -> list[str]:
        """Make a new key of every algorithm; return their kids.

        It signs after LEAD (published first, so clients with a cached JWKS know it), or at
        once with ``at_once`` (a key that must stop signing now). A next key not yet signing is
        dropped: it never signed anything.
        """
        now = now or _now()
        activates = now if at_once else now + timedelta(seconds=LEAD)
        made: list[str] = []
        with self.stores.sessions() as db, db.begin():
            rows = list(db.scalars(select(SigningKey).with_for_update()))
            pending = [k.kid for k in states(rows, now) if k.state == NEXT]
            if pending:
                db.execute(delete(SigningKey).where(SigningKey.kid.in_(pending)))
            for alg in ALGORITHMS:
                row = new_row(alg, self.settings.secret_key, now=now, activates_at=activates)
                db.add(row)
                made.append(row.kid)
        self.announce()
        return made

    def private_key(self, kid: str) -> Key | None:
        """Return the private key ``kid`` (None when unknown or it no longer decrypts)."""
        with self._lock:
            row = next((r for r in self._rows if r.kid == kid), None)
        return None if row is None else self._decrypt(row)

    def _decrypt(self, row: SigningKey) -> Key | None:
        """Return the private half of ``row`` (decrypted once per process), None if it fails."""
        with self._lock:
            if row.kid in self._private:
                return self._private[row.kid]
        key: Key | None = None
        try:
            pem = vault(self.settings.secret_key).decrypt(row.private_encrypted.encode())
            key = (ECKey if row.alg == ES256 else RSAKey).import_key(pem)
        except (InvalidToken, ValueError):
            log.warning("signing key %s does not decrypt with SECRET_KEY: not used", row.kid)
        with self._lock:
            self._private[row.kid] = key
        return key

    def signing_key(self, alg: str, now: datetime | None = None) -> tuple[str, Key]:
        """Return the kid and private key that sign with ``alg`` now."""
        found = self.key_states(now)
        for state in reversed(found):
            if state.alg == alg and state.state == CURRENT:
                key = self.private_key(state.kid)
                if key is not None:
                    return state.kid, key
        raise LookupError(f"no usable {alg} signing key")

    def jwks(self, now: datetime | None = None) -> KeySetSerialization:
        """Return the JWK set of every published key."""
        found = {k.kid for k in self.key_states(now) if k.published}
        keys: list[Any] = [dict(r.public_jwk) for r in self._rows if r.kid in found]
        return {"keys": keys}
