"""The pure parts of refresh tokens: who gets one, the grace pairs' sealing, the settings."""

from __future__ import annotations

import base64
import time
from typing import Any

import orjson
import pytest
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from auth_server.grace_pairs import GracePairs, legacy_grace_cipher
from auth_server.keys import vault
from auth_server.refresh import Presented, short_lived, wants_refresh
from common.models import Application
from common.settings import MAX_REFRESH_GRACE, AuthSettings, SettingsError

SECRET = "the instance's secret"


class FakeRedis:
    """The two commands the grace pairs use, in a dict (with expiry)."""

    def __init__(self) -> None:
        self.values: dict[str, tuple[bytes, float]] = {}

    def set(self, key: str, value: bytes, ex: int) -> None:
        self.values[key] = (value, time.monotonic() + ex)

    def execute_command(self, name: str, key: str, value: bytes, ex: str, seconds: int) -> None:
        assert (name, ex) == ("SET", "EX")
        self.set(key, value, seconds)

    def get(self, key: str) -> bytes | None:
        value, until = self.values.get(key, (b"", 0.0))
        return value if until > time.monotonic() else None


def pairs(redis: Any, seconds: int = 5, secret: str = SECRET) -> GracePairs:
    return GracePairs(redis, prefix="t", secret_key=secret, seconds=seconds)


@pytest.mark.parametrize(
    ("registered", "user", "scope", "grant", "expected"),
    [
        (True, object(), "offline_access", "authorization_code", True),
        (True, object(), "openid offline_access", "password", True),
        (True, object(), "openid", "authorization_code", False),  # no offline access asked
        (True, object(), "", "refresh_token", True),  # a refresh continues its family
        (True, None, "offline_access", "client_credentials", False),  # no user: no refresh
        (False, object(), "offline_access", "authorization_code", False),  # the reference's way
        (False, object(), "", "refresh_token", True),  # a family outlives the registration
    ],
)
def test_who_gets_a_refresh_token(
    registered: bool, user: Any, scope: str, grant: str, expected: bool
) -> None:
    app = Application(refresh_tokens=registered)
    assert wants_refresh(app, user, scope, grant) is expected


def test_who_gets_an_hour_long_access_token() -> None:
    registered, reference = Application(refresh_tokens=True), Application(refresh_tokens=False)
    assert short_lived(registered, object(), "password")
    assert not short_lived(registered, None, "client_credentials")  # XAPP tokens stay
    assert not short_lived(reference, object(), "authorization_code")
    assert short_lived(reference, object(), "refresh_token")


def test_a_pair_is_kept_sealed_and_recalled() -> None:
    redis = FakeRedis()
    body = {"access_token": "a" * 43, "refresh_token": "r" * 43, "expires_in": 3600}
    pairs(redis).remember("d" * 64, body)
    (sealed, _), *_ = redis.values.values()
    assert b"a" * 43 not in sealed and b"r" * 43 not in sealed  # encrypted at rest
    assert pairs(redis).recall("d" * 64) == body
    assert pairs(redis).recall("e" * 64) is None
    assert pairs(redis, secret="another instance").recall("d" * 64) is None  # not our key


def test_the_state_of_the_first_request_is_not_kept() -> None:
    redis = FakeRedis()
    pairs(redis).remember("d" * 64, {"access_token": "a", "state": "first request's"})
    assert pairs(redis).recall("d" * 64) == {"access_token": "a"}


def test_no_grace_period_keeps_nothing() -> None:
    redis = FakeRedis()
    pairs(redis, seconds=0).remember("d" * 64, {"access_token": "x"})
    assert redis.values == {}
    assert pairs(redis, seconds=0).recall("d" * 64) is None


def test_garbage_in_redis_is_no_pair() -> None:
    redis = FakeRedis()
    key = pairs(redis).key("d" * 64)
    for garbage in (b"not a sealed pair", b"\x01", b"\x01" + b"\x00" * 40):
        redis.set(key, garbage, ex=5)
        assert pairs(redis).recall("d" * 64) is None
    redis.set(key, pairs(redis).seal_gcm("d" * 64, b"[1, 2]"), ex=5)
    assert pairs(redis).recall("d" * 64) is None  # sealed, but no pair


def test_a_pair_opens_under_its_own_key_within_the_grace_period_only() -> None:
    redis = FakeRedis()
    kept = pairs(redis, seconds=5)
    sealed = kept.seal_gcm("d" * 64, b'{"access_token": "a"}')
    assert kept.open("d" * 64, sealed) == b'{"access_token": "a"}'
    assert kept.open("e" * 64, sealed) is None  # moved to another token's key
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    assert kept.open("d" * 64, tampered) is None
    sealed_at = int.from_bytes(sealed[1:9], "big")
    earlier = sealed[:1] + (sealed_at - 1).to_bytes(8, "big") + sealed[9:]
    assert kept.open("d" * 64, earlier) is None  # its time is authenticated too
    old = kept.seal_gcm("d" * 64, b"{}", now=int(time.time()) - 6)
    assert kept.open("d" * 64, old) is None  # sealed before the grace period
    redis.set(kept.key("d" * 64), legacy_grace_cipher(SECRET).encrypt(b'{"a": 1}'), ex=5)
    assert pairs(redis).recall("d" * 64) == {"a": 1}  # sealed with Fernet, before GCM


def previous_release_cipher(secret: str) -> Fernet:
    """The grace pairs' cipher as the release before AES-GCM derives it (kept here verbatim)."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=PREVIOUS_INFO)
    return Fernet(base64.urlsafe_b64encode(hkdf.derive(secret.encode())))


PREVIOUS_INFO = b"artcat refresh token grace pairs"


def test_the_previous_release_opens_the_pairs_written_now() -> None:
    """A rolling deploy: a retry that reaches a process of the release before finds the pair
    (its recall, verbatim: Fernet's decrypt with the grace period as TTL, then JSON)."""
    redis = FakeRedis()
    body = {"access_token": "a" * 43, "refresh_token": "r" * 43, "expires_in": 3600}
    pairs(redis).remember("d" * 64, body)
    raw = redis.get(pairs(redis).key("d" * 64))
    assert raw is not None
    assert orjson.loads(previous_release_cipher(SECRET).decrypt(raw, ttl=5)) == body


def test_the_pairs_the_previous_release_wrote_open_now() -> None:
    redis = FakeRedis()
    body = {"access_token": "a" * 43, "refresh_token": "r" * 43}
    sealed = previous_release_cipher(SECRET).encrypt(orjson.dumps(body))
    redis.set(pairs(redis).key("d" * 64), sealed, ex=5)  # as it remembered them
    assert pairs(redis).recall("d" * 64) == body
    late = previous_release_cipher(SECRET).encrypt_at_time(orjson.dumps(body), int(time.time()) - 6)
    redis.set(pairs(redis).key("d" * 64), late, ex=5)
    assert pairs(redis).recall("d" * 64) is None  # past the grace period


def test_a_pair_written_with_aes_gcm_opens_too() -> None:
    """What a later release may write (``WRITES_GCM``) opens in this one."""
    redis = FakeRedis()
    body = {"access_token": "a" * 43}
    pairs_gcm = GracePairs(redis, prefix="t", secret_key=SECRET, seconds=5, writes_gcm=True)
    pairs_gcm.remember("d" * 64, body)
    raw = redis.get(pairs(redis).key("d" * 64))
    assert raw is not None and raw[:1] == b"\x01"
    assert pairs(redis).recall("d" * 64) == body


def test_the_grace_key_is_not_the_signing_keys_key() -> None:
    sealed = legacy_grace_cipher(SECRET).encrypt(b"pair")
    with pytest.raises(InvalidToken):
        vault(SECRET).decrypt(sealed)


def test_a_refreshed_id_token_repeats_the_sign_in_but_no_nonce() -> None:
    presented = Presented("d", "f", "app", "user", "openid", 1_700_000_000)
    assert presented.get_nonce() is None
    assert presented.get_auth_time() == 1_700_000_000 and presented.get_amr() == ["pwd"]
    no_sign_in = Presented("d", "f", "app", "user", "offline_access", None)
    assert no_sign_in.get_amr() is None


@pytest.mark.parametrize(
    "values",
    [
        {"refresh_grace_period": MAX_REFRESH_GRACE + 1},
        {"refresh_grace_period": -1},
        {"refresh_token_ttl": 0},
        {"refresh_access_token_ttl": 10},
    ],
)
def test_refresh_settings_are_checked(values: dict[str, int], tmp_path: Any) -> None:
    with pytest.raises(SettingsError):
        AuthSettings(instance_dir=tmp_path, secret_key="k", **values)


def test_refresh_settings_defaults(tmp_path: Any) -> None:
    settings = AuthSettings(instance_dir=tmp_path, secret_key="k")
    assert 0 < settings.refresh_grace_period <= 10
    assert settings.refresh_access_token_ttl == 3600
    assert settings.access_token_ttl == 60 * 86_400  # the reference API's lifetimes stay
