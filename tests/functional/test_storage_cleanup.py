"""Storage that cleans itself: expired and revoked tokens and expired codes leave SQL in bounded
batches, one cleaner at a time, in the servers' background or from ``artcat db clean``; a token
whose row is gone is still refused by the catalog API over real HTTP."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
import requests
from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from auth_server.app import create_app as create_auth
from auth_server.cleanup import REMOVED, SWEEPS, Background, Cleaner, Sweep, lock_key
from auth_server.codes import issue_code
from common.ids import new_id, utcnow
from common.models import (
    Application,
    AuthorizationCode,
    DeviceAuthorization,
    InitialAccessToken,
    RefreshFamily,
    RefreshToken,
    Token,
    User,
)
from common.settings import AuthSettings, SettingsError
from common.stores import Stores
from common.tokens import TOMBSTONE, UNKNOWN, TokenStore, digest
from tests import factories
from tests.functional.cli_support import cli_env, run_cli
from tests.functional.process_support import (
    RedisServer,
    free_port,
    running,
    service_env,
    xapp_token,
)
from tests.servers import LiveServer, start_server

HOUR = 3600
RETENTION = 2 * HOUR


@pytest.fixture
def settings(auth_settings: AuthSettings) -> AuthSettings:
    """The auth server's settings with a retention of two hours."""
    return replace(auth_settings, cleanup_retention=RETENTION)


@pytest.fixture
def owner(clean_db: Any, sessions: sessionmaker[Session], settings: AuthSettings) -> dict[str, str]:
    """A user and an application of theirs (ids and clear credentials) in an empty database."""
    with sessions() as s, s.begin():
        user = factories.user(s, settings)
        new = factories.application(s, user, redirect_uris=["https://client.example/cb"])
        return {
            "user_id": user.id,
            "app_id": new.application.id,
            "client_id": new.application.client_id,
            "client_secret": new.client_secret,
        }


def add_token(
    stores: Stores,
    owner: dict[str, str],
    *,
    expires_at: datetime,
    expired_at: datetime | None = None,
    code_id: str | None = None,
) -> str:
    """Insert a token row with the given dates; return its id."""
    with stores.sessions() as s, s.begin():
        issued = stores.tokens.issue(
            s,
            kind="access",
            application_id=owner["app_id"],
            user_id=owner["user_id"],
            ttl=60,
            code_id=code_id,
        )
        s.execute(
            update(Token)
            .where(Token.id == issued.row.id)
            .values(expires_at=expires_at, expired_at=expired_at)
        )
        return issued.row.id


def add_code(stores: Stores, owner: dict[str, str], *, expires_at: datetime, used: bool) -> str:
    """Insert a code row expiring at ``expires_at``; return its id."""
    with stores.sessions() as s, s.begin():
        issue_code(
            s,
            application=s.get_one(Application, owner["app_id"]),
            user=s.get_one(User, owner["user_id"]),
            redirect_uri="https://client.example/cb",
            ttl=60,
        )
        code = s.scalars(select(AuthorizationCode).order_by(AuthorizationCode.created_at.desc()))
        row = code.first()
        assert row is not None
        row.created_at = expires_at - timedelta(minutes=10)
        row.expires_at = expires_at
        row.used_at = row.created_at if used else None
        return row.id


# What a run removes from a table that holds nothing to remove: every swept table, none.
NOTHING = {sweep.table.name: 0 for sweep in SWEEPS}


def ids(stores: Stores, model: Any) -> set[str]:
    """Return the ids of every row of a table."""
    with stores.sessions() as s:
        return set(s.scalars(select(model.id)))


def test_expired_and_revoked_rows_go_and_live_ones_stay(
    stores: Stores, owner: dict[str, str], settings: AuthSettings
) -> None:
    now = utcnow()
    old = now - timedelta(seconds=RETENTION + 60)  # past the retention
    recent = now - timedelta(seconds=RETENTION - 60)  # within it
    later = now + timedelta(days=30)
    old_code = add_code(stores, owner, expires_at=old, used=True)
    old_unused_code = add_code(stores, owner, expires_at=old, used=False)
    recent_code = add_code(stores, owner, expires_at=recent, used=True)
    live_code = add_code(stores, owner, expires_at=now + timedelta(minutes=5), used=False)
    live = add_token(stores, owner, expires_at=later, code_id=old_code)
    expired_long_ago = add_token(stores, owner, expires_at=old)
    revoked_long_ago = add_token(stores, owner, expires_at=later, expired_at=old)
    expired_recently = add_token(stores, owner, expires_at=recent)
    revoked_recently = add_token(stores, owner, expires_at=later, expired_at=recent)
    before = REMOVED.value("tokens"), REMOVED.value("authorization_codes")

    removed = Cleaner(settings, stores).run()

    assert removed == {**NOTHING, "tokens": 2, "authorization_codes": 2}
    assert ids(stores, Token) == {live, expired_recently, revoked_recently}
    assert not {expired_long_ago, revoked_long_ago} & ids(stores, Token)
    assert ids(stores, AuthorizationCode) == {recent_code, live_code}
    assert old_unused_code not in ids(stores, AuthorizationCode)
    with stores.sessions() as s:  # the live token of a code that went keeps its row
        assert s.scalar(select(Token.code_id).where(Token.id == live)) is None
    assert REMOVED.value("tokens") == before[0] + 2
    assert REMOVED.value("authorization_codes") == before[1] + 2
    # A second run finds nothing more.
    assert Cleaner(settings, stores).run() == NOTHING


def add_family(
    stores: Stores, owner: dict[str, str], *, used_at: datetime, expires: list[datetime]
) -> tuple[str, list[str]]:
    """Insert a refresh family last used at ``used_at`` with tokens expiring at ``expires``."""
    with stores.sessions() as s, s.begin():
        family = RefreshFamily(
            id=new_id(),
            application_id=owner["app_id"],
            user_id=owner["user_id"],
            created_at=used_at,
            used_at=used_at,
        )
        s.add(family)
        s.flush()
        tokens = [
            RefreshToken(
                id=new_id(),
                digest=digest(new_id()),
                family_id=family.id,
                application_id=owner["app_id"],
                created_at=used_at,
                expires_at=expires_at,
            )
            for expires_at in expires
        ]
        s.add_all(tokens)
        return family.id, [t.id for t in tokens]


def add_device_grant(
    stores: Stores, owner: dict[str, str], *, expires_at: datetime, token_id: str | None
) -> str:
    """Insert a device grant whose codes expire at ``expires_at``, holding ``token_id``."""
    with stores.sessions() as s, s.begin():
        row = DeviceAuthorization(
            id=new_id(),
            device_code_digest=digest(new_id()),
            user_code_digest=digest(new_id()),
            application_id=owner["app_id"],
            user_id=owner["user_id"],
            status="approved" if token_id else "pending",
            created_at=expires_at - timedelta(minutes=15),
            expires_at=expires_at,
            interval=5,
            token_id=token_id,
        )
        s.add(row)
        return row.id


def test_refresh_families_device_grants_and_registration_tokens_go_when_of_no_more_use(
    stores: Stores, owner: dict[str, str], settings: AuthSettings
) -> None:
    now = utcnow()
    old = now - timedelta(seconds=RETENTION + 60)
    later = now + timedelta(days=30)
    ttl = timedelta(seconds=settings.refresh_token_ttl)
    # A family whose last token expired past the retention goes with its tokens; a family used
    # recently keeps its live token but loses its rotated token expired long ago.
    _, gone_tokens = add_family(stores, owner, used_at=old - ttl, expires=[old, old])
    kept_family, (expired, live) = add_family(stores, owner, used_at=now, expires=[old, later])
    # Device grants: one whose codes expired unredeemed goes; one that bought a live token
    # stays (the account page lists it) until that token's row goes.
    token = add_token(stores, owner, expires_at=later)
    unredeemed = add_device_grant(stores, owner, expires_at=old, token_id=None)
    holding = add_device_grant(stores, owner, expires_at=old, token_id=token)
    pending = add_device_grant(stores, owner, expires_at=now + timedelta(minutes=5), token_id=None)
    with stores.sessions() as s, s.begin():
        for expires_at in (old, later):
            s.add(
                InitialAccessToken(
                    id=new_id(),
                    digest=digest(new_id()),
                    uses_left=1,
                    created_at=now,
                    expires_at=expires_at,
                )
            )

    removed = Cleaner(settings, stores).run()

    assert removed == {
        **NOTHING,
        "refresh_tokens": 3,
        "refresh_families": 1,
        "device_authorizations": 1,
        "initial_access_tokens": 1,
    }
    assert ids(stores, RefreshFamily) == {kept_family}
    assert ids(stores, RefreshToken) == {live}
    assert not set(gone_tokens) & ids(stores, RefreshToken)
    assert expired not in ids(stores, RefreshToken)
    assert ids(stores, DeviceAuthorization) == {holding, pending}
    assert unredeemed not in ids(stores, DeviceAuthorization)
    assert len(ids(stores, InitialAccessToken)) == 1
    # The device grant's token, revoked long ago, goes, and the grant with it (in the same run:
    # the tokens are swept first).
    with stores.sessions() as s, s.begin():
        s.execute(update(Token).where(Token.id == token).values(expired_at=old))
    removed = Cleaner(settings, stores).run()
    assert (removed["tokens"], removed["device_authorizations"]) == (1, 1)
    assert ids(stores, DeviceAuthorization) == {pending}


def test_batches_are_bounded_each_its_own_transaction(
    stores: Stores, owner: dict[str, str], settings: AuthSettings
) -> None:
    old = utcnow() - timedelta(days=2)
    for _ in range(25):
        add_token(stores, owner, expires_at=old)
    keep = add_token(stores, owner, expires_at=utcnow() + timedelta(hours=1))
    cleaner = Cleaner(settings, stores, batch_size=10)
    tokens = next(s for s in SWEEPS if s.name == "tokens.expired")
    seen: list[int] = []
    for count in cleaner.batches(tokens):
        seen.append(count)
        # Each batch has committed when it is counted: another connection sees it gone.
        with stores.sessions() as s:
            assert s.scalar(select(func.count()).select_from(Token)) == 26 - sum(seen)
    assert seen == [10, 10, 5]
    assert ids(stores, Token) == {keep}


def test_one_cleaner_at_a_time(
    stores: Stores, owner: dict[str, str], settings: AuthSettings, base_settings: Any
) -> None:
    gone = add_token(stores, owner, expires_at=utcnow() - timedelta(days=2))
    holder = Cleaner(settings, stores).lock()
    assert holder.acquire()
    try:
        assert Cleaner(settings, stores).run() is None  # locked: nothing done
        env = cli_env(base_settings, CLEANUP_RETENTION=str(RETENTION))
        out = json.loads(run_cli(env, "db", "clean", "--json"))
        assert out == {"skipped": "another process is cleaning"}
        assert gone in ids(stores, Token)
    finally:
        holder.release()
    out = json.loads(run_cli(env, "db", "clean", "--json"))
    assert out["removed.tokens"] == 1 and out["removed.authorization_codes"] == 0
    assert gone not in ids(stores, Token)


def test_the_lock_holds_against_a_second_cleaner_running_concurrently(
    stores: Stores, owner: dict[str, str], settings: AuthSettings
) -> None:
    """Two cleaners started together: one runs (slowly, batch after batch), the other is
    refused for as long as the first holds the lock."""
    old = utcnow() - timedelta(days=2)
    for _ in range(6):
        add_token(stores, owner, expires_at=old)
    first = Cleaner(settings, stores, batch_size=2, pause=0.3)
    tokens = next(s for s in SWEEPS if s.name == "tokens.expired")
    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.append(first.run()))
    runner.start()
    try:
        deadline = time.monotonic() + 10
        while not stores.redis.exists(lock_key(settings.redis_prefix)):  # the first has it
            assert time.monotonic() < deadline, "the first cleaner never took the lock"
            time.sleep(0.01)
        assert Cleaner(settings, stores, sweeps=[tokens]).run() is None
    finally:
        runner.join(10)
    assert results == [{**NOTHING, "tokens": 6}]


def test_a_removed_token_is_still_refused_by_the_catalog_api(
    http_combined_server: LiveServer,
    stores: Stores,
    owner: dict[str, str],
    settings: AuthSettings,
    redis_client: Redis,
) -> None:
    base = http_combined_server.url
    creds = {"client_id": owner["client_id"], "client_secret": owner["client_secret"]}
    revoked = xapp_token(http_combined_server, creds)
    lapsed = xapp_token(http_combined_server, creds)
    url = f"{base}/api/artists"
    for token in (revoked, lapsed):
        assert requests.get(url, headers={"X-Xapp-Token": token}, timeout=10).status_code == 200
    # One revoked, one expired (its Redis record gone with its lifetime), both long ago.
    assert stores.tokens.expire(revoked) is not None
    long_ago = utcnow() - timedelta(days=2)
    with stores.sessions() as s, s.begin():
        s.execute(update(Token).where(Token.digest == digest(revoked)).values(expired_at=long_ago))
        s.execute(update(Token).where(Token.digest == digest(lapsed)).values(expires_at=long_ago))
    redis_client.delete(stores.tokens.key(digest(lapsed)))
    assert Cleaner(settings, stores).run() == {**NOTHING, "tokens": 2}
    assert ids(stores, Token) == set()

    # The revoked token's tombstone still answers; once it too is gone, the token is unknown.
    key = stores.tokens.key(digest(revoked))
    assert redis_client.get(key) == TOMBSTONE
    for token in (revoked, lapsed):
        r = requests.get(url, headers={"X-Xapp-Token": token}, timeout=10)
        assert r.status_code == 401, r.text
    redis_client.delete(key)
    r = requests.get(url, headers={"X-Xapp-Token": revoked}, timeout=10)
    assert r.status_code == 401, r.text
    assert redis_client.get(stores.tokens.key(digest(revoked))) == UNKNOWN


@pytest.fixture
def cleaning_server(
    auth_settings: AuthSettings, stores: Stores
) -> Iterator[tuple[LiveServer, Any]]:
    """An auth server whose background cleaner looks every quarter second and keeps nothing."""
    app = create_auth(replace(auth_settings, cleanup_interval=1, cleanup_retention=0), stores)
    live = start_server(app)
    yield live, app.extensions["artcat.cleanup"]
    app.extensions["artcat.cleanup"].stop()
    live.stop()


def test_the_server_cleans_in_the_background_and_stops(
    cleaning_server: tuple[LiveServer, Any], stores: Stores, owner: dict[str, str]
) -> None:
    live, background = cleaning_server
    gone = add_token(stores, owner, expires_at=utcnow() - timedelta(seconds=5))
    kept = add_token(stores, owner, expires_at=utcnow() + timedelta(hours=1))
    assert background.thread is None  # started by the first request, in the serving process
    assert requests.get(f"{live.url}/oauth2/jwks", timeout=10).status_code == 200
    assert background.thread is not None and background.thread.is_alive()
    deadline = time.monotonic() + 10
    while gone in ids(stores, Token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ids(stores, Token) == {kept}
    background.stop()
    assert not background.thread.is_alive()


def test_a_sweep_is_one_entry(
    stores: Stores, owner: dict[str, str], settings: AuthSettings
) -> None:
    """Another table's sweep is a name, its table, a condition and a retention."""
    sweep = Sweep(
        "unused_codes",
        AuthorizationCode.__table__,  # type: ignore[arg-type]
        lambda cutoff: (
            AuthorizationCode.used_at.is_(None) & (AuthorizationCode.expires_at < cutoff)
        ),
        lambda _settings: 0,
    )
    used = add_code(stores, owner, expires_at=utcnow() - timedelta(minutes=1), used=True)
    add_code(stores, owner, expires_at=utcnow() - timedelta(minutes=1), used=False)
    assert Cleaner(settings, stores, sweeps=[sweep]).run() == {"authorization_codes": 1}
    assert ids(stores, AuthorizationCode) == {used}


def test_bad_settings_are_refused() -> None:
    with pytest.raises(SettingsError, match="CLEANUP_BATCH_SIZE"):
        AuthSettings(secret_key="x", cleanup_batch_size=0)
    with pytest.raises(SettingsError, match="CLEANUP_INTERVAL"):
        AuthSettings(secret_key="x", cleanup_interval=-1)


def test_a_row_cleaned_away_during_a_read_through_is_not_published(
    stores: Stores, owner: dict[str, str], settings: AuthSettings, redis_client: Redis
) -> None:
    """A read-through that found the row live, then saw it revoked and deleted (and the
    tombstone lost) before its second look, withdraws the record it published."""
    with stores.sessions() as s, s.begin():
        issued = stores.tokens.issue(
            s, kind="xapp", application_id=owner["app_id"], user_id=None, ttl=3600
        )
    reads = 0

    @contextmanager
    def read_then_cleaned() -> Iterator[Session]:
        nonlocal reads
        reads += 1
        with stores.sessions() as s:
            yield s
        if reads == 1:  # between the two looks: revoked, cleaned away, its tombstone lost
            with stores.sessions() as s, s.begin():
                s.execute(delete(Token).where(Token.id == issued.row.id))

    racing = TokenStore(
        redis_client,
        stores.sessions,
        prefix=settings.redis_prefix,
        reads=cast(sessionmaker[Session], read_then_cleaned),
    )
    assert racing.lookup(issued.value) is None
    assert reads == 2
    assert redis_client.get(racing.key(digest(issued.value))) == TOMBSTONE


def removed_by(url: str) -> float:
    """Return a serving process's count of token rows removed, from its ``/metrics``."""
    text = requests.get(f"{url}/metrics", timeout=10).text
    found = re.search(r'^artcat_cleanup_rows_removed_total\{table="tokens"\} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


@pytest.mark.parametrize("server", ["waitress", "granian"])
def test_serving_processes_clean_in_turn_and_stop_gracefully(
    server: str,
    stores: Stores,
    owner: dict[str, str],
    base_settings: Any,
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    """Two `artcat serve auth` processes on one database and Redis: their background cleaners
    remove every expired row between them, in batches, and each stops with its process."""
    env = service_env(
        base_settings,
        database_url=base_settings.sqlalchemy_url,
        redis_url=redis_server.url,
        instance_dir=tmp_path,
        WSGI_SERVER=server,
        CLEANUP_INTERVAL="1",
        CLEANUP_RETENTION="0",
        CLEANUP_BATCH_SIZE="40",
    )
    old = utcnow() - timedelta(minutes=1)
    for _ in range(100):
        add_token(stores, owner, expires_at=old)
    kept = add_token(stores, owner, expires_at=utcnow() + timedelta(hours=1))
    with running([("auth", env), ("auth", env)], tmp_path / "logs") as services:
        deadline = time.monotonic() + 30
        while ids(stores, Token) != {kept} and time.monotonic() < deadline:
            time.sleep(0.2)
        assert ids(stores, Token) == {kept}
        assert sum(removed_by(svc.url) for svc in services) == 100
        for svc in services:
            svc.terminate()
        for svc in services:
            assert svc.proc.wait(15) == 0, svc.output()


def test_a_background_cleaner_outlives_a_store_that_is_away(
    auth_settings: AuthSettings, stores: Stores, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis unreachable: each run fails, is logged and counted, and the thread goes on."""
    away = Redis(
        host="127.0.0.1", port=free_port(), socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0)
    )
    broken = Stores(stores.engine, stores.sessions, away, stores.tokens)
    background = Background(replace(auth_settings, cleanup_interval=1), broken)
    caplog.set_level(logging.ERROR, logger="artcat.cleanup")
    background.ensure_started()
    try:
        deadline = time.monotonic() + 10
        while len(caplog.records) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(caplog.records) >= 2  # failed, then tried again
        assert "storage cleanup failed" in caplog.records[0].getMessage()
        assert background.thread is not None and background.thread.is_alive()
    finally:
        background.stop()
    assert not background.thread.is_alive()
