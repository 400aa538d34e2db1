"""The pairs a refresh's rotation keeps for the grace period: the new access and refresh tokens
it issued, sealed in Redis under a key derived from SECRET_KEY, so that the same client
presenting the same token again within ``REFRESH_GRACE_PERIOD`` seconds gets the same pair back
(``auth_server.refresh``: a client that refreshed twice at once is not taken for a thief)."""

from __future__ import annotations

import base64
import functools
import os
import time
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from redis import Redis

_GRACE_INFO = b"artcat refresh token grace pairs"  # Fernet's key (pairs sealed before GCM)
_GRACE_INFO_GCM = b"artcat refresh token grace pairs, AES-256-GCM"
_SEALED = b"\x01"  # the format byte of a pair sealed with AES-GCM (see GracePairs)
_CLOCK_SKEW = 60  # seconds a pair sealed by a process whose clock runs ahead still opens
# Whether grace pairs are written with AES-GCM rather than Fernet (see GracePairs): not while a
# release that opens Fernet's only may run beside this one.
WRITES_GCM = False


def _derive(secret_key: str, info: bytes) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info)
    return hkdf.derive(secret_key.encode())


@functools.lru_cache(maxsize=4)
def grace_cipher(secret_key: str) -> AESGCM:
    """Return the cipher of the pairs kept for the grace period (AES-256-GCM), its key derived
    from SECRET_KEY (once per key: every refresh needs it)."""
    return AESGCM(_derive(secret_key, _GRACE_INFO_GCM))


@functools.lru_cache(maxsize=4)
def legacy_grace_cipher(secret_key: str) -> Fernet:
    """Return the cipher of the pairs sealed before AES-GCM (Fernet), to open those still kept."""
    return Fernet(base64.urlsafe_b64encode(_derive(secret_key, _GRACE_INFO)))


class GracePairs:
    """The pairs just issued by rotations, encrypted in Redis for the grace period only.

    Two formats open: Fernet's, and AES-256-GCM's (``seal_gcm``: a format byte, when it was
    sealed, Unix seconds, 8 bytes, a random nonce, 12 bytes, then the ciphertext and its tag;
    the format byte, the time and the token's digest, its Redis key's, are authenticated with
    it, so a pair opens only under the key it was kept under and only for the grace period).

    Pairs are written with Fernet (``WRITES_GCM``): a rolling deploy runs this release beside
    the one before, which opens Fernet's only, and a retry that reaches it must find the pair
    its first request was given (else it takes the retry for a reuse and revokes the family).
    A later release may write AES-GCM (7 to 1.4 microseconds a pair), which this one opens.
    """

    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str,
        secret_key: str,
        seconds: int,
        writes_gcm: bool | None = None,
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.secret_key = secret_key
        self.cipher = grace_cipher(secret_key)
        self.seconds = seconds
        self.writes_gcm = WRITES_GCM if writes_gcm is None else writes_gcm

    def key(self, old_digest: str) -> str:
        """Return the Redis key of the pair bought with the token of ``old_digest``."""
        return f"{self.prefix}:rt-grace:{old_digest}"

    def seal(self, old_digest: str, plain: bytes) -> bytes:
        """Return ``plain`` sealed for the key of ``old_digest``, in the format written."""
        if self.writes_gcm:
            return self.seal_gcm(old_digest, plain)
        return legacy_grace_cipher(self.secret_key).encrypt(plain)

    def seal_gcm(self, old_digest: str, plain: bytes, now: int | None = None) -> bytes:
        """Return ``plain`` sealed with AES-GCM for the key of ``old_digest`` (at ``now``, Unix
        seconds)."""
        header = _SEALED + (int(time.time()) if now is None else now).to_bytes(8, "big")
        nonce = os.urandom(12)
        return header + nonce + self.cipher.encrypt(nonce, plain, header + old_digest.encode())

    def open(self, old_digest: str, sealed: bytes) -> bytes | None:
        """Return what ``seal`` sealed for the key of ``old_digest`` while the grace lasts, else
        None (another key's, too old, tampered with, or not a sealed pair)."""
        if sealed[:1] != _SEALED:
            try:
                return legacy_grace_cipher(self.secret_key).decrypt(sealed, ttl=self.seconds)
            except InvalidToken:
                return None
        header, nonce, data = sealed[:9], sealed[9:21], sealed[21:]
        sealed_at, now = int.from_bytes(header[1:], "big"), time.time()
        if len(nonce) != 12 or not now - self.seconds <= sealed_at <= now + _CLOCK_SKEW:
            return None
        try:
            return self.cipher.decrypt(nonce, data, header + old_digest.encode())
        except InvalidTag:
            return None

    def command(self, old_digest: str, body: dict[str, Any]) -> tuple[Any, ...] | None:
        """Return the Redis command that keeps the pair bought with the token of
        ``old_digest`` for the grace period (None: there is none)."""
        if self.seconds <= 0:
            return None
        pair = {name: value for name, value in body.items() if name != "state"}  # the request's
        sealed = self.seal(old_digest, orjson.dumps(pair))
        return ("SET", self.key(old_digest), sealed, "EX", self.seconds)

    def remember(self, old_digest: str, body: dict[str, Any]) -> None:
        """Keep the pair bought with the token of ``old_digest`` for the grace period."""
        command = self.command(old_digest, body)
        if command is not None:
            self.redis.execute_command(*command)

    def recall(self, old_digest: str) -> dict[str, Any] | None:
        """Return the pair bought with the token of ``old_digest``, while the grace lasts."""
        if self.seconds <= 0:
            return None
        raw: bytes | None = self.redis.get(self.key(old_digest))  # type: ignore[assignment]
        plain = self.open(old_digest, raw) if raw is not None else None
        if plain is None:
            return None
        try:
            body = orjson.loads(plain)
        except orjson.JSONDecodeError:
            return None
        return body if isinstance(body, dict) else None
