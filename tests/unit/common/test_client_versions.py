"""What moves the applications' version (common.client_versions): every write of the
``applications`` table through a watched engine, however it is written, once its connection is
back in the pool (after the commit, never before); nothing else."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, delete, insert, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from common.client_versions import (
    ChangeNotAnnounced,
    watch,
    watch_sessions,
    writes_clients,
)
from common.ids import new_id, utcnow
from common.models import Application, Token, User
from common.models.base import Base

APPLICATIONS = Application.__table__
USERS = User.__table__


class Calls:
    """Counts the announcements after a commit (``count``), and records each one in order
    (``seen``: "pending" before a commit, "moved" after it)."""

    def __init__(self) -> None:
        self.count = 0
        self.seen: list[str] = []
        self.refuse = False

    def __call__(self, *, pending: bool) -> None:
        if self.refuse:
            raise ConnectionError("Redis is down")
        self.seen.append("pending" if pending else "moved")
        self.count += not pending


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Engine, Calls]]:
    """A file database (pooled connections, as in production) with the schema, watched."""
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    Base.metadata.create_all(engine)
    calls = Calls()
    watch(engine, calls)
    yield engine, calls
    engine.dispose()


def add_app(session: Session, **fields: object) -> Application:
    app = Application(
        name="app",
        client_id=new_id(),
        client_secret_digest="0" * 64,
        **fields,
    )
    session.add(app)
    return app


def test_an_orm_change_is_announced_after_its_commit_only(
    watched: tuple[Engine, Calls],
) -> None:
    engine, calls = watched
    with Session(engine) as session, session.begin():
        app = add_app(session)
        session.flush()
        assert calls.count == 0  # written, not committed: nobody may read it yet
    assert calls.count == 1
    with Session(engine, expire_on_commit=False) as session, session.begin():
        session.add(app)
        app.enabled = False
    assert calls.count == 2
    with Session(engine) as session, session.begin():
        session.delete(session.get_one(Application, app.id))
    assert calls.count == 3


def test_a_change_is_pending_before_its_commit_and_moved_after(
    watched: tuple[Engine, Calls],
) -> None:
    engine, calls = watched
    with Session(engine) as session, session.begin():
        add_app(session)
        session.flush()
        assert calls.seen == []
    assert calls.seen == ["pending", "moved"]
    with Session(engine) as session, session.begin():
        add_app(session)
        session.flush()
        session.rollback()  # rolled back: nothing pending, the version moves all the same
    assert calls.seen == ["pending", "moved", "moved"]


def test_a_change_redis_is_not_told_of_is_not_committed(watched: tuple[Engine, Calls]) -> None:
    """Fail closed: with Redis down, a disabled application stays enabled rather than being
    served enabled from the processes' caches."""
    engine, calls = watched
    with Session(engine, expire_on_commit=False) as session, session.begin():
        app = add_app(session)
    calls.refuse = True
    with pytest.raises(ChangeNotAnnounced), Session(engine) as session, session.begin():
        session.get_one(Application, app.id).enabled = False
    with pytest.raises(ChangeNotAnnounced), engine.begin() as conn:
        conn.execute(update(APPLICATIONS).values(enabled=False))
    calls.refuse = False
    with Session(engine) as session:
        assert session.get_one(Application, app.id).enabled is True
    with Session(engine) as session, session.begin():  # the connections still serve
        session.get_one(Application, app.id).enabled = False
    with Session(engine) as session:
        assert session.get_one(Application, app.id).enabled is False


def test_a_session_announces_through_its_own_announcer(watched: tuple[Engine, Calls]) -> None:
    """Sessions of several stores on one engine, each told through its own Redis; the engine's
    own announcer hears of the changes made outside them."""
    engine, calls = watched
    first, second = Calls(), Calls()
    one, two = sessionmaker(engine), sessionmaker(engine)
    watch_sessions(one, first)
    watch_sessions(two, second)
    with one() as session, session.begin():
        add_app(session)
    with two() as session, session.begin():
        add_app(session)
        add_app(session)
    with one() as session, session.begin():
        session.execute(select(Application))  # no write: nobody is told
    with engine.begin() as conn:
        conn.execute(update(APPLICATIONS).values(name="x"))
    assert (first.count, second.count, calls.count) == (1, 1, 1)


def test_statements_on_the_table_are_announced_however_they_are_run(
    watched: tuple[Engine, Calls],
) -> None:
    engine, calls = watched
    with Session(engine, expire_on_commit=False) as session, session.begin():
        app = add_app(session)
    start = calls.count
    with Session(engine) as session, session.begin():
        session.execute(update(Application).where(Application.id == app.id).values(name="b"))
    with Session(engine) as session, session.begin():
        # A Core statement on the session's own connection (as the demo removal runs them).
        session.connection().execute(update(APPLICATIONS).values(name="c"))
    with engine.begin() as conn:
        conn.execute(update(APPLICATIONS).values(name="d"))
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE applications SET name = 'e'")
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM applications WHERE id = :id"), {"id": app.id})
    assert calls.count == start + 5


def test_a_deleted_owner_is_announced(watched: tuple[Engine, Calls]) -> None:
    """The database clears the applications' user_id: they changed."""
    engine, calls = watched
    with engine.begin() as conn:
        conn.execute(
            insert(USERS).values(
                id=new_id(), name="u", email="u@example.org", created_at=utcnow(),
                updated_at=utcnow(), enabled=True, type="User",
            )
        )  # fmt: skip
    assert calls.count == 0  # a new user changes no application
    with engine.begin() as conn:
        conn.execute(delete(USERS))
    assert calls.count == 1


def test_other_tables_and_reads_are_not_announced(watched: tuple[Engine, Calls]) -> None:
    engine, calls = watched
    with Session(engine) as session, session.begin():
        session.execute(select(Application))
        session.execute(text("SELECT count(*) FROM applications"))
        session.execute(update(Token).values(scope=""))
        session.execute(update(User).values(name="x"))
    assert calls.count == 0


@pytest.mark.parametrize(
    ("statement", "writes"),
    [
        (update(APPLICATIONS).values(name="x"), True),
        (delete(APPLICATIONS), True),
        (insert(APPLICATIONS).values(name="x"), True),
        (delete(USERS), True),
        (update(USERS).values(name="x"), False),
        (insert(Token.__table__).values(scope=""), False),
        (select(APPLICATIONS), False),
        (update(Token).where(Token.application_id.in_(select(Application.id))), False),
        ("TRUNCATE users, applications, tokens RESTART IDENTITY", True),
        ('truncate "applications"', True),
        ("WITH gone AS (DELETE FROM applications RETURNING id) SELECT count(*) FROM gone", True),
        ("SELECT * FROM applications", False),
        ("DELETE FROM application_logs", False),
        ("UPDATE users SET name = 'x'", False),
    ],
)
def test_which_statements_write_applications(statement: object, writes: bool) -> None:
    sql = statement if isinstance(statement, str) else str(statement)
    assert writes_clients(sql) is writes
