"""What the tests know of the test database's contents, so that it is emptied only as far as it
must be, and a catalog loaded once serves every test that only reads it.

Emptying all the tables before and after every test cost more than most tests (a TRUNCATE of
every table takes locks and files on PostgreSQL, twice a test). Instead:

- ``nonempty_tables`` asks the database, in one statement, which tables hold a row, and
  ``empty`` deletes from those only. Asking the database, rather than remembering what was
  written, also sees what other processes wrote (a CLI or a service run as a process).
- ``WRITES`` records the tables every INSERT, UPDATE and DELETE of this process wrote to the
  test database, on any engine (the servers in threads and the loaders share the session's;
  some tests make their own): a listener on SQLAlchemy's ``before_cursor_execute``. A catalog
  fixture notes the mark after it has loaded its data, and loads again only when a table was
  written since (or a process was started, which may have written anything).

A transaction rolled back after each test would be cheaper still, but the servers under test
answer from their own threads on pooled connections of their own, and commit: no one
connection holds a test's writes.
"""

from __future__ import annotations

import re
import subprocess
import threading
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Engine, event, text

from common.models import Base

_WRITE = re.compile(
    r"\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM|REPLACE\s+INTO)"
    r'\s+(?:"?\w+"?\.)?"?(\w+)"?',
    re.IGNORECASE,
)
# A statement that starts otherwise may write too (TRUNCATE, DDL, a CTE with an INSERT): taken
# as a write to any table.
_READ = re.compile(
    r"(?:SELECT|VALUES|PRAGMA|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|SET|SHOW|EXPLAIN)\b",
    re.IGNORECASE,
)
_CTE_WRITE = re.compile(r"\b(?:INSERT|UPDATE|DELETE)\b", re.IGNORECASE)
# Every table, children before their parents (the order rows can be deleted in).
TABLES = [t.name for t in reversed(Base.metadata.sorted_tables)]


class Writes:
    """The tables written to the test database since a mark, counted by this process."""

    def __init__(self) -> None:
        self.url = ""
        self.count = 0  # bumped by every write: a mark is the count at a moment
        self.unknown = 0  # the count when something not parsed (or a process) may have written
        self.tables: dict[str, int] = {}  # table -> count at its last write
        self._lock = threading.Lock()

    def record(self, conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        """Note the table of a write (SQLAlchemy's ``before_cursor_execute``)."""
        if str(conn.engine.url) != self.url:
            return
        match = _WRITE.match(statement[:200])
        if match is None:
            head = statement.lstrip(" \t\r\n(")[:12]
            if head[:4].upper() == "WITH":
                if _CTE_WRITE.search(statement) is None:
                    return
            elif _READ.match(head) is not None:
                return
        with self._lock:
            self.count += 1
            if match is None:
                self.unknown = self.count
            else:
                self.tables[match.group(1).lower()] = self.count

    def anything(self) -> None:
        """Note that anything may have been written (a process was started)."""
        with self._lock:
            self.count += 1
            self.unknown = self.count

    def mark(self) -> int:
        """Return a mark to compare later writes with."""
        return self.count

    def since(self, mark: int) -> set[str]:
        """Return the tables written since ``mark`` (every table when that is not known)."""
        if self.unknown > mark:
            return set(TABLES)
        return {name for name, at in self.tables.items() if at > mark}


WRITES = Writes()


def watch(engine: Engine) -> None:
    """Record the writes of every engine on ``engine``'s database, and every process started."""
    WRITES.url = str(engine.url)
    event.listen(Engine, "before_cursor_execute", WRITES.record)
    original = subprocess.Popen.__init__

    def popen(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        WRITES.anything()
        original(self, *args, **kwargs)

    subprocess.Popen.__init__ = popen  # type: ignore[assignment,method-assign]


def nonempty_tables(engine: Engine) -> list[str]:
    """Return the tables that hold at least one row (one statement for all of them)."""
    probe = " UNION ALL ".join(
        f"SELECT '{name}' WHERE EXISTS (SELECT 1 FROM {name})"  # the schema's names
        for name in TABLES
    )
    with engine.connect() as conn:
        return [row[0] for row in conn.execute(text(probe))]


def delete_rows(engine: Engine, tables: Iterable[str]) -> None:
    """Delete every row of ``tables`` (and, on PostgreSQL, of the tables that refer to them)."""
    wanted = set(tables)
    names = [name for name in TABLES if name in wanted]
    if not names:
        return
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text(f"TRUNCATE {', '.join(names)} CASCADE"))
        else:
            for name in names:
                conn.execute(text(f"DELETE FROM {name}"))  # the schema's names


def truncate_all(engine: Engine) -> None:
    """Empty the database: delete from the tables that hold rows."""
    delete_rows(engine, nonempty_tables(engine))
