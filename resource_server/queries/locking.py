"""Write transactions that serialise on a row, retried on a conflict.

On PostgreSQL a writer locks the row it serialises on with ``SELECT ... FOR UPDATE`` (the
collection, for its items' positions). SQLite has no row locks: its writers start with ``BEGIN
IMMEDIATE``, which takes the database's write lock before the first read, so a read-then-write
sequence cannot interleave with another writer (the busy timeout of the engine makes it wait).
A unique violation or a serialization failure, deadlock or busy database rolls the whole
transaction back and runs it again, a few times, with a short random back-off.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from common.api.errors import Conflict

T = TypeVar("T")
ATTEMPTS = 5
RETRYABLE_SQLSTATES = {"40001", "40P01", "55P03"}  # serialization, deadlock, lock not available


def begin_write(session: Session) -> None:
    """Start the session's transaction as a writer (``BEGIN IMMEDIATE`` on SQLite)."""
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        driver = connection.connection.driver_connection
        if driver is not None and not getattr(driver, "in_transaction", False):
            connection.exec_driver_sql("BEGIN IMMEDIATE")


def retryable(error: OperationalError) -> bool:
    """Tell whether a database error is a transient conflict worth running the work again."""
    sqlstate = getattr(error.orig, "sqlstate", None)
    if sqlstate in RETRYABLE_SQLSTATES:
        return True
    message = str(error.orig).lower()
    return "database is locked" in message or "database is busy" in message


def write_transaction(sessions: sessionmaker[Session], work: Callable[[Session], T]) -> T:
    """Run ``work`` in one write transaction, retried on a conflict; nothing is kept on error."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with sessions() as session, session.begin():
                begin_write(session)
                return work(session)
        except IntegrityError:
            if attempt == ATTEMPTS:
                raise Conflict("The change conflicted with another change; try again.") from None
        except OperationalError as error:
            if attempt == ATTEMPTS or not retryable(error):
                raise
        time.sleep(random.uniform(0.005, 0.02) * attempt)
    raise AssertionError("unreachable")
