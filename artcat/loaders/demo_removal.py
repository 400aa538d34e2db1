"""Take the invented demo catalog out of an instance, completely and in one transaction.

The demo (``artcat.loaders.demo``) writes partners and their profiles, fairs, genes, artists,
artworks with their editions, images and links, shows, sales and their lots, users with their
details, profiles, collections and bids, and the demo application. Its ids derive from its seed
and size, which ``demo_loads`` records, so the rows are found again by building the same ids.
Everything that hangs off them goes too, found through the models' foreign keys (and the
profiles of the partners, fairs and users removed, whose owner is not a foreign key, with their
cover images): a real user's collection item of a demo artwork, a token of the demo
application. The search index is rebuilt in the same transaction; after the commit the tokens
of the users and application removed are tombstoned in Redis, and the catalog version is
bumped, so that no process serves a cached demo document.

The demo user and application stay when asked (``keep_account``): a developer's scripts may
hold their credentials. The four other demo users always go.

An instance whose demo was loaded before ``demo_loads`` existed has no record: it is taken to
be ``serve``'s (seed 1, 200 artworks) when that demo's first artwork is there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Connection, Engine, ForeignKey, Table, delete, insert, select, update
from sqlalchemy.orm import Session

import common.search.models  # noqa: F401 - the index's tables belong to the metadata
from artcat.loaders.demo import (
    DEMO_APPLICATION_NAME,
    DEMO_EMAIL,
    EXTRA_USERS,
    build_catalog,
    demo_credentials,
)
from artcat.loaders.demo_context import DemoContext
from common.bulk import IN_CHUNK, chunks
from common.ids import utcnow
from common.models import Application, Artwork, Base, Collection, DemoLoad, Profile, Token, User
from common.search.indexer import assign_ids, build_documents, document_row, write_documents
from common.settings import Settings
from common.stores import Stores

# What ``serve`` loads on first start: the demo of an instance without a record.
SERVE_SEED = 1
SERVE_ARTWORKS = 200
# The owners a profile names (``Profile.owner_type``), by table.
PROFILE_OWNERS = {"partners": "partner", "fairs": "fair", "users": "user"}
_PROFILES = cast(Table, Profile.__table__)
_USERS = cast(Table, User.__table__)
_APPLICATIONS = cast(Table, Application.__table__)
_COLLECTIONS = cast(Table, Collection.__table__)
_ARTWORKS = cast(Table, Artwork.__table__)


@dataclass(frozen=True)
class DemoSize:
    """One demo catalog loaded: its seed and number of artworks."""

    seed: int
    artworks: int


@dataclass
class RemovalReport:
    """What a removal took out: rows per table."""

    counts: dict[str, int] = field(default_factory=dict)
    kept_account: bool = False
    tokens: int = 0

    def summary(self) -> str:
        """Return a one-line description for the command line."""
        if not self.counts:
            return "no demo catalog here: nothing removed"
        rows = ", ".join(f"{n} {table}" for table, n in sorted(self.counts.items()) if n)
        kept = "; the demo user and application kept" if self.kept_account else ""
        return f"demo catalog removed: {rows}{kept}"


def loaded_demos(conn: Connection) -> list[DemoSize]:
    """Return the demo catalogs this instance holds (none once removed)."""
    rows = conn.execute(
        select(DemoLoad.seed, DemoLoad.artworks).where(DemoLoad.removed_at.is_(None))
    ).all()
    if rows:
        return [DemoSize(seed, artworks) for seed, artworks in rows]
    if conn.execute(select(DemoLoad.seed).limit(1)).first() is not None:
        return []  # recorded, and removed
    first = DemoContext(seed=SERVE_SEED, today=datetime.now(UTC)).id("artwork", 0)
    if conn.execute(select(_ARTWORKS.c.id).where(_ARTWORKS.c.id == first)).first() is not None:
        return [DemoSize(SERVE_SEED, SERVE_ARTWORKS)]
    return []


def holds_demo(engine: Engine) -> bool:
    """Tell whether the instance holds a demo catalog."""
    with engine.connect() as conn:
        return bool(loaded_demos(conn))


def _demo_users(conn: Connection, sizes: Iterable[DemoSize]) -> tuple[set[str], set[str]]:
    """Return (the demo user's ids, every demo user's ids) present in the database."""
    main: set[str] = set()
    every: set[str] = set()
    for size in sizes:
        ctx = DemoContext(seed=size.seed, today=datetime.now(UTC))
        main.add(ctx.id("user", 0))
        every.update(ctx.id("user", n) for n in range(EXTRA_USERS + 1))
    by_email = conn.execute(select(_USERS.c.id).where(_USERS.c.email == DEMO_EMAIL)).scalars()
    main.update(by_email)
    every |= main
    stored = set(conn.execute(select(_USERS.c.id).where(_USERS.c.id.in_(sorted(every)))).scalars())
    return main & stored, every & stored


def _roots(
    conn: Connection, settings: Settings, sizes: list[DemoSize], keep_account: bool
) -> dict[Table, set[str]]:
    """Return the ids the demo wrote, per table (the accounts unless kept)."""
    roots: dict[Table, set[str]] = {}
    main, every = _demo_users(conn, sizes)
    kept = main if keep_account else set()
    for size in sizes:
        ctx = DemoContext(seed=size.seed, today=datetime.now(UTC))
        build_catalog(ctx, size.artworks)
        for model, rows in ctx.rows.items():
            table = cast(Table, model.__table__)
            if "id" in table.c and [c.name for c in table.primary_key.columns] == ["id"]:
                roots.setdefault(table, set()).update(row["id"] for row in rows)
        favourites = ctx.id("collection", "demo-favourites")
        if not keep_account:
            roots.setdefault(_COLLECTIONS, set()).add(favourites)
    roots.setdefault(_USERS, set()).update(every - kept)
    if not keep_account:
        # By its client id, or (made under another secret key) as the demo user's demo app.
        client_id = demo_credentials(settings).client_id
        query = select(_APPLICATIONS.c.id).where(
            (_APPLICATIONS.c.client_id == client_id)
            | (
                _APPLICATIONS.c.user_id.in_(sorted(main))
                & (_APPLICATIONS.c.name == DEMO_APPLICATION_NAME)
            )
        )
        roots.setdefault(_APPLICATIONS, set()).update(conn.execute(query).scalars())
    return roots


def _ids_where(conn: Connection, table: Table, column: str, ids: set[str], *more: Any) -> set[str]:
    """Return the ids of the rows of a table whose ``column`` is in ``ids``."""
    found: set[str] = set()
    for part in chunks(sorted(ids), IN_CHUNK):
        query = select(table.c.id).where(table.c[column].in_(part), *more)
        found.update(conn.execute(query).scalars())
    return found


def _nulled(fk: ForeignKey) -> bool:
    """Tell whether deleting the row a foreign key names leaves the referring row (its
    reference set to NULL, as the schema declares) rather than deleting it too."""
    return (fk.ondelete or "").upper() == "SET NULL"


def _closure(conn: Connection, roots: dict[Table, set[str]]) -> dict[Table, set[str]]:
    """Return every row to delete: the roots, and the rows whose foreign key (unless it is set
    to NULL) or profile owner points at a row to delete, until nothing more is found."""
    doomed = {table: set(ids) for table, ids in roots.items() if ids}
    tables = [t for t in Base.metadata.sorted_tables if [c.name for c in t.primary_key] == ["id"]]
    grew = True
    while grew:
        grew = False
        for table in tables:
            found: set[str] = set()
            for fk in table.foreign_keys:
                parent = fk.column.table
                if parent in doomed and not _nulled(fk):
                    found |= _ids_where(conn, table, fk.parent.name, doomed[parent])
            if table is _PROFILES:
                for owner, kind in PROFILE_OWNERS.items():
                    ids = next((v for t, v in doomed.items() if t.name == owner), set())
                    found |= _ids_where(conn, table, "owner_id", ids, table.c.owner_type == kind)
            if table.name == "images" and _PROFILES in doomed:  # a profile's own cover
                for part in chunks(sorted(doomed[_PROFILES]), IN_CHUNK):
                    query = select(_PROFILES.c.cover_image_id).where(
                        _PROFILES.c.id.in_(part), _PROFILES.c.cover_image_id.is_not(None)
                    )
                    covers = set(conn.execute(query).scalars())
                    found |= _ids_where(
                        conn, table, "id", covers, table.c.artwork_id.is_(None),
                        table.c.show_id.is_(None),
                    )  # fmt: skip
            new = found - doomed.get(table, set())
            if new:
                doomed.setdefault(table, set()).update(new)
                grew = True
    return doomed


def _delete(conn: Connection, doomed: dict[Table, set[str]]) -> dict[str, int]:
    """Delete the rows, children first; a reference the schema sets to NULL is set to NULL."""
    counts: dict[str, int] = {}
    for table in reversed(Base.metadata.sorted_tables):
        removed = 0
        for fk in table.foreign_keys:
            parent = fk.column.table
            if parent not in doomed:
                continue
            column = fk.parent
            for part in chunks(sorted(doomed[parent]), IN_CHUNK):
                if _nulled(fk):
                    conn.execute(update(table).where(column.in_(part)).values({column.name: None}))
                else:
                    removed += max(conn.execute(delete(table).where(column.in_(part))).rowcount, 0)
        if table in doomed:
            for part in chunks(sorted(doomed[table]), IN_CHUNK):
                removed += max(conn.execute(delete(table).where(table.c.id.in_(part))).rowcount, 0)
        if removed:
            counts[table.name] = removed
    return counts


def remove_demo(
    stores: Stores,
    settings: Settings,
    *,
    keep_account: bool = False,
    sizes: list[DemoSize] | None = None,
) -> RemovalReport:
    """Remove the demo catalog (and its accounts unless ``keep_account``) in one transaction.

    ``sizes`` names the demo loaded when the instance has no record of it (another seed than
    ``serve``'s); by default the recorded ones. Returns what went; nothing when there is none.
    """
    report = RemovalReport(kept_account=keep_account)
    with Session(stores.engine, expire_on_commit=False) as session, session.begin():
        conn = session.connection()
        found = sizes if sizes is not None else loaded_demos(conn)
        if not found:
            return report
        doomed = _closure(conn, _roots(conn, settings, found, keep_account))
        users = sorted(next((v for t, v in doomed.items() if t is _USERS), set()))
        apps = sorted(next((v for t, v in doomed.items() if t is _APPLICATIONS), set()))
        live = (Token.expired_at.is_(None), Token.expires_at > utcnow())
        tokens: list[Token] = []
        for column, ids in ((Token.user_id, users), (Token.application_id, apps)):
            for part in chunks(ids, IN_CHUNK):
                tokens += session.scalars(select(Token).where(column.in_(part), *live)).all()
        report.counts = _delete(conn, doomed)
        now = utcnow()
        stmt = update(DemoLoad).where(DemoLoad.removed_at.is_(None)).values(removed_at=now)
        conn.execute(stmt)
        for size in found:  # a demo found without a record is recorded as removed
            if conn.execute(select(DemoLoad.seed).where(DemoLoad.seed == size.seed)).first():
                continue
            conn.execute(
                insert(DemoLoad),
                [{"seed": size.seed, "artworks": size.artworks, "loaded_at": now,
                  "removed_at": now}],
            )  # fmt: skip
        rows = assign_ids([document_row(doc) for doc in build_documents(conn)])
        _written, removed = write_documents(conn, rows)
        report.counts["search_documents"] = removed
    stores.tokens.tombstone(tokens)
    report.tokens = len(tokens)
    return report
