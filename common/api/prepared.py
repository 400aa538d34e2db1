"""Statements compiled once per database and run on the driver's cursor.

A catalog read runs the same few statements all day, with different values. SQLAlchemy runs
each execution through its whole machinery: the compiled-cache lookup, an execution context,
the result's metadata and row objects, which on a one-row read cost more than the driver and
the database together; ``Connection.execute`` of the same kept statements makes an uncached
catalog read measurably slower end to end (bench/README.md, "Public interfaces"). A
``Prepared`` select keeps what that machinery computes anyway, once per dialect: the SQL text,
the order of its parameters, the bind processors of its parameters and the result processors
of its columns; a run is then the driver's ``execute`` and ``fetchall``, each value converted
as SQLAlchemy would convert it, and each row a named tuple read by position or by column name
like a ``Row``. A text statement (search's) has no column types: its rows are the driver's
values, as SQLAlchemy returns them, named by the driver. An INSERT, UPDATE or DELETE (a token
request's writes) runs the same way: its rows are those of its RETURNING columns, none without
(every column of an INSERT built without values must then be given one: it is bound as it is,
no default computed). A text statement's list parameters
(``bindparam(name, expanding=True)``: search's kinds and named artists) are written out once
per length of list, ``IN :ids`` with two ids becoming ``IN (:ids__1, :ids__2)``, each such
statement prepared in its turn.

What stays SQLAlchemy's: the connection (pool, checkout ping, transaction), the compiler, the
types' own conversions, and failures: a driver error is raised as SQLAlchemy raises it
(``DBAPIError.instance``, the parameters hidden), and a lost connection is invalidated. The
``before_cursor_execute`` listeners are called as for any statement (the query-count tests
and ``bench/search_plans.py`` listen there). A select that cannot run as it is compiled (an
expanding ``IN`` in a select, an empty list, a parameter rendered at execution or computed by a
function) runs through ``Connection.execute`` instead: the same rows, at the usual cost.

This is the one module that runs statements outside ``Connection.execute``. It reads no
private name of SQLAlchemy's, but it relies on these public names keeping their meaning, and
``tests/unit/common/test_prepared.py`` pins them to the versions pyproject.toml allows
(``CHECKED``): of a DML statement, ``exported_columns`` (its RETURNING columns); of a
result, ``returns_rows``; of a compiled select (``statement.compile(dialect=...)``), ``string``,
``positional``, ``positiontup``, ``binds`` and ``escaped_bind_names``; of a ``BindParameter``,
``key``, ``required``, ``effective_value``, ``expanding``, ``literal_execute``, ``callable``
and ``type``; of a type, ``dialect_impl``, ``bind_processor`` and ``result_processor``; of a
``Connection``, ``connection.dbapi_connection``, ``dispatch.before_cursor_execute`` and
``invalidate``; of a dialect, ``loaded_dbapi`` and ``is_disconnect``; and
``DBAPIError.instance``. A new SQLAlchemy is allowed only once these are checked again (and
the functional tests read every catalog table both ways, value for value and type for type).
"""

from __future__ import annotations

import re
from collections import namedtuple
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import Connection, Select, TextClause, UpdateBase, text
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.sql.compiler import SQLCompiler as Compiled
from sqlalchemy.types import NullType

from common.db import note_disconnect

Processor = Callable[[Any], Any]


Statement = Select[Any] | TextClause | UpdateBase

# The SQLAlchemy versions this module was checked against: pyproject.toml's range.
CHECKED = ">=2.0.30,<2.2"
# A text statement's lists are written out for at most this many lengths (then afresh).
MAX_LENGTHS = 64
# A bound parameter of a text statement as ``text()`` reads it: ``:name``, not after a colon,
# a word or a backslash (``::type`` and ``\:`` are not parameters).
BOUND_PARAMETER = re.compile(r"(?<![:\w\\]):(\w+)(?![\w:])")


class Prepared:
    """A select of plain rows (or a text statement, or an INSERT, UPDATE or DELETE: its
    RETURNING rows, none without), built once, compiled once per dialect (see the module)."""

    __slots__ = ("_forms", "_lists", "_written", "statement")

    def __init__(self, statement: Statement) -> None:
        self.statement = statement
        self._forms: dict[tuple[str, str], _Form | None] = {}
        # A text statement's untyped list parameters, and the statement written out for each
        # length of its lists (``_written_out``).
        self._lists: tuple[str, ...] = ()
        if isinstance(statement, TextClause):
            binds = statement.compile().binds.values()
            if all(isinstance(b.type, NullType) for b in binds if b.expanding):
                self._lists = tuple(sorted(b.key for b in binds if b.expanding))
        self._written: dict[tuple[int, ...], Prepared] = {}

    def rows(self, conn: Connection, values: Mapping[str, Any] | None = None) -> list[Any]:
        """Run the select on ``conn`` with ``values`` for its bound parameters."""
        if self._lists and values:
            written = self._written_out(values)
            if written is not None:
                prepared, flat = written
                return prepared.rows(conn, flat)
        dialect = conn.dialect
        key = (dialect.name, dialect.driver)
        try:
            form = self._forms[key]
        except KeyError:
            form = self._forms[key] = _Form.compile(self.statement, dialect)
        if form is None:
            result = conn.execute(self.statement, values)
            return list(result.all()) if result.returns_rows else []
        return form.run(conn, values or {})

    def scalar(self, conn: Connection, values: Mapping[str, Any] | None = None) -> Any:
        """Return the first column of the first row (None without rows)."""
        found = self.rows(conn, values)
        return found[0][0] if found else None

    def _written_out(self, values: Mapping[str, Any]) -> tuple[Prepared, dict[str, Any]] | None:
        """Return the text statement with its lists written out for these values' lengths,
        and the values with each list's items named; None when a list is missing, empty or
        not a list (``Connection.execute`` then binds it, or says what is wrong)."""
        lists = [values.get(name) for name in self._lists]
        if not all(isinstance(v, list | tuple) and v for v in lists):
            return None
        lengths = tuple(len(v) for v in lists)  # type: ignore[arg-type]
        prepared = self._written.get(lengths)
        if prepared is None:
            if len(self._written) >= MAX_LENGTHS:
                self._written.clear()
            prepared = self._written[lengths] = Prepared(self._write_out(lengths))
        flat = {k: v for k, v in values.items() if k not in self._lists}
        for name, items in zip(self._lists, lists, strict=True):
            flat.update((f"{name}__{i}", item) for i, item in enumerate(items, 1))  # type: ignore[arg-type]
        return prepared, flat

    def _write_out(self, lengths: tuple[int, ...]) -> TextClause:
        """Return the text statement with each list parameter written as that many."""
        assert isinstance(self.statement, TextClause)
        written = {
            name: "(" + ", ".join(f":{name}__{i}" for i in range(1, length + 1)) + ")"
            for name, length in zip(self._lists, lengths, strict=True)
        }
        sql = BOUND_PARAMETER.sub(
            lambda bound: written.get(bound.group(1), bound.group(0)), self.statement.text
        )
        binds = self.statement.compile().binds.values()
        kept = [b for b in binds if not b.expanding and b.key not in self._lists]
        return text(sql).bindparams(*kept) if kept else text(sql)


class _Form:
    """A select as one dialect runs it: its SQL, parameters, processors and row type."""

    __slots__ = (
        "binders",
        "defaults",
        "dialect",
        "make_row",
        "order",
        "processors",
        "required",
        "returns",
        "sql",
        "types",
    )

    def __init__(self, statement: Statement, dialect: Dialect, compiled: Compiled) -> None:
        self.dialect = dialect
        self.sql: str = compiled.string
        self.order: tuple[str, ...] | None = (
            tuple(compiled.positiontup or ()) if compiled.positional else None
        )
        binds = compiled.binds
        self.binders: dict[str, Processor] = {}
        for name, bind in binds.items():
            processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if processor is not None:
                self.binders[name] = processor
        self.required = frozenset(n for n, b in binds.items() if b.required)
        self.defaults: dict[str, Any] = {
            name: self._bound(name, bind.effective_value)
            for name, bind in binds.items()
            if not bind.required
        }
        # A select's column types and names (a DML statement's RETURNING columns); a text
        # statement's rows are named by the driver.
        self.types: list[Any] | None = None
        self.make_row: Callable[[Any], Any] | None = None
        columns = (
            statement.selected_columns
            if isinstance(statement, Select)
            else statement.exported_columns
            if isinstance(statement, UpdateBase)
            else None
        )
        if columns is not None:
            self.types = [c.type for c in columns]
            names: list[Any] = list(columns.keys())
            self.make_row = _row_type([str(name) for name in names])
        # A DML statement without RETURNING has no rows to fetch (psycopg refuses to).
        self.returns = not isinstance(statement, UpdateBase) or bool(self.types)
        self.processors: list[tuple[int, Processor]] | None = None  # from the first run

    @classmethod
    def compile(cls, statement: Statement, dialect: Dialect) -> _Form | None:
        """Return the select's form for ``dialect``, or None when it must run as usual."""
        compiled = statement.compile(dialect=dialect)
        if "POSTCOMPILE" in compiled.string or compiled.escaped_bind_names:
            return None
        if any(b.expanding or b.literal_execute or b.callable for b in compiled.binds.values()):
            return None
        return cls(statement, dialect, compiled)

    def _bound(self, name: str, value: Any) -> Any:
        binder = self.binders.get(name)
        return binder(value) if binder is not None else value

    def run(self, conn: Connection, values: Mapping[str, Any]) -> list[Any]:
        """Execute on the connection's driver connection and return the converted rows."""
        missing = self.required.difference(values)
        if missing:
            raise ArgumentError(f"A value is required for bind parameter {min(missing)!r}")
        params = dict(self.defaults)
        binders = self.binders
        for name, value in values.items():
            binder = binders.get(name)
            params[name] = binder(value) if binder is not None else value
        args: Any = params if self.order is None else tuple(params[n] for n in self.order)
        listeners = conn.dispatch.before_cursor_execute
        dbapi_conn = conn.connection.dbapi_connection
        assert dbapi_conn is not None  # a Connection in use holds its driver connection
        cursor = dbapi_conn.cursor()
        try:
            if listeners:
                for listener in listeners:
                    listener(conn, cursor, self.sql, args, None, False)
            cursor.execute(self.sql, args)
            if not self.returns:
                return []
            fetched = cursor.fetchall()
            if not fetched:
                # No rows: nothing to convert (and SQLite describes no columns of an UPDATE's
                # RETURNING that matched no row).
                return []
            processors = self.processors
            if processors is None:
                processors = self.processors = self._processors(cursor.description)
            make_row = self.make_row
            if make_row is None:
                names = [column[0] for column in cursor.description or ()]
                make_row = self.make_row = _row_type(names)
        except self.dialect.loaded_dbapi.Error as error:
            raise self._failure(conn, dbapi_conn, cursor, error, args) from error
        finally:
            cursor.close()
        if not processors:
            return list(map(make_row, fetched))
        # Column by column: each processor mapped over its column, then the rows zipped back
        # (a third of the cost of converting row by row).
        columns = list(zip(*fetched, strict=True))
        for i, process in processors:
            columns[i] = tuple(map(process, columns[i]))
        return list(map(make_row, zip(*columns, strict=True)))

    def _processors(self, description: Any) -> list[tuple[int, Processor]]:
        """Return the result processors of the columns that have one (as the driver reports
        each column's type, which some processors depend on); none for a text statement."""
        if self.types is None:
            return []
        if description is None or len(description) != len(self.types):
            raise ArgumentError("the driver's columns are not the select's")
        dialect = self.dialect
        out: list[tuple[int, Processor]] = []
        for i, (type_, column) in enumerate(zip(self.types, description, strict=True)):
            processor = type_.dialect_impl(dialect).result_processor(dialect, column[1])
            if processor is not None:
                out.append((i, processor))
        return out

    def _failure(
        self, conn: Connection, dbapi_conn: Any, cursor: Any, error: Any, args: Any
    ) -> BaseException:
        """Return the driver's error as SQLAlchemy raises it, the connection invalidated when
        it was lost (as ``Connection.execute`` does)."""
        dialect = self.dialect
        lost = bool(dialect.is_disconnect(error, dbapi_conn, cursor))
        if lost:
            note_disconnect()
            conn.invalidate(error)
        return DBAPIError.instance(
            self.sql,
            args,
            error,
            dialect.loaded_dbapi.Error,
            hide_parameters=True,
            connection_invalidated=lost,
            dialect=dialect,
        )


def _row_type(names: list[str]) -> Callable[[Any], Any]:
    """Return the maker of rows with these column names (a name that cannot be an attribute,
    ``count(*)`` say, is read by position)."""
    row: Any = namedtuple("row", names, rename=True)  # type: ignore[misc]
    maker: Callable[[Any], Any] = row._make
    return maker
