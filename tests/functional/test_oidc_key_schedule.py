"""The signing keys' schedule on a real database and Redis: the next key is made and published
ahead of its turn, a retired key leaves the JWKS once its tokens have expired and is then
deleted, and a key that no longer decrypts (SECRET_KEY changed) is replaced."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from auth_server.keys import (
    CURRENT,
    ES256,
    EXPIRED,
    ID_TOKEN_TTL,
    LEAD,
    LEEWAY,
    NEXT,
    RETIRED,
    RS256,
    KeyRing,
)
from common.models import SigningKey
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.oidc_support import forget_cached_keys


@pytest.fixture
def ring(clean_db: Any, stores: Stores, auth_settings: AuthSettings) -> KeyRing:
    forget_cached_keys(stores, auth_settings)
    return KeyRing(auth_settings, stores)


def by_state(ring: KeyRing, now: datetime) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k in ring.key_states(now):
        out.setdefault(k.state, []).append(k.alg)
    return {state: sorted(algs) for state, algs in out.items()}


def test_the_next_key_is_made_ahead_and_the_old_one_leaves_after_its_tokens(
    ring: KeyRing, auth_settings: AuthSettings, sessions: sessionmaker[Session]
) -> None:
    t0 = datetime.now(UTC)
    rotation = timedelta(seconds=auth_settings.signing_key_rotation)
    first = {k.alg: k.kid for k in ring.key_states(t0)}
    assert by_state(ring, t0) == {CURRENT: [ES256, RS256]}
    # Not yet due: nothing new.
    assert by_state(ring, t0 + rotation - timedelta(seconds=LEAD + 60)) == {CURRENT: [ES256, RS256]}
    # Due: the next keys are made, published from now, signing when the rotation ends.
    due = t0 + rotation - timedelta(seconds=LEAD)
    assert by_state(ring, due) == {CURRENT: [ES256, RS256], NEXT: [ES256, RS256]}
    nxt = {k.alg: k for k in ring.key_states(due) if k.state == NEXT}
    assert all(k.activates_at == t0 + rotation for k in nxt.values())
    assert all(k.activates_at - k.created_at >= timedelta(seconds=LEAD) for k in nxt.values())
    assert ring.signing_key(ES256, due)[0] == first[ES256]
    # The rotation: the next keys sign, the old ones stay published while their tokens live.
    switch = t0 + rotation
    assert by_state(ring, switch) == {CURRENT: [ES256, RS256], RETIRED: [ES256, RS256]}
    assert ring.signing_key(RS256, switch)[0] == nxt[RS256].kid
    published = {k["kid"] for k in ring.jwks(switch)["keys"]}
    assert set(first.values()) <= published
    gone = switch + timedelta(seconds=ID_TOKEN_TTL + LEEWAY)
    assert by_state(ring, gone)[EXPIRED] == [ES256, RS256]
    assert not set(first.values()) & {k["kid"] for k in ring.jwks(gone)["keys"]}
    # The next rotation deletes them.
    ring.key_states(switch + rotation - timedelta(seconds=LEAD - 60))
    with sessions() as s:
        kept = set(s.scalars(select(SigningKey.kid)))
    assert not set(first.values()) & kept


def test_keys_that_no_longer_decrypt_are_replaced(
    ring: KeyRing, auth_settings: AuthSettings, stores: Stores
) -> None:
    old_kid, _ = ring.signing_key(ES256)
    changed = KeyRing(dataclasses.replace(auth_settings, secret_key="a new secret"), stores)
    new_kid, _ = changed.signing_key(ES256)
    assert new_kid != old_kid
    states = {k.kid: k.state for k in changed.key_states()}
    assert states[new_kid] == CURRENT and states[old_kid] == RETIRED
