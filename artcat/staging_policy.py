"""What crosses from production to staging, table by table (see ``artcat.staging``).

``POLICY`` names every table of the models' metadata; a unit test fails when a table is missing
from it, so a new table is neither copied nor forgotten silently. Catalog tables are copied
whole; users only where a public row names them (a user's profile or public collection), under
a placeholder address and without a password; credentials, private details, private
collections and bids never cross; the search index is rebuilt on staging from what crossed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, Table, or_, select

import common.search.models  # noqa: F401 - the index's tables belong to the metadata
from common.models import Base, Collection, CollectionItem, Profile, Sale, SaleArtwork, User

Row = dict[str, Any]
PLACEHOLDER_DOMAIN = "staging.invalid"  # RFC 2606: can never be delivered


class Action(StrEnum):
    """What a rebuild does with a table."""

    COPY = "copy"  # every row, as it is
    PUBLIC = "public"  # only the public rows, as they are
    SCRUB = "scrub"  # only the rows public rows refer to, private columns replaced
    NEVER = "never"  # nothing: emptied on staging
    REBUILD = "rebuild"  # derived on staging from the copied rows


@dataclass(frozen=True)
class Rule:
    """A table's policy: the action, why, which rows, and (to scrub) which columns cross."""

    action: Action
    why: str
    where: ColumnElement[bool] | None = None
    # Scrubbed tables name every column: kept as is, or replaced by a function of the row.
    keep: frozenset[str] = frozenset()
    replace: Mapping[str, Callable[[Row], Any]] = field(default_factory=dict)

    @property
    def copied(self) -> bool:
        """Tell whether rows of the table cross from production."""
        return self.action in (Action.COPY, Action.PUBLIC, Action.SCRUB)

    def apply(self, row: Row) -> Row:
        """Return the row as staging stores it."""
        for column, value in self.replace.items():
            row[column] = value(row)
        return row


def _copy(why: str) -> Rule:
    return Rule(Action.COPY, why)


def _never(why: str) -> Rule:
    return Rule(Action.NEVER, why)


PUBLIC_SALES = Sale.published.is_(True)
PUBLIC_COLLECTIONS = Collection.private.is_(False)
# Users a public row names: the owners of public collections. Every user has a profile (made
# with the account), so owning one makes nobody public: a user's profile crosses only with them.
PUBLIC_USERS = User.id.in_(select(Collection.user_id).where(PUBLIC_COLLECTIONS))
PUBLIC_PROFILES = or_(
    Profile.owner_type != "user",
    Profile.owner_id.in_(select(Collection.user_id).where(PUBLIC_COLLECTIONS)),
)

POLICY: dict[str, Rule] = {
    # The catalog: what any application token can read.
    "partners": _copy("public pages; the email is the partner's public contact (GET /partners)"),
    "profiles": Rule(
        Action.PUBLIC,
        "public pages of partners and fairs, and those of the users who cross",
        PUBLIC_PROFILES,
    ),
    "artists": _copy("catalog"),
    "artworks": _copy("catalog (unpublished ones too: the API hides them from every caller)"),
    "artwork_artists": _copy("catalog links"),
    "editions": _copy("catalog"),
    "genes": _copy("catalog"),
    "artist_genes": _copy("catalog links"),
    "artist_sources": _copy("catalog: museums' and authorities' public identifiers of artists"),
    "artwork_genes": _copy("catalog links"),
    "images": _copy("catalog (artwork views, installation shots, profile covers)"),
    "image_mirrors": _copy(
        "catalog: the state of the artworks' copied images, which the copied artworks' image "
        "URLs name (staging reads the same IMAGE_STORE, or runs `artcat images fetch` afresh)"
    ),
    "fairs": _copy("catalog"),
    "shows": _copy("catalog"),
    "show_artworks": _copy("catalog links"),
    "sales": Rule(Action.PUBLIC, "unpublished sales are shown to Admins only", PUBLIC_SALES),
    "sale_artworks": Rule(
        Action.PUBLIC,
        "the lots of published sales",
        SaleArtwork.sale_id.in_(select(Sale.id).where(PUBLIC_SALES)),
    ),
    # People: only what the API shows to anyone (a user's id and name).
    "users": Rule(
        Action.SCRUB,
        "owners of public collections; no email, password or role",
        PUBLIC_USERS,
        keep=frozenset({"id", "name", "enabled", "created_at", "updated_at"}),
        replace={
            "email": lambda row: f"user-{row['id']}@{PLACEHOLDER_DOMAIN}",
            "password_hash": lambda row: None,
            "type": lambda row: "User",
            "email_verified_at": lambda row: None,
            "session_generation": lambda row: 0,
        },
    ),
    "collections": Rule(
        Action.PUBLIC, "public collections (private ones never)", PUBLIC_COLLECTIONS
    ),
    "collection_items": Rule(
        Action.PUBLIC,
        "the items of public collections",
        CollectionItem.collection_id.in_(select(Collection.id).where(PUBLIC_COLLECTIONS)),
    ),
    "user_details": _never("birthday, phone, gender: private to the user"),
    "partner_users": _never("who may manage a partner: an access grant, shown only to the user"),
    "bidders": _never("a user's registration (and PIN) to bid: private"),
    # Credentials: staging issues its own.
    "applications": _never("client ids and secret digests; staging registers its own clients"),
    "tokens": _never("credentials (digests); staging's own are retired in Redis too"),
    "authorization_codes": _never("credentials"),
    "device_authorizations": _never("device and user codes (digests), and users' grants"),
    "social_identities": _never("accounts at social providers"),
    "demo_loads": _never("which demo catalog this instance loaded; staging copies production's"),
    "signing_keys": _never("ID-token signing keys; staging makes its own on first use"),
    "refresh_families": _never("grants of offline access to applications that stay behind"),
    "refresh_tokens": _never("credentials (digests)"),
    "initial_access_tokens": _never("credentials (digests): staging's operator issues its own"),
    "client_registrations": _never("registration access tokens (digests) of clients"),
    # The search index: rebuilt from the copied catalog, so it indexes nothing that did not cross.
    "search_documents": Rule(Action.REBUILD, "the search index, rebuilt from the copied rows"),
    "search_words": Rule(Action.REBUILD, "the index's vocabulary, rebuilt with it"),
    "search_names": Rule(Action.REBUILD, "the index's artist name keys, rebuilt with it"),
}


def copied_tables() -> list[Table]:
    """Return the tables whose rows cross, parents before children."""
    return [t for t in Base.metadata.sorted_tables if POLICY[t.name].copied]
