"""Prepared selects and read sessions, on an in-memory SQLite database."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from sqlalchemy import Engine, bindparam, create_engine, delete, event, insert, select, text, update
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError, StatementError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.pool import StaticPool

from common.api import prepared as prepared_module
from common.api.prepared import Prepared
from common.db import ReadSession, make_sessionmaker
from common.models.base import JSONType, UTCDateTime

ROOT = Path(__file__).resolve().parents[3]


class Base(DeclarativeBase):
    type_annotation_map = {datetime: UTCDateTime()}


class Thing(Base):
    __tablename__ = "things"

    id: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str | None]
    size: Mapped[int]
    shown: Mapped[bool]
    made_at: Mapped[datetime | None]
    extra: Mapped[Any] = mapped_column(JSONType, nullable=True)


COLUMNS = (Thing.id, Thing.name, Thing.size, Thing.shown, Thing.made_at, Thing.extra)
ONE = select(*COLUMNS).where(Thing.id == bindparam("key")).limit(1)
SINCE = select(*COLUMNS).where(Thing.made_at >= bindparam("since")).order_by(Thing.id)
ALL = select(*COLUMNS).order_by(Thing.id)


@pytest.fixture
def engine() -> Iterator[Engine]:
    engine = create_engine("sqlite://", poolclass=StaticPool)
    Base.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            Thing.__table__.insert(),
            [
                {
                    "id": "a",
                    "name": "Arch",
                    "size": 3,
                    "shown": True,
                    "made_at": datetime(2024, 1, 31, 12, 0, 1, 5, tzinfo=UTC),
                    "extra": {"in": [1, 2]},
                },
                {
                    "id": "b",
                    "name": None,
                    "size": 0,
                    "shown": False,
                    "made_at": None,
                    "extra": None,
                },
                {
                    "id": "c",
                    "name": "Cube",
                    "size": 7,
                    "shown": True,
                    "made_at": datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC),
                    "extra": [],
                },
            ],
        )
    yield engine
    engine.dispose()


def test_rows_are_those_of_connection_execute(engine: Engine) -> None:
    with engine.connect() as conn:
        for stmt, values in ((ALL, {}), (ONE, {"key": "a"}), (ONE, {"key": "b"})):
            expected = conn.execute(stmt, values).all()
            got = Prepared(stmt).rows(conn, values)
            assert [tuple(r) for r in got] == [tuple(r) for r in expected]
            assert [type(v) for r in got for v in r] == [type(v) for r in expected for v in r]
    row = got[0]
    assert (row.id, row.name, row.shown, row.made_at, row.extra) == ("b", None, False, None, None)
    assert row[2] == 0


def test_values_take_their_types_conversions(engine: Engine) -> None:
    """An aware datetime is bound as the column stores it, as ``execute`` would bind it."""
    since = datetime(2000, 1, 1, tzinfo=UTC)
    prepared = Prepared(SINCE)
    with engine.connect() as conn:
        assert [r.id for r in prepared.rows(conn, {"since": since})] == ["a"]
        first = prepared.rows(conn, {"since": datetime(1990, 1, 1, tzinfo=UTC)})
        assert [r.id for r in first] == ["a", "c"]
        assert first[0].made_at == datetime(2024, 1, 31, 12, 0, 1, 5, tzinfo=UTC)
        assert first[1].extra == []


def test_a_select_it_cannot_run_as_compiled_runs_as_usual(engine: Engine) -> None:
    expanding = select(*COLUMNS).where(Thing.id.in_(bindparam("ids", expanding=True)))
    prepared = Prepared(expanding.order_by(Thing.id))
    with engine.connect() as conn:
        assert [r.id for r in prepared.rows(conn, {"ids": ["c", "a"]})] == ["a", "c"]
        assert [r.id for r in prepared.rows(conn, {"ids": ["b"]})] == ["b"]
    assert list(prepared._forms.values()) == [None]


def test_writes_run_as_connection_execute_runs_them(engine: Engine) -> None:
    """An INSERT binds every value as ``execute`` does; an UPDATE's RETURNING rows are its
    columns', converted; a DML statement without RETURNING has none."""
    made = datetime(2025, 5, 6, 7, 8, 9, tzinfo=UTC)
    new = {"id": "d", "name": "Dome", "size": 5, "shown": True, "made_at": made, "extra": [3]}
    renamed = (
        update(Thing)
        .where(Thing.id == bindparam("key"))
        .values(name=bindparam("new_name"), made_at=bindparam("when", type_=UTCDateTime()))
        .returning(Thing.id, Thing.made_at, Thing.extra)
    )
    with engine.begin() as conn:
        none_first = Prepared(renamed)  # its first run returns no row (SQLite: no description)
        assert none_first.rows(conn, {"key": "none", "new_name": "x", "when": made}) == []
        assert Prepared(insert(Thing.__table__)).rows(conn, new) == []
        assert tuple(conn.execute(ONE, {"key": "d"}).one()) == tuple(new.values())
        got = Prepared(renamed).rows(conn, {"key": "d", "new_name": "Dim", "when": made})
        assert [tuple(r) for r in got] == [("d", made, [3])] and got[0].made_at == made
        again = none_first.rows(conn, {"key": "d", "new_name": "Dim", "when": made})
        assert [tuple(r) for r in again] == [("d", made, [3])]
        assert Prepared(renamed).rows(conn, {"key": "none", "new_name": "x", "when": made}) == []
        assert Prepared(delete(Thing).where(Thing.id == "d")).rows(conn) == []
        assert conn.execute(ONE, {"key": "d"}).first() is None
        with pytest.raises(ArgumentError):
            Prepared(insert(Thing.__table__)).rows(conn, {"id": "e"})  # every value is asked


def test_scalar_and_missing_values(engine: Engine) -> None:
    with engine.connect() as conn:
        assert Prepared(select(Thing.size).where(Thing.id == "c")).scalar(conn) == 7
        assert Prepared(ONE).scalar(conn, {"key": "nothing"}) is None
        with pytest.raises(ArgumentError, match="key"):
            Prepared(ONE).rows(conn, {})


def test_a_driver_error_is_sqlalchemys_and_hides_the_values(engine: Engine) -> None:
    with engine.connect() as conn:
        prepared = Prepared(ONE)
        assert prepared.rows(conn, {"key": "a"})
        conn.exec_driver_sql("DROP TABLE things")
        with pytest.raises(OperationalError) as failed:
            prepared.rows(conn, {"key": "secret-value"})
    assert "no such table" in str(failed.value)
    assert "secret-value" not in str(failed.value)
    assert not failed.value.connection_invalidated


def test_statement_listeners_see_every_run(engine: Engine) -> None:
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        seen.append((statement, parameters))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        with engine.connect() as conn:
            Prepared(ONE).rows(conn, {"key": "a"})
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    assert len(seen) == 1
    assert seen[0][0].startswith("SELECT things.id") and "a" in seen[0][1]


def test_a_read_session_lends_a_plain_connection_and_returns_it(engine: Engine) -> None:
    reads = make_sessionmaker(engine, reads=True)
    with reads() as session:
        assert isinstance(session, ReadSession)
        conn = session.connection()
        assert session.connection() is conn and not session.in_transaction()
        assert Prepared(ONE).rows(conn, {"key": "c"})[0].name == "Cube"
        # An ORM query runs in the Session's own transaction, beside the plain connection.
        assert session.get(Thing, "a") is not None and session.in_transaction()
        assert session.connection() is not conn
    assert conn.closed and not session.in_transaction()
    with reads() as session:
        assert session.scalars(select(Thing.id)).all() == ["a", "b", "c"]
        assert session.connection() is not None  # the transaction's
    assert not session.in_transaction()


def test_a_text_statement_gives_the_drivers_values_named_by_the_driver(engine: Engine) -> None:
    stmt = text("SELECT id, size AS n, made_at FROM things WHERE size >= :least ORDER BY id")
    counted = text("SELECT count(*) FROM things WHERE size >= :least")
    with engine.connect() as conn:
        expected = conn.execute(stmt, {"least": 1}).all()
        got = Prepared(stmt).rows(conn, {"least": 1})
        assert [tuple(r) for r in got] == [tuple(r) for r in expected]
        assert [(r.id, r.n) for r in got] == [("a", 3), ("c", 7)]
        assert isinstance(got[0].made_at, str)  # no column types: what SQLite holds
        assert Prepared(counted).scalar(conn, {"least": 0}) == 3


def test_a_text_statements_lists_are_written_out_once_per_length(engine: Engine) -> None:
    """``IN :ids`` runs prepared, written as ``IN (:ids__1, ...)`` for each length of list;
    its rows are those ``Connection.execute`` gives, and other parameters keep their place."""
    stmt = text(
        "SELECT id, size FROM things WHERE id IN :ids AND size >= :least "
        "AND name NOT IN :names ORDER BY id"
    ).bindparams(bindparam("ids", expanding=True), bindparam("names", expanding=True))
    prepared = Prepared(stmt)
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    cases = [
        (["a", "b", "c"], 0, ["Zed"]),
        (["c", "a"], 1, ["Arch", "Zed"]),
        (["c"], 0, ["Arch"]),
        (["a", "c", "b"], 4, ["Bob"]),  # the first case's lengths: its statement again
    ]
    event.listen(Engine, "before_cursor_execute", record)
    try:
        with engine.connect() as conn:
            for ids, least, names in cases:
                values = {"ids": ids, "least": least, "names": names}
                expected = conn.execute(stmt, values).all()
                assert [tuple(r) for r in prepared.rows(conn, values)] == [
                    tuple(r) for r in expected
                ]
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    ours = seen[1::2]  # each case ran through execute first, then prepared
    assert ours[0].count("?") == 5 and "ids__3" not in ours[0]  # the driver's own markers
    assert ours[3] == ours[0]
    assert sorted(prepared._written) == [(1, 1), (2, 2), (3, 1)]
    assert all(p._forms and None not in p._forms.values() for p in prepared._written.values())


def test_an_empty_or_missing_list_runs_as_usual(engine: Engine) -> None:
    stmt = text("SELECT id FROM things WHERE id NOT IN :ids ORDER BY id").bindparams(
        bindparam("ids", expanding=True)
    )
    prepared = Prepared(stmt)
    with engine.connect() as conn:
        assert [r.id for r in prepared.rows(conn, {"ids": []})] == ["a", "b", "c"]
        assert [r.id for r in prepared.rows(conn, {"ids": ("a",)})] == ["b", "c"]
        with pytest.raises(StatementError, match="ids"):
            prepared.rows(conn, {})
    assert list(prepared._written) == [(1,)]


def test_a_list_name_inside_another_name_is_left_alone(engine: Engine) -> None:
    stmt = text("SELECT id FROM things WHERE id IN :id AND size >= :id_min ORDER BY id").bindparams(
        bindparam("id", expanding=True)
    )
    with engine.connect() as conn:
        rows = Prepared(stmt).rows(conn, {"id": ["a", "b", "c"], "id_min": 1})
    assert [r.id for r in rows] == ["a", "c"]


def test_the_sqlalchemy_names_it_relies_on_are_those_checked() -> None:
    """The module runs statements outside ``Connection.execute`` on SQLAlchemy's compiled form
    (its docstring lists the names): the versions pyproject.toml allows are those it was
    checked against, the installed one among them, and every name it reads is there."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (required,) = [d for d in project["dependencies"] if d.lower().startswith("sqlalchemy")]
    assert Requirement(required).specifier == SpecifierSet(prepared_module.CHECKED)
    assert Version(version("sqlalchemy")) in SpecifierSet(prepared_module.CHECKED)
    assert hasattr(update(Thing).returning(Thing.id), "exported_columns")
    compiled = ONE.compile(dialect=sqlite.dialect())
    for name in ("string", "positional", "positiontup", "binds", "escaped_bind_names"):
        assert hasattr(compiled, name), name
    bind = compiled.binds["key"]
    for name in ("key", "required", "effective_value", "expanding", "literal_execute", "callable"):
        assert hasattr(bind, name), name
    impl = bind.type.dialect_impl(sqlite.dialect())
    assert callable(impl.bind_processor) and callable(impl.result_processor)
    engine = create_engine("sqlite://")
    with engine.connect() as conn:
        assert conn.connection.dbapi_connection is not None
        assert conn.execute(text("SELECT 1")).returns_rows
        assert hasattr(conn.dispatch, "before_cursor_execute") and callable(conn.invalidate)
    assert engine.dialect.loaded_dbapi is not None and callable(engine.dialect.is_disconnect)
    assert callable(DBAPIError.instance)
    engine.dispose()
