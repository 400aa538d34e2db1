"""``artcat staging rebuild`` between two real databases: SQLite and PostgreSQL, every pairing.

The PostgreSQL databases are created on the run's own server (DATABASE_URL) when the run uses
PostgreSQL, else on the local one (root@127.0.0.1), and dropped at the end. On a SQLite run the
PostgreSQL pairings skip when no local server answers; on a PostgreSQL run they fail.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from sqlalchemy import Engine, create_engine, func, insert, make_url, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from artcat.cli.main import main
from artcat.loaders.demo import load_demo
from artcat.staging import StagingError, rebuild, snapshot, source_engine
from artcat.staging_policy import POLICY, Action
from common.catalog_version import catalog_version_key
from common.db import make_engine, make_sessionmaker, upgrade
from common.ids import new_id, utcnow
from common.models import (
    Application,
    Artist,
    AuthorizationCode,
    Base,
    Bidder,
    Collection,
    CollectionItem,
    Sale,
    SaleArtwork,
    SocialIdentity,
    Token,
    User,
    UserDetail,
)
from common.search.models import SearchDocument
from common.settings import Settings, normalise_database_url
from common.tokens import TOMBSTONE, TokenStore, digest
from resource_server.search.service import SearchRequest, search
from tests import factories
from tests.constants import CHEAP_ARGON2

pytestmark = pytest.mark.functional

# The server the databases are created on: the run's own PostgreSQL (DATABASE_URL) when it
# uses one, else the local server, where present.
_RUN_URL = os.environ.get("DATABASE_URL", "")
PG_REQUIRED = _RUN_URL.startswith(("postgres://", "postgresql"))
PG_SERVER = make_url(
    normalise_database_url(_RUN_URL) if PG_REQUIRED else "postgresql+psycopg://root@127.0.0.1/"
)
ARTWORKS = 60
PRIVATE_NAME = "Privata Zyxwvut"
PRIVATE_COLLECTION = "Zyxwvut Hidden Stash"
JUNK_ARTIST = "Junkartist Qwertyuiop"


# -- databases ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pg_admin() -> Iterator[Engine]:
    """An AUTOCOMMIT connection to the PostgreSQL server; a skip when the run uses SQLite and
    no local server answers (a failure when the run itself is on PostgreSQL)."""
    admin_url = PG_SERVER.set(database="postgres")
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        with engine.connect():
            pass
    except OperationalError as ex:
        where = admin_url.render_as_string(hide_password=True)
        if PG_REQUIRED:
            pytest.fail(f"PostgreSQL is unreachable at {where}: {ex}")
        pytest.skip(f"PostgreSQL is unreachable at {where}: {type(ex).__name__}")
    yield engine
    engine.dispose()


@pytest.fixture
def new_database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[str, str], str]]:
    """Return a factory of empty databases: ``(kind, role) -> URL``, dropped at the end."""
    created: list[str] = []

    def make(kind: str, role: str) -> str:
        if kind == "sqlite":
            return f"sqlite:///{tmp_path / role}.sqlite3"
        admin: Engine = request.getfixturevalue("pg_admin")
        name = f"artcat_staging_{os.getpid()}_{secrets.token_hex(4)}_{role}"
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        created.append(name)
        return PG_SERVER.set(database=name).render_as_string(hide_password=False)

    yield make
    if created:
        admin: Engine = request.getfixturevalue("pg_admin")
        with admin.connect() as conn:
            for name in created:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def settings_for(url: str, tmp_path: Path, **kw: Any) -> Settings:
    """Return the settings of an instance on ``url`` (tokens in the test Redis)."""
    return Settings(
        instance_dir=tmp_path / "instance",
        database_url=url,
        redis_url=os.environ.get("REDIS_URL", ""),
        secret_key="staging-test-secret",
        redis_prefix=f"artcat-staging-test-{secrets.token_hex(4)}",
        **CHEAP_ARGON2,  # type: ignore[arg-type]
        **kw,
    )


# -- production: the demo catalog and private data ---------------------------------------------


@dataclass
class Production:
    """A source database, and every private value it holds (none may reach staging)."""

    settings: Settings
    engine: Engine
    secrets: set[str] = field(default_factory=set)
    private_user_ids: set[str] = field(default_factory=set)


def make_production(url: str, tmp_path: Path, redis: Redis) -> Production:
    """Load the demo catalog, then add private things of every kind."""
    settings = settings_for(url, tmp_path / "production")
    upgrade(settings)
    engine = make_engine(settings)
    load_demo(engine, settings, artworks=ARTWORKS)
    sessions = make_sessionmaker(engine)
    store = TokenStore(redis, sessions, prefix=settings.redis_prefix)
    with sessions() as s, s.begin():
        person = factories.user(s, settings, email="privata@secret.example", name=PRIVATE_NAME)
        detail = s.get(UserDetail, person.id)
        assert detail is not None
        detail.phone, detail.birthday = "+44 20 7946 0999", "1971-07-17"
        collector = factories.user(s, settings, email="publica@secret.example", name="Publica")
        client = factories.application(
            s, person, name="Secret Client", redirect_uris=["https://secret-client.example/cb"]
        ).application
        code = AuthorizationCode(
            digest=secrets.token_hex(32),
            application_id=client.id,
            user_id=person.id,
            redirect_uri="https://secret-client.example/cb",
            code_challenge="challenge-" + secrets.token_hex(8),
            created_at=utcnow(),
            expires_at=utcnow() + timedelta(minutes=10),
        )
        s.add(code)
        s.add(SocialIdentity(user_id=person.id, provider="facebook", provider_uid="fb-98765432123",
                             created_at=utcnow()))  # fmt: skip
        for user in (person, collector):
            store.issue(s, kind="access", application_id=client.id, user_id=user.id, ttl=3600)
        store.issue(s, kind="xapp", application_id=client.id, user_id=None, ttl=3600)
        artwork_ids = list(s.scalars(select(CollectionItem.artwork_id).limit(3)))
        hidden = Collection(user_id=person.id, name=PRIVATE_COLLECTION, private=True,
                            description="nobody may see this")  # fmt: skip
        shown = Collection(user_id=collector.id, name="Publica Favourites", private=False)
        s.add_all([hidden, shown])
        s.flush()
        for n, artwork_id in enumerate(artwork_ids, start=1):
            for coll in (hidden, shown):
                s.add(CollectionItem(collection_id=coll.id, artwork_id=artwork_id, position=n))
        sale = s.scalars(select(Sale.id).where(Sale.published.is_(True))).first()
        s.add(Bidder(sale_id=sale, user_id=person.id, pin="4711"))
    production = Production(settings, engine)
    with Session(engine) as s:
        for columns in (
            (User.id, User.email, User.password_hash),
            (Application.client_id, Application.client_secret_digest),
            (Token.digest,),
            (AuthorizationCode.digest, AuthorizationCode.code_challenge),
            (SocialIdentity.provider_uid,),
            (UserDetail.phone,),
        ):
            for row in s.execute(select(*columns)):
                production.secrets.update(str(v) for v in row if v)
        production.secrets -= set(public_user_ids(s))  # public users' ids do cross
        production.secrets |= {PRIVATE_NAME, PRIVATE_COLLECTION, "secret-client.example"}
        private = select(Collection.id).where(Collection.private.is_(True))
        production.secrets.update(s.scalars(private))
        production.private_user_ids = set(s.scalars(select(User.id))) - public_user_ids(s)
    return production


def public_user_ids(s: Session) -> set[str]:
    """Return the users a public row names (computed here independently of the policy): the
    owners of public collections (every user has a profile, which makes nobody public)."""
    collectors = s.scalars(select(Collection.user_id).where(Collection.private.is_(False)))
    return set(collectors)


# -- staging: junk created there ---------------------------------------------------------------


@dataclass
class Staging:
    """The target instance, with a token that must die and junk that must go."""

    settings: Settings
    engine: Engine
    store: TokenStore
    token: str
    junk: dict[type[Any], str]


def make_staging(url: str, tmp_path: Path, redis: Redis) -> Staging:
    """Create an instance with its own user, application, live token (cached in Redis), junk."""
    settings = settings_for(url, tmp_path / "staging", environment="staging")
    upgrade(settings)
    engine = make_engine(settings)
    store = TokenStore(redis, make_sessionmaker(engine), prefix=settings.redis_prefix)
    with Session(engine) as s, s.begin():
        tester = factories.user(s, settings, email="tester@staging.example", name="Tester")
        client = factories.application(s, tester, name="Staging Client").application
        issued = store.issue(
            s, kind="access", application_id=client.id, user_id=tester.id, ttl=86400
        )
        junk = factories.artist(s, name=JUNK_ARTIST, slug="junkartist-qwertyuiop")
        junk_rows: dict[type[Any], str] = {User: tester.id, Application: client.id, Artist: junk.id}
    store.publish(issued.row)
    assert store.lookup(issued.value) is not None
    return Staging(settings, engine, store, issued.value, junk_rows)


# -- checks ------------------------------------------------------------------------------------


def dump(engine: Engine, name: str, where: Any = None) -> list[tuple[Any, ...]]:
    """Return a table's rows in primary-key order (optionally only some)."""
    table = Base.metadata.tables[name]
    stmt = select(table).order_by(*table.primary_key.columns)
    if where is not None:
        stmt = stmt.where(where)
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(stmt)]


def all_values(engine: Engine) -> Iterator[tuple[str, str]]:
    """Yield (table, text) for every value of every column of every table."""
    with engine.connect() as conn:
        for table in POLICY:
            for row in conn.execute(select(Base.metadata.tables[table])):
                for value in row:
                    if value is not None:
                        yield table, str(value)


def assert_staging_is_public_production(prod: Production, staging: Staging) -> None:
    """Compare the two databases table by table, and scan staging for private values."""
    src, dst = prod.engine, staging.engine
    for name, rule in POLICY.items():
        if rule.action is Action.COPY:
            assert dump(dst, name) == dump(src, name), name
        elif rule.action is Action.NEVER:
            assert dump(dst, name) == [], name
    assert dump(dst, "sales") == dump(src, "sales", Sale.published.is_(True))
    published = select(Sale.id).where(Sale.published.is_(True))
    assert dump(dst, "sale_artworks") == dump(
        src, "sale_artworks", SaleArtwork.sale_id.in_(published)
    )
    public = Collection.private.is_(False)
    assert dump(dst, "collections") == dump(src, "collections", public)
    assert dump(dst, "collection_items") == dump(
        src,
        "collection_items",
        CollectionItem.collection_id.in_(select(Collection.id).where(public)),
    )
    with Session(src) as s:
        expected_users = public_user_ids(s)
        names = {str(i): str(n) for i, n in s.execute(select(User.id, User.name))}
    with Session(dst) as s:
        users = s.execute(select(User)).scalars().all()
        assert {u.id for u in users} == expected_users and len(users) >= 2
        for u in users:
            assert u.email == f"user-{u.id}@staging.invalid" and u.password_hash is None
            assert u.type == "User" and u.name == names[u.id]
    leaks = [(t, v) for t, v in all_values(dst) for secret in prod.secrets if secret in v]
    assert leaks == []


def assert_search_works(prod: Production, staging: Staging) -> None:
    """The index is rebuilt from the copy: the same documents, and a query finds an artist."""
    docs = SearchDocument.__table__
    keys = select(docs.c.kind, docs.c.resource_id, docs.c.title).order_by(docs.c.id)
    with prod.engine.connect() as a, staging.engine.connect() as b:
        assert b.execute(keys).all() == a.execute(keys).all()
        artist_id, name = a.execute(select(Artist.id, Artist.name).limit(1)).one()
        page = search(b, SearchRequest(q=name, types=("artist",)))
        assert artist_id in [hit.resource_id for hit in page.hits]
        assert search(b, SearchRequest(q=JUNK_ARTIST)).hits == []


PAIRS = [
    pytest.param("sqlite", "sqlite", id="sqlite-to-sqlite"),
    pytest.param("postgresql", "postgresql", id="postgresql-to-postgresql"),
    pytest.param("postgresql", "sqlite", id="postgresql-to-sqlite"),
    pytest.param("sqlite", "postgresql", id="sqlite-to-postgresql"),
]


@pytest.mark.parametrize(("source_kind", "target_kind"), PAIRS)
def test_rebuild_copies_the_public_catalog_only(
    source_kind: str,
    target_kind: str,
    new_database: Callable[[str, str], str],
    tmp_path: Path,
    redis_client: Redis,
) -> None:
    prod = make_production(new_database(source_kind, "production"), tmp_path, redis_client)
    staging = make_staging(new_database(target_kind, "staging"), tmp_path, redis_client)

    version = catalog_version_key(staging.settings.redis_prefix)
    report = rebuild(prod.settings.database_url, staging.settings, redis=redis_client)

    counts = report.counts()
    assert counts["artworks"] == ARTWORKS and counts["tokens"] == 0
    assert report.tokens_retired == 1
    assert_staging_is_public_production(prod, staging)
    assert_search_works(prod, staging)
    with Session(staging.engine) as s:
        for model, junk_id in staging.junk.items():
            assert s.get(model, junk_id) is None, model
    # The staging token was cached in Redis: it must be dead there too, not only in SQL.
    assert staging.store.lookup(staging.token) is None
    key = staging.store.key(digest(staging.token))
    assert redis_client.get(key) == TOMBSTONE
    assert redis_client.get(version) == b"1"  # cached catalog documents are dropped

    # Nightly: a second run over the same production leaves staging exactly as it was.
    before = {name: dump(staging.engine, name) for name in POLICY}
    again = rebuild(prod.settings.database_url, staging.settings, redis=redis_client)
    after = {name: dump(staging.engine, name) for name in POLICY}
    assert after == before and again.counts() == counts
    prod.engine.dispose()
    staging.engine.dispose()


# -- refusals and atomicity (SQLite: quick) ----------------------------------------------------


def test_refuses_the_same_database_a_non_staging_target_and_a_schema_mismatch(
    tmp_path: Path, redis_client: Redis
) -> None:
    url = f"sqlite:///{tmp_path / 'one.sqlite3'}"
    staging = settings_for(url, tmp_path, environment="staging")
    upgrade(staging)
    same = f"sqlite:///{tmp_path}/../{tmp_path.name}/one.sqlite3"  # another spelling
    with pytest.raises(StagingError, match="staging database itself"):
        rebuild(same, staging, redis=redis_client)
    with pytest.raises(StagingError, match="ENVIRONMENT=staging"):
        production = settings_for(
            url, tmp_path, environment="production", public_url="https://api.example.org"
        )
        rebuild(same, production, redis=redis_client)
    unmigrated = tmp_path / "empty.sqlite3"
    create_engine(f"sqlite:///{unmigrated}").connect().close()
    with pytest.raises(StagingError, match="revision None"):
        rebuild(f"sqlite:///{unmigrated}", staging, redis=redis_client)
    with pytest.raises(StagingError, match="no SQLite database"):
        rebuild(f"sqlite:///{tmp_path / 'missing.sqlite3'}", staging, redis=redis_client)
    assert not (tmp_path / "missing.sqlite3").exists()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_failed_rebuild_leaves_staging_as_it_was(tmp_path: Path, redis_client: Redis) -> None:
    prod = make_production(f"sqlite:///{tmp_path / 'p.sqlite3'}", tmp_path, redis_client)
    staging = make_staging(f"sqlite:///{tmp_path / 's.sqlite3'}", tmp_path, redis_client)
    before = {name: dump(staging.engine, name) for name in POLICY}
    # No retry: redis-py's default one backs off for seconds before it gives up.
    down = Redis(
        host="127.0.0.1", port=_closed_port(), socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
    )
    with pytest.raises(Exception, match=r"[Cc]onnect"):
        rebuild(prod.settings.database_url, staging.settings, redis=down)
    after = {name: dump(staging.engine, name) for name in POLICY}
    assert after == before
    assert staging.store.lookup(staging.token) is not None


def test_the_source_is_read_in_one_snapshot(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.sqlite3'}"
    settings = settings_for(url, tmp_path)
    upgrade(settings)
    writer = make_engine(settings)

    def add_artist() -> None:
        with writer.begin() as conn:
            conn.execute(insert(Artist), [{"id": new_id(), "slug": new_id(), "name": "A"}])

    add_artist()
    reader = source_engine(url)
    count = select(func.count()).select_from(Artist)
    with snapshot(reader) as conn:
        assert conn.scalar(count) == 1
        add_artist()
        assert conn.scalar(count) == 1  # the write after the snapshot is not seen
    with snapshot(reader) as conn:
        assert conn.scalar(count) == 2
        with pytest.raises(OperationalError, match="readonly"):
            conn.execute(text("DELETE FROM artists"))
    reader.dispose()
    writer.dispose()


def test_command_line(tmp_path: Path, redis_client: Redis) -> None:
    prod = make_production(f"sqlite:///{tmp_path / 'p.sqlite3'}", tmp_path, redis_client)
    target = tmp_path / "s.sqlite3"
    env = {
        "INSTANCE_DIR": str(tmp_path / "staging-instance"),
        "DATABASE_URL": f"sqlite:///{target}",
        "REDIS_URL": os.environ.get("REDIS_URL", ""),
        "REDIS_PREFIX": f"artcat-staging-cli-{secrets.token_hex(4)}",
        "ENVIRONMENT": "staging",
        "SECRET_KEY": "k",
    }
    args = ["staging", "rebuild", "--from", prod.settings.database_url]
    runner = CliRunner()
    declined = runner.invoke(main, args, env=env, input="n\n")
    assert declined.exit_code == 1 and "Aborted" in declined.output and not target.exists()
    done = runner.invoke(main, [*args, "--yes"], env=env, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    lines = {line.split()[0]: line.split()[1:] for line in done.output.splitlines() if line}
    assert lines["artworks"] == ["copy", str(ARTWORKS), "0", str(ARTWORKS)]
    assert lines["tokens"] == ["never", "3", "0", "0"]
    refused = runner.invoke(
        main,
        [*args, "--yes"],
        env={**env, "ENVIRONMENT": "production", "PUBLIC_URL": "https://api.example.org"},
    )
    assert refused.exit_code == 1 and "ENVIRONMENT=staging" in refused.output
    prod.engine.dispose()
