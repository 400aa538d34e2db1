"""PostgreSQL query plans of ``GET /api/search``: every statement a search runs, EXPLAINed.

Runs the query interface (``resource_server.search.service.search``) on the catalog's read
pool (autocommit connections, as the service reads), records each statement with its
parameters, then runs ``EXPLAIN (ANALYZE, BUFFERS)`` on each and prints the plans and their
execution times. Against the museums' import:

    DATABASE_URL=postgresql://... python -m bench.search_plans turner portrait "teenie harris"
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from sqlalchemy import Engine, event

from common.db import make_engine, read_engine
from common.settings import ResourceSettings
from resource_server.search.service import SearchRequest, search


def recorded(engine: Engine, q: str, size: int, offset: int) -> list[tuple[str, Any]]:
    """Return the statements (with parameters) one search runs."""
    statements: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, params: Any, *_args: Any) -> None:
        statements.append((statement, params))

    event.listen(engine, "before_cursor_execute", record)
    try:
        with engine.connect() as conn:
            search(conn, SearchRequest(q, size=size, offset=offset))
    finally:
        event.remove(engine, "before_cursor_execute", record)
    return statements


def explain(engine: Engine, statement: str, params: Any) -> list[str]:
    """Return the plan of one statement, run (EXPLAIN ANALYZE)."""
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + statement, params)
        return [str(row[0]) for row in cursor.fetchall()]
    finally:
        raw.close()


def main() -> None:
    """Print the plans of each query's statements."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("queries", nargs="+")
    parser.add_argument("--size", type=int, default=10)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--plans", action="store_true", help="print whole plans")
    args = parser.parse_args()
    engine = read_engine(make_engine(ResourceSettings.from_env()))
    if engine.dialect.name != "postgresql":
        sys.exit("bench.search_plans needs DATABASE_URL on PostgreSQL")
    for q in args.queries:
        statements = recorded(engine, q, args.size, args.offset)
        print(f"## {q!r} (size {args.size}, offset {args.offset}): {len(statements)} statements")
        total = 0.0
        for statement, params in statements:
            if not statement.lstrip().upper().startswith(("SELECT", "WITH")):
                print(f"- not a query: {statement[:80]}")
                continue
            plan = explain(engine, statement, params)
            ms = float(plan[-1].split(":")[1].split()[0])  # "Execution Time: 1.234 ms"
            total += ms
            print(f"- {ms:.2f} ms: {' '.join(statement.split())[:140]}")
            if args.plans:
                print("\n".join(f"      {line}" for line in plan))
        print(f"  execution time in all: {total:.2f} ms\n")


if __name__ == "__main__":
    main()
