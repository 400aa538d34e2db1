"""Fixtures and helpers of the catalog tests: the demo catalog behind the servers under test, with
tokens; and ``race``, concurrent requests released together.

The demo catalog is loaded once and serves every test that only reads it: a test that wrote to
the database (or started a process, which may have) leaves it to be loaded again by the next
test that asks for it (``tests.db_state.WRITES``). No test has to say whether it writes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
import requests
from redis import Redis
from sqlalchemy import Engine, event, select, update
from sqlalchemy.orm import Session, sessionmaker

from artcat.loaders.demo import DEMO_EMAIL, demo_credentials, load_demo
from common.catalog_version import bump_catalog_version
from common.models import Application, User
from common.settings import Settings
from common.stores import Stores
from tests import db_state
from tests.functional import process_support
from tests.functional.process_support import HasURL

ZERO_ID = "0" * 24
T = TypeVar("T")


@dataclass
class Catalog:
    """The demo catalog behind a live resource server, and headers for every kind of caller."""

    url: str
    sessions: sessionmaker[Session]
    xapp: dict[str, str]
    user: dict[str, str]
    admin: dict[str, str]
    other: dict[str, str]
    user_id: str
    admin_id: str
    other_id: str
    redis: Redis
    redis_prefix: str

    def api(self, path: str) -> str:
        """Return the absolute URL of an API path."""
        return f"{self.url}/api{path}"

    def get(
        self, path: str, headers: dict[str, str] | None = None, **params: Any
    ) -> requests.Response:
        """GET an API path (or absolute URL) without following redirects."""
        url = path if path.startswith("http") else self.api(path)
        return requests.get(
            url,
            params=params or None,
            headers=self.xapp if headers is None else headers,
            allow_redirects=False,
            timeout=20,
        )

    def ok(self, path: str, headers: dict[str, str] | None = None, **params: Any) -> Any:
        """GET a path, assert 200 and return the JSON body."""
        r = self.get(path, headers, **params)
        assert r.status_code == 200, (path, params, r.status_code, r.text)
        return r.json()

    def bump(self) -> None:
        """Bump the whole catalog's version: what a loader does after it commits."""
        bump_catalog_version(self.redis, self.redis_prefix)

    def scalars(self, stmt: Any) -> list[Any]:
        """Run a select on the test database and return its scalars."""
        with self.sessions() as s:
            return list(s.scalars(stmt))


def issue_user_token(stores: Stores, application_id: str, user_id: str) -> str:
    """Issue an access token for a user directly through the token store."""
    with stores.sessions() as session, session.begin():
        issued = stores.tokens.issue(
            session, kind="access", application_id=application_id, user_id=user_id, ttl=3600
        )
    stores.tokens.publish(issued.row)
    return issued.value


def demo_xapp_token(auth: HasURL, settings: Settings) -> str:
    """Get an XAPP token for the demo application (of ``settings``' secret key) over HTTP."""
    creds = demo_credentials(settings)
    return process_support.xapp_token(
        auth, {"client_id": creds.client_id, "client_secret": creds.client_secret}
    )


# The catalog loaded last: (its artworks, the write mark after it was loaded, the server URLs,
# the catalog); reused while no table was written since the mark.
_LOADED: dict[str, tuple[int, int, tuple[str, str], Catalog]] = {}


def load_catalog(
    engine: Engine,
    settings: Settings,
    stores: Stores,
    auth: HasURL,
    resource: HasURL,
    artworks: int,
) -> Catalog:
    """Empty the database, load the demo catalog (seed 1) and issue its tokens."""
    db_state.truncate_all(engine)
    report = load_demo(engine, settings, seed=1, artworks=artworks)
    assert not report.skipped
    # As ``artcat load demo`` does: the whole catalog changed (search pages kept in memory from
    # an earlier test would otherwise still be served).
    bump_catalog_version(stores.redis, settings.redis_prefix)
    creds = demo_credentials(settings)
    with stores.sessions() as s, s.begin():
        app_id = s.scalar(select(Application.id).where(Application.client_id == creds.client_id))
        user_id = s.scalar(select(User.id).where(User.email == DEMO_EMAIL))
        others = list(s.scalars(select(User.id).where(User.email != DEMO_EMAIL).order_by(User.id)))
        admin_id, other_id = others[0], others[1]
        s.execute(update(User).where(User.id == admin_id).values(type="Admin"))
    assert app_id and user_id

    def bearer(uid: str) -> dict[str, str]:
        return {"X-Access-Token": issue_user_token(stores, app_id, uid)}

    return Catalog(
        url=resource.url,
        sessions=stores.sessions,
        xapp={"X-Xapp-Token": demo_xapp_token(auth, settings)},
        user=bearer(user_id),
        admin=bearer(admin_id),
        other=bearer(other_id),
        user_id=user_id,
        admin_id=admin_id,
        other_id=other_id,
        redis=stores.redis,
        redis_prefix=settings.redis_prefix,
    )


@pytest.fixture
def catalog(
    request: pytest.FixtureRequest,
    engine: Engine,
    base_settings: Settings,
    stores: Stores,
    auth_server: HasURL,
    resource_server: HasURL,
) -> Catalog:
    """The demo catalog (seed 1) with an XAPP, a user, an Admin and another user.

    A test module sets ``DEMO_ARTWORKS`` to load another number of artworks than 120. The
    catalog of the last test is given again when nothing was written since it was loaded.
    """
    artworks = getattr(request.module, "DEMO_ARTWORKS", 120)
    servers = (auth_server.url, resource_server.url)
    last = _LOADED.get("catalog")
    if last is not None:
        loaded_artworks, mark, loaded_servers, loaded = last
        if (loaded_artworks, loaded_servers) == (artworks, servers) and not db_state.WRITES.since(
            mark
        ):
            return loaded
    _LOADED.pop("catalog", None)
    loaded = load_catalog(engine, base_settings, stores, auth_server, resource_server, artworks)
    _LOADED["catalog"] = (artworks, db_state.WRITES.mark(), servers, loaded)
    return loaded


@contextmanager
def counting(engine: Engine) -> Iterator[list[str]]:
    """Collect the SQL statements run on ``engine``'s database inside the block: on any engine
    of the process, the read-only one (``common.db.read_engine``) included."""
    statements: list[str] = []
    database = str(engine.url)

    def record(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if str(conn.engine.url) == database:
            statements.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(Engine, "before_cursor_execute", record)


def walk_pages(
    catalog: Catalog, path: str, headers: dict[str, str] | None = None, **params: Any
) -> list[dict[str, Any]]:
    """Follow ``next`` links from a list URL to the end; return every embedded item."""
    body = catalog.ok(path, headers, **params)
    (plural,) = body["_embedded"]
    items = list(body["_embedded"][plural])
    while "next" in body["_links"]:
        body = catalog.ok(body["_links"]["next"]["href"], headers)
        items += body["_embedded"][plural]
    return items


def race(
    url: str, count: int, send: Callable[[requests.Session, int], T], *, timeout: float = 30
) -> list[T]:
    """Run ``send(http, n)`` from ``count`` threads released together; return what each returned,
    in order of ``n``.

    Each thread connects (``/healthz`` at ``url``) on its own session before the release, so
    the requests under test start at once; ``timeout`` guards the connection and the release,
    and three times it the threads.
    """
    barrier = threading.Barrier(count)
    results: dict[int, T] = {}
    failures: list[BaseException] = []

    def run(n: int) -> None:
        try:
            with requests.Session() as http:
                http.get(f"{url}/healthz", timeout=timeout)  # connect before the race
                barrier.wait(timeout=timeout)
                results[n] = send(http, n)
        except BaseException as ex:  # reported below, not lost in the thread
            failures.append(ex)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=3 * timeout)
    assert not failures and not any(t.is_alive() for t in threads), failures
    return [results[n] for n in range(count)]
