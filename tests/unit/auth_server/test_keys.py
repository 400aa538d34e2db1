"""The signing keys' schedule (next, current, retired, expired), and their encryption."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

from auth_server.keys import (
    CURRENT,
    ES256,
    EXPIRED,
    ID_TOKEN_TTL,
    LEEWAY,
    NEXT,
    RETIRED,
    RS256,
    new_row,
    states,
    vault,
)
from common.models import SigningKey

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SECRET = "the instance's secret"


def key(alg: str, activates: datetime, created: datetime | None = None) -> SigningKey:
    return new_row(alg, SECRET, now=created or activates, activates_at=activates)


def state_of(rows: list[SigningKey], now: datetime) -> dict[str, str]:
    return {k.kid: k.state for k in states(rows, now)}


def test_a_key_is_next_then_current_then_retired_then_expired() -> None:
    old = key(ES256, T0)
    new = key(ES256, T0 + timedelta(days=30), created=T0 + timedelta(days=29))
    rows = [old, new]
    assert state_of(rows, T0 + timedelta(days=29)) == {old.kid: CURRENT, new.kid: NEXT}
    switch = T0 + timedelta(days=30)
    assert state_of(rows, switch) == {old.kid: RETIRED, new.kid: CURRENT}
    # Retired, the old key is published until the last token it signed has expired.
    last = switch + timedelta(seconds=ID_TOKEN_TTL + LEEWAY)
    assert state_of(rows, last - timedelta(seconds=1))[old.kid] == RETIRED
    assert state_of(rows, last)[old.kid] == EXPIRED
    found = {k.kid: k for k in states(rows, switch)}
    assert found[old.kid].retires_at == switch and found[new.kid].retires_at is None
    assert found[old.kid].published and found[new.kid].published


def test_each_algorithm_has_its_own_schedule() -> None:
    es = key(ES256, T0)
    rs = key(RS256, T0)
    es_next = key(ES256, T0 + timedelta(days=1))
    assert state_of([es, rs, es_next], T0 + timedelta(days=1)) == {
        es.kid: RETIRED,
        rs.kid: CURRENT,
        es_next.kid: CURRENT,
    }


def test_the_public_half_only_is_published_and_the_private_half_is_encrypted() -> None:
    for alg, cls in ((ES256, ECKey), (RS256, RSAKey)):
        row = key(alg, T0)
        assert row.public_jwk["kid"] == row.kid and row.public_jwk["alg"] == alg
        assert not {"d", "p", "q"} & set(row.public_jwk)
        assert "PRIVATE KEY" not in row.private_encrypted
        private = cls.import_key(vault(SECRET).decrypt(row.private_encrypted.encode()))
        token = jwt.encode({"alg": alg}, {"sub": "x"}, private)
        public = cls.import_key(row.public_jwk)
        assert jwt.decode(token, public).claims == {"sub": "x"}


def test_another_secret_does_not_decrypt() -> None:
    from cryptography.fernet import InvalidToken

    row = key(ES256, T0)
    with pytest.raises(InvalidToken):
        vault("another secret").decrypt(row.private_encrypted.encode())


def test_the_rotation_is_at_least_a_day() -> None:
    from common.settings import AuthSettings, SettingsError

    assert AuthSettings(secret_key="x").signing_key_rotation == 30 * 86_400
    with pytest.raises(SettingsError, match="SIGNING_KEY_ROTATION"):
        AuthSettings(secret_key="x", signing_key_rotation=3600)
