"""Load a deterministic synthetic catalog, with a demo user and application, into an empty database.

Every resource type and relation is exercised. The same seed gives the same ids, names and
values; only show, fair and sale dates follow the day of the load, so that status filters always
have upcoming, running and closed items. The demo credentials are derived from the secret key
(HMAC-SHA256), so they can be printed again on every start without being stored in clear.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, insert, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from artcat.loaders import demo_words as words
from artcat.loaders.demo_catalog import (
    build_artists,
    build_artworks,
    build_genes,
    count_artist_artworks,
)
from artcat.loaders.demo_context import DemoContext, stamps, unique_slug
from artcat.loaders.demo_events import build_fairs, build_sales, build_shows
from artcat.loaders.demo_partners import add_profile, build_partners
from auth_server.accounts import AccountError, create_application, create_user, password_hasher
from common.ids import slugify, utcnow
from common.models import (
    Application,
    Artist,
    ArtistGene,
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    Base,
    Bidder,
    Collection,
    CollectionItem,
    DemoLoad,
    Edition,
    Fair,
    Gene,
    Image,
    Partner,
    PartnerUser,
    Profile,
    Sale,
    SaleArtwork,
    Show,
    ShowArtwork,
    User,
    UserDetail,
)
from common.search.indexer import reindex
from common.settings import Settings

DEMO_EMAIL = "demo@example.org"
DEMO_NAME = "Demo User"
DEMO_APPLICATION_NAME = "Artcat Demo"
# The built-in page that shows the code (auth_server.views.callback). A loopback URI matches on
# any port, so it serves whatever port ``serve`` listens on.
DEMO_REDIRECT_URIS = [
    "http://127.0.0.1:8000/oauth2/callback",
    "http://localhost:8000/oauth2/callback",
]
# What demo applications registered before that page existed (a 404): moved to it on start.
OLD_DEMO_REDIRECT_URIS = ["http://127.0.0.1:8000/callback"]
EXTRA_USERS = 4
# Tables in foreign-key order (users come first, through the account service).
INSERT_ORDER: tuple[type[Base], ...] = (
    Partner, Fair, Gene, Artist, ArtistGene, Artwork, ArtworkArtist, ArtworkGene, Edition, Show,
    ShowArtwork, Image, Profile, PartnerUser, Sale, SaleArtwork, Bidder, Collection,
    CollectionItem,
)  # fmt: skip


@dataclass(frozen=True)
class DemoCredentials:
    """The demo application's client credentials and the demo user's login, in clear."""

    client_id: str
    client_secret: str
    user_email: str
    user_password: str


@dataclass(frozen=True)
class DemoReport:
    """What a demo load did: rows inserted per table, or why it was skipped."""

    seed: int
    skipped: bool
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    reason: str = ""

    def summary(self) -> str:
        """Return a one-line description for the command line."""
        if self.skipped:
            return f"demo catalog not loaded: {self.reason}"
        if self.reason:  # the accounts only: the catalog was there already
            return f"demo catalog not loaded: {self.reason}; demo user and application created"
        rows = ", ".join(f"{n} {table}" for table, n in self.counts.items() if n)
        return f"demo catalog (seed {self.seed}) loaded in {self.seconds:.2f}s: {rows}"


def _derive(secret_key: str, purpose: str, nbytes: int) -> str:
    """Return a URL-safe string derived from the secret key for one purpose."""
    mac = hmac.new(secret_key.encode(), f"artcat-demo-{purpose}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()[:nbytes]).rstrip(b"=").decode()


def demo_credentials(settings: Settings) -> DemoCredentials:
    """Return the demo credentials derived from the settings' secret key (HMAC-SHA256)."""
    if not settings.secret_key:
        raise ValueError("the demo credentials are derived from secret_key, which is empty")
    client_id = _derive(settings.secret_key, "application-id", 15)
    return DemoCredentials(
        client_id=client_id.replace("-", "a").replace("_", "b"),
        client_secret=_derive(settings.secret_key, "application-secret", 32),
        user_email=DEMO_EMAIL,
        user_password=_derive(settings.secret_key, "user-password", 18),
    )


ALREADY_LOADED = "the demo application already exists"
REMOVED = "the demo was removed from this instance (artcat load demo loads it again)"


def _already_loaded(session: Session, credentials: DemoCredentials) -> str:
    """Return why the demo must not be loaded again ("" when the database has no demo yet)."""
    query = select(Application.id).where(Application.client_id == credentials.client_id)
    if session.scalar(query) is not None:
        return ALREADY_LOADED
    if session.scalar(select(User.id).where(User.email == DEMO_EMAIL)) is not None:
        return f"{DEMO_EMAIL} exists but not the demo application (another secret key?)"
    return ""


def _move_redirect_uris(session: Session, credentials: DemoCredentials) -> None:
    """Point a demo application still registered at the old, missing page at the new one."""
    with session.begin():
        app = session.scalar(
            select(Application).where(Application.client_id == credentials.client_id)
        )
        if app is not None and list(app.redirect_uris or []) == OLD_DEMO_REDIRECT_URIS:
            app.redirect_uris = list(DEMO_REDIRECT_URIS)


def _removed(session: Session) -> bool:
    """Tell whether a demo was loaded here and removed since (and none is loaded now)."""
    loads = session.execute(select(DemoLoad.removed_at)).scalars().all()
    return bool(loads) and all(removed is not None for removed in loads)


def _catalog_present(session: Session) -> str:
    """Return why the demo catalog must not be added ("" when the catalog is empty).

    An import (``artcat load tate``) made its own genes, artists and artworks: the demo's would
    collide by slug and mix invented works with real ones, so only its accounts are added.
    """
    for model, what in ((Artwork, "artworks"), (Artist, "artists"), (Gene, "genes")):
        if session.scalar(select(model.id).limit(1)) is not None:
            return f"the database already holds a catalog ({what})"
    return ""


def build_catalog(ctx: DemoContext, artworks: int) -> None:
    """Queue the rows of the whole catalog: partners to sales, without users."""
    build_partners(ctx)
    build_genes(ctx)
    build_artists(ctx)
    build_artworks(ctx, artworks)
    count_artist_artworks(ctx)
    build_fairs(ctx)
    build_shows(ctx)
    build_sales(ctx)


def _create_users(
    session: Session, ctx: DemoContext, settings: Settings, credentials: DemoCredentials
) -> list[User]:
    """Create the demo user and a few others (sharing its password), with their details."""
    rng = ctx.rng("users")
    demo = create_user(
        session,
        password_hasher(settings),
        email=credentials.user_email,
        name=DEMO_NAME,
        password=credentials.user_password,
        user_id=ctx.id("user", 0),
    )
    users = [demo]
    for n in range(1, EXTRA_USERS + 1):
        gender = rng.choice(("female", "male"))
        firsts = words.FIRST_NAMES_FEMALE if gender == "female" else words.FIRST_NAMES_MALE
        first, last = rng.choice(firsts), rng.choice(words.LAST_NAMES)
        user = create_user(
            session,
            password_hasher(settings),
            email=f"{slugify(first)}.{slugify(last)}.{n}@example.org",
            name=f"{first} {last}",
            password=None,
            user_id=ctx.id("user", n),
        )
        # One argon2 hash serves every demo user: hashing is the slow part of the load.
        user.password_hash = demo.password_hash
        users.append(user)
    for n, user in enumerate(users):
        detail = session.get(UserDetail, user.id)
        assert detail is not None
        detail.birthday = (
            f"{rng.randint(1950, 2004)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        )
        detail.phone = f"+1 555 01{n:02d}" if n % 3 != 2 else None
        detail.gender = rng.choice(("female", "male", None))
    session.flush()
    return users


def _queue_user_rows(session: Session, ctx: DemoContext, users: list[User]) -> None:
    """Queue what links the users to the catalog: profile, partners, bids, collections."""
    rng = ctx.rng("user-links")
    demo = users[0]
    # Every user starts with a bare profile; the demo account's is the full one below.
    session.execute(
        delete(Profile).where(Profile.owner_type == "user", Profile.owner_id == demo.id)
    )
    add_profile(
        ctx,
        rng,
        owner_type="user",
        owner_id=demo.id,
        handle=unique_slug("demo", ctx.handles),
        description="The demo account of this catalog.",
    )
    galleries = [p for p in ctx.of(Partner) if p["type"] == "Gallery"]
    institutions = [p for p in ctx.of(Partner) if p["type"] == "Institution"]
    ctx.add(PartnerUser, {"partner_id": galleries[0]["id"], "user_id": demo.id})
    ctx.add(PartnerUser, {"partner_id": institutions[0]["id"], "user_id": users[1].id})
    sales = ctx.of(Sale)
    open_sale = next(s for s in sales if s["auction_state"] == "open" and s["published"])
    closed_sale = next(s for s in sales if s["auction_state"] == "closed")
    for sale, user, qualified in ((open_sale, demo, True), (closed_sale, users[2], False)):
        ctx.add(
            Bidder,
            {
                "id": ctx.id("bidder", f"{sale['id']}:{user.id}"),
                "sale_id": sale["id"],
                "user_id": user.id,
                "pin": f"{rng.randint(0, 9999):04d}",
                "qualified_for_bidding": qualified,
                **stamps(rng),
            },
        )
    favourites = ctx.add(
        Collection,
        {
            "id": ctx.id("collection", "demo-favourites"),
            "user_id": demo.id,
            "name": "Demo Favourites",
            "description": "A public collection of the demo user.",
            "default": False,
            "private": False,
            **stamps(rng),
        },
    )
    query = select(Collection.id, Collection.user_id).where(
        Collection.user_id.in_([u.id for u in users]), Collection.default.is_(True)
    )
    defaults = {user_id: collection_id for collection_id, user_id in session.execute(query)}
    published = sorted(a["id"] for a in ctx.of(Artwork) if a["published"])
    contents = [(favourites["id"], 8), (defaults[demo.id], 3)]
    contents += [(defaults[u.id], rng.randint(0, 4)) for u in users[1:]]
    for collection_id, size in contents:
        chosen = rng.sample(published, min(size, len(published)))
        for position, artwork_id in enumerate(chosen, start=1):
            ctx.add(
                CollectionItem,
                {
                    "id": ctx.id("collection-item", f"{collection_id}:{artwork_id}"),
                    "collection_id": collection_id,
                    "artwork_id": artwork_id,
                    "position": position,
                    **stamps(rng),
                },
            )


def _insert(session: Session, ctx: DemoContext) -> dict[str, int]:
    """Bulk-insert every queued row in foreign-key order; return the rows per table."""
    counts: dict[str, int] = {}
    for model in INSERT_ORDER:
        rows = ctx.of(model)
        if rows:
            session.execute(insert(model), rows)
        counts[model.__tablename__] = len(rows)
    return counts


def _record(session: Session, seed: int, artworks: int) -> None:
    """Record the catalog loaded (its ids derive from these), for ``artcat demo remove``."""
    session.execute(delete(DemoLoad).where(DemoLoad.seed == seed))
    session.execute(insert(DemoLoad), [{"seed": seed, "artworks": artworks, "loaded_at": utcnow()}])


def load_demo(
    engine: Engine,
    settings: Settings,
    *,
    seed: int = 1,
    artworks: int = 200,
    now: datetime | None = None,
    unless_removed: bool = False,
) -> DemoReport:
    """Load the demo catalog, users and application once; skip if the demo is already there.

    ``unless_removed`` (``serve``'s first start) also skips it where it was removed (``artcat
    demo remove``, or a museum import): real data replaced it, and so did, unless kept, its
    accounts.
    """
    if artworks < 0:
        raise ValueError("the number of artworks cannot be negative")
    started = time.perf_counter()
    credentials = demo_credentials(settings)
    today = (now or utcnow()).astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    with Session(engine, expire_on_commit=False) as session:
        reason = _already_loaded(session, credentials)
        if not reason and unless_removed and _removed(session):
            reason = REMOVED
        session.rollback()
        if reason == ALREADY_LOADED:
            _move_redirect_uris(session, credentials)
        if reason:
            return DemoReport(seed=seed, skipped=True, reason=reason)
        ctx = DemoContext(seed=seed, today=today)
        catalog_reason = _catalog_present(session)
        session.rollback()
        if not catalog_reason:
            build_catalog(ctx, artworks)
        try:
            with session.begin():
                users = _create_users(session, ctx, settings, credentials)
                counts = {}
                if not catalog_reason:
                    _queue_user_rows(session, ctx, users)
                    counts = _insert(session, ctx)
                    _record(session, seed, artworks)
                create_application(
                    session,
                    name=DEMO_APPLICATION_NAME,
                    owner=users[0],
                    redirect_uris=DEMO_REDIRECT_URIS,
                    standard_token_response=True,  # what stock OAuth clients accept
                    client_id=credentials.client_id,
                    client_secret=credentials.client_secret,
                )
        except (IntegrityError, OperationalError, AccountError):
            # Another process loaded the demo at the same time: its load stands.
            session.rollback()
            reason = _already_loaded(session, credentials)
            if not reason:
                raise
            return DemoReport(seed=seed, skipped=True, reason=reason)
    if not catalog_reason:
        counts["search_documents"] = reindex(engine).documents
    counts["users"] = counts["user_details"] = len(users)
    counts["collections"] = counts.get("collections", 0) + len(users)
    counts["applications"] = 1
    return DemoReport(
        seed=seed,
        skipped=False,
        counts=counts,
        seconds=time.perf_counter() - started,
        reason=catalog_reason,
    )
