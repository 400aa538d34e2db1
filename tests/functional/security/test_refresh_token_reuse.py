"""Attacks on refresh tokens, over real HTTP: a stolen refresh token used after the client rotated
it (RFC 9700 4.14.2) revokes the whole family; concurrent refreshes by the client within the
grace period get one pair; another client, an expired token, a refresh token as a bearer token
and offline access the user never granted all fail."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import requests
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from common.ids import utcnow
from common.models import RefreshFamily, RefreshToken
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.catalog_support import race
from tests.functional.oauth_support import (
    World,
    assert_oauth_error,
    code_params,
    get_artists,
    make_code,
    post,
    refresh,
    refresh_world,
    serve_auth,
    token_url,
)
from tests.servers import LiveServer


@pytest.fixture
def world(clean_db: Any, sessions: sessionmaker[Session], auth_settings: AuthSettings) -> World:
    """A user and an application registered for refresh tokens."""
    return refresh_world(sessions, auth_settings)


@pytest.fixture(scope="module")
def short_grace_server(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server with a one-second grace period."""
    with serve_auth(replace(auth_settings, refresh_grace_period=1), stores) as live:
        yield live


def first_pair(live: LiveServer, w: World) -> dict[str, Any]:
    """The client's first pair (the credentials grant with offline_access)."""
    r = post(live, w.password_grant(scope="offline_access"))
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    assert body["refresh_token"]
    return body


def family_revoked(sessions: sessionmaker[Session]) -> bool:
    """Tell whether the (one) family is revoked."""
    with sessions() as s:
        return s.scalars(select(RefreshFamily.revoked_at)).one() is not None


def test_a_stolen_token_used_after_rotation_revokes_the_family(
    no_grace_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
) -> None:
    stolen = first_pair(no_grace_server, world)
    client = refresh(no_grace_server, world, stolen["refresh_token"]).json()  # the client rotates
    # The attacker replays the stolen (rotated) token: refused, and the family ends.
    assert_oauth_error(
        refresh(no_grace_server, world, stolen["refresh_token"]), 400, "invalid_grant"
    )
    assert family_revoked(sessions)
    # Every access token of the family stops at the resource server at once, and the client's
    # own current refresh token is dead too (it must sign the user in again).
    assert get_artists(resource_server, stolen["access_token"]) == 401
    assert get_artists(resource_server, client["access_token"]) == 401
    assert_oauth_error(
        refresh(no_grace_server, world, client["refresh_token"]), 400, "invalid_grant"
    )


def test_the_thief_rotating_first_loses_the_family_too(
    no_grace_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
) -> None:
    pair = first_pair(no_grace_server, world)
    thief = refresh(no_grace_server, world, pair["refresh_token"]).json()
    # The client, later, uses the token it holds: a reuse, which ends the thief's pair.
    assert_oauth_error(refresh(no_grace_server, world, pair["refresh_token"]), 400, "invalid_grant")
    assert get_artists(resource_server, thief["access_token"]) == 401
    assert_oauth_error(
        refresh(no_grace_server, world, thief["refresh_token"]), 400, "invalid_grant"
    )


def test_concurrent_refreshes_within_the_grace_period_get_the_same_pair(
    auth_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
) -> None:
    assert 0 < auth_settings.refresh_grace_period <= 10
    pair = first_pair(auth_server, world)
    data = {**world.creds, "grant_type": "refresh_token", "refresh_token": pair["refresh_token"]}

    def send(http: requests.Session, _n: int) -> requests.Response:
        return http.post(token_url(auth_server), data=data, timeout=30)

    answers = race(auth_server.url, 4, send)
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    bodies = [a.json() for a in answers]
    assert len({b["access_token"] for b in bodies}) == 1
    assert len({b["refresh_token"] for b in bodies}) == 1
    assert not family_revoked(sessions)
    with sessions() as s:  # one rotation: the first token and the one new token
        assert s.scalar(select(func.count()).select_from(RefreshToken)) == 2
    assert get_artists(resource_server, bodies[0]["access_token"]) == 200
    assert refresh(auth_server, world, bodies[0]["refresh_token"]).status_code == 200


def test_after_the_grace_period_a_reuse_revokes(
    short_grace_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
) -> None:
    pair = first_pair(short_grace_server, world)
    new = refresh(short_grace_server, world, pair["refresh_token"])
    again = refresh(short_grace_server, world, pair["refresh_token"])  # within the second
    assert again.status_code == 200 and again.json() == new.json()
    time.sleep(1.5)
    late = refresh(short_grace_server, world, pair["refresh_token"])
    assert_oauth_error(late, 400, "invalid_grant")
    assert family_revoked(sessions)
    assert get_artists(resource_server, new.json()["access_token"]) == 401


def test_concurrent_refreshes_without_a_grace_period_end_the_family(
    no_grace_server: LiveServer, world: World, sessions: sessionmaker[Session]
) -> None:
    pair = first_pair(no_grace_server, world)
    data = {**world.creds, "grant_type": "refresh_token", "refresh_token": pair["refresh_token"]}

    def send(http: requests.Session, _n: int) -> int:
        return http.post(token_url(no_grace_server), data=data, timeout=30).status_code

    statuses = race(no_grace_server.url, 3, send)
    assert sorted(statuses) == [200, 400, 400]  # one rotation; the others are reuses
    assert family_revoked(sessions)


def test_another_client_cannot_use_the_token(
    auth_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
) -> None:
    other = refresh_world(sessions, auth_settings)
    pair = first_pair(auth_server, world)
    stolen = refresh(auth_server, other, pair["refresh_token"])
    assert_oauth_error(stolen, 400, "invalid_grant")
    # Nor can it spend the token for its owner: the client's refresh still works.
    assert not family_revoked(sessions)
    assert refresh(auth_server, world, pair["refresh_token"]).status_code == 200
    # Without client authentication, a confidential client's token buys nothing.
    bare = post(
        auth_server,
        {"client_id": world.client_id, "grant_type": "refresh_token", "refresh_token": "x" * 43},
    )
    assert_oauth_error(bare, 401, "invalid_client")


def test_an_expired_refresh_token_is_refused(
    auth_server: LiveServer, world: World, sessions: sessionmaker[Session]
) -> None:
    pair = first_pair(auth_server, world)
    with sessions() as s, s.begin():
        s.execute(update(RefreshToken).values(expires_at=utcnow()))
    assert_oauth_error(refresh(auth_server, world, pair["refresh_token"]), 400, "invalid_grant")


def test_a_refresh_token_is_no_bearer_token(
    auth_server: LiveServer, resource_server: LiveServer, world: World
) -> None:
    pair = first_pair(auth_server, world)
    assert get_artists(resource_server, pair["refresh_token"]) == 401
    for forged in (pair["refresh_token"][:-1], "", "\x00" + pair["refresh_token"]):
        r = refresh(auth_server, world, forged)
        assert r.status_code == 400, r.text


def test_offline_access_the_user_did_not_grant_is_not_given(
    auth_server: LiveServer, world: World, sessions: sessionmaker[Session]
) -> None:
    code = make_code(sessions, world, scope="")  # the user consented without offline_access
    asked = post(auth_server, code_params(world, code, scope="offline_access"))
    assert_oauth_error(asked, 400, "invalid_scope")
    code = make_code(sessions, world, scope="")
    plain = post(auth_server, code_params(world, code))
    assert plain.status_code == 200 and "refresh_token" not in plain.json()
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(RefreshToken)) == 0


def test_a_replayed_code_revokes_the_family_it_started(
    auth_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
) -> None:
    code = make_code(sessions, world, scope="offline_access")
    first = post(auth_server, code_params(world, code))
    assert first.status_code == 200, first.text
    rotated = refresh(auth_server, world, first.json()["refresh_token"]).json()
    # The code intercepted and replayed (RFC 6749 4.1.2): everything it bought ends.
    assert_oauth_error(post(auth_server, code_params(world, code)), 400, "invalid_grant")
    assert family_revoked(sessions)
    assert get_artists(resource_server, rotated["access_token"]) == 401
    assert_oauth_error(refresh(auth_server, world, rotated["refresh_token"]), 400, "invalid_grant")


@pytest.mark.parametrize("route", ["rfc7009", "delete"])
def test_revoking_a_refresh_token_ends_its_family_at_once(
    auth_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
    route: str,
) -> None:
    pair = first_pair(auth_server, world)
    rotated = refresh(auth_server, world, pair["refresh_token"]).json()
    assert get_artists(resource_server, rotated["access_token"]) == 200  # published in Redis
    if route == "rfc7009":
        r = requests.post(
            f"{auth_server.url}/oauth2/revoke",
            data={**world.creds, "token": rotated["refresh_token"]},
            timeout=10,
        )
    else:
        r = requests.delete(
            f"{auth_server.url}/api/tokens/access_token",
            params={"access_token": rotated["refresh_token"]},
            timeout=10,
        )
    assert r.status_code == 200, r.text
    assert family_revoked(sessions)
    for access in (pair["access_token"], rotated["access_token"]):
        assert get_artists(resource_server, access) == 401
    assert_oauth_error(refresh(auth_server, world, rotated["refresh_token"]), 400, "invalid_grant")
