"""Liveness and readiness checks shared by both services."""

from __future__ import annotations

from sqlalchemy import text

from common.stores import Stores


def readiness(stores: Stores) -> dict[str, str]:
    """Return the state of each store: "ok" or the kind of failure."""
    checks: dict[str, str] = {}
    try:
        with stores.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        checks["database"] = "ok"
    except Exception as ex:  # any failure means not ready, never a 5xx from the check itself
        checks["database"] = type(ex).__name__
    try:
        stores.redis.ping()
        checks["redis"] = "ok"
    except Exception as ex:
        checks["redis"] = type(ex).__name__
    return checks
