"""Shared fixtures: settings for a throwaway instance, a migrated database, Redis, sessions.

Tests run on SQLite + embedded Redis by default, and on PostgreSQL + a Redis server when
``DATABASE_URL`` / ``REDIS_URL`` are set (the CI runs both).

Isolation: a test that needs an empty database asks for ``clean_db``, which empties the tables
that hold rows (found with one statement) before the test, not every table before and after.
A rolled-back transaction per test cannot isolate the functional tests: the servers under test
answer from threads of their own, on their own pooled connections, and commit. Redis is shared
in the same way: each emptying bumps the catalog version, so no server keeps a document or page
of another test's catalog; keys of the session are under its own prefix.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from redis import Redis
from sqlalchemy import Engine, create_engine, make_url, text
from sqlalchemy.orm import Session, sessionmaker

from auth_server.app import create_app as create_auth
from common.catalog_version import bump_catalog_version
from common.db import make_engine, make_sessionmaker, upgrade
from common.redis_store import connect_redis
from common.serve import PathDispatcher
from common.settings import AuthSettings, ResourceSettings, Settings
from common.stores import Stores
from resource_server.app import create_app as create_resource
from tests import db_state
from tests.constants import CHEAP_ARGON2, SAMPLE_DATA
from tests.servers import LiveServer, checked, start_server

# Fixtures shared by modules of several folders (their helpers are imported from the same modules).
pytest_plugins = [
    "tests.functional.catalog_support",
    "tests.functional.mail_support",
    "tests.functional.oauth_support",
]


def pytest_configure(config: pytest.Config) -> None:
    """Give each pytest-xdist worker stores of its own (``make test`` runs one per core).

    A worker's instance folder and embedded Redis are its own already; on the servers, worker
    ``gwN`` uses the database named by ``DATABASE_URL`` with ``_gwN`` appended (created when
    missing: the session drops and migrates its schema) and the Redis database ``N`` below the
    one ``REDIS_URL`` names, so a test that empties its Redis database empties only its own.
    The URLs are rewritten in the environment, as the tests and the processes they start read
    them there."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw"):
        return
    index = int(worker[2:])
    if database_url := os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = worker_database(database_url, worker)
    if redis_url := os.environ.get("REDIS_URL"):
        parts = urlsplit(redis_url)
        number = (int(parts.path.strip("/") or 0) - index) % 16
        os.environ["REDIS_URL"] = parts._replace(path=f"/{number}").geturl()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection made (the project, its libraries and the test modules): the
    cyclic collector's full passes then scan only what the tests make, not all of it again
    (``gc.freeze``)."""
    gc.freeze()


def worker_database(database_url: str, worker: str) -> str:
    """Return the URL of a worker's own database beside ``database_url`` (created if missing)."""
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        return database_url
    name = f"{url.database}_{worker}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            found = conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name})
            if found.first() is None:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def instance_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a fresh instance folder for the test session."""
    return tmp_path_factory.mktemp("instance")


@pytest.fixture(scope="session")
def base_settings(instance_dir: Path) -> Settings:
    """Return settings for the test session's stores (env URLs when given, else embedded)."""
    return Settings(
        instance_dir=instance_dir,
        database_url=os.environ.get("DATABASE_URL", ""),
        redis_url=os.environ.get("REDIS_URL", ""),
        secret_key="test-secret-key",
        redis_prefix=f"artcat-test-{os.getpid()}",
        **CHEAP_ARGON2,
    )


@pytest.fixture(scope="session")
def engine(base_settings: Settings) -> Iterator[Engine]:
    """Return an engine on a database migrated to head (a clean schema for the session)."""
    eng = make_engine(base_settings)
    if eng.dialect.name == "postgresql":
        with eng.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    upgrade(base_settings)
    db_state.watch(eng)
    yield eng
    eng.dispose()


@pytest.fixture(scope="session")
def sessions(engine: Engine) -> sessionmaker[Session]:
    """Return the session factory of the test database."""
    return make_sessionmaker(engine)


@pytest.fixture(scope="session")
def redis_client(base_settings: Settings) -> Redis:
    """Return a client of the test Redis (the embedded server unless REDIS_URL is set)."""
    return connect_redis(base_settings)


@pytest.fixture
def clean_db(engine: Engine, redis_client: Redis, base_settings: Settings) -> Engine:
    """Give a test an empty database (what the test leaves, the next one that asks empties).

    Emptying the tables writes the whole catalog: the catalog version is bumped after it, as
    every catalog writer does, so the servers of the session keep no document or page of
    another test's catalog.
    """
    db_state.truncate_all(engine)
    bump_catalog_version(redis_client, base_settings.redis_prefix)
    return engine


@pytest.fixture
def sample_dir() -> Path:
    """Return tests/data: Tate and CMoA slices laid out as the museums' repositories."""
    return SAMPLE_DATA


# -- the services' settings and stores, and both over real HTTP (functional and browser tests) --


def _fields(settings: Settings) -> dict[str, Any]:
    return {f: getattr(settings, f) for f in settings.__dataclass_fields__}


@pytest.fixture(scope="session")
def auth_settings(base_settings: Settings) -> AuthSettings:
    """Settings of the auth server under test: the device flow's per-address limits high
    (every test asks from 127.0.0.1; its throttle tests run servers of their own), and no
    background storage cleanup (it would delete rows under other tests; test_storage_cleanup
    runs its own)."""
    return AuthSettings(
        **_fields(base_settings),
        device_authorizations_per_ip="10000/minute",
        device_code_failures_per_ip="10000/hour",
        cleanup_interval=0,
    )


@pytest.fixture(scope="session")
def resource_settings(base_settings: Settings) -> ResourceSettings:
    """Settings of the resource server under test (high default rate limits: tests are fast;
    the rate-limit tests set a per-application override, the page-limit test its own server)."""
    return ResourceSettings(
        **_fields(base_settings), rate_limit="10000/second", page_rate_limit="10000/second"
    )


@pytest.fixture(scope="session")
def stores(base_settings: Settings, engine: Engine, redis_client: Redis) -> Stores:
    """The stores shared by the servers under test."""
    return Stores.connect(base_settings, engine=engine, redis=redis_client)


@pytest.fixture(scope="session")
def http_combined_server(
    auth_settings: AuthSettings, resource_settings: ResourceSettings, stores: Stores
) -> Iterator[LiveServer]:
    """Both services behind the path dispatcher on one port, over real HTTP."""
    app = PathDispatcher(
        create_auth(auth_settings, stores), create_resource(resource_settings, stores)
    )
    live = checked(start_server(app))
    yield live
    live.stop()
