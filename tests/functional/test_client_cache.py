"""The applications an auth server process keeps (``auth_server.clients.ClientCache``): read
once, read again after any change of an application (committed through the services' engine),
when the version is unknown (Redis lost it, or cannot be reached) and after ``CACHE_TTL``.
Across processes: ``test_client_cache_processes.py``."""

from __future__ import annotations

from typing import Any

import pytest
from redis import Redis
from sqlalchemy.orm import Session, sessionmaker

from auth_server import clients
from auth_server.clients import CACHE_TTL, ClientCache, OAuthClient
from common.client_versions import ChangeNotAnnounced, announce, current_version, version_key
from common.models import Application
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.oauth_support import make_world

pytestmark = pytest.mark.functional


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The client ids the caches read from the database."""
    done: list[str] = []
    original = clients.read_client

    def counted(stores: Stores, client_id: str) -> OAuthClient | None:
        done.append(client_id)
        return original(stores, client_id)

    monkeypatch.setattr(clients, "read_client", counted)
    return done


def test_an_application_is_read_once_until_it_changes(
    clean_db: Any,
    stores: Stores,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
    reads: list[str],
) -> None:
    w = make_world(sessions, auth_settings)
    cache = ClientCache(stores, auth_settings.redis_prefix)
    found = cache.get(w.client_id)
    assert found is not None and found.app.id == w.application_id
    assert cache.get(w.client_id) is found and cache.get("unknown") is None
    assert cache.get("unknown") is None
    assert reads == [w.client_id, "unknown"]

    with sessions() as s, s.begin():
        s.get_one(Application, w.application_id).enabled = False
    assert cache.get(w.client_id) is None  # read again: the change moved the version
    with sessions() as s, s.begin():
        s.get_one(Application, w.application_id).enabled = True
    assert cache.get(w.client_id) is not None
    assert reads == [w.client_id, "unknown", w.client_id, w.client_id]


def test_an_unknown_version_reads_the_database(
    clean_db: Any,
    stores: Stores,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
    reads: list[str],
) -> None:
    w = make_world(sessions, auth_settings)
    prefix = auth_settings.redis_prefix
    cache = ClientCache(stores, prefix)
    cache.get(w.client_id)
    stores.redis.delete(version_key(prefix))  # as Redis losing its data
    cache.get(w.client_id)  # read, and a new version set
    assert stores.redis.get(version_key(prefix)) is not None
    cache.get(w.client_id)  # filed under the new version
    cache.get(w.client_id)
    assert reads == [w.client_id] * 3
    assert current_version(unreachable_redis(), prefix) is None


def test_an_application_is_read_again_after_the_ttl(
    clean_db: Any,
    stores: Stores,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
    reads: list[str],
) -> None:
    """Changes made outside the services (by hand in SQL) are seen this late at most."""
    w = make_world(sessions, auth_settings)
    now = [0.0]
    cache = ClientCache(stores, auth_settings.redis_prefix, clock=lambda: now[0])
    cache.get(w.client_id)
    now[0] = CACHE_TTL - 1
    cache.get(w.client_id)
    now[0] = CACHE_TTL + 1
    cache.get(w.client_id)
    assert reads == [w.client_id] * 2


def unreachable_redis() -> Redis:
    """A client of a Redis that does not answer (as one that went down)."""
    return Redis(port=1, socket_connect_timeout=0.2, socket_timeout=0.2)


def test_changes_reach_the_redis_the_caches_read(
    clean_db: Any,
    stores: Stores,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
) -> None:
    """Stores made later on the same engine with another Redis (as tests and tools make) do not
    take the engine's announcements away from the Redis the services read."""
    w = make_world(sessions, auth_settings)
    cache = ClientCache(stores, auth_settings.redis_prefix)
    assert cache.get(w.client_id) is not None
    Stores.connect(auth_settings, engine=stores.engine, redis=unreachable_redis())
    with sessions() as s, s.begin():  # outside any stores: the engine's settings' Redis
        s.get_one(Application, w.application_id).enabled = False
    assert cache.get(w.client_id) is None
    with stores.sessions() as s, s.begin():  # the stores' sessions: their Redis
        s.get_one(Application, w.application_id).enabled = True
    assert cache.get(w.client_id) is not None


def test_a_change_redis_cannot_be_told_of_is_refused(
    clean_db: Any,
    stores: Stores,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
) -> None:
    """Fail closed: a process never serves an application as it was before a committed change,
    even when the change could not be announced (Redis down for the process that made it)."""
    w = make_world(sessions, auth_settings)
    cache = ClientCache(stores, auth_settings.redis_prefix)
    assert cache.get(w.client_id) is not None
    cut_off = Stores.connect(auth_settings, engine=stores.engine, redis=unreachable_redis())
    with pytest.raises(ChangeNotAnnounced), cut_off.sessions() as s, s.begin():
        s.get_one(Application, w.application_id).enabled = False
    with sessions() as s:
        enabled = s.get_one(Application, w.application_id).enabled
    assert enabled is True  # not made, so the cache is right to answer with it
    assert cache.get(w.client_id) is not None


def test_a_pending_change_is_read_from_the_database(
    clean_db: Any,
    stores: Stores,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
    reads: list[str],
) -> None:
    """While a change commits (or after its second announcement failed, until the pending
    value lapses) every lookup reads the database and keeps nothing."""
    w = make_world(sessions, auth_settings)
    prefix = auth_settings.redis_prefix
    cache = ClientCache(stores, prefix)
    cache.get(w.client_id)
    announce(stores.redis, prefix, pending=True)
    assert stores.redis.ttl(version_key(prefix)) > 0  # it lapses
    cache.get(w.client_id)
    cache.get(w.client_id)
    assert len(reads) == 3
    stores.redis.delete(version_key(prefix))  # lapsed: the next lookup sets a new version
    cache.get(w.client_id)
    cache.get(w.client_id)  # filed under it
    cache.get(w.client_id)
    assert len(reads) == 5
